//! The names a template may read at a step (DESIGN §2 "Templates"), for completion.
//!
//! Mirrors the engine's read check (crates/blueprint/src/validate/reads.rs): a step sees
//! the steps that run before it in its own list (its dependencies, transitively — the
//! switch routing to it included), and, for each loop around it, the steps that run
//! before that loop; a fallback step sees what the step it stands in for sees. `prev`
//! exists only with exactly one dependency (never in a fallback); the loop variables
//! (renamed by `as`, default `item`) and `index` exist inside a loop body and in the
//! loop's own `until` / `collect`, which also see the whole body; `last` exists there when
//! the innermost loop is an `until` loop; `error` exists in a
//! fallback step (and in the body of a loop that is one). The blueprint's `output`
//! sees every top-level step that is not a fallback.

import { containerSteps, isLoop, listRoles, locateStep, stepDeps } from '../../doc';
import type { Blueprint, JsonObject, Step } from '../../doc';

export type ScopeKind =
  | 'loop'
  | 'index'
  | 'last'
  | 'prev'
  | 'step'
  | 'field'
  | 'input'
  | 'steps'
  | 'error'
  | 'saved'
  | 'run';

export interface ScopeName {
  /** The path as written in a template, e.g. `inputs.city`, `steps.fetch.status`. */
  name: string;
  kind: ScopeKind;
  /** A short explanation shown next to the name. */
  detail?: string;
}

export interface ScopeOptions {
  /**
   * The field (JSON pointer inside the step) the template is in. `/until` and
   * `/collect` of a loop are evaluated per iteration, inside the body's scope.
   */
  field?: string | null;
  /** Known output fields of a step (e.g. from a tool's output schema); undefined when unknown. */
  outputFields?: (step: Step) => readonly string[] | undefined;
}

/** The dependencies of the step at `index` as the engine counts them: `after` (or the implicit one) plus the switch routing to it. */
export function dependencies(steps: readonly Step[], index: number, roles = listRoles(steps)): string[] {
  const d = stepDeps(steps, index, roles);
  if (d.fallbackOf) return [];
  const out: string[] = [];
  for (const id of d.after) if (roles.ids.has(id) && !out.includes(id)) out.push(id);
  if (d.switchFrom && !out.includes(d.switchFrom.switch)) out.push(d.switchFrom.switch);
  return out;
}

/** The steps of `steps` that run before the one at `index` (its dependencies, transitively), in list order. */
export function runsBefore(steps: readonly Step[], index: number, roles = listRoles(steps)): string[] {
  const pos = new Map<string, number>();
  steps.forEach((s, i) => {
    if (s && typeof s.id === 'string' && !pos.has(s.id)) pos.set(s.id, i);
  });
  const seen = new Set<number>();
  const stack = [index];
  while (stack.length) {
    const i = stack.pop()!;
    for (const dep of dependencies(steps, i, roles)) {
      const j = pos.get(dep);
      if (j === undefined || j === index || seen.has(j)) continue;
      seen.add(j);
      stack.push(j);
    }
  }
  return [...seen].sort((a, b) => a - b).map((i) => steps[i]!.id);
}

/** Output fields we know without running: a transform's object literal, a switch's `{ case }`. */
export function knownOutputFields(step: Step): string[] | undefined {
  if (step.kind === 'transform') {
    const v = step.value;
    if (v && typeof v === 'object' && !Array.isArray(v)) return Object.keys(v);
    return undefined;
  }
  if (step.kind === 'switch') return ['case'];
  return undefined;
}

