//! Auto-layout with elkjs: one hierarchical layered layout, left to right
//! (`elk.hierarchyHandling: INCLUDE_CHILDREN`), so loop containers are laid out
//! together with their bodies and every edge — one into a loop body included — is
//! routed by ELK around the loop boxes and cards, never through them. Each node has
//! ports where its card has handles (`in` left, `out`/cases right, `fallback` below), so
//! the routes end where the canvas draws the edges.
//!
//! `layoutGraph` returns the whole geometry: positions in `layout` terms (top-level
//! absolute, body steps relative to their loop, loops with their container size), the
//! absolute box of every node, and each edge's route (absolute points). The canvas
//! draws edges along these routes while their ends stay where the layout put them
//! (`routes.ts`). Uses `elkjs/lib/elk.bundled.js` in-process (no web worker, no eval),
//! loaded lazily.

import type { ElkExtendedEdge, ElkNode, ElkPort } from 'elkjs/lib/elk-api';
import type ELK from 'elkjs/lib/elk.bundled.js';
import type { NodeBounds } from '../doc/ops';
import { isLoop } from '../doc/query';
import type { Blueprint, Step, XY } from '../doc/types';
import { docToGraph } from './doc-to-graph';
import { estimateSize } from '../doc/placement';
import { GAP_X, GAP_Y, LOOP_HEADER, LOOP_MIN_HEIGHT, LOOP_MIN_WIDTH, LOOP_PADDING } from './types';

// elkjs is large (~1.6 MB): it is loaded on the first auto-layout, as its own chunk.
let elk: Promise<InstanceType<typeof ELK>> | null = null;
function loadElk(): Promise<InstanceType<typeof ELK>> {
  elk ??= import('elkjs/lib/elk.bundled.js').then((m) => new m.default());
  return elk;
}

/** Measured node sizes by step id (from the canvas); estimates are used for the rest. */
export type NodeSizes = Record<string, { width?: number; height?: number } | undefined>;

/** A switch card: where its first row (`then`) sits, and the height of a row (graph/handles.ts). */
const SWITCH_FIRST_ROW = 62;
const SWITCH_ROW = 22;

const LAYERED: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.spacing.nodeNode': String(GAP_Y),
  'elk.layered.spacing.nodeNodeBetweenLayers': String(GAP_X),
  'elk.spacing.edgeNode': '24',
  'elk.layered.spacing.edgeNodeBetweenLayers': '24',
  'elk.spacing.edgeEdge': '12',
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
  'elk.edgeRouting': 'ORTHOGONAL',
};

const ROOT_OPTIONS: Record<string, string> = {
  ...LAYERED,
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  // Edge routes in canvas coordinates, whatever list the edge belongs to.
  'elk.json.edgeCoords': 'ROOT',
};

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface GraphLayout {
  /** What `moveNodes` writes: top-level positions absolute, body positions relative to their loop. */
  positions: Record<string, NodeBounds>;
  /** Every node's box in canvas coordinates. */
  boxes: Record<string, Rect & { parent: string | null; loop: boolean }>;
  /** Each edge's route by edge id (`doc-to-graph.ts` ids), in canvas coordinates, ends included. */
  routes: Record<string, XY[]>;
}

/** The positions to write (see `layoutGraph`). */
export async function computeAutoLayout(doc: Blueprint, sizes: NodeSizes = {}): Promise<Record<string, NodeBounds>> {
  return (await layoutGraph(doc, sizes)).positions;
}

