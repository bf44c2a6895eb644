//! The open document, changed elsewhere: when a blueprint is saved by anyone (an agent
//! through `mcpflow serve`, the CLI, another front door), the studio reads the stored
//! list again — the Open dialog follows it (`listGeneration`) — and, when the blueprint
//! on the canvas has a newer revision than the one it loaded or saved, says so
//! (`ChangedNotice`) with what differs (`diffBlueprints`, theirs against the document on
//! the canvas) and two ways on:
//!
//! - **Reload** takes theirs: the document becomes the stored revision (unsaved edits
//!   are gone; the notice says so first).
//! - **Keep mine** keeps the document as it is, now counted as unsaved against their
//!   revision: Save makes the next revision from it.
//!
//! A newer revision that is the document itself (the same steps and fields) is taken
//! quietly. A revision is announced once; a later one replaces it in the notice.

import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { backend, errorMessage, inTauri, report } from '../../backend';
import { docStore } from '../../doc/store';
import type { Blueprint } from '../../doc/types';
import { filesStore, storedMeta } from './actions';
import { diffBlueprints, isSame, type BlueprintDiff } from './diff';
import { asBlueprint } from './documents';

export interface ChangedElsewhere {
  id: string;
  name: string;
  /** Their revision, and when it was saved. */
  rev: number;
  savedAt: string;
  /** The revision the canvas had loaded or saved. */
  mine: number;
  theirs: Blueprint;
  diff: BlueprintDiff;
}

interface ElsewhereState {
  change: ChangedElsewhere | null;
  /** Bumped when the stored blueprints change: lists of them read again. */
  listGeneration: number;
}

export const elsewhereStore = createStore<ElsewhereState>()(() => ({ change: null, listGeneration: 0 }));

export function useElsewhere<T>(selector: (s: ElsewhereState) => T): T {
  return useStore(elsewhereStore, selector);
}

const revOf = (meta: Record<string, unknown>) => (typeof meta.rev === 'number' ? meta.rev : null);

/** The stored blueprints changed: lists read again, and the open one is compared with the store. */
export function blueprintsChanged(): Promise<void> {
  elsewhereStore.setState((s) => ({ listGeneration: s.listGeneration + 1 }));
  return checkOpenDocument();
}

let checking: Promise<void> | null = null;
let again = false;

/**
 * Compares the blueprint on the canvas with its latest stored revision; shows the
 * notice when someone else saved a newer one. One check at a time (a change during one
 * checks again after it); while the studio saves, it waits for the save to end.
 */
export function checkOpenDocument(): Promise<void> {
  if (!inTauri()) return Promise.resolve();
  if (checking) {
    again = true;
    return checking;
  }
  checking = (async () => {
    try {
      do {
        again = false;
        await afterSave();
        await compare();
      } while (again);
    } finally {
      checking = null;
    }
  })();
  return checking;
}

/** Resolves once no save is running (the studio's own save is not "elsewhere"). */
function afterSave(): Promise<void> {
  if (!filesStore.getState().busy) return Promise.resolve();
  return new Promise((done) => {
    const stop = filesStore.subscribe((s) => {
      if (s.busy) return;
      stop();
      done();
    });
  });
}

async function compare(): Promise<void> {
  const { meta, generation } = docStore.getState();
  const id = typeof meta.id === 'string' ? meta.id : null;
  const mine = revOf(meta);
  if (id === null || mine === null) return;
  try {
    const info = (await backend.listBlueprints()).find((b) => b.id === id);
    if (!info) {
      if (elsewhereStore.getState().change?.id === id) elsewhereStore.setState({ change: null });
      report('warning', `“${id}” was deleted from the store elsewhere: the canvas still has it, and Save stores it again`);
      docStore.setState({ meta: {}, dirty: true });
      return;
    }
    if (info.rev <= mine) return;
    const opened = await backend.getBlueprint(id);
    const checked = asBlueprint(opened.doc);
    const now = docStore.getState();
    // Another document came to the canvas meanwhile, or it was saved: that one counts.
    if (now.generation !== generation || now.meta.id !== id || (revOf(now.meta) ?? 0) >= opened.info.rev) return;
    if ('problem' in checked) {
      report('warning', `“${id}” was saved elsewhere (revision ${opened.info.rev}), but it cannot be shown: ${checked.problem}`);
      return;
    }
    const diff = diffBlueprints(now.doc, checked.doc);
    if (isSame(diff)) {
      // Theirs is what the canvas holds: nothing to choose.
      now.markSaved(storedMeta(opened.info));
      elsewhereStore.setState({ change: null });
      return;
    }
    elsewhereStore.setState({
      change: {
        id,
        name: opened.info.name || id,
        rev: opened.info.rev,
        savedAt: opened.info.saved_at,
        mine: revOf(now.meta) ?? mine,
        theirs: checked.doc,
        diff,
      },
    });
  } catch (e) {
    report('error', `could not read “${id}” again after it changed in the store: ${errorMessage(e)}`);
  }
}

/** Takes their revision: the canvas shows it, with nothing unsaved. */
export function reloadTheirs(): void {
  const change = elsewhereStore.getState().change;
  if (!change) return;
  elsewhereStore.setState({ change: null });
  if (docStore.getState().meta.id !== change.id) return;
  docStore.getState().load(change.theirs, storedMeta({ id: change.id, rev: change.rev, saved_at: change.savedAt }));
  report('success', `reloaded ${change.name}: revision ${change.rev}, saved elsewhere`);
}

/** Keeps the document on the canvas; it is unsaved against their revision, and Save makes the next. */
export function keepMine(): void {
  const change = elsewhereStore.getState().change;
  if (!change) return;
  elsewhereStore.setState({ change: null });
  const s = docStore.getState();
  if (s.meta.id !== change.id) return;
  docStore.setState({
    meta: storedMeta({ id: change.id, rev: change.rev, saved_at: change.savedAt }),
    savedDoc: change.theirs,
    dirty: s.doc !== change.theirs,
  });
  report('info', `kept your version of ${change.name}: Save stores it as revision ${change.rev + 1}`);
}

// Another document on the canvas: a notice about the one before no longer applies.
docStore.subscribe((now, before) => {
  const change = elsewhereStore.getState().change;
  if (change && now.generation !== before.generation && now.meta.id !== change.id) elsewhereStore.setState({ change: null });
});
