//! Diagnostics against the document: which step (and which field inside it) a
//! diagnostic is about, and the per-step map the canvas badges read.

import { findStep, resolvePointer, stepPointer } from './query';
import type { Blueprint, Diagnostic } from './types';

/** The step a diagnostic is about (its `step`, else the step its pointer enters) and the field inside it. */
export function diagnosticTarget(doc: Blueprint, d: Diagnostic): { step: string | null; field: string | null } {
  const byPointer = resolvePointer(doc, d.pointer ?? '');
  if (d.step && findStep(doc, d.step)) {
    if (byPointer.step === d.step) return byPointer;
    const base = stepPointer(doc, d.step)!;
    const field = d.pointer?.startsWith(base + '/') ? d.pointer.slice(base.length) : null;
    return { step: d.step, field };
  }
  return byPointer;
}

/** Counts and messages of one step's diagnostics, as a node badge shows them. */
export interface StepDiagnostics {
  errors: number;
  warnings: number;
  items: Diagnostic[];
}

/**
 * Diagnostics grouped by the step they are about; ones about no step are left out. One
 * with a `producer` (a template reading a field that step's tool does not give) counts
 * on the producing step too, so both cards show it.
 */
export function diagnosticsByStep(doc: Blueprint, list: readonly Diagnostic[]): Record<string, StepDiagnostics> {
  const out: Record<string, StepDiagnostics> = {};
  const add = (step: string, d: Diagnostic) => {
    const entry = (out[step] ??= { errors: 0, warnings: 0, items: [] });
    if (d.level === 'error') entry.errors++;
    else entry.warnings++;
    entry.items.push(d);
  };
  for (const d of list) {
    const { step } = diagnosticTarget(doc, d);
    if (step) add(step, d);
    if (d.producer && d.producer !== step && findStep(doc, d.producer)) add(d.producer, d);
  }
  return out;
}
