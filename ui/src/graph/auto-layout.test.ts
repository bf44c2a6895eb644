import { describe, expect, it } from 'vitest';
import type { Blueprint } from '../doc/types';
import { example } from '../testing/examples';
import { layoutGraph, type GraphLayout, type Rect } from './auto-layout';
import { createDocStore } from '../doc/store';
import { docToGraph } from './doc-to-graph';
import { anchored, routedPath, routeStore } from './routes';
import { autoLayout, restoreRoutes } from './apply-layout';

// A loop between two steps, a body step that depends on a step outside the loop
// (written by hand: the editor keeps `after` within one list), and a long edge that
// passes the loop: ELK must route both around the loop box, not through it.
const doc: Blueprint = {
  blueprint: 1,
  id: 'around',
  steps: [
    { id: 'fetch', kind: 'transform', value: [1, 2] },
    { id: 'prep', kind: 'transform', value: '{{ fetch }}' },
    {
      id: 'each',
      kind: 'loop',
      for_each: '{{ prep }}',
      steps: [
        { id: 'a', kind: 'transform', value: '{{ item }}' },
        { id: 'b', kind: 'transform', after: ['a', 'fetch'], value: '{{ a }}' },
        { id: 'c', kind: 'transform', value: '{{ b }}' },
      ],
    },
    { id: 'side', kind: 'transform', after: ['prep'], value: 1 },
    { id: 'report', kind: 'transform', after: ['each', 'fetch', 'side'], value: '{{ each }}' },
  ],
};

type Seg = [{ x: number; y: number }, { x: number; y: number }];

/** Whether an orthogonal segment enters the interior of a box (its border may be touched). */
function crosses([p, q]: Seg, r: Rect): boolean {
  const e = 0.5;
  const x0 = Math.min(p.x, q.x);
  const x1 = Math.max(p.x, q.x);
  const y0 = Math.min(p.y, q.y);
  const y1 = Math.max(p.y, q.y);
  return x1 > r.x + e && x0 < r.x + r.width - e && y1 > r.y + e && y0 < r.y + r.height - e;
}

