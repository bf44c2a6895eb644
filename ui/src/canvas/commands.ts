//! Canvas commands that need React Flow's view (measured sizes, the viewport):
//! auto-layout with measured node sizes, fit view, where nodes are drawn, and which
//! loop a canvas point falls into; zoom steps keeping the centre. Usable anywhere
//! under `<ReactFlowProvider>`. Fits follow view.ts (never past 100%, room for the minimap).

import { useReactFlow, useStoreApi, type Viewport, type XYPosition } from '@xyflow/react';
import { useMemo } from 'react';
import { ancestors } from '../doc/query';
import { docStore } from '../doc/store';
import type { XY } from '../doc/types';
import type { NodeSizes } from '../graph/auto-layout';
import { autoLayout } from '../graph/apply-layout';
import type { FlowEdge, FlowNode } from '../graph/types';
import { fitOptions, stepZoom, zoomAround } from './view';
import { useViewPrefs } from './view-prefs';

/** How long a zoom step animates. */
const ZOOM_MS = 150;


export interface CanvasCommands {
  /** Lays out with elkjs using the measured node sizes (one undo entry), then fits the view. */
  autoLayout(): Promise<void>;
  fitView(): void;
  /** Where every node is drawn (body steps relative to their loop), for copy and duplicate. */
  positions(): Record<string, XY>;
  /** The innermost loop under a flow-coordinate point, and the point relative to it. */
  placeAt(point: XYPosition): { container: string | null; position: XY };
  /** Zooms to `zoom` keeping the centre of the canvas where it is (Ctrl+0: 1). */
  zoomTo(zoom: number): void;
  /** One zoom step in (1) or out (-1), keeping the centre. */
  zoomBy(dir: 1 | -1): void;
}

/** How many auto-layouts have finished, fit included (see \`autoLayout\`). */
let laidOut = 0;

export function useCanvasCommands(): CanvasCommands {
  const rf = useReactFlow<FlowNode, FlowEdge>();
  const store = useStoreApi<FlowNode, FlowEdge>();
  return useMemo<CanvasCommands>(() => {
    // While a zoom animates, the next step starts from where it is going (two quick
    // presses of + zoom twice as far, not from a frame in between).
    let pending: { view: Viewport; until: number } | null = null;
    const fit = (duration: number) => {
      pending = null;
      void rf.fitView(fitOptions(useViewPrefs.getState().minimap, duration));
    };
    const current = () => (pending && performance.now() < pending.until ? pending.view : rf.getViewport());
    const zoomTo = (zoom: number) => {
      const { width, height } = store.getState();
      const view = zoomAround(current(), zoom, width, height);
      pending = { view, until: performance.now() + ZOOM_MS + 50 };
      void rf.setViewport(view, { duration: ZOOM_MS });
    };
    return {
      async autoLayout() {
        const sizes: NodeSizes = {};
        for (const n of rf.getNodes()) {
          if (n.type !== 'loop' && n.measured?.width && n.measured.height) sizes[n.id] = n.measured;
        }
        await autoLayout(docStore, sizes);
        // Let React Flow take the new positions (two frames) before fitting them; never
        // zoomed in past 100% (see \`fit\`).
        await new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
        pending = null;
        await rf.fitView(fitOptions(useViewPrefs.getState().minimap, 300));
        // The sign that this layout and its fit have finished: the end-to-end tests wait on
        // it (elkjs loads on first use and lays out asynchronously, so no frame count would do).
        store.getState().domNode?.setAttribute('data-laid-out', String(++laidOut));
      },
      fitView() {
        fit(200);
      },
      zoomTo,
      zoomBy(dir) {
        zoomTo(stepZoom(current().zoom, dir));
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
    };
  }, [rf, store]);
}
