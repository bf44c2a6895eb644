// The geometry of the large-document minimap (BitmapMiniMap) and of the view a large
// document opens at (startViewport): pure functions, checked against hand-worked cases
// and against the generated 1,000-step blueprint through the real graph mapping.

import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Blueprint } from '../doc/types';
import { docToGraph } from '../graph/doc-to-graph';
import type { FlowNode } from '../graph/types';
import { fitMap, MAP_HEIGHT, MAP_WIDTH, nodeBoxes, toFlow, toMap, viewRect } from './BitmapMiniMap';
import { startViewport } from './Canvas';

const node = (id: string, x: number, y: number, extra: Partial<FlowNode> = {}): FlowNode =>
  ({ id, type: 'tool', position: { x, y }, data: {}, initialWidth: 100, initialHeight: 40, ...extra }) as FlowNode;

describe('nodeBoxes', () => {
  it('places children of (nested) loops relative to their parents, and prefers measured sizes', () => {
    const boxes = nodeBoxes([
      node('outer', 100, 50, { type: 'loop', width: 600, height: 400, initialWidth: undefined }),
      node('inner', 20, 30, { type: 'loop', parentId: 'outer', width: 300, height: 200 }),
      node('leaf', 5, 7, { parentId: 'inner', measured: { width: 90, height: 33 } }),
    ]);
    expect(boxes.map(({ x, y, width, height, type }) => [x, y, width, height, type])).toEqual([
      [100, 50, 600, 400, 'loop'],
      [120, 80, 300, 200, 'loop'],
      [125, 87, 90, 33, 'tool'],
    ]);
  });

  it('survives a parent cycle and a missing parent', () => {
    const boxes = nodeBoxes([node('a', 1, 1, { parentId: 'b' }), node('b', 2, 2, { parentId: 'a' }), node('c', 3, 3, { parentId: 'gone' })]);
    expect(boxes).toHaveLength(3);
    expect(boxes[2]).toMatchObject({ x: 3, y: 3 });
    for (const b of boxes) expect(Number.isFinite(b.x) && Number.isFinite(b.y)).toBe(true);
  });
});

describe('fitMap', () => {
  it('fits the boxes inside the map, centred, keeping their proportions', () => {
    const boxes = [
      { x: 0, y: 0, width: 100, height: 100 },
      { x: 1900, y: 400, width: 100, height: 100 },
    ];
    const fit = fitMap(boxes, MAP_WIDTH, MAP_HEIGHT);
    const all = boxes.map((b) => toMap(fit, b));
    for (const r of all) {
      expect(r.x).toBeGreaterThanOrEqual(0);
      expect(r.y).toBeGreaterThanOrEqual(0);
      expect(r.x + r.width).toBeLessThanOrEqual(MAP_WIDTH + 1e-9);
      expect(r.y + r.height).toBeLessThanOrEqual(MAP_HEIGHT + 1e-9);
      expect(r.width).toBeCloseTo(r.height); // squares stay squares
    }
    // Wider than tall: the width is the limit, and the drawing is centred vertically.
    const top = Math.min(...all.map((r) => r.y));
    const bottom = Math.max(...all.map((r) => r.y + r.height));
    expect(top).toBeCloseTo(MAP_HEIGHT - bottom, 6);
  });

  it('maps a point there and back', () => {
    const fit = fitMap([{ x: -300, y: 20, width: 5000, height: 900 }], MAP_WIDTH, MAP_HEIGHT);
    const p = { x: 1234, y: 567 };
    const r = toMap(fit, { ...p, width: 0, height: 0 });
    const back = toFlow(fit, { x: r.x, y: r.y });
    expect(back.x).toBeCloseTo(p.x, 6);
    expect(back.y).toBeCloseTo(p.y, 6);
  });

  it('has a fit for no nodes', () => {
    expect(fitMap([], MAP_WIDTH, MAP_HEIGHT).scale).toBe(1);
  });
});

describe('viewRect', () => {
  it('is the visible part of the flow for a transform and pane size', () => {
    expect(viewRect([-200, 100, 2], 800, 600)).toEqual({ x: 100, y: -50, width: 400, height: 300 });
  });
});

describe('startViewport', () => {
  let generate: (opts: { steps: number }) => Blueprint;
  beforeAll(async () => {
    const path = fileURLToPath(new URL('../../../scripts/gen-blueprint.mjs', import.meta.url));
    generate = ((await import(/* @vite-ignore */ path)) as { generateBlueprint: typeof generate }).generateBlueprint;
  });

  it('opens a large document at 100% with its top-left step just inside the view', () => {
    const { nodes } = docToGraph(generate({ steps: 1000 }));
    const view = startViewport(nodes);
    expect(view.zoom).toBe(1);
    const top = nodes.filter((n) => !n.parentId);
    const minX = Math.min(...top.map((n) => n.position.x));
    const minY = Math.min(...top.map((n) => n.position.y));
    // The top-left corner of the drawing lands at the margin, on screen.
    expect(minX * view.zoom + view.x).toBe(40);
    expect(minY * view.zoom + view.y).toBe(40);
    // Only a few nodes are visible in a 1,200 × 800 pane (the rest are not rendered).
    const pane = viewRect([view.x, view.y, view.zoom], 1200, 800);
    const visible = nodeBoxes(nodes).filter(
      (b) => b.x < pane.x + pane.width && b.x + b.width > pane.x && b.y < pane.y + pane.height && b.y + b.height > pane.y,
    );
    expect(visible.length).toBeGreaterThan(0);
    expect(visible.length).toBeLessThan(60);
  });

  it('has a view for no nodes', () => {
    expect(startViewport([])).toEqual({ x: 0, y: 0, zoom: 1 });
  });
});
