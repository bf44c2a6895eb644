//! Where nodes go: the `layout` position when there is one, otherwise a deterministic
//! placement by dependency depth (one column per depth, stacked in list order), and
//! the size of every loop container (its `layout` size, grown to hold its body).
//! Body positions are relative to their loop's container. `autoLayout` (elkjs) is
//! the real layout; this only makes a blueprint without `layout` readable. A placed
//! step takes at least its estimated size in its column, so measuring nodes that are
//! smaller than estimated moves nothing.

import { listRoles, stepDeps } from '../doc/deps';
import { isLoop } from '../doc/query';
import type { Layout, Step, XY } from '../doc/types';
import {
  CASE_ROW_HEIGHT,
  GAP_X,
  GAP_Y,
  LOOP_HEADER,
  LOOP_MIN_HEIGHT,
  LOOP_MIN_WIDTH,
  LOOP_PADDING,
  NODE_HEIGHT,
  NODE_WIDTH,
} from './types';

export interface Placed {
  position: XY;
  width: number;
  height: number;
}

/** The size a step's node is expected to have before it is measured. */
export function estimateSize(step: Step): { width: number; height: number } {
  if (step.kind === 'switch') {
    const cases = Array.isArray(step.cases) ? step.cases.length : 0;
    return { width: NODE_WIDTH, height: NODE_HEIGHT + (cases + 1) * CASE_ROW_HEIGHT };
  }
  return { width: NODE_WIDTH, height: NODE_HEIGHT };
}

/** Measured sizes of step nodes by id (loops excluded: their size is computed). */
export type MeasuredSizes = ReadonlyMap<string, { width: number; height: number }>;

/** Places every step of the blueprint (nested bodies included), keyed by id. */
export function placeAll(steps: readonly Step[], layout: Layout | undefined, measured?: MeasuredSizes): Map<string, Placed> {
  const out = new Map<string, Placed>();
  placeList(steps, layout ?? {}, { x: 0, y: 0 }, out, measured);
  return out;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Places one list (bodies first, to know container sizes); returns the bounds of what it placed. */
function placeList(
  steps: readonly Step[],
  layout: Layout,
  origin: XY,
  out: Map<string, Placed>,
  measured: MeasuredSizes | undefined,
): { right: number; bottom: number } {
  const sizes = new Map<string, { width: number; height: number }>();
  for (const s of steps) {
    if (!s || typeof s.id !== 'string') continue;
    if (isLoop(s)) {
      const body = placeList(s.steps, layout, { x: LOOP_PADDING, y: LOOP_HEADER }, out, measured);
      const entry = layout[s.id];
      sizes.set(s.id, {
        width: Math.max(num(entry?.width) ?? 0, body.right + LOOP_PADDING, LOOP_MIN_WIDTH),
        height: Math.max(num(entry?.height) ?? 0, body.bottom + LOOP_PADDING, LOOP_MIN_HEIGHT),
      });
    } else {
      sizes.set(s.id, measured?.get(s.id) ?? estimateSize(s));
    }
  }

  let right = 0;
  let bottom = 0;
  const unplaced: number[] = [];
  steps.forEach((s, i) => {
    if (!s || typeof s.id !== 'string' || out.has(s.id)) return;
    const e = layout[s.id];
    const x = num(e?.x);
    const y = num(e?.y);
    if (x === null || y === null) {
      unplaced.push(i);
      return;
    }
    const size = sizes.get(s.id)!;
    out.set(s.id, { position: { x, y }, ...size });
    right = Math.max(right, x + size.width);
    bottom = Math.max(bottom, y + size.height);
  });
  if (unplaced.length === 0) return { right, bottom };

  // Steps without a position: columns by dependency depth, below what has a position.
  const start: XY = unplaced.length === steps.length ? origin : { x: origin.x, y: bottom + 2 * GAP_Y };
  const roles = listRoles(steps);
  const index = new Map(steps.map((s, i) => [s?.id, i]));
  const depth = new Map<number, number>();
  const guard = new Set<number>();
  const depthOf = (i: number): number => {
    const known = depth.get(i);
    if (known !== undefined) return known;
    if (guard.has(i)) return 0;
    guard.add(i);
    const d = stepDeps(steps, i, roles);
    const parents = d.after;
    if (d.switchFrom) parents.push(d.switchFrom.switch);
    if (d.fallbackOf) parents.push(d.fallbackOf);
    let r = 0;
    for (const p of parents) {
      const j = index.get(p);
      if (j !== undefined && j !== i) r = Math.max(r, depthOf(j) + (d.fallbackOf ? 0 : 1));
    }
    guard.delete(i);
    depth.set(i, r);
    return r;
  };
  const columns: number[][] = [];
  for (const i of unplaced) (columns[depthOf(i)] ??= []).push(i);
  let x = start.x;
  for (const col of columns) {
    if (!col) continue;
    let y = start.y;
    let width = 0;
    for (const i of col) {
      const s = steps[i]!;
      const size = sizes.get(s.id)!;
      out.set(s.id, { position: { x, y }, ...size });
      const slot = slotOf(s, size);
      y += slot.height + GAP_Y;
      width = Math.max(width, slot.width);
      bottom = Math.max(bottom, y - GAP_Y);
    }
    x += width + GAP_X;
    right = Math.max(right, x - GAP_X);
  }
  return { right, bottom };
}

/**
 * The room a placed step takes in its column: its size, but never less than the
 * estimate. Measured nodes are mostly smaller than the estimate, so measuring them
 * moves nothing (one render of a large blueprint, not two, and no jump after the first
 * paint); only a node taller than estimated pushes the ones below it down.
 */
function slotOf(step: Step, size: { width: number; height: number }): { width: number; height: number } {
  if (isLoop(step)) return size; // computed from its body, which follows the same rule
  const est = estimateSize(step);
  return { width: Math.max(size.width, est.width), height: Math.max(size.height, est.height) };
}