function overlap(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** Every problem in a layout: overlapping cards, edges through loops or cards they do not belong to. */
function problems(d: Blueprint, g: GraphLayout): string[] {
  const out: string[] = [];
  const ids = Object.keys(g.boxes);
  const ancestors = (id: string): Set<string> => {
    const s = new Set<string>();
    for (let c = g.boxes[id]?.parent ?? null; c; c = g.boxes[c]?.parent ?? null) s.add(c);
    return s;
  };
  for (const a of ids) {
    for (const b of ids) {
      if (a >= b || ancestors(a).has(b) || ancestors(b).has(a)) continue;
      if (overlap(g.boxes[a]!, g.boxes[b]!)) out.push(`${a} overlaps ${b}`);
    }
  }
  for (const e of docToGraph(d).edges) {
    const route = g.routes[e.id];
    if (!route) {
      out.push(`${e.id} has no route`);
      continue;
    }
    const mine = new Set([e.source, e.target, ...ancestors(e.source), ...ancestors(e.target)]);
    for (let i = 0; i + 1 < route.length; i++) {
      const seg: Seg = [route[i]!, route[i + 1]!];
      if (seg[0].x !== seg[1].x && seg[0].y !== seg[1].y) out.push(`${e.id} has a diagonal segment`);
      for (const id of ids) {
        if (!mine.has(id) && crosses(seg, g.boxes[id]!)) out.push(`${e.id} crosses ${g.boxes[id]!.loop ? 'loop' : 'card'} ${id}`);
      }
    }
  }
  return out;
}

describe('auto-layout (elkjs, hierarchical)', () => {
  it('routes an edge into a loop body, and one past the loop, around the loop box; no card overlaps another', async () => {
    const g = await layoutGraph(doc);
    expect(problems(doc, g)).toEqual([]);
    // The body is inside its loop, below the header.
    const loop = g.boxes.each!;
    for (const id of ['a', 'b', 'c']) {
      const b = g.boxes[id]!;
      expect(b.x).toBeGreaterThanOrEqual(loop.x);
      expect(b.y).toBeGreaterThanOrEqual(loop.y + 40);
      expect(b.x + b.width).toBeLessThanOrEqual(loop.x + loop.width);
      expect(b.y + b.height).toBeLessThanOrEqual(loop.y + loop.height);
    }
    // Left to right: what runs later is further right.
    expect(g.boxes.prep!.x).toBeGreaterThan(g.boxes.fetch!.x);
    expect(g.boxes.each!.x).toBeGreaterThan(g.boxes.prep!.x);
    expect(g.boxes.report!.x).toBeGreaterThan(g.boxes.each!.x + g.boxes.each!.width);
    // Edges start and end at the handles: `out` on the right middle, `in` on the left middle.
    const r = g.routes['after:prep->side']!;
    const prep = g.boxes.prep!;
    const side = g.boxes.side!;
    expect(Math.abs(r[0]!.x - (prep.x + prep.width))).toBeLessThanOrEqual(2);
    expect(Math.abs(r[0]!.y - (prep.y + prep.height / 2))).toBeLessThanOrEqual(2);
    expect(Math.abs(r[r.length - 1]!.x - side.x)).toBeLessThanOrEqual(2);
    expect(Math.abs(r[r.length - 1]!.y - (side.y + side.height / 2))).toBeLessThanOrEqual(2);
    // Positions for `layout`: body steps relative to their loop.
    expect(g.positions.a!.x).toBe(Math.round(g.boxes.a!.x - loop.x));
  });

  it('lays the examples out without overlaps or edges through loops and cards', async () => {
    for (const name of ['loop-collect', 'cmdb-sync', 'switch-diamond', 'retry-fallback', 'fan-out-fan-in']) {
      const d = JSON.parse(example(name)) as Blueprint;
      const g = await layoutGraph(d);
      expect(problems(d, g), name).toEqual([]);
    }
  });
});

describe('drawing edges along their routes', () => {
  it('moves the ends of a route onto the handles and keeps every segment straight', () => {
    const route = [
      { x: 100, y: 50 },
      { x: 140, y: 50 },
      { x: 140, y: 300 },
      { x: 400, y: 300 },
    ];
    const { path } = routedPath(route, { x: 103, y: 52 }, { x: 398, y: 305 }, 0);
    // Radius 0: each corner is a point (L to it, a degenerate Q through it).
    expect(path).toBe('M 103 52 L 140 52 Q 140 52 140 52 L 140 305 Q 140 305 140 305 L 398 305');
  });

  it('gives a straight route between handles at different heights a step', () => {
    const { path } = routedPath([{ x: 0, y: 0 }, { x: 100, y: 0 }], { x: 0, y: 0 }, { x: 100, y: 40 }, 0);
    expect(path).toMatch(/^M 0 0 L 50 0 .*L 50 40 .*L 100 40$/);
  });

  it('keeps routes after an auto-layout through the store, one undo entry, and forgets them on load', async () => {
    const store = createDocStore();
    store.getState().load(doc);
    await autoLayout(store);
    expect(store.getState().past.map((h) => h.label)).toEqual(['Auto-layout']);
    expect(Object.keys(routeStore.getState().routes).sort()).toEqual(docToGraph(doc).edges.map((e) => e.id).sort());
    expect(anchored('fetch', { x: store.getState().doc.layout!.fetch!.x, y: store.getState().doc.layout!.fetch!.y }, routeStore.getState().anchors)).toBe(true);
    expect(anchored('fetch', { x: 9999, y: 0 }, routeStore.getState().anchors)).toBe(false);
    const laidOut = store.getState().doc;
    store.getState().load(doc);
    expect(routeStore.getState().routes).toEqual({});
    // Reopened as laid out: the routes come back; a document without positions gets none.
    store.getState().load(laidOut);
    await restoreRoutes(store);
    expect(Object.keys(routeStore.getState().routes).length).toBeGreaterThan(0);
    const l = laidOut.layout!;
    expect(anchored('report', { x: l.report!.x, y: l.report!.y }, routeStore.getState().anchors)).toBe(true);
    store.getState().load(doc);
    await restoreRoutes(store);
    expect(routeStore.getState().routes).toEqual({});
  });
});

describe('autoLayout through a document store', () => {
  it('writes a position for every step in one undo entry, bodies relative to their loop', async () => {
    const store = createDocStore();
    store.getState().load(JSON.parse(example('loop-collect')) as Blueprint);
    const s = () => store.getState();
    await autoLayout(store);
    expect(s().past).toHaveLength(1);
    const layout = s().doc.layout!;
    expect(Object.keys(layout).sort()).toEqual(['batch', 'each_message', 'measure', 'report', 'say']);
    expect(layout.each_message!.width).toBeGreaterThan(0);
    // Left to right: batch, the loop, report; in the body: say, then measure.
    expect(layout.batch!.x).toBeLessThan(layout.each_message!.x);
    expect(layout.each_message!.x + layout.each_message!.width!).toBeLessThanOrEqual(layout.report!.x);
    expect(layout.say!.x).toBeLessThan(layout.measure!.x);
    expect(layout.say!.x).toBeLessThan(layout.each_message!.width!);
    expect(layout.say!.y).toBeGreaterThanOrEqual(40);
    s().undo();
    expect(s().doc.layout).toBeUndefined();
  });
});
