//! The panels that open by themselves: the inspector when a step is selected (unless
//! the user closed it), and the bottom panel when new errors appear — collapsing again
//! when they are gone, unless the user opened it. (A run opens it through `showTab`.)

import { useEffect } from 'react';
import { problemsOf } from '../diagnostics/hints';
import { docStore } from '../doc/store';
import type { Blueprint, Diagnostic } from '../doc/types';
import { useBottomTab } from '../panels/run/tabs';
import { useLayout } from './layout';

const errorKeys = (doc: Blueprint, list: readonly Diagnostic[]) =>
  new Set(problemsOf(doc, list).filter((d) => d.level === 'error').map((d) => `${d.code} ${d.pointer}`));

/** Follows the document store; returns the unsubscribe function. */
export function followDocForPanels(): () => void {
  let known = errorKeys(docStore.getState().doc, docStore.getState().diagnostics);
  if (known.size) useLayout.getState().openBottomFor('problems');
  return docStore.subscribe((now, before) => {
    if (now.selected !== before.selected && now.selected.length > 0) useLayout.getState().revealRight();
    if (now.diagnostics === before.diagnostics && now.doc === before.doc) return;
    const keys = errorKeys(now.doc, now.diagnostics);
    const fresh = [...keys].some((k) => !known.has(k));
    known = keys;
    if (fresh) {
      useBottomTab.setState({ tab: 'problems' });
      useLayout.getState().openBottomFor('problems');
    } else if (keys.size === 0 && useBottomTab.getState().tab === 'problems') {
      useLayout.getState().bottomHasNothingToSay();
    }
  });
}

export function usePanelsFollowDoc(): void {
  useEffect(() => followDocForPanels(), []);
}
