//! The minimap of a large document: every node drawn once into a `<canvas>` bitmap,
//! and the view as a frame over it. React Flow's own minimap is an SVG with an element
//! per node under a mask that moves with the view, so every frame of a pan repaints
//! all of them: with a thousand steps that alone costs WebKitGTK (software painting)
//! about a third of a frame. Here the bitmap is redrawn only when the nodes or the
//! theme change; a pan moves the frame. Click or drag on it to move the view there;
//! the wheel zooms. Test hooks: `minimap-bitmap`, `minimap-frame`.

import { Panel, useReactFlow, useStore, type ReactFlowState } from '@xyflow/react';
import { memo, useCallback, useLayoutEffect, useMemo, useRef, type PointerEvent, type WheelEvent } from 'react';
import { nodeSize } from '../graph/handles';
import type { FlowEdge, FlowNode } from '../graph/types';
import { MINIMAP_HEIGHT, MINIMAP_WIDTH } from './view';

/** Size of the minimap in CSS pixels: the same small box as the minimap of other documents (view.ts). */
export const MAP_WIDTH = MINIMAP_WIDTH;
export const MAP_HEIGHT = MINIMAP_HEIGHT;
/** Room around the nodes inside the map, as a share of their extent. */
const PAD = 0.05;

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Box extends Rect {
  type: string;
}

/** Node boxes in flow coordinates (children of loops are placed relative to their parent). */
export function nodeBoxes(nodes: readonly FlowNode[]): Box[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const absolute = new Map<string, { x: number; y: number }>();
  const at = (n: FlowNode, depth: number): { x: number; y: number } => {
    const known = absolute.get(n.id);
    if (known) return known;
    const parent = n.parentId ? byId.get(n.parentId) : undefined;
    // A parent chain longer than the node count is a cycle: place the node as it stands.
    const base = parent && depth < nodes.length ? at(parent, depth + 1) : { x: 0, y: 0 };
    const p = { x: base.x + n.position.x, y: base.y + n.position.y };
    absolute.set(n.id, p);
    return p;
  };
  return nodes.map((n) => ({ ...at(n, 0), ...nodeSize(n), type: n.type ?? 'unknown' }));
}

/** Where flow coordinates land in the map: `map = (flow - origin) * scale + offset`. */
export interface MapFit {
  origin: { x: number; y: number };
  scale: number;
  offset: { x: number; y: number };
}

/** Fits the boxes (with a margin) into a map of `width` × `height`, centred. */
export function fitMap(boxes: readonly Rect[], width: number, height: number): MapFit {
  if (boxes.length === 0) return { origin: { x: 0, y: 0 }, scale: 1, offset: { x: 0, y: 0 } };
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const b of boxes) {
    x0 = Math.min(x0, b.x);
    y0 = Math.min(y0, b.y);
    x1 = Math.max(x1, b.x + b.width);
    y1 = Math.max(y1, b.y + b.height);
  }
  const padX = (x1 - x0) * PAD + 1;
  const padY = (y1 - y0) * PAD + 1;
  x0 -= padX;
  y0 -= padY;
  const w = x1 + padX - x0;
  const h = y1 + padY - y0;
  const scale = Math.min(width / w, height / h);
  return { origin: { x: x0, y: y0 }, scale, offset: { x: (width - w * scale) / 2, y: (height - h * scale) / 2 } };
}

/** The visible part of the flow, from React Flow's transform and the pane size. */
export function viewRect(transform: readonly [number, number, number], width: number, height: number): Rect {
  const [tx, ty, zoom] = transform;
  return { x: -tx / zoom, y: -ty / zoom, width: width / zoom, height: height / zoom };
}

/** A flow rectangle in map pixels. */
export function toMap(fit: MapFit, r: Rect): Rect {
  return {
    x: (r.x - fit.origin.x) * fit.scale + fit.offset.x,
    y: (r.y - fit.origin.y) * fit.scale + fit.offset.y,
    width: r.width * fit.scale,
    height: r.height * fit.scale,
  };
}

/** A map point in flow coordinates. */
export function toFlow(fit: MapFit, p: { x: number; y: number }): { x: number; y: number } {
  return { x: (p.x - fit.offset.x) / fit.scale + fit.origin.x, y: (p.y - fit.offset.y) / fit.scale + fit.origin.y };
}

