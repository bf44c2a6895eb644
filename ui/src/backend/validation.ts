//! Validation while editing: every document change is sent to `validate_blueprint`
//! after a quiet period (300 ms), and the answer becomes the store's diagnostics (the
//! canvas badges and the list). An answer that is not for the latest request — the
//! document changed since, or another request went out — is dropped. Other changes can
//! ask for it too (`also`): the backend checks tools against the servers started so
//! far, so what they offer changing changes the warnings.

import { docStore, type DocStore } from '../doc/store';
import type { Blueprint, Diagnostic } from '../doc/types';
import { backend, errorMessage } from './client';
import { clearStatus, report, statusStore } from './status';

export const VALIDATE_DELAY_MS = 300;

export interface ValidationOptions {
  store?: DocStore;
  delay?: number;
  validate?: (doc: Blueprint) => Promise<Diagnostic[]>;
  /** Subscribes `again` to other changes that call for validating again; returns the
   * unsubscribe function. */
  also?: (again: () => void) => () => void;
}

/** Starts validating the store's document (now, and after each change); returns the stop function. */
export function startValidation(opts: ValidationOptions = {}): () => void {
  const store = opts.store ?? docStore;
  const delay = opts.delay ?? VALIDATE_DELAY_MS;
  const validate = opts.validate ?? backend.validateBlueprint;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Every schedule and every request takes a number; only the latest one's answer counts.
  let latest = 0;
  let stopped = false;
  let lastFailure: string | null = null;

  const run = () => {
    timer = undefined;
    const doc = store.getState().doc;
    const mine = ++latest;
    validate(doc).then(
      (list) => {
        if (stopped || mine !== latest || store.getState().doc !== doc) return;
        // A message this fixes goes: the failure to validate, or errors in the document.
        const shown = statusStore.getState();
        const fixed = shown.message === lastFailure || (shown.about === 'document' && !list.some((d) => d.level === 'error'));
        if (shown.message !== null && fixed) clearStatus();
        lastFailure = null;
        store.getState().setDiagnostics(list);
      },
      (e: unknown) => {
        if (stopped || mine !== latest) return;
        const message = `validation failed: ${errorMessage(e)}`;
        // Say it once, not on every keystroke.
        if (message !== lastFailure) report('error', message);
        lastFailure = message;
      },
    );
  };

  const schedule = () => {
    if (timer !== undefined) clearTimeout(timer);
    latest++; // answers to earlier requests are stale from now on
    timer = setTimeout(run, delay);
  };

  const unsubscribe = store.subscribe((s, prev) => {
    if (s.doc !== prev.doc) schedule();
  });
  const unsubscribeAlso = opts.also?.(schedule);
  schedule();

  return () => {
    stopped = true;
    unsubscribe();
    unsubscribeAlso?.();
    if (timer !== undefined) clearTimeout(timer);
  };
}
