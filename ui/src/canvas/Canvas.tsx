//! The canvas: React Flow drawing the graph derived from the document, and turning
//! gestures into document edits. It holds only transient view state (positions
//! while dragging, measured sizes, edge selection); every change that matters goes
//! to the store, and the graph is derived again from the new document.
//!
//! Wiring: connect → `connect`; deleting edges → `disconnect` (after, case, fallback);
//! deleting nodes → `removeSteps` (one undo entry for both); drag end → `moveNodes`
//! (one undo entry per drag); selection ↔ `selected`; a drop of `STEP_MIME` data
//! → `addStep` at the drop point (inside the innermost loop under it).

import {
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  BackgroundVariant,
  Controls,
  MiniMap,
  ReactFlow,
  useReactFlow,
  type Connection,
  type EdgeChange,
  type IsValidConnection,
  type NodeChange,
  type OnBeforeDelete,
  type OnSelectionChangeParams,
} from '@xyflow/react';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { connectionProblem } from '../doc/ops';
import { docStore, useDoc } from '../doc/store';
import type { Blueprint, StepTemplate } from '../doc/types';
import { cycleDiagnosticsKey, CYCLE_CODE } from '../graph/cycle';
import { docToGraph, sameEdge, sameNode } from '../graph/doc-to-graph';
import { estimatedHandles } from '../graph/handles';
import { LOOP_HEADER, LOOP_PADDING, NODE_WIDTH, type FlowEdge, type FlowNode } from '../graph/types';
import { usePrefs } from '../prefs';
import { stepsRunning, useRunStore } from '../run';
import { BitmapMiniMap } from './BitmapMiniMap';
import { STEP_MIME, useCanvasCommands } from './commands';
import { edgeTypes } from './ImplicitEdge';
import { nodeTypes } from './nodes';
import { useShortcuts } from './shortcuts';

/** Above this many nodes only the visible ones are rendered. */
const VIRTUALIZE_ABOVE = 200;

/** A document large enough to be drawn the cheap way (see docs/studio.md, "Large blueprints"). */
const isLarge = (nodes: readonly FlowNode[]) => nodes.length > VIRTUALIZE_ABOVE;

/** The zoom a large document opens at: its cards readable. */
const START_ZOOM = 1;
/** Room left of and above the first steps when a large document opens at its start. */
const START_MARGIN = 40;

/**
 * Where a large document opens: at its first steps (top left), readable, rather than
 * fitted whole. A thousand cards fitted into one window are specks that cost a full
 * repaint of every one of them on each frame of a pan; at its start only the visible
 * ones are rendered (`onlyRenderVisibleElements`), and the minimap and "fit view"
 * still show the whole.
 */
export function startViewport(nodes: readonly FlowNode[]): { x: number; y: number; zoom: number } {
  let minX = Infinity;
  let minY = Infinity;
  for (const n of nodes) {
    if (n.parentId) continue;
    minX = Math.min(minX, n.position.x);
    minY = Math.min(minY, n.position.y);
  }
  if (!Number.isFinite(minX)) return { x: 0, y: 0, zoom: 1 };
  return { x: START_MARGIN - minX * START_ZOOM, y: START_MARGIN - minY * START_ZOOM, zoom: START_ZOOM };
}

/** The view of a newly opened document: fitted whole, or its start when it is large. */
function openView(rf: ReturnType<typeof useReactFlow<FlowNode, FlowEdge>>, nodes: readonly FlowNode[]) {
  // Nothing to fit (React Flow would keep the fit for the first step added: a 200%
  // zoom): an empty document opens at 100%.
  if (nodes.length === 0) {
    void rf.setViewport({ x: 0, y: 0, zoom: 1 });
    return;
  }
  if (isLarge(nodes)) void rf.setViewport(startViewport(nodes));
  else void rf.fitView({ padding: 0.15 });
}

/**
 * Derived nodes, reusing the previous objects where nothing changed (so memoized nodes
 * do not re-render). With `estimate` (a large document), nodes never measured carry
 * estimated handles, so React Flow need not draw them to measure them (graph/handles.ts).
 */
export function mergeNodes(derived: FlowNode[], prev: FlowNode[], selected: ReadonlySet<string>, estimate = false): FlowNode[] {
  const before = new Map(prev.map((n) => [n.id, n]));
  return derived.map((d) => {
    const p = before.get(d.id);
    const sel = selected.has(d.id);
    if (p && sameNode(p, d) && !!p.selected === sel && (!estimate || p.measured || p.handles)) return p;
    if (p?.measured) return { ...d, selected: sel, measured: p.measured } as FlowNode;
    const node = { ...d, selected: sel } as FlowNode;
    if (estimate) node.handles = estimatedHandles(node);
    return node;
  });
}