/** Fill (and, for loops, stroke) of each node kind, read from the theme's CSS variables. */
function kindColors(el: Element): (type: string) => { fill: string; stroke: string | null } {
  const style = getComputedStyle(el);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  const unknown = read('--kind-unknown', '#888');
  const cache = new Map<string, { fill: string; stroke: string | null }>();
  return (type) => {
    let c = cache.get(type);
    if (!c) {
      c =
        type === 'loop'
          ? { fill: read('--loop-bg', 'transparent'), stroke: read('--kind-loop', unknown) }
          : { fill: read(`--kind-${type}`, unknown), stroke: null };
      cache.set(type, c);
    }
    return c;
  };
}

const selectView = (s: ReactFlowState) => viewRect(s.transform, s.width, s.height);
const sameRect = (a: Rect, b: Rect) => a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;

export const BitmapMiniMap = memo(function BitmapMiniMap({ nodes, theme }: { nodes: readonly FlowNode[]; theme: string }) {
  const rf = useReactFlow<FlowNode, FlowEdge>();
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const boxes = useMemo(() => nodeBoxes(nodes), [nodes]);
  const fit = useMemo(() => fitMap(boxes, MAP_WIDTH, MAP_HEIGHT), [boxes]);
  const view = useStore(selectView, sameRect);

  // The bitmap: redrawn when the nodes or the theme change, never on a pan.
  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return; // no 2D canvas (a test DOM): the frame still works
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(MAP_WIDTH * dpr);
    canvas.height = Math.round(MAP_HEIGHT * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, MAP_WIDTH, MAP_HEIGHT);
    const color = kindColors(canvas);
    // Loops first, so the steps inside them are drawn over their container.
    const ordered = [...boxes].sort((a, b) => Number(b.type === 'loop') - Number(a.type === 'loop'));
    for (const b of ordered) {
      const r = toMap(fit, b);
      const c = color(b.type);
      ctx.fillStyle = c.fill;
      ctx.fillRect(r.x, r.y, Math.max(1, r.width), Math.max(1, r.height));
      if (c.stroke) {
        ctx.strokeStyle = c.stroke;
        ctx.lineWidth = 1;
        ctx.strokeRect(r.x, r.y, r.width, r.height);
      }
    }
  }, [boxes, fit, theme]);

  const frame = toMap(fit, view);

  const moveTo = useCallback(
    (e: PointerEvent<HTMLDivElement>) => {
      const at = e.currentTarget.getBoundingClientRect();
      const p = toFlow(fit, { x: e.clientX - at.left, y: e.clientY - at.top });
      void rf.setCenter(p.x, p.y, { zoom: rf.getZoom() });
    },
    [fit, rf],
  );
  const onPointerDown = useCallback(
    (e: PointerEvent<HTMLDivElement>) => {
      e.currentTarget.setPointerCapture?.(e.pointerId);
      moveTo(e);
    },
    [moveTo],
  );
  const onPointerMove = useCallback(
    (e: PointerEvent<HTMLDivElement>) => {
      if (e.buttons & 1) moveTo(e);
    },
    [moveTo],
  );
  const onWheel = useCallback(
    (e: WheelEvent<HTMLDivElement>) => {
      const zoom = rf.getZoom() * (e.deltaY < 0 ? 1.2 : 1 / 1.2);
      void rf.zoomTo(zoom);
    },
    [rf],
  );

  return (
    <Panel position="bottom-right" className="bitmap-minimap">
      <div
        className="bitmap-minimap-area"
        style={{ width: MAP_WIDTH, height: MAP_HEIGHT }}
        data-testid="minimap-bitmap"
        aria-label="Minimap: click or drag to move the view"
        role="navigation"
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onWheel={onWheel}
      >
        <canvas ref={canvasRef} style={{ width: MAP_WIDTH, height: MAP_HEIGHT }} />
        <div
          className="bitmap-minimap-frame"
          data-testid="minimap-frame"
          style={{ transform: `translate(${frame.x}px, ${frame.y}px)`, width: frame.width, height: frame.height }}
        />
      </div>
    </Panel>
  );
});
