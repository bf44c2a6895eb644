//! Auto-layout with elkjs (layered, left to right). Loops are compound nodes laid out
//! with their body; the result is in `layout` terms: top-level positions absolute,
//! body positions relative to their loop, loops with their container size.
//! Uses `elkjs/lib/elk.bundled.js` in-process (no web worker, no eval), loaded lazily.

import type { ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api';
import type ELK from 'elkjs/lib/elk.bundled.js';
import type { NodeBounds } from '../doc/ops';
import { isLoop } from '../doc/query';
import type { Blueprint, Step } from '../doc/types';
import { docToGraph } from './doc-to-graph';
import { estimateSize } from './placement';
import { GAP_X, GAP_Y, LOOP_HEADER, LOOP_MIN_HEIGHT, LOOP_MIN_WIDTH, LOOP_PADDING } from './types';

// elkjs is large (~1.6 MB): it is loaded on the first auto-layout, as its own chunk.
let elk: Promise<InstanceType<typeof ELK>> | null = null;
function loadElk(): Promise<InstanceType<typeof ELK>> {
  elk ??= import('elkjs/lib/elk.bundled.js').then((m) => new m.default());
  return elk;
}

/** Measured node sizes by step id (from the canvas); estimates are used for the rest. */
export type NodeSizes = Record<string, { width?: number; height?: number } | undefined>;

const ROOT_OPTIONS: Record<string, string> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.spacing.nodeNode': String(GAP_Y),
  'elk.layered.spacing.nodeNodeBetweenLayers': String(GAP_X),
  'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
  'elk.layered.nodePlacement.strategy': 'BRANDES_KOEPF',
  'elk.edgeRouting': 'ORTHOGONAL',
};

export async function computeAutoLayout(doc: Blueprint, sizes: NodeSizes = {}): Promise<Record<string, NodeBounds>> {
  const graph = docToGraph(doc);
  const parentOf = new Map(graph.nodes.map((n) => [n.id, n.parentId ?? null]));
  const edgesBy = new Map<string | null, ElkExtendedEdge[]>();
  for (const e of graph.edges) {
    const container = parentOf.get(e.source) ?? null;
    if (container !== (parentOf.get(e.target) ?? null)) continue;
    const list = edgesBy.get(container) ?? [];
    list.push({ id: e.id, sources: [e.source], targets: [e.target] });
    edgesBy.set(container, list);
  }

  const toElk = (step: Step): ElkNode => {
    if (isLoop(step)) {
      return {
        id: step.id,
        layoutOptions: {
          ...ROOT_OPTIONS,
          'elk.padding': `[top=${LOOP_HEADER},left=${LOOP_PADDING},bottom=${LOOP_PADDING},right=${LOOP_PADDING}]`,
          'elk.nodeSize.constraints': 'MINIMUM_SIZE',
          'elk.nodeSize.minimum': `(${LOOP_MIN_WIDTH},${LOOP_MIN_HEIGHT})`,
        },
        children: step.steps.filter(valid).map(toElk),
        edges: edgesBy.get(step.id) ?? [],
      };
    }
    const est = estimateSize(step);
    const measured = sizes[step.id];
    return { id: step.id, width: measured?.width ?? est.width, height: measured?.height ?? est.height };
  };

  const root: ElkNode = {
    id: '__root__',
    layoutOptions: ROOT_OPTIONS,
    children: (Array.isArray(doc.steps) ? doc.steps : []).filter(valid).map(toElk),
    edges: edgesBy.get(null) ?? [],
  };
  const out = await (await loadElk()).layout(root);

  const result: Record<string, NodeBounds> = {};
  const collect = (n: ElkNode) => {
    for (const c of n.children ?? []) {
      const b: NodeBounds = { x: Math.round(c.x ?? 0), y: Math.round(c.y ?? 0) };
      if (c.children) {
        b.width = Math.round(c.width ?? LOOP_MIN_WIDTH);
        b.height = Math.round(c.height ?? LOOP_MIN_HEIGHT);
      }
      result[c.id] = b;
      collect(c);
    }
  };
  collect(out);
  return result;
}

function valid(s: Step): boolean {
  return !!s && typeof s === 'object' && typeof s.id === 'string';
}
