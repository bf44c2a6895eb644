//! What differs between two versions of a blueprint, as a person reads it: the steps
//! added, removed and changed (by id, nested loop bodies included, with the fields that
//! changed), and the top-level fields changed. The changed-elsewhere notice shows it
//! (`ChangedNotice`): the document on the canvas against the revision saved elsewhere.
//!
//! Key order does not count; a step moved into or out of a loop is changed (`loop`).

import type { Blueprint } from '../../doc/types';
import { jsonEqual } from '../inspector/json';

export interface StepChange {
  id: string;
  /** The step's fields that differ (`loop`: it sits in another loop, or none), sorted. */
  fields: string[];
}

export interface BlueprintDiff {
  /** In theirs, not in mine, in theirs' order. */
  added: string[];
  /** In mine, not in theirs, in mine's order. */
  removed: string[];
  /** In both, different, in theirs' order. */
  changed: StepChange[];
  /** Top-level fields (other than `steps`) that differ, sorted. */
  fields: string[];
}

interface Placed {
  step: Record<string, unknown>;
  /** The loop whose body holds it (`null`: the top level). */
  loop: string | null;
}

/** Every step with an id, by id, in document order (the first of a duplicated id). */
function stepsById(doc: Blueprint): Map<string, Placed> {
  const out = new Map<string, Placed>();
  const visit = (list: unknown, loop: string | null) => {
    if (!Array.isArray(list)) return;
    for (const s of list) {
      if (!s || typeof s !== 'object' || Array.isArray(s)) continue;
      const step = s as Record<string, unknown>;
      const id = step.id;
      if (typeof id === 'string' && !out.has(id)) out.set(id, { step, loop });
      // Only a loop holds a body; its steps are compared on their own.
      if (step.kind === 'loop') visit(step.steps, typeof id === 'string' ? id : loop);
    }
  };
  visit(doc.steps, null);
  return out;
}

/** The fields of a step that differ (a loop's body is not a field: its steps are compared). */
function stepFields(a: Placed, b: Placed): string[] {
  const keys = new Set([...Object.keys(a.step), ...Object.keys(b.step)]);
  const body = (p: Placed, k: string) => k === 'steps' && p.step.kind === 'loop';
  const fields = [...keys].filter((k) => !(body(a, k) && body(b, k)) && !jsonEqual(a.step[k], b.step[k]));
  if (a.loop !== b.loop) fields.push('loop');
  return fields.sort();
}

/** What changed from `mine` to `theirs`. */
export function diffBlueprints(mine: Blueprint, theirs: Blueprint): BlueprintDiff {
  const a = stepsById(mine);
  const b = stepsById(theirs);
  const added = [...b.keys()].filter((id) => !a.has(id));
  const removed = [...a.keys()].filter((id) => !b.has(id));
  const changed: StepChange[] = [];
  for (const [id, theirsStep] of b) {
    const mineStep = a.get(id);
    if (!mineStep) continue;
    const fields = stepFields(mineStep, theirsStep);
    if (fields.length) changed.push({ id, fields });
  }
  const top = (doc: Blueprint) => doc as unknown as Record<string, unknown>;
  const keys = new Set([...Object.keys(top(mine)), ...Object.keys(top(theirs))]);
  const fields = [...keys].filter((k) => k !== 'steps' && !jsonEqual(top(mine)[k], top(theirs)[k])).sort();
  return { added, removed, changed, fields };
}

/** Nothing differs. */
export function isSame(d: BlueprintDiff): boolean {
  return d.added.length + d.removed.length + d.changed.length + d.fields.length === 0;
}

/** The diff in one line: "steps: 1 added, 2 changed; name changed" ("no difference"). */
export function diffSummary(d: BlueprintDiff): string {
  const parts = [
    d.added.length ? `${d.added.length} added` : '',
    d.removed.length ? `${d.removed.length} removed` : '',
    d.changed.length ? `${d.changed.length} changed` : '',
  ].filter(Boolean);
  const steps = parts.length ? `steps: ${parts.join(', ')}` : '';
  const fields = d.fields.length ? `${d.fields.join(', ')} changed` : '';
  return [steps, fields].filter(Boolean).join('; ') || 'no difference';
}
