//! The studio's status line: the last outcome worth telling the user ("saved revision
//! 4", "not saved: 2 errors", "approved `node server.js`"), and what the store reported
//! at start (interrupted runs). Shown by `panels/files/StatusLine`.

import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';

export type StatusLevel = 'info' | 'success' | 'warning' | 'error';

/** What a message is about, when fixing that ends it: `document`, errors in the open
 * blueprint — the message goes once validation finds none (`backend/validation.ts`). */
export type StatusAbout = 'document' | null;

export interface StatusState {
  message: string | null;
  level: StatusLevel;
  /** Changes with every message (so the same text twice still restarts the fade timer). */
  seq: number;
  about: StatusAbout;
  /** Runs a previous session left running, marked interrupted by the store at start. */
  interrupted: string[];
}

export const statusStore = createStore<StatusState>()(() => ({
  message: null,
  level: 'info',
  seq: 0,
  about: null,
  interrupted: [],
}));

export function useStatus<T>(selector: (s: StatusState) => T): T {
  return useStore(statusStore, selector);
}

/** Shows a message in the status line (`about`: what fixing ends it, see `StatusAbout`). */
export function report(level: StatusLevel, message: string, about: StatusAbout = null): void {
  statusStore.setState((s) => ({ message, level, about, seq: s.seq + 1 }));
}

export function clearStatus(): void {
  statusStore.setState((s) => ({ message: null, about: null, seq: s.seq + 1 }));
}