/** The names of the blueprint's `inputs` schema, one level of nesting deep. */
function inputNames(doc: Blueprint): ScopeName[] {
  const out: ScopeName[] = [{ name: 'inputs', kind: 'input', detail: 'the run’s inputs' }];
  const visit = (schema: unknown, prefix: string, depth: number) => {
    if (!schema || typeof schema !== 'object') return;
    const props = (schema as JsonObject).properties;
    if (!props || typeof props !== 'object' || Array.isArray(props)) return;
    for (const [key, sub] of Object.entries(props)) {
      const s = sub && typeof sub === 'object' && !Array.isArray(sub) ? (sub as JsonObject) : {};
      const type = typeof s.type === 'string' ? s.type : Array.isArray(s.type) ? s.type.join(' | ') : undefined;
      const desc = typeof s.description === 'string' ? s.description : undefined;
      out.push({ name: `${prefix}.${key}`, kind: 'input', detail: [type, desc].filter(Boolean).join(' — ') || 'input' });
      if (depth < 2) visit(s, `${prefix}.${key}`, depth + 1);
    }
  };
  visit(doc.inputs, 'inputs', 1);
  return out;
}

/** Every `save` name in the document, as `saved.<name>`. */
function savedNames(doc: Blueprint): ScopeName[] {
  const out: ScopeName[] = [{ name: 'saved', kind: 'saved', detail: 'values saved by earlier runs' }];
  const seen = new Set<string>();
  const visit = (steps: readonly Step[] | undefined) => {
    if (!Array.isArray(steps)) return;
    for (const s of steps) {
      if (!s) continue;
      if (typeof s.save === 'string' && s.save && !seen.has(s.save)) {
        seen.add(s.save);
        out.push({ name: `saved.${s.save}`, kind: 'saved', detail: `saved by \`${s.id}\`` });
      }
      if (isLoop(s)) visit(s.steps);
    }
  };
  visit(doc.steps);
  return out;
}

const RUN_NAMES: ScopeName[] = [
  { name: 'run', kind: 'run', detail: '{ id, blueprint, started_at }' },
  { name: 'run.id', kind: 'run', detail: 'this run’s id' },
  { name: 'run.blueprint', kind: 'run', detail: 'the blueprint id' },
  { name: 'run.started_at', kind: 'run', detail: 'RFC 3339' },
];

const ERROR_NAMES: ScopeName[] = [
  { name: 'error', kind: 'error', detail: 'the failure this fallback handles' },
  { name: 'error.step', kind: 'error', detail: 'the step that failed' },
  { name: 'error.message', kind: 'error' },
  { name: 'error.code', kind: 'error' },
];

const RECORD_FIELDS = ['output', 'status', 'error', 'attempts', 'duration_ms'];

interface Visible {
  /** Visible step ids, innermost list first. */
  steps: Step[];
  /** Loop variable names, innermost first. */
  loops: string[];
  /** Whether the innermost loop is an `until` loop (then `last` is defined). */
  innermostUntil?: boolean;
  inFallback: boolean;
  /** Dependency count for `prev` (null: `prev` is not defined here). */
  prevDeps: string[] | null;
}

function isUntil(step: Step): boolean {
  return step.kind === 'loop' && step.until !== undefined && step.until !== null;
}

function loopVar(step: Step): string {
  return step.kind === 'loop' && typeof step.as === 'string' && step.as ? step.as : 'item';
}

