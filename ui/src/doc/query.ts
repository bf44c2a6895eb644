//! Reading a blueprint: where a step lives (its list, its loop, its JSON pointer),
//! walking every list, and structural-sharing updates along a step's path.

import { setKey, STEP_KEY_ORDER } from './key-order';
import type { Blueprint, LoopStep, Step } from './types';

/** Where a step sits: the indices through nested `steps` arrays, and its loop (or null). */
export interface StepLocation {
  path: number[];
  /** The id of the loop whose body holds the step; `null` at the top level. */
  container: string | null;
  index: number;
  step: Step;
}

interface Index {
  byId: Map<string, StepLocation>;
  order: string[];
}

// Documents are immutable, so an index is computed once per document object.
const indexes = new WeakMap<Blueprint, Index>();

function indexOf(doc: Blueprint): Index {
  let idx = indexes.get(doc);
  if (idx) return idx;
  const byId = new Map<string, StepLocation>();
  const order: string[] = [];
  const visit = (list: readonly Step[] | undefined, prefix: number[], container: string | null) => {
    if (!Array.isArray(list)) return;
    list.forEach((step, index) => {
      if (!step || typeof step !== 'object') return;
      const path = [...prefix, index];
      if (typeof step.id === 'string' && !byId.has(step.id)) {
        byId.set(step.id, { path, container, index, step });
        order.push(step.id);
      }
      if (isLoop(step)) visit(step.steps, path, step.id);
    });
  };
  visit(doc.steps, [], null);
  idx = { byId, order };
  indexes.set(doc, idx);
  return idx;
}

export function isLoop(step: Step | undefined | null): step is LoopStep {
  return !!step && step.kind === 'loop' && Array.isArray((step as LoopStep).steps);
}

/** The step with this id, wherever it is (nested loop bodies included). */
export function findStep(doc: Blueprint, id: string): Step | undefined {
  return indexOf(doc).byId.get(id)?.step;
}

export function locateStep(doc: Blueprint, id: string): StepLocation | undefined {
  return indexOf(doc).byId.get(id);
}

/** The JSON pointer of a step, e.g. `/steps/3/steps/0`; undefined when there is no such step. */
export function stepPointer(doc: Blueprint, id: string): string | undefined {
  const loc = locateStep(doc, id);
  return loc ? loc.path.map((i) => `/steps/${i}`).join('') : undefined;
}

/** Every step id, in document order (a loop before its body). */
export function allStepIds(doc: Blueprint): string[] {
  return indexOf(doc).order.slice();
}

/** The ids of `id` and every step nested in it. */
export function subtreeIds(step: Step): string[] {
  const out: string[] = [step.id];
  if (isLoop(step)) for (const s of step.steps) out.push(...subtreeIds(s));
  return out;
}

/** The list a container holds: the top-level steps for `null`, a loop's body otherwise. */
export function containerSteps(doc: Blueprint, container: string | null): Step[] | undefined {
  if (container === null) return Array.isArray(doc.steps) ? doc.steps : [];
  const loop = findStep(doc, container);
  return isLoop(loop) ? loop.steps : undefined;
}

/** The loops around a step, innermost first. */
export function ancestors(doc: Blueprint, id: string): string[] {
  const out: string[] = [];
  let c = locateStep(doc, id)?.container ?? null;
  while (c !== null) {
    out.push(c);
    c = locateStep(doc, c)?.container ?? null;
  }
  return out;
}

/** Every list of the blueprint with its container id, top level first. */
export function allLists(doc: Blueprint): { container: string | null; steps: Step[] }[] {
  const out: { container: string | null; steps: Step[] }[] = [];
  const visit = (steps: Step[], container: string | null) => {
    out.push({ container, steps });
    for (const s of steps) if (isLoop(s)) visit(s.steps, s.id);
  };
  visit(Array.isArray(doc.steps) ? doc.steps : [], null);
  return out;
}

/** Replaces one list (structural sharing: only the path to it is copied). */
export function updateContainer(
  doc: Blueprint,
  container: string | null,
  fn: (steps: Step[]) => Step[],
): Blueprint {
  if (container === null) {
    const next = fn(doc.steps ?? []);
    return next === doc.steps ? doc : setKey(doc, 'steps', next);
  }
  return updateStepById(doc, container, (loop) => {
    if (!isLoop(loop)) return loop;
    const next = fn(loop.steps);
    return next === loop.steps ? loop : setKey(loop, 'steps', next, STEP_KEY_ORDER);
  });
}

/** Replaces one step (structural sharing). Unknown ids leave the document as it is. */
export function updateStepById(doc: Blueprint, id: string, fn: (step: Step) => Step): Blueprint {
  const loc = locateStep(doc, id);
  if (!loc) return doc;
  const next = updateAtPath(doc.steps, loc.path, fn);
  return next === doc.steps ? doc : setKey(doc, 'steps', next);
}

function updateAtPath(list: Step[], path: number[], fn: (step: Step) => Step): Step[] {
  const [i, ...rest] = path;
  const old = list[i!]!;
  const next =
    rest.length === 0 ? fn(old) : setKey(old, 'steps', updateAtPath((old as LoopStep).steps, rest, fn), STEP_KEY_ORDER);
  if (next === old) return list;
  const copy = list.slice();
  copy[i!] = next;
  return copy;
}

/**
 * Maps every step of every list (bodies first, then the loop holding them), keeping
 * unchanged subtrees. `fn` returns the step itself to keep it, or `null` to drop it.
 */
export function mapAllSteps(doc: Blueprint, fn: (step: Step, container: string | null) => Step | null): Blueprint {
  const mapList = (list: Step[], container: string | null): Step[] => {
    let out: Step[] | null = null;
    for (let i = 0; i < list.length; i++) {
      const step = list[i]!;
      let s: Step | null = step;
      if (isLoop(step)) {
        const body = mapList(step.steps, step.id);
        if (body !== step.steps) s = setKey(step, 'steps', body, STEP_KEY_ORDER);
      }
      s = s && fn(s, container);
      if (s !== step && out === null) out = list.slice(0, i);
      if (out !== null && s !== null) out.push(s);
    }
    return out ?? list;
  };
  const steps = mapList(Array.isArray(doc.steps) ? doc.steps : [], null);
  return steps === doc.steps ? doc : setKey(doc, 'steps', steps);
}

/**
 * Resolves a JSON pointer to the innermost step it points into, and the rest of the
 * pointer inside that step (`/steps/3/steps/0/args/x` → step id, `/args/x`).
 */
export function resolvePointer(doc: Blueprint, pointer: string): { step: string | null; field: string | null } {
  const tokens = pointer.split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let list: Step[] | undefined = Array.isArray(doc.steps) ? doc.steps : undefined;
  let step: Step | null = null;
  let consumed = 0;
  while (list && tokens[consumed] === 'steps' && consumed + 1 < tokens.length) {
    const t = tokens[consumed + 1]!;
    if (!/^\d+$/.test(t)) break;
    const s: Step | undefined = list[Number(t)];
    if (!s || typeof s.id !== 'string') break;
    step = s;
    consumed += 2;
    list = isLoop(s) ? s.steps : undefined;
  }
  if (!step) return { step: null, field: null };
  const rest = tokens.slice(consumed);
  return {
    step: step.id,
    field: rest.length ? '/' + rest.map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/') : null,
  };
}
