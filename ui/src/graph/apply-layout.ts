//! Auto-layout applied to a document store: the positions ELK found written into
//! `layout` (one undo entry), and the edge routes kept for the canvas (`routes.ts`)
//! until the store opens another document. The document store knows nothing of
//! layout engines; the canvas calls these.

import type { DocStore } from '../doc/store';
import { allStepIds } from '../doc/query';
import { layoutGraph, type NodeSizes } from './auto-layout';
import { clearRoutes, setRoutes } from './routes';

/** Lays the graph out with elkjs and writes `layout` (one undo entry). `sizes`: measured node sizes. */
export async function autoLayout(store: DocStore, sizes?: NodeSizes): Promise<void> {
  const doc = store.getState().doc;
  const g = await layoutGraph(doc, sizes);
  const unchanged = store.getState().doc === doc;
  store.getState().batch('Auto-layout', () => store.getState().moveNodes(g.positions));
  forgetRoutesOnLoad(store);
  // The routes fit the document ELK saw (an edit meanwhile: edges are drawn the usual way).
  if (unchanged) setRoutes(g);
  else clearRoutes();
}

/**
 * A document opened with a position for every step may have been auto-laid out: its
 * edge routes are computed again (nothing is written), and the edges whose ends are
 * where that layout puts them follow them (`routes.ts`). `sizes` as for `autoLayout`.
 */
export async function restoreRoutes(store: DocStore, sizes?: NodeSizes): Promise<void> {
  const doc = store.getState().doc;
  const layout = doc.layout;
  if (!layout || !allStepIds(doc).every((id) => layout[id])) return;
  const g = await layoutGraph(doc, sizes);
  forgetRoutesOnLoad(store);
  if (store.getState().doc === doc) setRoutes(g);
}

const watched = new WeakSet<DocStore>();

/** Routes belong to the document they were made for: another `load` forgets them. */
function forgetRoutesOnLoad(store: DocStore): void {
  if (watched.has(store)) return;
  watched.add(store);
  store.subscribe((s, prev) => {
    if (s.generation !== prev.generation) clearRoutes();
  });
}
