//! The canvas: React Flow drawing the graph derived from the document, and turning
//! gestures into document edits. It holds only transient view state (positions
//! while dragging, measured sizes, edge selection); every change that matters goes
//! to the store, and the graph is derived again from the new document.
//!
//! Wiring: connect → `connect`; deleting edges → `disconnect` (after, case, fallback);
//! deleting nodes → `removeSteps` (one undo entry for both); drag end → `moveNodes`
//! (one undo entry per drag); selection ↔ `selected`; a drop of `STEP_MIME` data
//! → `addStep` at the drop point (inside the innermost loop under it).
//!
//! View (view.ts): a document opens legible (fitted when that is ≥ 60%, never past
//! 100%, else at its start); nothing re-fits when steps are added. Right-click opens
//! the context menus (menu-actions.ts), a double-click on the canvas the quick-add
//! search, a double-click on a card renames it inline.

import {
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  BackgroundVariant,
  MiniMap,
  ReactFlow,
  useReactFlow,
  useStoreApi,
  type Connection,
  type EdgeChange,
  type IsValidConnection,
  type OnConnectEnd,
  type NodeChange,
  type OnBeforeDelete,
  type OnSelectionChangeParams,
  type Viewport,
} from '@xyflow/react';
import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type DragEvent,
  type KeyboardEvent as ReactKeyboardEvent,
  type MouseEvent as ReactMouseEvent,
} from 'react';
import { connectionProblem } from '../doc/ops';
import { cardUnder } from './connect-drop';
import { findStep } from '../doc/query';
import { docStore, useDoc } from '../doc/store';
import type { Blueprint, StepTemplate, XY } from '../doc/types';
import { cycleDiagnosticsKey, CYCLE_CODE } from '../doc/cycle';
import { docToGraph, sameEdge, sameNode } from '../graph/doc-to-graph';
import { estimatedHandles } from '../graph/handles';
import { restoreRoutes } from '../graph/apply-layout';
import { LOOP_HEADER, LOOP_PADDING, NODE_WIDTH, type FlowEdge, type FlowNode } from '../graph/types';
import { usePrefs } from '../prefs';
import { useBreakpoints } from '../panels/run/breakpoints';
import { startRun, syncBreakpoints, useSession } from '../panels/run/session';
import { runStore, stepsRunning, useRunStore } from '../run';
import { BitmapMiniMap } from './BitmapMiniMap';
import { useCanvasCommands } from './commands';
import { STEP_MIME } from '../shared/drag';
import { ContextMenu } from './ContextMenu';
import { canvasMenu, edgeMenu, nodeMenu, type MenuEnv, type MenuItem } from './menu-actions';
import { edgeTypes } from './ImplicitEdge';
import { nodeTypes } from './nodes';
import { QuickAdd } from './QuickAdd';
import { unconnected } from './quick-add';
import { useRename } from './rename';
import { useShortcuts } from './shortcuts';
import { GUIDE_INSET, MAX_ZOOM, MIN_ZOOM, MINIMAP_HEIGHT, MINIMAP_WIDTH, openViewport } from './view';
import { useLayout } from '../shared/layout';
import { useViewPrefs } from './view-prefs';
import { ZoomControl } from './ZoomControl';
import './canvas.css';

/** Above this many nodes only the visible ones are rendered. */
const VIRTUALIZE_ABOVE = 200;

/** A document large enough to be drawn the cheap way (see docs/studio.md, "Large blueprints"). */
const isLarge = (nodes: readonly FlowNode[]) => nodes.length > VIRTUALIZE_ABOVE;

/** The zoom a large document opens at: its cards readable. */
const START_ZOOM = 1;
/** Cards snap to the background's dots when dragged or dropped (as n8n's). */
const SNAP = 20;
const SNAP_GRID: [number, number] = [SNAP, SNAP];
/** Where a card dropped at `point` goes: centred across it, its title under it, on the grid. */
const dropPlace = (point: XY): XY => ({
  x: Math.round((point.x - NODE_WIDTH / 2) / SNAP) * SNAP,
  y: Math.round((point.y - 20) / SNAP) * SNAP,
});
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

