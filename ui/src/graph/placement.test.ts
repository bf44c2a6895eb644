import { describe, expect, it } from 'vitest';
import type { Blueprint } from '../doc/types';
import { docToGraph, sameNode } from './doc-to-graph';
import { placeAll } from './placement';
import { GAP_Y, NODE_HEIGHT } from './types';

// Three steps after one: a column of three at depth 1; a loop with a two-step body.
const doc: Blueprint = {
  blueprint: 1,
  id: 'p',
  steps: [
    { id: 'a', kind: 'transform', value: 1 },
    { id: 'b', kind: 'transform', after: ['a'], value: 2 },
    { id: 'c', kind: 'transform', after: ['a'], value: 3 },
    { id: 'd', kind: 'transform', after: ['a'], value: 4 },
    {
      id: 'each',
      kind: 'loop',
      after: ['b', 'c', 'd'],
      for_each: '{{ a }}',
      steps: [
        { id: 'x', kind: 'transform', value: '{{ item }}' },
        { id: 'y', kind: 'transform', value: '{{ prev }}' },
      ],
    },
  ],
};

const positions = (measured?: Map<string, { width: number; height: number }>) =>
  Object.fromEntries([...placeAll(doc.steps, undefined, measured)].map(([id, p]) => [id, { ...p.position, w: p.width, h: p.height }]));

describe('placement without layout', () => {
  it('does not move anything when nodes measure smaller than estimated', () => {
    const small = new Map(['a', 'b', 'c', 'd', 'x', 'y'].map((id) => [id, { width: 240, height: 70 }]));
    const before = positions();
    const after = positions(small);
    for (const id of Object.keys(before)) {
      expect({ x: after[id]!.x, y: after[id]!.y }, id).toEqual({ x: before[id]!.x, y: before[id]!.y });
    }
    // The loop keeps its size too (its body takes the same room).
    expect(after.each).toEqual(before.each);
    // What a node reports as its size is what was measured.
    expect(after.b!.h).toBe(70);
  });

  it('pushes the steps below a node that is taller than estimated', () => {
    const before = positions();
    const after = positions(new Map([['b', { width: 240, height: NODE_HEIGHT + 60 }]]));
    expect(before.c!.y).toBe(before.b!.y + NODE_HEIGHT + GAP_Y);
    expect(after.c!.y).toBe(before.c!.y + 60);
    expect(after.d!.y).toBe(before.d!.y + 60);
    expect(after.a).toEqual(before.a);
  });

  it('keeps every derived node of a large blueprint when measurements arrive', () => {
    // A wide fan-out: 300 steps after one, measured smaller than estimated.
    const big: Blueprint = {
      blueprint: 1,
      id: 'big',
      steps: [
        { id: 'root', kind: 'transform', value: 0 },
        ...Array.from({ length: 300 }, (_, i) => ({ id: `s${i}`, kind: 'transform' as const, after: ['root'], value: i })),
      ],
    };
    const first = docToGraph(big);
    const measured = new Map(first.nodes.map((n) => [n.id, { width: 240, height: 66 + (n.id.length % 3) * 15 }]));
    const again = docToGraph(big, { measured });
    expect(again.nodes.every((n, i) => sameNode(n, first.nodes[i]!))).toBe(true);
  });
});
