//! The view rules of the canvas, pure: the zoom a blueprint opens at, the padding
//! of a fitted view (room for the minimap in its corner), the zoom steps of `+`/`-`
//! and the zoom control. Canvas.tsx, commands.ts and ZoomControl.tsx apply them.

import { getViewportForBounds, type FitViewOptions, type Rect, type Viewport } from '@xyflow/react';

type Padding = NonNullable<FitViewOptions['padding']>;

/** Below this, card titles are not legible: a blueprint does not open fitted smaller. */
export const OPEN_MIN_ZOOM = 0.6;
/** The zoom a blueprint too big to fit legibly opens at (showing its start). */
export const START_ZOOM = 0.75;
/** Fit never zooms in past 100%: a small graph stays at its natural size. */
export const FIT_MAX_ZOOM = 1;
export const MIN_ZOOM = 0.05;
export const MAX_ZOOM = 2;
/** The zooms offered by the zoom control's menu. */
export const ZOOM_PRESETS = [0.5, 1, 1.5] as const;
/** `+`/`-` and the control's buttons multiply the zoom by this. */
export const ZOOM_FACTOR = 1.2;

/** The minimap's size (bottom right) and its margin from the canvas edges. */
export const MINIMAP_WIDTH = 160;
export const MINIMAP_HEIGHT = 100;
export const MINIMAP_MARGIN = 12;
/** Room around a fitted view, in pixels. */
const PAD = 40;
/** The first-start guide's card over the canvas's left side (`.guide-card` in
 * app/layout.css: 12 px in, 340 px wide): a blueprint opened with it shown keeps clear. */
export const GUIDE_INSET = 12 + 340;

/**
 * Padding of a fitted view: with the minimap shown, the bottom keeps its height free,
 * so no node of a fitted view lies under it.
 */
export function fitPadding(minimap: boolean, leftInset = 0): Padding {
  const bottom = minimap ? MINIMAP_HEIGHT + MINIMAP_MARGIN * 2 : PAD;
  return { top: `${PAD}px`, left: `${PAD + leftInset}px`, right: `${PAD}px`, bottom: `${bottom}px` };
}

/** The fit options of Fit, Shift+1 and auto-layout. */
export function fitOptions(minimap: boolean, duration = 200) {
  return { padding: fitPadding(minimap), maxZoom: FIT_MAX_ZOOM, minZoom: MIN_ZOOM, duration };
}

/**
 * Where a blueprint opens: fitted whole when that is legible (≥ `OPEN_MIN_ZOOM`, never
 * above 100%), else at `START_ZOOM` showing its start (its top-left steps).
 * `bounds`: every node's box in flow coordinates; `width`/`height`: the canvas;
 * `leftInset`: what covers the canvas's left side (the guide, `GUIDE_INSET`).
 */
export function openViewport(bounds: Rect | null, width: number, height: number, minimap: boolean, leftInset = 0): Viewport {
  if (!bounds || width <= 0 || height <= 0) return { x: leftInset, y: 0, zoom: 1 };
  const fitted = getViewportForBounds(bounds, width, height, MIN_ZOOM, FIT_MAX_ZOOM, fitPadding(minimap, leftInset));
  if (fitted.zoom >= OPEN_MIN_ZOOM) return fitted;
  return { x: PAD + leftInset - bounds.x * START_ZOOM, y: PAD - bounds.y * START_ZOOM, zoom: START_ZOOM };
}

/** The zoom after one step in or out, clamped. */
export function stepZoom(zoom: number, dir: 1 | -1): number {
  const next = dir > 0 ? zoom * ZOOM_FACTOR : zoom / ZOOM_FACTOR;
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, next));
}

/** The viewport at `zoom` keeping the canvas point at the centre where it is. */
export function zoomAround(view: Viewport, zoom: number, width: number, height: number): Viewport {
  const cx = (width / 2 - view.x) / view.zoom;
  const cy = (height / 2 - view.y) / view.zoom;
  return { x: width / 2 - cx * zoom, y: height / 2 - cy * zoom, zoom };
}

/** "85%". */
export function zoomLabel(zoom: number): string {
  return `${Math.round(zoom * 100)}%`;
}