type Flow = ReturnType<typeof useReactFlow<FlowNode, FlowEdge>>;

/**
 * The view of a newly opened document: fitted whole when that is legible, else its
 * start (view.ts `openViewport`); a large one at its start, at 100% (`startViewport`).
 */
function openView(rf: Flow, nodes: readonly FlowNode[], width: number, height: number): Viewport {
  if (isLarge(nodes)) {
    const start = startViewport(nodes);
    void rf.setViewport(start);
    return start;
  }
  const top = rf.getNodes().filter((n) => !n.parentId);
  const bounds = top.length ? rf.getNodesBounds(top) : null;
  const guide = useLayout.getState().guideOpen ? GUIDE_INSET : 0;
  const view = openViewport(bounds, width, height, useViewPrefs.getState().minimap, guide);
  void rf.setViewport(view);
  return view;
}

/** Whether React Flow has measured every node (so bounds are real). */
function allMeasured(rf: Flow): boolean {
  return rf.getNodes().every((n) => n.measured?.width && n.measured.height);
}

interface OpenMenu {
  x: number;
  y: number;
  items: MenuItem[];
  label: string;
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
  const readOnly = useDoc((s) => s.readOnly);
  const guideOpen = useLayout((s) => s.guideOpen);
  // The view the open document was given (see `openView`).
  const opened = useRef<Viewport | null>(null);
  // Only dependency-cycle diagnostics change what is drawn (the edge in red): a key of
  // them, so other diagnostics arriving after each edit do not derive the graph again.
  const cycleKey = useDoc((s) => cycleDiagnosticsKey(s.diagnostics));
  const cycles = useMemo(() => docStore.getState().diagnostics.filter((d) => d.code === CYCLE_CODE), [cycleKey]);
  const selectedEdge = useDoc((s) => s.selectedEdge);
  const theme = usePrefs((s) => s.theme);
  const rf = useReactFlow<FlowNode, FlowEdge>();
  const flowStore = useStoreApi<FlowNode, FlowEdge>();
  const commands = useCanvasCommands();
  const minimap = useViewPrefs((s) => s.minimap);
  const [menu, setMenu] = useState<OpenMenu | null>(null);
  const [quick, setQuick] = useState<{ x: number; y: number } | null>(null);
  const closeMenu = useCallback(() => setMenu(null), []);
  const closeQuick = useCallback(() => setQuick(null), []);
  /** A pan or zoom closes what is open at a screen point (the menu, the quick-add). */
  const closePopups = useCallback(() => {
    setMenu(null);
    setQuick(null);
  }, []);

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

  /** An edge's end being dragged (React Flow ends that through onConnectEnd too). */
  const reconnecting = useRef(false);
  /** An edge let go on a card (not on a handle): connected to that card's `in`. */
  const onConnectEnd = useCallback<OnConnectEnd>((event, state) => {
    if (reconnecting.current) return;
    // (A card's own source handles near the pointer count as "invalid" targets: the card
    // under the pointer is what the person aimed at.)
    if (state.isValid || !state.fromNode || state.fromHandle?.type !== 'source') return;
    const target = cardUnder(event);
    if (!target || target === state.fromNode.id) return;
    const r = docStore.getState().connect(state.fromNode.id, target, state.fromHandle.id ?? null);
    if (!r.ok) setNotice(r.reason);
  }, []);

  /** An edge's end dragged to another card: that dependency moves there (one undo entry). */
  const onReconnect = useCallback((old: FlowEdge, c: Connection) => {
    if (old.source === c.source && old.target === c.target && (old.sourceHandle ?? null) === (c.sourceHandle ?? null)) return;
    const s = docStore.getState();
    s.batch('Reconnect', () => {
      const gone = s.disconnect(old.source, old.target, old.sourceHandle);
      if (!gone.ok) {
        setNotice(gone.reason);
        return;
      }
      const made = s.connect(c.source, c.target, c.sourceHandle);
      if (!made.ok) setNotice(made.reason);
    });
  }, []);