/** What a template in `stepId` (or the blueprint's output when null) can see. */
function visibility(doc: Blueprint, stepId: string | null, field: string | null | undefined): Visible | null {
  const top = Array.isArray(doc.steps) ? doc.steps : [];
  if (stepId === null) {
    const roles = listRoles(top);
    return { steps: top.filter((s) => s && !roles.fallbackOf.has(s.id)), loops: [], inFallback: false, prevDeps: null };
  }
  const loc = locateStep(doc, stepId);
  if (!loc) return null;
  const out: Visible = { steps: [], loops: [], inFallback: false, prevDeps: null };
  const seen = new Set<string>();
  const add = (s: Step | undefined) => {
    if (s && !seen.has(s.id)) {
      seen.add(s.id);
      out.steps.push(s);
    }
  };

  // `until` / `collect` of a loop: the body (all of it, fallbacks aside) and the loop's own variable.
  const self = loc.step;
  const inner = isLoop(self) && (field === '/until' || field === '/collect' || field?.startsWith('/collect/'));
  if (inner && isLoop(self)) {
    const roles = listRoles(self.steps);
    for (const s of self.steps) if (s && !roles.fallbackOf.has(s.id)) add(s);
    out.innermostUntil = isUntil(self);
    out.loops.push(loopVar(self));
  }

  let cur: string | null = stepId;
  let first = true;
  while (cur !== null) {
    const l = locateStep(doc, cur);
    if (!l) break;
    const steps = containerSteps(doc, l.container) ?? [];
    const roles = listRoles(steps);
    if (roles.fallbackOf.has(cur)) out.inFallback = true;
    // A fallback sees what the step it stands in for sees.
    let anchor = cur;
    const hops = new Set<string>([anchor]);
    while (roles.fallbackOf.has(anchor)) {
      const of = roles.fallbackOf.get(anchor)!;
      if (hops.has(of)) break;
      hops.add(of);
      anchor = of;
    }
    const index = steps.findIndex((s) => s?.id === anchor);
    if (first && !inner) out.prevDeps = roles.fallbackOf.has(cur) ? [] : dependencies(steps, l.index, roles);
    first = false;
    if (index >= 0) {
      for (const id of runsBefore(steps, index, roles)) {
        if (!roles.fallbackOf.has(id)) add(steps.find((s) => s?.id === id));
      }
    }
    if (l.container !== null) {
      const loop = locateStep(doc, l.container)?.step;
      if (loop) {
        out.innermostUntil ??= isUntil(loop);
        out.loops.push(loopVar(loop));
      }
    }
    cur = l.container;
  }
  return out;
}

/**
 * The names in scope for a template in step `stepId` (`null`: the blueprint's
 * `output`). Ordered for a completion list: loop variables, `prev`, the steps that
 * ran (innermost list first) with their known output fields, `inputs.*`,
 * `steps.<id>.*`, `error.*`, `saved.*`, `run.*`.
 */
export function namesInScope(doc: Blueprint, stepId: string | null, opts: ScopeOptions = {}): ScopeName[] {
  const vis = visibility(doc, stepId, opts.field);
  if (!vis) return [];
  const out: ScopeName[] = [];
  const loops = [...new Set(vis.loops)];
  loops.forEach((name, i) =>
    out.push({ name, kind: 'loop', detail: i === 0 ? 'the loop variable' : 'an outer loop’s variable' }),
  );
  if (loops.length) out.push({ name: 'index', kind: 'index', detail: 'the iteration’s index' });
  if (vis.innermostUntil) out.push({ name: 'last', kind: 'last', detail: 'the previous iteration’s value (null at first)' });
  if (vis.prevDeps && vis.prevDeps.length === 1) {
    out.push({ name: 'prev', kind: 'prev', detail: `output of \`${vis.prevDeps[0]}\`` });
  }
  const fields = (s: Step) => opts.outputFields?.(s) ?? knownOutputFields(s);
  for (const s of vis.steps) {
    out.push({ name: s.id, kind: 'step', detail: `output of ${s.kind ?? 'step'}${s.name ? ` “${s.name}”` : ''}` });
    for (const f of fields(s) ?? []) out.push({ name: `${s.id}.${f}`, kind: 'field', detail: `field of \`${s.id}\`` });
  }
  out.push(...inputNames(doc));
  if (vis.steps.length) {
    out.push({ name: 'steps', kind: 'steps', detail: 'records: { output, status, error, attempts, duration_ms }' });
    for (const s of vis.steps) {
      out.push({ name: `steps.${s.id}`, kind: 'steps', detail: `record of \`${s.id}\`` });
      for (const f of RECORD_FIELDS) out.push({ name: `steps.${s.id}.${f}`, kind: 'steps' });
    }
  }
  if (vis.inFallback) out.push(...ERROR_NAMES);
  out.push(...savedNames(doc));
  out.push(...RUN_NAMES);
  return out;
}
