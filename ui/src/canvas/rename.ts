//! Inline rename of a step's title: which step's title is an input now. F2, a
//! double-click on a card or the context menu start it; the card commits its `name`.

import { create } from 'zustand';
import { findStep } from '../doc/query';
import { docStore } from '../doc/store';

export interface RenameState {
  editing: string | null;
  start(id: string): void;
  stop(): void;
}

export const useRename = create<RenameState>()((set) => ({
  editing: null,
  start: (id) => set({ editing: id }),
  stop: () => set({ editing: null }),
}));

/**
 * Writes a step's `name` (the label for people): trimmed; empty removes the key, so
 * the card shows the id again. Returns false when the edit was refused.
 */
export function commitName(id: string, text: string): boolean {
  const name = text.trim();
  const s = docStore.getState();
  const step = findStep(s.doc, id);
  if (!step) return false;
  if ((step.name ?? '') === name) return true;
  return s.patchStep(id, { name: name === '' ? undefined : name }).ok;
}
