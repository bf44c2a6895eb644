//! Edge routes from the last auto-layout. React Flow draws an edge from handle to
//! handle on its own (a smooth step), which knows nothing of the loop boxes and cards
//! in between; ELK routed every edge around them. The routes are kept here (not in the
//! document: the format has no place for them) with the place of every node they were
//! computed for; an edge follows its route while both of its ends are still there, and
//! is drawn the usual way once one of them moves (or after undo, or another document).

import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import type { XY } from '../doc/types';
import type { GraphLayout } from './auto-layout';

export interface RouteState {
  /** Route points by edge id, canvas coordinates, ends included. */
  routes: Record<string, XY[]>;
  /** Where each node's top-left corner was (canvas coordinates) when the routes were made. */
  anchors: Record<string, XY>;
}

export const routeStore = createStore<RouteState>()(() => ({ routes: {}, anchors: {} }));

export function setRoutes(g: Pick<GraphLayout, 'routes' | 'boxes'>): void {
  const anchors: Record<string, XY> = {};
  for (const [id, b] of Object.entries(g.boxes)) anchors[id] = { x: b.x, y: b.y };
  routeStore.setState({ routes: g.routes, anchors });
}

export function clearRoutes(): void {
  if (Object.keys(routeStore.getState().routes).length) routeStore.setState({ routes: {}, anchors: {} });
}

export function useRoutes<T>(selector: (s: RouteState) => T): T {
  return useStore(routeStore, selector);
}

/** Whether a node drawn at `at` (absolute) is still where the routes were made for it. */
export function anchored(id: string, at: XY | undefined, anchors: Record<string, XY>): boolean {
  const a = anchors[id];
  return !!a && !!at && Math.abs(a.x - at.x) <= 1.5 && Math.abs(a.y - at.y) <= 1.5;
}

const EPS = 0.5;

/**
 * The SVG path along an orthogonal route, its ends moved onto the handles `s` and `t`
 * (the segment next to each end keeps its direction), with rounded corners; and the
 * middle of the path, for a label.
 */
export function routedPath(route: readonly XY[], s: XY, t: XY, radius = 8): { path: string; label: XY } {
  let pts = route.map((p) => ({ x: p.x, y: p.y }));
  if (pts.length < 2) pts = [s, t];
  const snap = (i: number, j: number, p: XY) => {
    const a = pts[i]!;
    const b = pts[j]!;
    if (Math.abs(a.y - b.y) < EPS) b.y = p.y;
    else if (Math.abs(a.x - b.x) < EPS) b.x = p.x;
    pts[i] = { x: p.x, y: p.y };
  };
  if (pts.length === 2) {
    if (Math.abs(s.y - t.y) < EPS || Math.abs(s.x - t.x) < EPS) pts = [s, t];
    else {
      const mx = (s.x + t.x) / 2;
      pts = [s, { x: mx, y: s.y }, { x: mx, y: t.y }, t];
    }
  } else {
    snap(0, 1, s);
    snap(pts.length - 1, pts.length - 2, t);
  }
  // Drop repeated points and points in the middle of a straight run.
  const clean: XY[] = [];
  for (const p of pts) {
    const last = clean[clean.length - 1];
    if (last && Math.abs(last.x - p.x) < EPS && Math.abs(last.y - p.y) < EPS) continue;
    const prev = clean[clean.length - 2];
    if (prev && last && ((Math.abs(prev.x - last.x) < EPS && Math.abs(last.x - p.x) < EPS) || (Math.abs(prev.y - last.y) < EPS && Math.abs(last.y - p.y) < EPS))) {
      clean[clean.length - 1] = p;
      continue;
    }
    clean.push(p);
  }
  const f = (n: number) => Math.round(n * 10) / 10;
  let d = `M ${f(clean[0]!.x)} ${f(clean[0]!.y)}`;
  for (let i = 1; i < clean.length - 1; i++) {
    const a = clean[i - 1]!;
    const c = clean[i]!;
    const b = clean[i + 1]!;
    const lin = Math.hypot(c.x - a.x, c.y - a.y);
    const lout = Math.hypot(b.x - c.x, b.y - c.y);
    const r = Math.min(radius, lin / 2, lout / 2);
    const p1 = { x: c.x - ((c.x - a.x) / (lin || 1)) * r, y: c.y - ((c.y - a.y) / (lin || 1)) * r };
    const p2 = { x: c.x + ((b.x - c.x) / (lout || 1)) * r, y: c.y + ((b.y - c.y) / (lout || 1)) * r };
    d += ` L ${f(p1.x)} ${f(p1.y)} Q ${f(c.x)} ${f(c.y)} ${f(p2.x)} ${f(p2.y)}`;
  }
  const end = clean[clean.length - 1]!;
  d += ` L ${f(end.x)} ${f(end.y)}`;
  return { path: d, label: midpoint(clean) };
}

function midpoint(pts: readonly XY[]): XY {
  let total = 0;
  for (let i = 1; i < pts.length; i++) total += Math.hypot(pts[i]!.x - pts[i - 1]!.x, pts[i]!.y - pts[i - 1]!.y);
  let left = total / 2;
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    const l = Math.hypot(b.x - a.x, b.y - a.y);
    if (left <= l && l > 0) return { x: a.x + ((b.x - a.x) * left) / l, y: a.y + ((b.y - a.y) * left) / l };
    left -= l;
  }
  return pts[0]!;
}