/** Nodes just measured by React Flow lose their estimated handles (the measured ones stand). */
function dropEstimates(changes: NodeChange<FlowNode>[], nodes: FlowNode[]): FlowNode[] {
  const measured = new Set<string>();
  for (const c of changes) if (c.type === 'dimensions' && c.dimensions) measured.add(c.id);
  if (measured.size === 0) return nodes;
  return nodes.map((n) => {
    if (!n.handles || !measured.has(n.id)) return n;
    const { handles: _estimated, ...rest } = n;
    return rest as FlowNode;
  });
}

export function mergeEdges(derived: FlowEdge[], prev: FlowEdge[]): FlowEdge[] {
  const before = new Map(prev.map((e) => [e.id, e]));
  return derived.map((d) => {
    const p = before.get(d.id);
    if (p && sameEdge(p, d)) return p;
    return p?.selected ? { ...d, selected: true } : d;
  });
}

/**
 * Records measured sizes of step nodes whose size decides where things go (inside a
 * loop, or placed without `layout`); true when one of them changed.
 */
function remember(
  changes: NodeChange<FlowNode>[],
  nodes: FlowNode[],
  sizes: Map<string, { width: number; height: number }>,
  doc: Blueprint,
): boolean {
  let changed = false;
  let byId: Map<string, FlowNode> | null = null;
  for (const c of changes) {
    if (c.type !== 'dimensions' || !c.dimensions || c.resizing) continue;
    byId ??= new Map(nodes.map((n) => [n.id, n]));
    const node = byId.get(c.id);
    if (!node || node.type === 'loop' || (!node.parentId && doc.layout?.[c.id])) continue;
    const old = sizes.get(c.id);
    const { width, height } = c.dimensions;
    if (old && Math.abs(old.width - width) < 1 && Math.abs(old.height - height) < 1) continue;
    sizes.set(c.id, { width, height });
    changed = true;
  }
  return changed;
}

/** Keeps a position inside a loop's body area (below its header), or leaves it as is at the top level. */
function inside(container: string | null, p: { x: number; y: number }) {
  return container === null ? p : { x: Math.max(LOOP_PADDING, p.x), y: Math.max(LOOP_HEADER, p.y) };
}

export interface CanvasProps {
  /** Ctrl/Cmd+S: the shell saves. */
  onSaveShortcut?: () => void;
}

