//! Start-up: ask the backend what to open (`studio_info`), open it, and note what the
//! store reported (interrupted runs, runs waiting for an answer). Outside the desktop app there is no backend:
//! the bundled demo opens, read-only as far as the backend is concerned.

import { backend, errorMessage, inTauri, report, statusStore, type StudioInfo } from '../../backend';
import { docStore } from '../../doc/store';
import type { Blueprint } from '../../doc/types';
import { refreshWaiting } from '../run/session';
import { openStored } from './actions';
import { newBlueprintDoc } from './documents';

export interface StartOptions {
  /** What to open without a backend (a plain browser): the bundled demo. */
  demo?: () => Promise<{ doc: Blueprint; source: string }>;
}

export type StartResult = { mode: 'desktop'; info: StudioInfo } | { mode: 'browser' } | { mode: 'failed'; error: string };

export async function startStudio(opts: StartOptions = {}): Promise<StartResult> {
  if (!inTauri()) {
    if (opts.demo) {
      const { doc, source } = await opts.demo();
      docStore.getState().load(doc, { source });
    }
    report('info', 'browser preview: no desktop backend, so open, save, validation and servers are off');
    return { mode: 'browser' };
  }
  let info: StudioInfo;
  try {
    info = await backend.studioInfo();
  } catch (e) {
    const error = errorMessage(e);
    docStore.getState().load(newBlueprintDoc(), {});
    report('error', `the studio could not start: ${error}`);
    return { mode: 'failed', error };
  }
  statusStore.setState({ interrupted: Array.isArray(info.interrupted) ? info.interrupted : [] });
  const opened = info.open_first ? await openStored(info.open_first) : false;
  if (!opened) docStore.getState().load(newBlueprintDoc(), {});
  if (opened && info.first_start) report('info', 'first start: the store holds the examples and demo servers; this is the demo');
  // Runs an earlier session left waiting for an answer: the notice over the canvas lists them.
  void refreshWaiting();
  return { mode: 'desktop', info };
}
