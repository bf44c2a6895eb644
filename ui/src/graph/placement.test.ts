import { describe, expect, it } from 'vitest';
import type { Blueprint } from '../doc/types';
import { docToGraph, sameNode } from './doc-to-graph';
import { isFree, newStepPosition, obstaclesIn, placeAll, SLOT_MARGIN } from '../doc/placement';
import { GAP_X, GAP_Y, NODE_HEIGHT, NODE_WIDTH } from './types';

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

describe('where a new step lands', () => {
  const card = { width: NODE_WIDTH, height: NODE_HEIGHT };
  const two: Blueprint = {
    blueprint: 1,
    id: 'n',
    steps: [
      { id: 'a', kind: 'transform', value: 1 },
      { id: 'b', kind: 'transform', value: 2, after: [] },
    ],
    layout: { a: { x: 0, y: 0 }, b: { x: 600, y: 0 } },
  };
  const rectOf = (p: { x: number; y: number }) => ({ ...p, ...card });

  it('lands at the requested point when it is free', () => {
    expect(newStepPosition(two.steps, two.layout, { container: null, at: { x: 0, y: 300 } })).toEqual({ x: 0, y: 300 });
  });

  it('is nudged to the nearest free slot, never on top of a card', () => {
    const at = { x: 20, y: 10 };
    const p = newStepPosition(two.steps, two.layout, { container: null, at });
    const obstacles = obstaclesIn(two.steps, null, two.layout);
    expect(isFree(rectOf(p), obstacles)).toBe(true);
    // Nearest: straight below `a` (a card height and the margin away), not far off.
    expect(p).toEqual({ x: 20, y: NODE_HEIGHT + SLOT_MARGIN });
  });

  it('goes right of the selected step, below it when the right is taken', () => {
    const right = newStepPosition(two.steps, two.layout, { container: null, near: 'a' });
    expect(right).toEqual({ x: NODE_WIDTH + GAP_X, y: 0 });
    const crowded: Blueprint = { ...two, layout: { a: { x: 0, y: 0 }, b: { x: NODE_WIDTH + GAP_X, y: 0 } } };
    const below = newStepPosition(crowded.steps, crowded.layout, { container: null, near: 'a' });
    expect(below).toEqual({ x: 0, y: NODE_HEIGHT + GAP_Y });
  });

  it('goes to the centre of the view without a selection, nudged off cards', () => {
    const free = newStepPosition(two.steps, two.layout, { container: null, viewCenter: { x: 400, y: 500 } });
    expect(free).toEqual({ x: 400 - NODE_WIDTH / 2, y: 500 - NODE_HEIGHT / 2 });
    const onA = newStepPosition(two.steps, two.layout, { container: null, viewCenter: { x: 120, y: 55 } });
    expect(isFree(rectOf(onA), obstaclesIn(two.steps, null, two.layout))).toBe(true);
  });

  it('keeps to the body of a loop, relative to it, and treats loops as one box at the top level', () => {
    const placed = placeAll(doc.steps, undefined);
    const x = placed.get('x')!;
    const inBody = newStepPosition(doc.steps, undefined, { container: 'each', at: x.position });
    expect(isFree(rectOf(inBody), obstaclesIn(doc.steps, 'each', undefined))).toBe(true);
    const loop = placed.get('each')!;
    const top = newStepPosition(doc.steps, undefined, { container: null, at: { x: loop.position.x + 30, y: loop.position.y + 100 } });
    const box = { x: loop.position.x, y: loop.position.y, width: loop.width, height: loop.height };
    expect(isFree(rectOf(top), [box])).toBe(true);
  });

  it('never overlaps, however many steps are added at the same spot', () => {
    let steps: Blueprint['steps'] = [];
    const layout: Record<string, { x: number; y: number }> = {};
    for (let i = 0; i < 30; i++) {
      const p = newStepPosition(steps, layout, { container: null, at: { x: 100, y: 100 } });
      const id = `s${i}`;
      expect(isFree(rectOf(p), obstaclesIn(steps, null, layout)), id).toBe(true);
      steps = [...steps, { id, kind: 'transform', value: i, after: [] }];
      layout[id] = p;
    }
  });
});