/** The full geometry of the auto-layout of `doc`. */
export async function layoutGraph(doc: Blueprint, sizes: NodeSizes = {}): Promise<GraphLayout> {
  const graph = docToGraph(doc);
  const parentOf = new Map(graph.nodes.map((n) => [n.id, n.parentId ?? null]));
  const ancestry = (id: string | null): (string | null)[] => {
    const out: (string | null)[] = [];
    let c: string | null = id;
    const seen = new Set<string>();
    while (c !== null && !seen.has(c)) {
      seen.add(c);
      out.push(c);
      c = parentOf.get(c) ?? null;
    }
    out.push(null);
    return out;
  };
  /** The innermost container holding both ends (an edge into a loop body lives outside that loop). */
  const containerOf = (source: string, target: string): string | null => {
    const a = ancestry(parentOf.get(source) ?? null);
    const b = new Set(ancestry(parentOf.get(target) ?? null));
    return a.find((c) => b.has(c)) ?? null;
  };

  // Ports: the handles each edge leaves from, by node.
  const usedPorts = new Map<string, Set<string>>();
  const edgesBy = new Map<string | null, ElkExtendedEdge[]>();
  for (const e of graph.edges) {
    const from = e.sourceHandle ?? 'out';
    (usedPorts.get(e.source) ?? usedPorts.set(e.source, new Set()).get(e.source)!).add(from);
    const container = containerOf(e.source, e.target);
    const list = edgesBy.get(container) ?? [];
    list.push({ id: e.id, sources: [`${e.source}::${from}`], targets: [`${e.target}::in`] });
    edgesBy.set(container, list);
  }

  const portsOf = (step: Step, width: number, height: number, fixed: boolean): ElkPort[] => {
    const at = (id: string, side: string, x: number, y: number, index: number): ElkPort => ({
      id: `${step.id}::${id}`,
      width: 1,
      height: 1,
      ...(fixed ? { x, y } : {}),
      layoutOptions: { 'elk.port.side': side, 'elk.port.index': String(index) },
    });
    const ports = [at('in', 'WEST', -1, height / 2, 0)];
    const outs = step.kind === 'switch' ? ['out', ...switchHandles(step)] : ['out'];
    outs.forEach((h, row) => {
      const y = step.kind === 'switch' ? SWITCH_FIRST_ROW + row * SWITCH_ROW : height / 2;
      ports.push(at(h, 'EAST', width, Math.min(y, height - 1), row));
    });
    if (usedPorts.get(step.id)?.has('fallback')) ports.push(at('fallback', 'SOUTH', width / 2, height, 0));
    return ports;
  };

  const toElk = (step: Step): ElkNode => {
    if (isLoop(step)) {
      return {
        id: step.id,
        layoutOptions: {
          ...LAYERED,
          'elk.padding': `[top=${LOOP_HEADER},left=${LOOP_PADDING},bottom=${LOOP_PADDING},right=${LOOP_PADDING}]`,
          'elk.nodeSize.constraints': 'MINIMUM_SIZE',
          'elk.nodeSize.minimum': `(${LOOP_MIN_WIDTH},${LOOP_MIN_HEIGHT})`,
          'elk.portConstraints': 'FIXED_ORDER',
        },
        ports: portsOf(step, LOOP_MIN_WIDTH, LOOP_MIN_HEIGHT, false),
        children: step.steps.filter(valid).map(toElk),
        edges: edgesBy.get(step.id) ?? [],
      };
    }
    const est = estimateSize(step);
    const measured = sizes[step.id];
    const width = measured?.width ?? est.width;
    const height = measured?.height ?? est.height;
    return {
      id: step.id,
      width,
      height,
      layoutOptions: { 'elk.portConstraints': 'FIXED_POS' },
      ports: portsOf(step, width, height, true),
    };
  };

  const root: ElkNode = {
    id: '__root__',
    layoutOptions: ROOT_OPTIONS,
    children: (Array.isArray(doc.steps) ? doc.steps : []).filter(valid).map(toElk),
    edges: edgesBy.get(null) ?? [],
  };
  const out = await (await loadElk()).layout(root);

  const positions: Record<string, NodeBounds> = {};
  const boxes: GraphLayout['boxes'] = {};
  const routes: GraphLayout['routes'] = {};
  const collect = (n: ElkNode, origin: XY, parent: string | null) => {
    for (const c of n.children ?? []) {
      const loop = !!c.children;
      const b: NodeBounds = { x: Math.round(c.x ?? 0), y: Math.round(c.y ?? 0) };
      if (loop) {
        b.width = Math.round(c.width ?? LOOP_MIN_WIDTH);
        b.height = Math.round(c.height ?? LOOP_MIN_HEIGHT);
      }
      positions[c.id] = b;
      const abs = { x: origin.x + b.x, y: origin.y + b.y };
      boxes[c.id] = { ...abs, width: c.width ?? 0, height: c.height ?? 0, parent, loop };
      collect(c, abs, c.id);
    }
    for (const e of n.edges ?? []) {
      const points: XY[] = [];
      for (const s of e.sections ?? []) {
        if (points.length === 0) points.push(s.startPoint);
        points.push(...(s.bendPoints ?? []), s.endPoint);
      }
      if (points.length >= 2) routes[e.id] = points.map((p) => ({ x: p.x, y: p.y }));
    }
  };
  collect(out, { x: 0, y: 0 }, null);
  return { positions, boxes, routes };
}

function switchHandles(step: Step): string[] {
  const cases = Array.isArray((step as { cases?: unknown }).cases) ? (step as { cases: unknown[] }).cases.length : 0;
  return [...Array.from({ length: cases }, (_, i) => `case-${i}`), 'default'];
}

function valid(s: Step): boolean {
  return !!s && typeof s === 'object' && typeof s.id === 'string';
}
