// The view rules (view.ts): where a blueprint opens, the fit padding that keeps the
// minimap off the nodes, and the zoom steps — against hand-worked cases.

import { describe, expect, it } from 'vitest';
import { fitOptions, GUIDE_INSET, MINIMAP_HEIGHT, OPEN_MIN_ZOOM, openViewport, START_ZOOM, stepZoom, zoomAround, zoomLabel } from './view';

describe('openViewport', () => {
  it('never opens a small blueprint past 100%', () => {
    const v = openViewport({ x: 0, y: 0, width: 240, height: 80 }, 1000, 700, true);
    expect(v.zoom).toBe(1);
  });

  it('fits a blueprint whole when that is legible', () => {
    // 1400 px wide in a 1000 px canvas: about 0.66 after padding.
    const v = openViewport({ x: 0, y: 0, width: 1400, height: 300 }, 1000, 700, true);
    expect(v.zoom).toBeGreaterThanOrEqual(OPEN_MIN_ZOOM);
    expect(v.zoom).toBeLessThan(0.7);
  });

  it('opens a wide blueprint at its start, legible, instead of fitting it into specks', () => {
    const v = openViewport({ x: 100, y: 50, width: 4000, height: 1200 }, 800, 600, true);
    expect(v.zoom).toBe(START_ZOOM);
    // The top-left of the steps is near the top-left of the canvas.
    expect(100 * v.zoom + v.x).toBeCloseTo(40);
    expect(50 * v.zoom + v.y).toBeCloseTo(40);
  });

  it('keeps the minimap corner free in a fitted view', () => {
    const bounds = { x: 0, y: 0, width: 900, height: 600 };
    const v = openViewport(bounds, 1000, 700, true);
    const bottom = (bounds.y + bounds.height) * v.zoom + v.y;
    expect(bottom).toBeLessThanOrEqual(700 - MINIMAP_HEIGHT - 12);
    // Without the minimap the same view may use that room.
    const w = openViewport(bounds, 1000, 700, false);
    expect(w.zoom).toBeGreaterThan(v.zoom);
  });

  it('an empty canvas opens at 100%', () => {
    expect(openViewport(null, 1000, 700, true)).toEqual({ x: 0, y: 0, zoom: 1 });
  });

  it('keeps a fitted blueprint clear of the guide on the left', () => {
    const bounds = { x: 0, y: 0, width: 500, height: 200 };
    const v = openViewport(bounds, 1000, 700, true, GUIDE_INSET);
    expect(v.x).toBeGreaterThanOrEqual(GUIDE_INSET);
    // Its right edge stays inside the canvas.
    expect(v.x + bounds.width * v.zoom).toBeLessThanOrEqual(1000);
    const start = openViewport({ x: 0, y: 0, width: 6000, height: 3000 }, 1000, 700, true, GUIDE_INSET);
    expect(start.x).toBeGreaterThanOrEqual(GUIDE_INSET);
  });
});

describe('zoom', () => {
  it('fit never zooms past 100%', () => {
    expect(fitOptions(true).maxZoom).toBe(1);
  });

  it('steps in and out by the same factor, clamped', () => {
    expect(stepZoom(1, 1)).toBeCloseTo(1.2);
    expect(stepZoom(stepZoom(1, 1), -1)).toBeCloseTo(1);
    expect(stepZoom(2, 1)).toBe(2);
    expect(stepZoom(0.05, -1)).toBe(0.05);
  });

  it('zooming keeps the canvas point at the centre in place', () => {
    const view = { x: -200, y: 100, zoom: 0.5 };
    const next = zoomAround(view, 1, 800, 600);
    const centre = (v: typeof view) => [(400 - v.x) / v.zoom, (300 - v.y) / v.zoom];
    expect(centre(next)[0]).toBeCloseTo(centre(view)[0]!);
    expect(centre(next)[1]).toBeCloseTo(centre(view)[1]!);
    expect(next.zoom).toBe(1);
  });

  it('labels the zoom as a percentage', () => {
    expect(zoomLabel(0.847)).toBe('85%');
  });
});