export const Canvas = memo(function Canvas({ onSaveShortcut }: CanvasProps) {
  const doc = useDoc((s) => s.doc);
  const selected = useDoc((s) => s.selected);
  const reveal = useDoc((s) => s.reveal);
  const generation = useDoc((s) => s.generation);
  // Only dependency-cycle diagnostics change what is drawn (the edge in red): a key of
  // them, so other diagnostics arriving after each edit do not derive the graph again.
  const cycleKey = useDoc((s) => cycleDiagnosticsKey(s.diagnostics));
  const cycles = useMemo(() => docStore.getState().diagnostics.filter((d) => d.code === CYCLE_CODE), [cycleKey]);
  const selectedEdge = useDoc((s) => s.selectedEdge);
  const theme = usePrefs((s) => s.theme);
  const rf = useReactFlow<FlowNode, FlowEdge>();
  const commands = useCanvasCommands();

  // Measured step sizes make loop containers fit their body; they change rarely.
  const measured = useRef(new Map<string, { width: number; height: number }>());
  const [measuredVersion, setMeasuredVersion] = useState(0);
  // (measuredVersion stands for the contents of measured.current)
  const graph = useMemo(() => docToGraph(doc, { measured: measured.current, diagnostics: cycles }), [doc, measuredVersion, cycles]);
  const selectedSet = useMemo(() => new Set(selected), [selected]);
  const graphRef = useRef(graph);
  graphRef.current = graph;

  const nodesRef = useRef<FlowNode[]>([]);
  const [nodes, setNodesState] = useState<FlowNode[]>(() => (nodesRef.current = mergeNodes(graph.nodes, [], selectedSet, isLarge(graph.nodes))));
  const setNodes = useCallback((next: FlowNode[]) => {
    nodesRef.current = next;
    setNodesState(next);
  }, []);
  const [edges, setEdges] = useState<FlowEdge[]>(graph.edges);
  const large = isLarge(nodes);
  // Read by React Flow once, when it mounts; later documents get `openView`.
  const [initialView] = useState(() => (isLarge(nodesRef.current) ? startViewport(nodesRef.current) : undefined));

  // The document changed (or the selection did): derive again.
  useLayoutEffect(() => {
    setNodes(mergeNodes(graph.nodes, nodesRef.current, selectedSet, isLarge(graph.nodes)));
  }, [graph, selectedSet, setNodes]);
  useLayoutEffect(() => {
    setEdges((prev) => mergeEdges(graph.edges, prev));
  }, [graph]);
  // An edge a diagnostic names (a dependency cycle) is selected when the diagnostic is
  // clicked (once per click: later edits keep whatever is selected then).
  useLayoutEffect(() => {
    if (!selectedEdge) return;
    const pick = (e: FlowEdge) => e.id === selectedEdge.id;
    setEdges((prev) => prev.map((e) => (!!e.selected === pick(e) ? e : { ...e, selected: pick(e) })));
  }, [selectedEdge]);

  // While a run is shown, edges into running steps move (data is flowing there).
  const runningKey = useRunStore((s) => (s.mode === 'idle' ? '' : [...stepsRunning(s.view)].sort().join('\n')));
  const shownEdges = useMemo(() => {
    if (!runningKey) return edges;
    const running = new Set(runningKey.split('\n'));
    return edges.map((e) => (running.has(e.target) && e.data?.kind !== 'fallback' ? { ...e, animated: true } : e));
  }, [edges, runningKey]);

  // A notice for refused edits ("a fallback step runs only as a fallback", …).
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    if (!notice) return;
    const t = setTimeout(() => setNotice(null), 4000);
    return () => clearTimeout(t);
  }, [notice]);

  /** Writes the positions that differ from the document's (one undo entry). */
  const commitPositions = useCallback((current: FlowNode[]) => {
    const derived = new Map(graphRef.current.nodes.map((n) => [n.id, n]));
    const moved: Record<string, { x: number; y: number }> = {};
    for (const n of current) {
      const d = derived.get(n.id);
      if (d && (n.position.x !== d.position.x || n.position.y !== d.position.y)) moved[n.id] = n.position;
    }
    // Loop sizes are not written: a container grows to hold its body by itself.
    if (Object.keys(moved).length) docStore.getState().moveNodes(moved);
  }, []);

  const onNodesChange = useCallback(
    (changes: NodeChange<FlowNode>[]) => {
      const local = changes.filter((c) => c.type !== 'remove' && c.type !== 'add' && c.type !== 'replace');
      if (local.length === 0) return;
      const next = dropEstimates(local, applyNodeChanges(local, nodesRef.current));
      setNodes(next);
      if (remember(local, next, measured.current, docStore.getState().doc)) setMeasuredVersion((v) => v + 1);
      if (local.some((c) => c.type === 'position' && c.dragging === false)) commitPositions(next);
    },
    [setNodes, commitPositions],
  );

  const onEdgesChange = useCallback((changes: EdgeChange<FlowEdge>[]) => {
    const local = changes.filter((c) => c.type === 'select');
    if (local.length) setEdges((prev) => applyEdgeChanges(local, prev));
  }, []);

  const onSelectionChange = useCallback(({ nodes: sel }: OnSelectionChangeParams<FlowNode, FlowEdge>) => {
    const s = docStore.getState();
    const ids = sel.map((n) => n.id);
    const current = new Set(s.selected);
    if (ids.length !== current.size || ids.some((id) => !current.has(id))) s.select(ids);
  }, []);

  const onConnect = useCallback((c: Connection) => {
    const r = docStore.getState().connect(c.source, c.target, c.sourceHandle);
    if (!r.ok) setNotice(r.reason);
  }, []);

  const isValidConnection = useCallback<IsValidConnection<FlowEdge>>(
    (c) => c.targetHandle === 'in' && connectionProblem(docStore.getState().doc, c.source, c.target, c.sourceHandle) === null,
    [],
  );

  const onBeforeDelete = useCallback<OnBeforeDelete<FlowNode, FlowEdge>>(async ({ nodes: ns, edges: es }) => {
    const s = docStore.getState();
    const gone = new Set(ns.map((n) => n.id));
    s.batch(ns.length ? 'Delete' : 'Disconnect', () => {
      for (const e of es) {
        if (gone.has(e.source) || gone.has(e.target)) continue;
        const r = s.disconnect(e.source, e.target, e.sourceHandle);
        if (!r.ok) setNotice(r.reason);
      }
      if (ns.length) s.removeSteps([...gone]);
    });
    // The document is the source of truth: React Flow removes nothing itself.
    return false;
  }, []);

  const onDragOver = useCallback((e: DragEvent) => {
    if (!e.dataTransfer.types.includes(STEP_MIME)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
  }, []);

  const onDrop = useCallback(
    (e: DragEvent) => {
      const raw = e.dataTransfer.getData(STEP_MIME);
      if (!raw) return;
      e.preventDefault();
      let template: StepTemplate;
      try {
        template = JSON.parse(raw) as StepTemplate;
      } catch {
        setNotice('the dropped item is not a step');
        return;
      }
      if (!template || typeof template !== 'object' || typeof template.kind !== 'string') {
        setNotice('the dropped item is not a step');
        return;
      }
      const point = rf.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      const { container, position } = commands.placeAt(point);
      const s = docStore.getState();
      const at = inside(container, { x: position.x - NODE_WIDTH / 2, y: position.y - 20 });
      const id = s.addStep(template, { container, position: at });
      if (id) s.select([id]);
      else setNotice('the step could not be added here');
    },
    [rf, commands],
  );

  // Steps added without a point (palette click) land at the centre of the view; new
  // steps keep off the cards as they are drawn.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const s = docStore.getState();
    s.setCanvasView({
      center: () => {
        const r = box.current?.getBoundingClientRect();
        return r && r.width > 0 ? rf.screenToFlowPosition({ x: r.left + r.width / 2, y: r.top + r.height / 2 }) : null;
      },
      sizes: () => {
        const out = new Map<string, { width: number; height: number }>();
        for (const n of nodesRef.current) {
          const m = n.measured;
          if (n.type !== 'loop' && m?.width && m.height) out.set(n.id, { width: m.width, height: m.height });
        }
        return out;
      },
    });
    return () => s.setCanvasView(null);
  }, [rf]);

  // Paste goes where the pointer is, when it is over the canvas.
  const pointer = useRef<{ x: number; y: number } | null>(null);
  const pasteTarget = useCallback(() => {
    if (!pointer.current) return null;
    const { container, position } = commands.placeAt(rf.screenToFlowPosition(pointer.current));
    return { container, position: inside(container, position) };
  }, [rf, commands]);
  useShortcuts({ commands, onSave: onSaveShortcut, pasteTarget });

  // Bring a step into view when asked (a diagnostic click).
  useEffect(() => {
    if (!reveal) return;
    void rf.fitView({ nodes: [{ id: reveal.id }], duration: 300, maxZoom: 1.2, padding: 0.6 });
  }, [reveal, rf]);

  // A new document: fit it once React Flow has measured it; a large one opens at its
  // start, readable, instead (see `openView`).
  const firstGeneration = useRef(generation);
  useEffect(() => {
    if (generation === firstGeneration.current) return;
    const t = setTimeout(() => openView(rf, nodesRef.current), 50);
    return () => clearTimeout(t);
  }, [generation, rf]);
  // …and its edges follow the routes of its auto-layout if it was laid out so (once
  // its cards are measured; not for a large document).
  useEffect(() => {
    const t = setTimeout(() => {
      if (isLarge(nodesRef.current)) return;
      const sizes: Record<string, { width: number; height: number }> = {};
      for (const n of nodesRef.current) {
        const m = n.measured;
        if (n.type !== 'loop' && m?.width && m.height) sizes[n.id] = { width: m.width, height: m.height };
      }
      void docStore.getState().restoreRoutes(sizes);
    }, 300);
    return () => clearTimeout(t);
  }, [generation]);

  return (
    <div
      ref={box}
      className="canvas"
      onPointerMove={(e) => (pointer.current = { x: e.clientX, y: e.clientY })}
      onPointerLeave={() => (pointer.current = null)}
    >
      <ReactFlow<FlowNode, FlowEdge>
        nodes={nodes}
        edges={shownEdges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onSelectionChange={onSelectionChange}
        onConnect={onConnect}
        isValidConnection={isValidConnection}
        onBeforeDelete={onBeforeDelete}
        onDragOver={onDragOver}
        onDrop={onDrop}
        deleteKeyCode={['Delete', 'Backspace']}
        multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
        selectionKeyCode="Shift"
        colorMode={theme}
        onlyRenderVisibleElements={large}
        fitView={!large}
        fitViewOptions={{ padding: 0.15 }}
        defaultViewport={initialView}
        minZoom={0.05}
        maxZoom={2}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={20} size={1} />
        {large ? (
          <BitmapMiniMap nodes={nodes} theme={theme} />
        ) : (
          <MiniMap pannable zoomable nodeClassName={(n) => `mini-${n.type ?? 'unknown'}`} />
        )}
        <Controls />
      </ReactFlow>
      {notice && (
        <div className="canvas-notice" role="status" data-testid="canvas-notice">
          {notice}
        </div>
      )}
    </div>
  );
});
