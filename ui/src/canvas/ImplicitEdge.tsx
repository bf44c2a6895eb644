//! The edge of an implicit dependency: a step that runs after the previous step of
//! its list because it has no `after` (hand-written files). Drawn thin, grey and
//! dashed, unlike a written `after` edge (solid) and a fallback (orange, dashed,
//! labelled); hovering says why it is there. A click (or Enter on the selected edge)
//! opens a small menu on the edge:
//! "Make explicit" writes the target's `after` with the source (keeping its other
//! dependencies), "Remove" writes `after` without it. Escape or a click elsewhere
//! closes the menu.
//!
//! Every edge (implicit or not, `routed` for the others) follows its route from the
//! last auto-layout while its two ends stay where that layout put them
//! (`graph/routes.ts`): ELK routed it around loop boxes and cards. Otherwise it is
//! React Flow's smooth step. `edgeTypes` is the registry the canvas passes to React Flow.

import {
  BaseEdge,
  EdgeLabelRenderer,
  getSmoothStepPath,
  useReactFlow,
  useStore,
  type EdgeProps,
  type EdgeTypes,
} from '@xyflow/react';
import { memo, useEffect, useRef, useState, type MouseEvent } from 'react';
import { docStore } from '../doc/store';
import { anchored, routedPath, useRoutes } from '../graph/routes';
import type { FlowEdge } from '../graph/types';
import './ImplicitEdge.css';

/** The path of an edge: along its auto-layout route while its ends have not moved, else a smooth step. */
function useEdgePath(props: EdgeProps<FlowEdge>): { path: string; labelX: number; labelY: number } {
  const { id, source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition } = props;
  const route = useRoutes((s) => s.routes[id]);
  const anchors = useRoutes((s) => s.anchors);
  const from = useStore((s) => (route ? s.nodeLookup.get(source)?.internals.positionAbsolute : undefined));
  const to = useStore((s) => (route ? s.nodeLookup.get(target)?.internals.positionAbsolute : undefined));
  if (route && anchored(source, from, anchors) && anchored(target, to, anchors)) {
    const r = routedPath(route, { x: sourceX, y: sourceY }, { x: targetX, y: targetY });
    return { path: r.path, labelX: r.label.x, labelY: r.label.y };
  }
  const [path, labelX, labelY] = getSmoothStepPath({ sourceX, sourceY, sourcePosition, targetX, targetY, targetPosition });
  return { path, labelX, labelY };
}

/** A written `after`, a switch case or a fallback: drawn along its route when it has one. */
export const RoutedEdge = memo(function RoutedEdge(props: EdgeProps<FlowEdge>) {
  const { path, labelX, labelY } = useEdgePath(props);
  const { id, markerEnd, style, label, labelStyle, labelShowBg, labelBgStyle, labelBgPadding, labelBgBorderRadius, interactionWidth } = props;
  return (
    <BaseEdge
      id={id}
      path={path}
      markerEnd={markerEnd}
      style={style}
      label={label}
      labelX={labelX}
      labelY={labelY}
      labelStyle={labelStyle}
      labelShowBg={labelShowBg}
      labelBgStyle={labelBgStyle}
      labelBgPadding={labelBgPadding}
      labelBgBorderRadius={labelBgBorderRadius}
      interactionWidth={interactionWidth}
    />
  );
});

/** What the tooltip of an implicit edge says. */
export function implicitTitle(source: string, target: string): string {
  return `\`${target}\` runs after \`${source}\` only because it comes next in the list (no \`after\` written). Click to make it explicit or remove it.`;
}

export const ImplicitEdge = memo(function ImplicitEdge(props: EdgeProps<FlowEdge>) {
  const { id, source, target, markerEnd, style } = props;
  const { path, labelX, labelY } = useEdgePath(props);

  // Where the menu opens (flow coordinates: where the edge was clicked).
  const [menu, setMenu] = useState<{ x: number; y: number } | null>(null);
  const rf = useReactFlow();
  // The menu is drawn at screen size whatever the zoom (it sits in the zoomed canvas).
  const zoom = useStore((st) => (menu ? st.transform[2] : 1));
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!menu) return;
    const away = (e: PointerEvent) => {
      if (!box.current?.contains(e.target as Node)) setMenu(null);
    };
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setMenu(null);
    };
    document.addEventListener('pointerdown', away, true);
    document.addEventListener('keydown', key);
    box.current?.querySelector('button')?.focus();
    return () => {
      document.removeEventListener('pointerdown', away, true);
      document.removeEventListener('keydown', key);
    };
  }, [menu]);

  // Keyboard: Enter on the focused, selected edge opens the menu at its middle (the
  // first Enter selects the edge, as for every edge).
  const selected = !!props.selected;
  useEffect(() => {
    if (menu || !selected) return;
    const key = (e: KeyboardEvent) => {
      if (e.key !== 'Enter' || e.defaultPrevented) return;
      const edge = e.target instanceof Element ? e.target.closest('.react-flow__edge') : null;
      if (edge?.getAttribute('data-id') !== id) return;
      // Before React Flow (which would toggle the selection off): capture, and stop here.
      e.preventDefault();
      e.stopPropagation();
      setMenu({ x: labelX, y: labelY });
    };
    document.addEventListener('keydown', key, true);
    return () => document.removeEventListener('keydown', key, true);
  }, [menu, selected, id, labelX, labelY]);

  const open = (e: MouseEvent) => {
    e.stopPropagation();
    setMenu(rf.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
  };
  const act = (what: 'explicit' | 'remove') => {
    setMenu(null);
    const s = docStore.getState();
    if (what === 'explicit') s.makeExplicit(source, target);
    else s.disconnect(source, target, 'out');
  };

  return (
    <>
      <title>{implicitTitle(source, target)}</title>
      <BaseEdge id={id} path={path} markerEnd={markerEnd} style={style} interactionWidth={0} />
      {/* The wide, invisible path that takes the click. */}
      <path d={path} className="implicit-edge-hit" data-testid={`implicit-hit-${source}-${target}`} onClick={open} />
      {menu && (
        <EdgeLabelRenderer>
          <div
            ref={box}
            className="edge-menu nodrag nopan"
            role="menu"
            aria-label={`Edge ${source} → ${target}`}
            data-testid="edge-menu"
            style={{ transform: `translate(${menu.x}px, ${menu.y}px) scale(${1 / (zoom || 1)}) translate(-50%, 8px)`, transformOrigin: '0 0' }}
          >
            <div className="edge-menu-title">
              {source} → {target} <span className="edge-menu-kind">by list order</span>
            </div>
            <button type="button" role="menuitem" data-testid="edge-make-explicit" onClick={() => act('explicit')}>
              Make explicit
              <span className="edge-menu-hint">write {target}.after</span>
            </button>
            <button type="button" role="menuitem" data-testid="edge-remove" onClick={() => act('remove')}>
              Remove
              <span className="edge-menu-hint">{target} no longer waits</span>
            </button>
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
});

/** The custom edge types (module scope, so React Flow never sees a new object). */
export const edgeTypes: EdgeTypes = { implicit: ImplicitEdge, routed: RoutedEdge };