  const isValidConnection = useCallback<IsValidConnection<FlowEdge>>(
    (c) => c.targetHandle === 'in' && connectionProblem(docStore.getState().doc, c.source, c.target, c.sourceHandle) === null,
    [],
  );

  const onBeforeDelete = useCallback<OnBeforeDelete<FlowNode, FlowEdge>>(async ({ nodes: ns, edges: es }) => {
    const s = docStore.getState();
    // The shortcuts may have deleted these steps on the same key press already.
    const deleted = new Set(ns.map((n) => n.id));
    const gone = [...deleted].filter((id) => findStep(s.doc, id));
    s.batch(gone.length ? 'Delete' : 'Disconnect', () => {
      for (const e of es) {
        if (deleted.has(e.source) || deleted.has(e.target)) continue;
        const r = s.disconnect(e.source, e.target, e.sourceHandle);
        if (!r.ok) setNotice(r.reason);
      }
      if (gone.length) s.removeSteps(gone);
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
      const at = inside(container, dropPlace(position));
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
  const popupOpen = useRef(false);
  popupOpen.current = menu !== null || quick !== null;
  const onEscape = useCallback(() => {
    if (popupOpen.current) {
      setMenu(null);
      setQuick(null);
      return true;
    }
    setEdges((prev) => (prev.some((e) => e.selected) ? prev.map((e) => (e.selected ? { ...e, selected: false } : e)) : prev));
    return false;
  }, []);
  /** Tab: the quick-add at the pointer when it is over the canvas, else in the middle of it. */
  const onQuickAdd = useCallback(() => {
    const r = box.current?.getBoundingClientRect();
    if (!r) return;
    setMenu(null);
    setQuick(pointer.current ?? { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 3) });
  }, []);
  useShortcuts({ commands, onSave: onSaveShortcut, pasteTarget, onEscape, onQuickAdd });

  // ---- Context menus and the quick-add ----

  /** Adds a step from the quick-add at a client point, unconnected, and selects it. */
  const addAt = useCallback(
    (template: StepTemplate, client: { x: number; y: number }) => {
      const point = rf.screenToFlowPosition(client);
      const { container, position } = commands.placeAt(point);
      const s = docStore.getState();
      const id = s.addStep(unconnected(template), { container, position: inside(container, dropPlace(position)) });
      if (id) s.select([id]);
      else setNotice('the step could not be added here');
    },
    [rf, commands],
  );

  const menuEnv = useCallback(
    (x: number, y: number): MenuEnv => ({
      positions: () => commands.positions(),
      fitView: () => commands.fitView(),
      autoLayout: () => void commands.autoLayout(),
      quickAdd: () => setQuick({ x, y }),
      paste: () => {
        const { container, position } = commands.placeAt(rf.screenToFlowPosition({ x, y }));
        docStore.getState().paste(inside(container, position), { container });
      },
      rename: (id) => useRename.getState().start(id),
      toggleBreakpoint: (id) => {
        const blueprint = docStore.getState().doc.id;
        useBreakpoints.getState().toggle(blueprint, id);
        void syncBreakpoints(blueprint);
      },
      startRun: (opts) => void startRun(opts),
    }),
    [commands, rf],
  );

  const openNodeMenu = useCallback(
    (e: ReactMouseEvent, node: FlowNode) => {
      e.preventDefault();
      const s = docStore.getState();
      let ids = s.selected;
      if (!ids.includes(node.id)) {
        ids = [node.id];
        s.select(ids);
      }
      const session = useSession.getState();
      const run = runStore.getState();
      const items = nodeMenu(
        {
          ids,
          runId: run.mode === 'idle' ? null : run.runId,
          running: session.active !== null || session.starting,
          breakpoints: useBreakpoints.getState().byBlueprint[s.doc.id] ?? [],
        },
        menuEnv(e.clientX, e.clientY),
      );
      setQuick(null);
      setMenu({ x: e.clientX, y: e.clientY, items, label: ids.length > 1 ? `${ids.length} steps` : `Step ${node.id}` });
    },
    [menuEnv],
  );

  const onSelectionContextMenu = useCallback(
    (e: ReactMouseEvent, sel: FlowNode[]) => {
      if (sel[0]) openNodeMenu(e, sel[0]);
    },
    [openNodeMenu],
  );

  const onEdgeContextMenu = useCallback((e: ReactMouseEvent, edge: FlowEdge) => {
    e.preventDefault();
    setQuick(null);
    setMenu({ x: e.clientX, y: e.clientY, items: edgeMenu(edge), label: 'Connection' });
  }, []);

  const onPaneContextMenu = useCallback(
    (e: ReactMouseEvent | MouseEvent) => {
      e.preventDefault();
      setQuick(null);
      setMenu({ x: e.clientX, y: e.clientY, items: canvasMenu(menuEnv(e.clientX, e.clientY)), label: 'Canvas' });
    },
    [menuEnv],
  );

  /** Double-click: on the canvas (or a loop's body) the quick-add; on a card its title turns into an input. */
  const onDoubleClick = useCallback((e: ReactMouseEvent) => {
    const target = e.target as Element | null;
    if (!target?.classList?.contains('react-flow__pane')) return;
    setMenu(null);
    setQuick({ x: e.clientX, y: e.clientY });
  }, []);
  const onNodeDoubleClick = useCallback((e: ReactMouseEvent, node: FlowNode) => {
    const target = e.target as Element | null;
    if (target?.closest('input, button, .iter-grid')) return;
    if (node.type === 'loop' && !target?.closest('.loop-head')) {
      setMenu(null);
      setQuick({ x: e.clientX, y: e.clientY });
      return;
    }
    useRename.getState().start(node.id);
  }, []);

  /** Shift+F10 or the menu key on a focused node: its context menu, at the node. */
  const onKeyDown = useCallback(
    (e: ReactKeyboardEvent) => {
      if (!(e.key === 'ContextMenu' || (e.shiftKey && e.key === 'F10'))) return;
      const el = (e.target as Element | null)?.closest?.('.react-flow__node');
      const id = el?.getAttribute('data-id');
      const node = id ? rf.getNode(id) : undefined;
      if (!el || !node) return;
      const r = el.getBoundingClientRect();
      openNodeMenu({ preventDefault: () => e.preventDefault(), clientX: r.left + 24, clientY: r.top + 24 } as ReactMouseEvent, node);
    },
    [rf, openNodeMenu],
  );

  // Bring a step into view when asked (a diagnostic click, a pause, a step added from
  // the palette): pan to it when it is not wholly in view, keeping the zoom (zooming in
  // to a legible 75% only from below 50%, where its card could not be read).
  useEffect(() => {
    if (!reveal) return;
    const node = rf.getInternalNode(reveal.id);
    if (!node) return;
    const { x, y } = node.internals.positionAbsolute;
    const w = node.measured.width ?? NODE_WIDTH;
    const h = node.measured.height ?? 80;
    const { width, height } = flowStore.getState();
    const view = rf.getViewport();
    const margin = 24;
    const left = x * view.zoom + view.x;
    const top = y * view.zoom + view.y;
    const inView =
      left >= margin && top >= margin && left + w * view.zoom <= width - margin && top + h * view.zoom <= height - margin;
    if (inView && view.zoom >= 0.5) return;
    const zoom = view.zoom < 0.5 ? 0.75 : view.zoom;
    void rf.setCenter(x + w / 2, y + h / 2, { zoom, duration: 300 });
  }, [reveal, rf, flowStore]);

  // A new document (and the first): open it legible once React Flow has measured it
  // (see `openView`). Only here: adding or dropping steps never changes the zoom.
  useEffect(() => {
    let frame = 0;
    let tries = 0;
    const t = setTimeout(function attempt() {
      // The new nodes are rendered and measured within a few frames (a large document
      // needs no measurement: it opens at its start).
      if (!isLarge(nodesRef.current) && !allMeasured(rf) && tries++ < 60) {
        frame = requestAnimationFrame(attempt);
        return;
      }
      const { width, height } = flowStore.getState();
      opened.current = openView(rf, nodesRef.current, width, height);
    }, 50);
    return () => {
      clearTimeout(t);
      cancelAnimationFrame(frame);
    };
  }, [generation, rf, flowStore]);
  // The first-start guide opening over a view just opened (not moved since): the view
  // opens again beside it.
  useEffect(() => {
    const o = opened.current;
    if (!guideOpen || !o) return;
    const v = rf.getViewport();
    if (Math.abs(v.x - o.x) > 1 || Math.abs(v.y - o.y) > 1 || Math.abs(v.zoom - o.zoom) > 0.001) return;
    const { width, height } = flowStore.getState();
    opened.current = openView(rf, nodesRef.current, width, height);
  }, [guideOpen, rf, flowStore]);
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
      void restoreRoutes(docStore, sizes);
    }, 300);
    return () => clearTimeout(t);
  }, [generation]);

  return (
    <div
      ref={box}
      className="canvas"
      onPointerMove={(e) => (pointer.current = { x: e.clientX, y: e.clientY })}
      onPointerLeave={() => (pointer.current = null)}
      onDoubleClick={onDoubleClick}
      onKeyDown={onKeyDown}
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
        onConnectEnd={onConnectEnd}
        onReconnect={onReconnect}
        onReconnectStart={() => (reconnecting.current = true)}
        onReconnectEnd={() => (reconnecting.current = false)}
        isValidConnection={isValidConnection}
        onBeforeDelete={onBeforeDelete}
        onDragOver={onDragOver}
        onDrop={onDrop}
        onNodeContextMenu={openNodeMenu}
        onSelectionContextMenu={onSelectionContextMenu}
        onEdgeContextMenu={onEdgeContextMenu}
        onPaneContextMenu={onPaneContextMenu}
        onNodeDoubleClick={onNodeDoubleClick}
        onMoveStart={closePopups}
        zoomOnDoubleClick={false}
        snapToGrid
        snapGrid={SNAP_GRID}
        deleteKeyCode={readOnly ? null : ['Delete', 'Backspace']}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
        selectionKeyCode="Shift"
        colorMode={theme}
        onlyRenderVisibleElements={large}
        defaultViewport={initialView}
        minZoom={MIN_ZOOM}
        maxZoom={MAX_ZOOM}
        proOptions={{ hideAttribution: true }}
      >
        <Background variant={BackgroundVariant.Dots} gap={SNAP_GRID} size={1} />
        {minimap &&
          nodes.length > 0 &&
          (large ? (
            <BitmapMiniMap nodes={nodes} theme={theme} />
          ) : (
            <MiniMap
              pannable
              zoomable
              style={{ width: MINIMAP_WIDTH, height: MINIMAP_HEIGHT }}
              nodeClassName={(n) => `mini-${n.type ?? 'unknown'}`}
            />
          ))}
        <ZoomControl commands={commands} />
      </ReactFlow>
      {menu && <ContextMenu x={menu.x} y={menu.y} items={menu.items} label={menu.label} onClose={closeMenu} />}
      {quick && <QuickAdd x={quick.x} y={quick.y} onPick={(t) => addAt(t, quick)} onClose={closeQuick} />}
      {notice && (
        <div className="canvas-notice" role="status" data-testid="canvas-notice">
          {notice}
        </div>
      )}
    </div>
  );
});
