//! Canvas commands that need React Flow's view (measured sizes, the viewport):
//! auto-layout with measured node sizes, fit view, where nodes are drawn, and which
//! loop a canvas point falls into. Usable anywhere under `<ReactFlowProvider>`.

import { useReactFlow, type XYPosition } from '@xyflow/react';
import { useMemo } from 'react';
import { ancestors } from '../doc/query';
import { docStore } from '../doc/store';
import type { XY } from '../doc/types';
import type { NodeSizes } from '../graph/auto-layout';
import type { FlowEdge, FlowNode } from '../graph/types';

/** The drag-and-drop type the palette uses: its data is a JSON step template. */
export const STEP_MIME = 'application/mcpflow-step';

export interface CanvasCommands {
  /** Lays out with elkjs using the measured node sizes (one undo entry), then fits the view. */
  autoLayout(): Promise<void>;
  fitView(): void;
  /** Where every node is drawn (body steps relative to their loop), for copy and duplicate. */
  positions(): Record<string, XY>;
  /** The innermost loop under a flow-coordinate point, and the point relative to it. */
  placeAt(point: XYPosition): { container: string | null; position: XY };
}

export function useCanvasCommands(): CanvasCommands {
  const rf = useReactFlow<FlowNode, FlowEdge>();
  return useMemo<CanvasCommands>(
    () => ({
      async autoLayout() {
        const sizes: NodeSizes = {};
        for (const n of rf.getNodes()) {
          if (n.type !== 'loop' && n.measured?.width && n.measured.height) sizes[n.id] = n.measured;
        }
        await docStore.getState().autoLayout(sizes);
        // Let React Flow take the new positions (two frames) before fitting them; never
        // zoomed in past 100%.
        requestAnimationFrame(() => requestAnimationFrame(() => void rf.fitView({ duration: 300, padding: 0.15, maxZoom: 1 })));
      },
      fitView() {
        void rf.fitView({ duration: 200, padding: 0.15 });
      },
      positions() {
        const out: Record<string, XY> = {};
        for (const n of rf.getNodes()) out[n.id] = { x: n.position.x, y: n.position.y };
        return out;
      },
      placeAt(point) {
        const doc = docStore.getState().doc;
        const loops = rf
          .getIntersectingNodes({ x: point.x, y: point.y, width: 1, height: 1 }, true)
          .filter((n) => n.type === 'loop');
        if (loops.length === 0) return { container: null, position: { x: point.x, y: point.y } };
        const inner = loops.reduce((a, b) => (ancestors(doc, b.id).length > ancestors(doc, a.id).length ? b : a));
        const abs = rf.getInternalNode(inner.id)?.internals.positionAbsolute ?? { x: 0, y: 0 };
        return { container: inner.id, position: { x: point.x - abs.x, y: point.y - abs.y } };
      },
    }),
    [rf],
  );
}
