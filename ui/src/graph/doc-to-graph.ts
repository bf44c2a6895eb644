//! Blueprint → React Flow graph. Pure; the canvas derives its nodes and edges from
//! the document with this and never edits them directly.
//!
//! - One node per step, `type` = kind. A loop is a container node; its body steps
//!   are child nodes (`parentId` = the loop) whose positions, in the graph and in
//!   `layout`, are relative to the container's top-left corner.
//! - Edges, with ids stable across edits:
//!   `after:<a>-><b>`            b depends on a: written in `after` (data.implicit
//!                               false) or given by the implicit order (true);
//!   `case:<sw>:<i>-><t>`        switch case i routes to t (`default` for the
//!                               default), from the switch's `case-i`/`default` handle;
//!   `fallback:<a>-><f>`         f stands in for a when it fails (dashed).
//!   Edges are drawn by `canvas/ImplicitEdge.tsx`: type `routed` (along the last
//!   auto-layout's route), implicit `after` edges type `implicit` (thin, grey,
//!   dashed, a click offers "Make explicit" / "Remove"); fallbacks are orange, dashed
//!   and labelled "fallback"; edges a `DEPENDENCY_CYCLE` diagnostic names (`cycle.ts`)
//!   carry `edge-cycle` (red).
//! - Positions come from `layout`; steps without one are placed by `placement.ts`.

import { listRoles, stepDeps, switchTargets } from '../doc/deps';
import { isLoop } from '../doc/query';
import { STEP_KINDS, type Blueprint, type Diagnostic, type Step } from '../doc/types';
import { cycleEdgeIds } from '../doc/cycle';
import { placeAll, type MeasuredSizes } from '../doc/placement';
import { ARROW, IMPLICIT_ARROW, type FlowEdge, type FlowGraph, type FlowNode, type FlowNodeType } from './types';

const KNOWN = new Set<string>(STEP_KINDS);

/**
 * A step's node type: its kind, but `ask` for `input` (React Flow has a built-in node
 * type `input` whose default styles — a black border, padding, a fixed width — would
 * land on the card's wrapper), and `unknown` for kinds the studio does not know.
 */
export function nodeTypeOf(step: Step): FlowNodeType {
  if (step.kind === 'input') return 'ask';
  return KNOWN.has(step.kind) ? (step.kind as FlowNodeType) : 'unknown';
}

export interface GraphOptions {
  /**
   * Measured sizes of step nodes (from the canvas). They make loop containers fit
   * their body and keep placed nodes from overlapping; estimates are used without.
   */
  measured?: MeasuredSizes;
  /** The document's diagnostics: a `DEPENDENCY_CYCLE` one marks the edges it names. */
  diagnostics?: readonly Diagnostic[];
}

export function docToGraph(doc: Blueprint, opts: GraphOptions = {}): FlowGraph {
  const top = Array.isArray(doc.steps) ? doc.steps : [];
  const placed = placeAll(top, doc.layout, opts.measured);
  const nodes: FlowNode[] = [];
  const edges: FlowEdge[] = [];
  const nodeIds = new Set<string>();
  const edgeIds = new Set<string>();

  const cycle = new Set<string>();
  for (const d of opts.diagnostics ?? []) for (const id of cycleEdgeIds(doc, d)) cycle.add(id);
  const addEdge = (e: FlowEdge) => {
    if (edgeIds.has(e.id) || !nodeIds.has(e.source) || !nodeIds.has(e.target)) return;
    edgeIds.add(e.id);
    if (cycle.has(e.id)) e.className = `${e.className ?? ''} edge-cycle`.trim();
    edges.push(e);
  };

  // Nodes first (a container before its children, as React Flow requires)…
  const visitNodes = (steps: readonly Step[], parent: string | null) => {
    const roles = listRoles(steps);
    for (const step of steps) {
      if (!step || typeof step !== 'object' || typeof step.id !== 'string' || nodeIds.has(step.id)) continue;
      const p = placed.get(step.id)!;
      const node = {
        id: step.id,
        type: nodeTypeOf(step),
        position: p.position,
        data: {
          step,
          fallbackOf: roles.fallbackOf.get(step.id) ?? null,
          switchFrom: roles.switchOf.get(step.id)?.switch ?? null,
        },
      } as FlowNode;
      if (parent !== null) {
        node.parentId = parent;
        node.expandParent = true;
      }
      if (isLoop(step)) {
        node.width = p.width;
        node.height = p.height;
      } else {
        node.initialWidth = p.width;
        node.initialHeight = p.height;
      }
      nodes.push(node);
      nodeIds.add(step.id);
      if (isLoop(step)) visitNodes(step.steps, step.id);
    }
  };
  visitNodes(top, null);

  // …then the edges of every list.
  const visitEdges = (steps: readonly Step[]) => {
    const roles = listRoles(steps);
    steps.forEach((step, i) => {
      if (!step || typeof step !== 'object' || typeof step.id !== 'string') return;
      const deps = stepDeps(steps, i, roles);
      for (const a of deps.after) {
        addEdge({
          id: `after:${a}->${step.id}`,
          source: a,
          target: step.id,
          sourceHandle: 'out',
          targetHandle: 'in',
          type: deps.explicit ? 'routed' : 'implicit',
          markerEnd: deps.explicit ? ARROW : IMPLICIT_ARROW,
          className: deps.explicit ? 'edge-after' : 'edge-after edge-implicit',
          data: { kind: 'after', implicit: !deps.explicit },
        });
      }
      if (step.kind === 'switch') {
        for (const t of switchTargets(step)) {
          addEdge({
            id: `case:${step.id}:${t.caseIndex}->${t.target}`,
            source: step.id,
            target: t.target,
            sourceHandle: t.handle,
            targetHandle: 'in',
            type: 'routed',
            markerEnd: ARROW,
            className: 'edge-case',
            data: { kind: 'case', caseIndex: t.caseIndex },
          });
        }
      }
      if (typeof step.fallback === 'string') {
        addEdge({
          id: `fallback:${step.id}->${step.fallback}`,
          source: step.id,
          target: step.fallback,
          sourceHandle: 'fallback',
          targetHandle: 'in',
          type: 'routed',
          markerEnd: ARROW,
          className: 'edge-fallback',
          style: { strokeDasharray: '6 4' },
          label: 'fallback',
          labelBgPadding: [4, 2],
          labelBgBorderRadius: 3,
          data: { kind: 'fallback' },
        });
      }
      if (isLoop(step)) visitEdges(step.steps);
    });
  };
  visitEdges(top);
  return { nodes, edges };
}

/** Whether two derived nodes draw the same thing (the canvas reuses the old object then). */
export function sameNode(a: FlowNode, b: FlowNode): boolean {
  return (
    a.id === b.id &&
    a.type === b.type &&
    a.position.x === b.position.x &&
    a.position.y === b.position.y &&
    a.parentId === b.parentId &&
    a.width === b.width &&
    a.height === b.height &&
    a.data.step === b.data.step &&
    a.data.fallbackOf === b.data.fallbackOf &&
    a.data.switchFrom === b.data.switchFrom
  );
}

export function sameEdge(a: FlowEdge, b: FlowEdge): boolean {
  return (
    a.id === b.id &&
    a.type === b.type &&
    a.source === b.source &&
    a.target === b.target &&
    a.sourceHandle === b.sourceHandle &&
    a.className === b.className
  );
}
