//! Where a node's handles are before it has ever been drawn. React Flow draws every
//! node once to measure its handles, even with `onlyRenderVisibleElements` (a node
//! without measured handles counts as visible): opening a 1,000-step blueprint would
//! mount and measure all 1,000 cards to show the ten in view. A node that carries
//! `handles` counts as measured, so the canvas gives never-drawn nodes of a large
//! document these estimates, and drops them once React Flow has measured the real
//! node (canvas/Canvas.tsx). The estimates only place the far ends of edges that run
//! off screen; they follow the card's CSS (ui/src/styles.css, `.handle`).

import { Position, type NodeHandle } from '@xyflow/react';
import type { FlowNode } from './types';

/** Handle sizes (`.react-flow__handle.handle`, `.handle-fallback`). */
const HANDLE = 10;
const FALLBACK_HANDLE = 8;
/** A switch card: where its first row (`then`) sits, and the height of a row. */
const SWITCH_FIRST_ROW = 62;
const SWITCH_ROW = 22;

/** A node's size: measured, else set, else React Flow's initial size (0 when none). */
export function nodeSize(node: FlowNode): { width: number; height: number } {
  return {
    width: node.measured?.width ?? node.width ?? node.initialWidth ?? 0,
    height: node.measured?.height ?? node.height ?? node.initialHeight ?? 0,
  };
}

/** The estimated handles of a node, in node coordinates (top-left of each handle). */
export function estimatedHandles(node: FlowNode): NodeHandle[] {
  const { width: w, height: h } = nodeSize(node);
  const mid = h / 2 - HANDLE / 2;
  const handles: NodeHandle[] = [
    { id: 'in', type: 'target', position: Position.Left, x: -HANDLE / 2, y: mid, width: HANDLE, height: HANDLE },
    {
      id: 'fallback',
      type: 'source',
      position: Position.Bottom,
      x: w / 2 - FALLBACK_HANDLE / 2,
      y: h - FALLBACK_HANDLE / 2,
      width: FALLBACK_HANDLE,
      height: FALLBACK_HANDLE,
    },
  ];
  if (node.type !== 'switch') {
    handles.push({ id: 'out', type: 'source', position: Position.Right, x: w - HANDLE / 2, y: mid, width: HANDLE, height: HANDLE });
    return handles;
  }
  const cases = Array.isArray(node.data.step.cases) ? node.data.step.cases.length : 0;
  const ids = ['out', ...Array.from({ length: cases }, (_, i) => `case-${i}`), 'default'];
  ids.forEach((id, row) => {
    const y = SWITCH_FIRST_ROW + row * SWITCH_ROW - HANDLE / 2;
    handles.push({ id, type: 'source', position: Position.Right, x: w - HANDLE / 2, y, width: HANDLE, height: HANDLE });
  });
  return handles;
}
