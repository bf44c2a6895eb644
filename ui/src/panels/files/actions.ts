//! What the files toolbar does: new, open, save, import and export. Each reports its
//! outcome in the status line; none throws.
//!
//! The store's `meta` holds where the document comes from: `{ id, rev, saved_at }` for
//! a stored blueprint, `{ source }` for an imported file or the bundled demo, `{}` for
//! a new one.

import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { backend, BackendError, errorMessage, inTauri, report } from '../../backend';
import { docStore } from '../../doc/store';
import type { Blueprint } from '../../doc/types';
import { ask, askChoice } from './ask';
import { askNameAndId, idFromName } from './SaveAsDialog';
import { asBlueprint, freeBlueprintId, newBlueprintDoc } from './documents';
import { useBreakpoints } from '../run/breakpoints';
import { refreshHistory } from '../run/session';

interface FilesState {
  /** The Open dialog is shown. */
  openDialog: boolean;
  /** A save (or another backend round trip that must not overlap) is running. */
  busy: boolean;
}

export const filesStore = createStore<FilesState>()(() => ({ openDialog: false, busy: false }));

export function useFiles<T>(selector: (s: FilesState) => T): T {
  return useStore(filesStore, selector);
}

export const showOpenDialog = (open = true) => filesStore.setState({ openDialog: open });

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const docTitle = (doc: Blueprint) => doc.name || doc.id || 'this blueprint';

/** Metadata of a stored revision, as kept in the store's `meta`. */
export const storedMeta = (info: { id: string; rev: number; saved_at: string }) => ({
  id: info.id,
  rev: info.rev,
  saved_at: info.saved_at,
});

/**
 * True when there is nothing unsaved, or the user chose to save it (and it saved) or
 * to discard it: Save / Discard / Cancel.
 */
export async function confirmDiscard(action: string): Promise<boolean> {
  const s = docStore.getState();
  if (!s.dirty) return true;
  const choice = await askChoice({
    title: 'Save your changes?',
    message: `“${docTitle(s.doc)}” has unsaved changes. ${action} discards them unless you save them first.`,
    save: 'Save',
    discard: 'Discard changes',
  });
  if (choice === 'cancel') return false;
  if (choice === 'discard') return true;
  return save();
}

/**
 * Starts a new, empty blueprint, with an id no stored blueprint has and no run was
 * recorded under: the runs made before its first save are its own, and go with it to
 * the id it is saved under (`save`).
 */
export async function newBlueprint(): Promise<void> {
  if (!(await confirmDiscard('A new blueprint'))) return;
  let id = 'untitled';
  if (inTauri()) {
    try {
      const taken = new Set((await backend.listBlueprints()).map((b) => b.id));
      for (let tries = 0; tries < 50; tries++) {
        id = freeBlueprintId(taken);
        if ((await backend.listRuns(id, 1)).length === 0) break;
        taken.add(id);
      }
    } catch {
      // Not knowing the stored ids only matters at save, which asks before replacing.
    }
  }
  docStore.getState().load(newBlueprintDoc(id), {});
  report('info', 'new blueprint: add a step from the palette, then save');
}

/** Opens a stored blueprint without asking (the caller asked about unsaved changes). */
export async function openStored(id: string): Promise<boolean> {
  try {
    const opened = await backend.getBlueprint(id);
    const checked = asBlueprint(opened.doc);
    if ('problem' in checked) {
      report('error', `could not open ${id}: ${checked.problem}`);
      return false;
    }
    docStore.getState().load(checked.doc, storedMeta(opened.info));
    report('info', `opened ${opened.info.name || opened.info.id}, revision ${opened.info.rev}`);
    return true;
  } catch (e) {
    report('error', `could not open ${id}: ${errorMessage(e)}`);
    return false;
  }
}

/** Asks about unsaved changes, then opens a stored blueprint. */
export async function openBlueprint(id: string): Promise<boolean> {
  if (!(await confirmDiscard('Opening another blueprint'))) return false;
  return openStored(id);
}

/**
 * Saves the document as a new revision. Errors block: they become the diagnostics
 * and the document stays unsaved. The first save of a document never stored (new or
 * imported) asks for its name and a free id; a stored one whose id was changed asks
 * before replacing another stored blueprint.
 */
/** The name-and-id question of a first save is up (a second Save waits for it). */
let naming = false;

