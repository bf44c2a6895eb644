// Estimated handles of never-drawn nodes (graph/handles.ts) and how the canvas hands
// them out and takes them back (mergeNodes in canvas/Canvas.tsx).

import { Position } from '@xyflow/react';
import { describe, expect, it } from 'vitest';
import { mergeNodes } from './Canvas';
import type { Blueprint } from '../doc/types';
import { docToGraph } from '../graph/doc-to-graph';
import { estimatedHandles } from '../graph/handles';
import type { FlowNode } from '../graph/types';

const doc = {
  blueprint: 1,
  id: 'h',
  steps: [
    { id: 'a', kind: 'transform', value: 1 },
    {
      id: 'sw',
      kind: 'switch',
      cases: [
        { when: '{{ a }}', then: 'b' },
        { when: '{{ !a }}', then: 'c' },
      ],
      default: 'c',
    },
    { id: 'b', kind: 'transform', value: 2 },
    { id: 'c', kind: 'transform', value: 3 },
  ],
} as unknown as Blueprint;

describe('estimatedHandles', () => {
  const nodes = docToGraph(doc).nodes;
  const byId = new Map(nodes.map((n) => [n.id, n]));

  it('puts `in` on the left edge and `out` on the right edge, mid-height, and `fallback` at the bottom', () => {
    const a = byId.get('a')!;
    const h = estimatedHandles(a);
    const w = a.initialWidth!;
    const ht = a.initialHeight!;
    const get = (id: string) => h.find((x) => x.id === id)!;
    expect(get('in')).toMatchObject({ type: 'target', position: Position.Left });
    expect(get('in').x + get('in').width! / 2).toBe(0);
    expect(get('in').y + get('in').height! / 2).toBe(ht / 2);
    expect(get('out')).toMatchObject({ type: 'source', position: Position.Right });
    expect(get('out').x + get('out').width! / 2).toBe(w);
    expect(get('fallback').y + get('fallback').height! / 2).toBe(ht);
  });

  it('gives a switch a handle per case, `default` and `out`, in row order, and every edge of the graph finds its handle', () => {
    const sw = estimatedHandles(byId.get('sw')!);
    const sources = sw.filter((x) => x.type === 'source' && x.position === Position.Right);
    expect(sources.map((x) => x.id)).toEqual(['out', 'case-0', 'case-1', 'default']);
    const ys = sources.map((x) => x.y);
    expect([...ys].sort((p, q) => p - q)).toEqual(ys);
    for (const e of docToGraph(doc).edges) {
      const src = estimatedHandles(byId.get(e.source)!).find((x) => x.type === 'source' && x.id === (e.sourceHandle ?? 'out'));
      const dst = estimatedHandles(byId.get(e.target)!).find((x) => x.type === 'target' && x.id === (e.targetHandle ?? 'in'));
      expect(src, `source handle of ${e.id}`).toBeDefined();
      expect(dst, `target handle of ${e.id}`).toBeDefined();
    }
  });
});

describe('mergeNodes with estimates', () => {
  const derived = docToGraph(doc).nodes;

  it('gives never-measured nodes estimated handles, and none without `estimate`', () => {
    expect(mergeNodes(derived, [], new Set(), true).every((n) => Array.isArray(n.handles))).toBe(true);
    expect(mergeNodes(derived, [], new Set(), false).some((n) => n.handles)).toBe(false);
  });

  it('keeps measured nodes free of estimates when the document changes (their measured handles stand)', () => {
    const first = mergeNodes(derived, [], new Set(), true);
    const measured = first.map((n) => {
      if (n.id !== 'a') return n;
      const { handles: _h, ...rest } = n;
      return { ...rest, measured: { width: 200, height: 60 } } as FlowNode;
    });
    const again = mergeNodes(docToGraph({ ...doc, name: 'renamed' } as Blueprint).nodes, measured, new Set(['a']), true);
    const a = again.find((n) => n.id === 'a')!;
    expect(a.handles).toBeUndefined();
    expect(a.measured).toEqual({ width: 200, height: 60 });
    expect(again.find((n) => n.id === 'b')!.handles).toBeDefined();
  });
});
