// A generated 1,000-step blueprint (scripts/gen-blueprint.mjs) through the graph
// mapping and the auto-layout: it must come out whole. How long opening a large
// blueprint takes is measured in the app by the studio's bench (`npm run perf:studio`,
// tests/e2e/perf.bench.mjs), never asserted by a test.

import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Blueprint, Step } from '../doc/types';
import { computeAutoLayout } from './auto-layout';
import { docToGraph } from './doc-to-graph';

type Generate = (opts: { steps: number; layout?: boolean; seed?: number }) => Blueprint;
let generate: Generate;

beforeAll(async () => {
  // Not a literal specifier: the script is plain JavaScript outside the UI's sources.
  const path = fileURLToPath(new URL('../../../scripts/gen-blueprint.mjs', import.meta.url));
  generate = ((await import(/* @vite-ignore */ path)) as { generateBlueprint: Generate }).generateBlueprint;
});

function allIds(steps: readonly Step[]): string[] {
  return steps.flatMap((s) => [s.id, ...(s.kind === 'loop' ? allIds(s.steps) : [])]);
}

describe('a generated 1,000-step blueprint', () => {
  it('maps to 1,000 nodes, placed without overlaps', () => {
    const doc = generate({ steps: 1000 });
    const ids = allIds(doc.steps);
    expect(ids).toHaveLength(1000);
    const g = docToGraph(doc);
    expect(g.nodes.map((n) => n.id).sort()).toEqual([...ids].sort());
    expect(g.edges.length).toBeGreaterThan(900);

    // Top-level nodes do not overlap (bodies sit inside their loops).
    const boxes = g.nodes
      .filter((n) => !n.parentId)
      .map((n) => ({
        id: n.id,
        x: n.position.x,
        y: n.position.y,
        w: n.width ?? n.initialWidth ?? 0,
        h: n.height ?? n.initialHeight ?? 0,
      }))
      .sort((a, b) => a.x - b.x || a.y - b.y);
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length && boxes[j]!.x < boxes[i]!.x + boxes[i]!.w; j++) {
        const a = boxes[i]!;
        const b = boxes[j]!;
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `${a.id} overlaps ${b.id}`).toBe(false);
      }
    }

    // Measured sizes and a stored layout place every step too.
    const measured = new Map(ids.map((id) => [id, { width: 240, height: 96 }]));
    expect(docToGraph(doc, { measured }).nodes).toHaveLength(g.nodes.length);
    expect(docToGraph(generate({ steps: 1000, layout: true })).nodes).toHaveLength(g.nodes.length);
  });

  it('auto-lays out 1,000 steps (elkjs) with a position for every step', async () => {
    const doc = generate({ steps: 1000 });
    const layout = await computeAutoLayout(doc);
    expect(Object.keys(layout).sort()).toEqual(allIds(doc.steps).sort());
  }, 120_000);
});
