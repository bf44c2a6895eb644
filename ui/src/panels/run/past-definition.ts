//! A past run opens with the definition it ran. When that differs from the document on
//! the canvas (its steps, not just where they are drawn), the canvas shows the run's
//! definition read-only and keeps the current document aside, with its undo history;
//! `PastDefinitionBanner` offers "Show current" (back to it) and "Restore this version"
//! (the old definition becomes the document, one undoable edit, unsaved). Opening
//! another document forgets what was kept.

import { create } from 'zustand';
import { docStore, type DocMeta, type HistoryEntry } from '../../doc/store';
import type { Blueprint } from '../../doc/types';

interface Kept {
  doc: Blueprint;
  savedDoc: Blueprint;
  meta: DocMeta;
  past: HistoryEntry[];
  future: HistoryEntry[];
}

export interface PastDefinitionState {
  /** The run whose definition the canvas shows, and the document kept aside meanwhile. */
  shown: { runId: string; generation: number; kept: Kept } | null;
}

export const usePastDefinition = create<PastDefinitionState>(() => ({ shown: null }));

// Another document opened (not by us): what was kept is not the current one any more.
docStore.subscribe((s, prev) => {
  const shown = usePastDefinition.getState().shown;
  if (shown && s.generation !== prev.generation && s.generation !== shown.generation) usePastDefinition.setState({ shown: null });
});

/** The definition without its drawing (`layout`), keys in one order: what the run ran. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key]);
  return out;
}

/** Whether two blueprints define the same thing (where their cards are drawn aside). */
export function sameDefinition(a: Blueprint, b: Blueprint): boolean {
  const { layout: _a, ...left } = a;
  const { layout: _b, ...right } = b;
  return JSON.stringify(canonical(left)) === JSON.stringify(canonical(right));
}

function isBlueprint(value: unknown): value is Blueprint {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as { steps?: unknown }).steps);
}

/**
 * Shows the definition run `runId` ran, read-only, when it differs from the current
 * document (of the same blueprint); returns whether it does. Otherwise the current
 * document is shown (again).
 */
export function showPastDefinition(runId: string, definition: unknown): boolean {
  const s = docStore.getState();
  const kept: Kept = usePastDefinition.getState().shown?.kept ?? {
    doc: s.doc,
    savedDoc: s.savedDoc,
    meta: s.meta,
    past: s.past,
    future: s.future,
  };
  if (!isBlueprint(definition) || definition.id !== kept.doc.id || sameDefinition(definition, kept.doc)) {
    showCurrent();
    return false;
  }
  usePastDefinition.setState({ shown: { runId, generation: s.generation + 1, kept } });
  s.load(definition, kept.meta);
  docStore.getState().setReadOnly(true);
  return true;
}

/** Back to the current document, as it was (with its undo history and unsaved edits). */
export function showCurrent(): void {
  const shown = usePastDefinition.getState().shown;
  if (!shown) return;
  usePastDefinition.setState({ shown: null });
  // Another document was opened meanwhile: it stays.
  if (docStore.getState().generation !== shown.generation) return;
  const { kept } = shown;
  docStore.setState((s) => ({
    ...kept,
    dirty: kept.doc !== kept.savedDoc,
    readOnly: false,
    selected: [],
    field: null,
    generation: s.generation + 1,
  }));
}

/** The past run's definition becomes the document: one undoable edit, not saved yet. */
export function restoreThisVersion(): void {
  const shown = usePastDefinition.getState().shown;
  if (!shown) return;
  usePastDefinition.setState({ shown: null });
  const { kept } = shown;
  docStore.setState((s) => ({
    savedDoc: kept.savedDoc,
    meta: kept.meta,
    past: [...kept.past, { doc: kept.doc, label: 'Restore this version' }],
    future: [],
    dirty: s.doc !== kept.savedDoc,
    readOnly: false,
  }));
}
