//! A new blueprint is not an error: the validator's "the blueprint has no steps"
//! (`INVALID_VALUE` at `/steps`) is a hint while the document has no steps. These
//! helpers set it apart so the lists show it neutral and nothing counts it as a problem.

import type { Blueprint, Diagnostic } from '../doc/types';

/** The "no steps yet" diagnostic of an empty document. */
export function isEmptyDocHint(doc: Pick<Blueprint, 'steps'>, d: Pick<Diagnostic, 'code' | 'pointer'>): boolean {
  return d.code === 'INVALID_VALUE' && d.pointer === '/steps' && Array.isArray(doc.steps) && doc.steps.length === 0;
}

/** The diagnostics that are problems (the empty-document hint left out). */
export function problemsOf<D extends Pick<Diagnostic, 'code' | 'pointer'>>(doc: Pick<Blueprint, 'steps'>, list: readonly D[]): D[] {
  return list.filter((d) => !isEmptyDocHint(doc, d));
}
