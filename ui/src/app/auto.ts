//! The panels that open by themselves: the inspector when a step is selected (unless
//! the user closed it), and the bottom panel when new errors appear — collapsing again
//! when they are gone, unless the user opened it. (A run opens it through `showTab`.)

import { useEffect } from 'react';
import { problemsOf } from '../diagnostics/hints';
import { allStepIds } from '../doc/query';
import { docStore } from '../doc/store';
import type { Blueprint, Diagnostic } from '../doc/types';
import { useBottomTab } from '../panels/run/tabs';
import { useLayout } from '../shared/layout';

const errorsOf = (doc: Blueprint, list: readonly Diagnostic[]) =>
  problemsOf(doc, list)
    .filter((d) => d.level === 'error')
    .map((d) => ({ key: `${d.code} ${d.pointer}`, step: d.step ?? null }));

/**
 * Follows the document store; returns the unsubscribe function. Errors of a step that
 * is new since the last diagnostics (a Loop just dropped, with no list yet) only mark
 * its card, as n8n does, and so do the next errors of a step that already had some (an
 * empty Loop being built: its list typed, still no body): the panel opens for errors an
 * edit brought to what was working, or to the blueprint as a whole.
 */
export function followDocForPanels(): () => void {
  const first = docStore.getState();
  let known = new Set(errorsOf(first.doc, first.diagnostics).map((e) => e.key));
  let seenSteps = new Set(allStepIds(first.doc));
  let failing = stepsOf(errorsOf(first.doc, first.diagnostics));
  if (known.size) useLayout.getState().openBottomFor('problems');
  return docStore.subscribe((now, before) => {
    if (now.selected !== before.selected && now.selected.length > 0) useLayout.getState().revealRight();
    if (now.diagnostics === before.diagnostics && now.doc === before.doc) return;
    const errors = errorsOf(now.doc, now.diagnostics);
    const fresh = errors.some(
      (e) => !known.has(e.key) && (e.step === null || (seenSteps.has(e.step) && !failing.has(e.step))),
    );
    known = new Set(errors.map((e) => e.key));
    failing = stepsOf(errors);
    if (now.diagnostics !== before.diagnostics || now.generation !== before.generation) seenSteps = new Set(allStepIds(now.doc));
    if (fresh) {
      useBottomTab.setState({ tab: 'problems' });
      useLayout.getState().openBottomFor('problems');
    } else if (known.size === 0 && useBottomTab.getState().tab === 'problems') {
      useLayout.getState().bottomHasNothingToSay();
    }
  });
}

const stepsOf = (errors: readonly { step: string | null }[]) =>
  new Set(errors.flatMap((e) => (e.step === null ? [] : [e.step])));

export function usePanelsFollowDoc(): void {
  useEffect(() => followDocForPanels(), []);
}