export async function save(): Promise<boolean> {
  if (!inTauri()) {
    report('warning', 'not saved: saving needs the mcpflow desktop app');
    return false;
  }
  if (filesStore.getState().busy || naming) return false;
  const first = docStore.getState();
  // A document never stored keeps its runs and breakpoints when it is first saved under another id.
  const formerId = typeof first.meta.id !== 'string' && typeof first.doc.id === 'string' ? first.doc.id : null;
  if (Array.isArray(first.doc.steps) && first.doc.steps.length === 0) {
    // The store refuses a blueprint without steps; say so as a hint, not an error.
    report('info', 'nothing to save yet: add a step first (drag a tool from the palette, or double-click the canvas)');
    return false;
  }
  if (typeof first.meta.id !== 'string') {
    naming = true;
    try {
    // Never stored (new or imported): ask for its name and id first.
    let taken = new Map<string, string>();
    try {
      taken = new Map((await backend.listBlueprints()).map((b) => [b.id, b.name || b.id]));
    } catch {
      // The save below reports a backend that does not answer.
    }
    const name = typeof first.doc.name === 'string' && first.doc.name !== 'Untitled' ? first.doc.name : '';
    const id = typeof first.doc.id === 'string' && !taken.has(first.doc.id) && !/^untitled(-\d+)?$/.test(first.doc.id) ? first.doc.id : idFromName(name);
    const picked = await askNameAndId({ name, id }, taken);
    if (!picked) {
      report('info', 'not saved');
      return false;
    }
    if (picked.name !== first.doc.name || picked.id !== first.doc.id) docStore.getState().setSettings({ name: picked.name, id: picked.id });
    } finally {
      naming = false;
    }
  }
  filesStore.setState({ busy: true });
  try {
    const s = docStore.getState();
    const doc = s.doc;
    if (typeof s.meta.id === 'string' && s.meta.id !== doc.id && typeof doc.id === 'string') {
      let existing: { rev: number; name: string | null } | undefined;
      try {
        existing = (await backend.listBlueprints()).find((b) => b.id === doc.id);
      } catch {
        existing = undefined; // the save below reports a backend that does not answer
      }
      if (
        existing &&
        !(await ask({
          title: 'Replace a stored blueprint?',
          message: `A blueprint with the id “${doc.id}” is already stored (${existing.name ?? doc.id}, revision ${existing.rev}). Saving makes this document its next revision. Change the id in the blueprint settings to keep both.`,
          confirm: 'Save as its next revision',
          danger: true,
        }))
      ) {
        report('info', 'not saved');
        return false;
      }
    }
    const saved = await backend.saveBlueprint(doc);
    const meta = storedMeta(saved.info);
    const now = docStore.getState();
    if (now.doc === doc) {
      now.markSaved(meta);
      now.setDiagnostics(saved.warnings);
    } else {
      // Edited while saving: what was saved is the saved snapshot; the edits stay unsaved.
      docStore.setState({ savedDoc: doc, meta, dirty: true });
    }
    if (formerId !== null && formerId !== saved.info.id) await adoptRuns(formerId, saved.info.id);
    const warnings = saved.warnings.filter((d) => d.level === 'warning').length;
    report('success', `saved revision ${saved.info.rev}${warnings ? ` (${plural(warnings, 'warning')})` : ''}`);
    return true;
  } catch (e) {
    if (e instanceof BackendError && e.code === 'BLUEPRINT_INVALID') {
      const errors = e.diagnostics.filter((d) => d.level === 'error').length;
      docStore.getState().setDiagnostics(e.diagnostics);
      report('error', `not saved: ${plural(errors, 'error')}${errors ? ' (see the diagnostics)' : ` — ${e.message}`}`, errors ? 'document' : null);
    } else {
      report('error', `not saved: ${errorMessage(e)}`);
    }
    return false;
  } finally {
    filesStore.setState({ busy: false });
  }
}

/** The runs and breakpoints of a document's id before its first save, given to its saved id. */
async function adoptRuns(from: string, to: string): Promise<void> {
  useBreakpoints.getState().move(from, to);
  try {
    await backend.moveRuns(from, to);
  } catch (e) {
    report('warning', `the runs made before saving stay under “${from}”: ${errorMessage(e)}`);
  }
  await refreshHistory();
}

/** Reads a blueprint file into the editor as an unsaved document, with its diagnostics. */
export async function importFile(): Promise<boolean> {
  if (!(await confirmDiscard('Importing a file'))) return false;
  try {
    const file = await backend.importBlueprint();
    if (!file) return false; // the user cancelled the dialog
    const checked = asBlueprint(file.doc);
    if ('problem' in checked) {
      report('error', `could not import ${file.path}: ${checked.problem}`);
      return false;
    }
    const s = docStore.getState();
    s.load(checked.doc, { source: file.path });
    // Not stored yet: unsaved until Save (no snapshot of it is "saved").
    docStore.setState({ savedDoc: newBlueprintDoc(''), dirty: true });
    docStore.getState().setDiagnostics(file.diagnostics);
    const errors = file.diagnostics.filter((d) => d.level === 'error').length;
    report(
      errors ? 'warning' : 'info',
      `imported ${file.path} (not saved yet${errors ? `; ${plural(errors, 'error')} to fix before saving` : ''})`,
    );
    return true;
  } catch (e) {
    report('error', `could not import: ${errorMessage(e)}`);
    return false;
  }
}

/** The file name of a path. */
const baseName = (path: string) => path.split(/[\\/]/).pop() ?? path;

/**
 * Writes the document as it is (unsaved edits included) to a file the user picks, ready
 * to run elsewhere: the servers it uses copied in (values as `${env:NAME}`), the stored
 * blueprints it calls and a README beside it. Says what was written and what to set.
 */
export async function exportFile(): Promise<string | null> {
  try {
    const exported = await backend.exportBlueprint(docStore.getState().doc);
    if (!exported) return null;
    const beside = exported.beside.length ? ` with ${exported.beside.map(baseName).join(', ')}` : '';
    const env = exported.env.length ? `; set ${exported.env.join(', ')} where it runs` : '';
    const said = `exported to ${exported.path}${beside}${env}`;
    // One message: what was left out (a server that cannot travel, a lock that could not
    // be taken) said with what was written, not over it.
    if (exported.left_out.length) report('warning', `${said}; ${exported.left_out.join('; ')}`);
    else report('success', said);
    return exported.path;
  } catch (e) {
    report('error', `could not export: ${errorMessage(e)}`);
    return null;
  }
}
