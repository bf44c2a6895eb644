//! Where nodes go: the `layout` position when there is one, otherwise a deterministic
//! placement by dependency depth (one column per depth, stacked in list order), and
//! the size of every loop container (its `layout` size, grown to hold its body).
//! Body positions are relative to their loop's container. `autoLayout` (elkjs) is
//! the real layout; this only makes a blueprint without `layout` readable. A placed
//! step takes at least its estimated size in its column, so measuring nodes that are
//! smaller than estimated moves nothing.

import { listRoles, stepDeps } from './deps';
import { isLoop } from './query';
import type { Layout, Step, XY } from './types';
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
} from './sizes';

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

// ---------------------------------------------------------------------------------
// Where a new step lands

/** Room kept free around a new step, so it never touches a card. */
export const SLOT_MARGIN = 20;
/** The grid the nudge searches, in flow pixels. */
const NUDGE_STEP = 20;
/** How far the nudge searches before giving up (then the step goes below everything). */
const NUDGE_LIMIT = 4000;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface NewStepRequest {
  /** The list the step goes into (a loop id), `null` for the top level. */
  container: string | null;
  /** Where the person asked for it (top-left, relative to the container): a drop. */
  at?: XY | null;
  /** The step to put it next to (right of it, or below if that is taken): the selection. */
  near?: string | null;
  /** The centre of the visible canvas, in flow coordinates (top level): the fallback. */
  viewCenter?: XY | null;
  /** The size of the new step (default: a step card's estimate). */
  size?: { width: number; height: number };
  /** Measured sizes of the cards already there (the canvas knows them); estimates for the rest. */
  measured?: MeasuredSizes;
}

/** The cards already in one list (loops as their whole box), relative to its container. */
export function obstaclesIn(steps: readonly Step[], container: string | null, layout: Layout | undefined, measured?: MeasuredSizes): Rect[] {
  const placed = placeAll(steps, layout, measured);
  const list = container === null ? steps : findList(steps, container);
  const out: Rect[] = [];
  for (const s of list ?? []) {
    const p = s && typeof s.id === 'string' ? placed.get(s.id) : undefined;
    if (p) out.push({ x: p.position.x, y: p.position.y, width: p.width, height: p.height });
  }
  return out;
}

function findList(steps: readonly Step[], id: string): readonly Step[] | null {
  for (const s of steps) {
    if (!isLoop(s)) continue;
    if (s.id === id) return s.steps;
    const inner = findList(s.steps, id);
    if (inner) return inner;
  }
  return null;
}

function overlaps(a: Rect, b: Rect, margin: number): boolean {
  return a.x < b.x + b.width + margin && b.x < a.x + a.width + margin && a.y < b.y + b.height + margin && b.y < a.y + a.height + margin;
}

/** Whether a card at `r` would touch one of `obstacles` (closer than `SLOT_MARGIN`). */
export function isFree(r: Rect, obstacles: readonly Rect[]): boolean {
  return !obstacles.some((o) => overlaps(r, o, SLOT_MARGIN));
}

/**
 * The free slot nearest to `start` (top-left) for a card of `size`: `start` itself when
 * it is free, else the closest point on a 20 px grid around it where the card touches
 * nothing. Searched ring by ring, so the first free ring wins.
 */
export function nearestFree(start: XY, size: { width: number; height: number }, obstacles: readonly Rect[]): XY {
  const at = (x: number, y: number): Rect => ({ x, y, width: size.width, height: size.height });
  if (isFree(at(start.x, start.y), obstacles)) return { x: start.x, y: start.y };
  for (let ring = 1; ring * NUDGE_STEP <= NUDGE_LIMIT; ring++) {
    const r = ring * NUDGE_STEP;
    let best: XY | null = null;
    let bestD = Infinity;
    for (let k = -ring; k <= ring; k++) {
      const d = k * NUDGE_STEP;
      for (const [dx, dy] of [
        [d, -r],
        [d, r],
        [-r, d],
        [r, d],
      ] as const) {
        const dist = dx * dx + dy * dy;
        if (dist >= bestD) continue;
        const x = start.x + dx;
        const y = start.y + dy;
        if (isFree(at(x, y), obstacles)) {
          best = { x, y };
          bestD = dist;
        }
      }
    }
    // A point on a later ring can be closer than a corner of this one only within √2;
    // the first ring with a free point is near enough and keeps the search short.
    if (best) return best;
  }
  const bottom = Math.max(...obstacles.map((o) => o.y + o.height));
  return { x: start.x, y: bottom + GAP_Y };
}

/**
 * Where a new step goes (top-left, relative to its container): at the requested point;
 * else right of the `near` step (below it when the right is taken); else centred on
 * the view; else right of everything. Never on top of an existing card: the spot is
 * nudged to the nearest free slot.
 */
export function newStepPosition(steps: readonly Step[], layout: Layout | undefined, req: NewStepRequest): XY {
  const size = req.size ?? { width: NODE_WIDTH, height: NODE_HEIGHT };
  const obstacles = obstaclesIn(steps, req.container, layout, req.measured);
  const round = (p: XY): XY => ({ x: Math.round(p.x), y: Math.round(p.y) });
  if (req.at) return round(nearestFree(req.at, size, obstacles));
  const near = req.near ? placeAll(steps, layout, req.measured).get(req.near) : undefined;
  if (near) {
    const right = { x: near.position.x + near.width + GAP_X, y: near.position.y };
    const below = { x: near.position.x, y: near.position.y + near.height + GAP_Y };
    for (const p of [right, below]) if (isFree({ ...p, ...size }, obstacles)) return round(p);
    return round(nearestFree(right, size, obstacles));
  }
  if (req.viewCenter) return round(nearestFree({ x: req.viewCenter.x - size.width / 2, y: req.viewCenter.y - size.height / 2 }, size, obstacles));
  if (obstacles.length === 0) return { x: 0, y: 0 };
  const right = Math.max(...obstacles.map((o) => o.x + o.width));
  const top = Math.min(...obstacles.map((o) => o.y));
  return round(nearestFree({ x: right + GAP_X, y: top }, size, obstacles));
}
