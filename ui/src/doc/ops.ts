//! The edits, as pure functions `(doc, …) → doc`. Each returns the same document
//! object when nothing changes and copies only the path to what it changes, so
//! untouched steps keep their identity (cheap undo snapshots, cheap re-render) and
//! untouched keys keep their order (lossless export, small diffs).
//!
//! An edit that would produce an invalid reference throws `EditRefused` with a
//! sentence for the person; the store turns that into `{ ok: false, reason }`.

import { listRoles, stepDeps } from './deps';
import { checkStepId, idBase, uniqueId } from './ids';
import {
  BLUEPRINT_KEY_ORDER,
  deleteKey,
  LAYOUT_ENTRY_KEY_ORDER,
  renameKey,
  setKey,
  setKeys,
  STEP_KEY_ORDER,
} from './key-order';
import {
  allStepIds,
  containerSteps,
  findStep,
  isLoop,
  locateStep,
  mapAllSteps,
  subtreeIds,
  updateContainer,
  updateStepById,
} from './query';
import {
  SETTINGS_KEYS,
  type Blueprint,
  type Layout,
  type LayoutEntry,
  type SettingsPatch,
  type Step,
  type StepPatch,
  type StepTemplate,
  type SwitchStep,
  type XY,
} from './types';

export class EditRefused extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'EditRefused';
  }
}

function refuse(reason: string): never {
  throw new EditRefused(reason);
}

function requireStep(doc: Blueprint, id: string): Step {
  return findStep(doc, id) ?? refuse(`there is no step \`${id}\``);
}

// ---------------------------------------------------------------------------------
// Layout

/** A node's place as `moveNodes` takes it: position, and for loops the container size. */
export interface NodeBounds extends XY {
  width?: number;
  height?: number;
}

function coord(next: number, old: unknown): number {
  // Keep a number exactly as written when it did not move; round what moved.
  return typeof old === 'number' && old === next ? old : Math.round(next);
}

/**
 * Writes `layout` entries. Existing entries keep their key order and any extra keys;
 * new entries are appended; ids that are not steps are ignored. Body steps are
 * placed relative to their loop (see `LayoutEntry`).
 */
export function moveNodes(doc: Blueprint, positions: Record<string, NodeBounds>): Blueprint {
  const before: Layout = doc.layout ?? {};
  let layout = before;
  for (const [id, b] of Object.entries(positions)) {
    if (!findStep(doc, id) || !Number.isFinite(b.x) || !Number.isFinite(b.y)) continue;
    const old: LayoutEntry | undefined = layout[id];
    const patch: Record<string, unknown> = { x: coord(b.x, old?.x), y: coord(b.y, old?.y) };
    if (b.width !== undefined && Number.isFinite(b.width)) patch.width = coord(b.width, old?.width);
    if (b.height !== undefined && Number.isFinite(b.height)) patch.height = coord(b.height, old?.height);
    const entry = setKeys(old ?? ({} as LayoutEntry), patch, LAYOUT_ENTRY_KEY_ORDER);
    if (entry !== old) layout = setKey(layout, id, entry);
  }
  if (layout === before) return doc;
  return setKey(doc, 'layout', layout, BLUEPRINT_KEY_ORDER);
}

function dropLayout(doc: Blueprint, ids: Iterable<string>): Blueprint {
  if (!doc.layout) return doc;
  let layout = doc.layout;
  for (const id of ids) layout = deleteKey(layout, id);
  if (layout === doc.layout) return doc;
  return Object.keys(layout).length === 0 ? deleteKey(doc, 'layout') : setKey(doc, 'layout', layout);
}

// ---------------------------------------------------------------------------------
// Steps

/** Where `addStep` / `insertSteps` put steps. */
export interface InsertOptions {
  /** The loop whose body receives the steps; `null`/omitted: the top level. */
  container?: string | null;
  /** Index in that list; default: the end. Inserting mid-list re-chains the implicit order. */
  index?: number;
  /** Canvas position of the (first) new step, relative to the container for body steps. */
  position?: XY;
  /**
   * Whether the new step follows the previous step of its list by the implicit order.
   * Default false: a step the person adds is not connected until they connect it
   * (`after: []` is written when the list order would otherwise wire it).
   */
  implicit?: boolean;
}

/**
 * Inserts steps (with their loop bodies) into one list. Every id in the inserted
 * subtrees is kept when free and valid, otherwise replaced by a unique one derived
 * from the tool/kind; references among the inserted steps (`after`, `fallback`,
 * switch targets) follow the renames. `layout` (keyed by the original ids) is copied
 * for the inserted ids, with `translate` added to the top-level entries.
 */
export function insertSteps(
  doc: Blueprint,
  templates: readonly StepTemplate[],
  opts: { container?: string | null; index?: number; layout?: Layout; translate?: XY; detach?: boolean } = {},
): { doc: Blueprint; ids: string[]; renamed: Map<string, string> } {
  const container = opts.container ?? null;
  const list = containerSteps(doc, container);
  if (!list) refuse(`\`${container}\` is not a loop; steps can only be placed inside a loop`);
  for (const t of templates) {
    if (!t || typeof t !== 'object' || typeof t.kind !== 'string' || t.kind === '') refuse('a step needs a `kind`');
  }
  const taken = new Set(allStepIds(doc));
  const renamed = new Map<string, string>();
  const assign = (t: StepTemplate): string => {
    const wanted = typeof t.id === 'string' ? t.id : '';
    const id = wanted && checkStepId(wanted, taken) === null ? wanted : uniqueId(idBase(t), taken);
    taken.add(id);
    if (wanted && !renamed.has(wanted)) renamed.set(wanted, id);
    return id;
  };
  const rename = (ref: string) => renamed.get(ref) ?? ref;
  const build = (t: StepTemplate): Step => {
    const id = assign(t);
    const out: Record<string, unknown> = { id };
    for (const [k, v] of Object.entries(t)) if (k !== 'id') out[k] = v;
    if (t.kind === 'loop' && Array.isArray(t.steps)) out.steps = (t.steps as StepTemplate[]).map(build);
    return out as unknown as Step;
  };
  const built = templates.map(build);
  const relink = (s: Step): Step => {
    let out = s;
    if (Array.isArray(s.after)) out = setKey(out, 'after', s.after.map(rename));
    if (typeof s.fallback === 'string') out = setKey(out, 'fallback', rename(s.fallback));
    if (s.kind === 'switch') out = relinkSwitch(out as SwitchStep, rename);
    if (isLoop(out)) out = setKey(out, 'steps', out.steps.map(relink));
    return out;
  };
  const steps = built.map(relink);
  const at = Math.max(0, Math.min(opts.index ?? list.length, list.length));
  let next = updateContainer(doc, container, (l) => keepDeps(l, [...l.slice(0, at), ...steps, ...l.slice(at)], opts.detach ? steps : []));
  if (opts.layout) {
    const positions: Record<string, NodeBounds> = {};
    const tops = new Set(templates.map((t) => t.id));
    for (const [oldId, entry] of Object.entries(opts.layout)) {
      const id = renamed.get(oldId);
      if (!id || !entry) continue;
      const dx = tops.has(oldId) ? (opts.translate?.x ?? 0) : 0;
      const dy = tops.has(oldId) ? (opts.translate?.y ?? 0) : 0;
      const b: NodeBounds = { x: entry.x + dx, y: entry.y + dy };
      if (typeof entry.width === 'number') b.width = entry.width;
      if (typeof entry.height === 'number') b.height = entry.height;
      positions[id] = b;
    }
    next = moveNodes(next, positions);
  }
  return { doc: next, ids: steps.map((s) => s.id), renamed };
}

/**
 * The list after an insertion, wired as the person sees it: every step that was there
 * keeps the dependencies it had (an omitted `after` whose implicit order the insertion
 * would change is written out), and each of `detached` that would follow a step it was
 * not inserted with by the implicit order gets `after: []` (it stays unconnected).
 */
function keepDeps(before: readonly Step[], after: Step[], detached: readonly Step[]): Step[] {
  const oldRoles = listRoles(before);
  const oldIndex = new Map(before.map((s, i) => [s?.id, i]));
  const roles = listRoles(after);
  const fresh = new Set(detached.map((s) => s.id));
  const out = after.slice();
  after.forEach((s, i) => {
    if (!s || typeof s !== 'object' || typeof s.id !== 'string' || Array.isArray(s.after)) return;
    const deps = stepDeps(after, i, roles).after;
    if (fresh.has(s.id)) {
      if (deps.some((d) => !fresh.has(d))) out[i] = setKey(s, 'after', [], STEP_KEY_ORDER);
      return;
    }
    const j = oldIndex.get(s.id);
    if (j === undefined || before[j] !== s) return;
    const was = stepDeps(before, j, oldRoles).after;
    if (was.length !== deps.length || was.some((d, k) => d !== deps[k])) out[i] = setKey(s, 'after', was, STEP_KEY_ORDER);
  });
  return out;
}

function relinkSwitch(sw: SwitchStep, rename: (id: string) => string): SwitchStep {
  let out = sw;
  if (Array.isArray(sw.cases)) {
    out = setKey(
      out,
      'cases',
      sw.cases.map((c) => (c && Array.isArray(c.to) ? setKey(c, 'to', c.to.map(rename)) : c)),
    );
  }
  if (Array.isArray(sw.default)) out = setKey(out, 'default', sw.default.map(rename));
  return out;
}

/** Adds one step; returns the new document and the step's id. */
export function addStep(
  doc: Blueprint,
  template: StepTemplate,
  opts: InsertOptions = {},
): { doc: Blueprint; id: string } {
  const r = insertSteps(doc, [template], { container: opts.container ?? null, index: opts.index, detach: !opts.implicit });
  const id = r.ids[0]!;
  const next = opts.position ? moveNodes(r.doc, { [id]: opts.position }) : r.doc;
  return { doc: next, id };
}

/**
 * Removes steps (a loop with its body) and every reference to them: other steps'
 * `after`, switch `cases[].to` and `default`, `fallback`, and `layout` entries.
 * A step that depended on a removed one only implicitly now follows the previous
 * remaining step, as the format's order rule says.
 */
export function removeSteps(doc: Blueprint, ids: readonly string[]): Blueprint {
  const gone = new Set<string>();
  for (const id of ids) {
    const s = findStep(doc, id);
    if (s) for (const sub of subtreeIds(s)) gone.add(sub);
  }
  if (gone.size === 0) return doc;
  const keep = (ref: unknown) => !(typeof ref === 'string' && gone.has(ref));
  let next = mapAllSteps(doc, (s) => {
    if (gone.has(s.id)) return null;
    let out = s;
    if (Array.isArray(s.after) && !s.after.every(keep)) out = setKey(out, 'after', s.after.filter(keep));
    if (typeof s.fallback === 'string' && gone.has(s.fallback)) out = deleteKey(out, 'fallback');
    if (out.kind === 'switch') {
      const sw = out;
      if (Array.isArray(sw.cases) && sw.cases.some((c) => c && Array.isArray(c.to) && !c.to.every(keep))) {
        out = setKey(
          sw,
          'cases',
          sw.cases.map((c) => (c && Array.isArray(c.to) && !c.to.every(keep) ? setKey(c, 'to', c.to.filter(keep)) : c)),
        );
      }
      if (Array.isArray(sw.default) && !sw.default.every(keep)) out = setKey(out, 'default', sw.default.filter(keep));
    }
    return out;
  });
  next = dropLayout(next, gone);
  return next;
}

/**
 * Renames a step and every structural reference to it: `after`, switch targets,
 * `fallback` and its `layout` entry (which keeps its place). Templates that read the
 * step (`{{ old.field }}`, `steps.old`) are NOT rewritten: they are free-form
 * JMESPath, and validation reports the ones left dangling.
 */
export function renameStep(doc: Blueprint, from: string, to: string): Blueprint {
  requireStep(doc, from);
  if (from === to) return doc;
  const taken = new Set(allStepIds(doc));
  taken.delete(from);
  const why = checkStepId(to, taken);
  if (why) refuse(why);
  const rename = (ref: string) => (ref === from ? to : ref);
  let next = mapAllSteps(doc, (s) => {
    let out = s;
    if (s.id === from) out = setKey(out, 'id', to);
    if (Array.isArray(s.after) && s.after.includes(from)) out = setKey(out, 'after', s.after.map(rename));
    if (s.fallback === from) out = setKey(out, 'fallback', to);
    if (out.kind === 'switch') {
      const sw = out;
      const hits =
        (Array.isArray(sw.cases) && sw.cases.some((c) => Array.isArray(c?.to) && c.to.includes(from))) ||
        (Array.isArray(sw.default) && sw.default.includes(from));
      if (hits) out = relinkSwitch(sw, rename);
    }
    return out;
  });
  if (next.layout && Object.prototype.hasOwnProperty.call(next.layout, from)) {
    next = setKey(next, 'layout', renameKey(next.layout, from, to));
  }
  return next;
}

/** Replaces a step. When the replacement has another id, the step is renamed first (references follow). */
export function updateStep(doc: Blueprint, id: string, step: Step): Blueprint {
  requireStep(doc, id);
  if (!step || typeof step !== 'object' || typeof step.kind !== 'string') refuse('a step needs a `kind`');
  let next = doc;
  let target = id;
  if (typeof step.id === 'string' && step.id !== id) {
    next = renameStep(next, id, step.id);
    target = step.id;
  }
  const full = step.id === target ? step : ({ id: target, ...(step as Omit<Step, 'id'>) } as Step);
  return updateStepById(next, target, () => full);
}

/**
 * Sets fields of a step, keeping the order of the others; `undefined` removes a
 * field; new fields go to their usual place. A new `id` renames (see `renameStep`).
 */
export function patchStep(doc: Blueprint, id: string, patch: StepPatch): Blueprint {
  requireStep(doc, id);
  let next = doc;
  let target = id;
  const { id: newId, ...rest } = patch;
  if (typeof newId === 'string' && newId !== id) {
    next = renameStep(next, id, newId);
    target = newId;
  }
  return updateStepById(next, target, (s) => setKeys(s, rest, STEP_KEY_ORDER));
}

// ---------------------------------------------------------------------------------
// Connections

/** Parses a source handle id: `out`, `fallback`, `case-N` or `default`. */
export function parseHandle(handle: string | null | undefined): { kind: 'out' } | { kind: 'fallback' } | { kind: 'case'; index: number | 'default' } {
  if (handle === 'fallback') return { kind: 'fallback' };
  if (handle === 'default') return { kind: 'case', index: 'default' };
  const m = /^case-(\d+)$/.exec(handle ?? '');
  if (m) return { kind: 'case', index: Number(m[1]) };
  return { kind: 'out' };
}

/** Whether `a` depends on `b`, directly or not, within one list. */
function dependsOn(steps: readonly Step[], a: string, b: string): boolean {
  const roles = listRoles(steps);
  const pos = new Map(steps.map((s, i) => [s.id, i]));
  const seen = new Set<string>();
  const stack = [a];
  while (stack.length) {
    const cur = stack.pop()!;
    if (cur === b) return true;
    if (seen.has(cur)) continue;
    seen.add(cur);
    const i = pos.get(cur);
    if (i === undefined) continue;
    const d = stepDeps(steps, i, roles);
    stack.push(...d.after);
    if (d.switchFrom) stack.push(d.switchFrom.switch);
  }
  return false;
}

/** Why `source → target` (from `sourceHandle`) cannot be connected, or null when it can. */
export function connectionProblem(
  doc: Blueprint,
  source: string,
  target: string,
  sourceHandle?: string | null,
): string | null {
  const src = findStep(doc, source);
  const dst = findStep(doc, target);
  if (!src || !dst) return `there is no step \`${!src ? source : target}\``;
  if (source === target) return 'a step cannot depend on itself';
  const ls = locateStep(doc, source)!;
  const lt = locateStep(doc, target)!;
  if (ls.container !== lt.container) {
    return 'steps connect within one list: the top level, or the body of one loop';
  }
  const steps = containerSteps(doc, ls.container)!;
  const roles = listRoles(steps);
  const h = parseHandle(sourceHandle);
  if (h.kind === 'fallback') {
    if (roles.fallbackOf.has(target) && roles.fallbackOf.get(target) !== source) {
      return `\`${target}\` is already the fallback of \`${roles.fallbackOf.get(target)}\``;
    }
    if (roles.switchOf.has(target)) return `\`${target}\` is a switch target; a fallback runs only when its step fails`;
    const dependents = steps.filter((s) => s.id !== target && Array.isArray(s.after) && s.after.includes(target));
    if (dependents.length) {
      return `${dependents.map((s) => `\`${s.id}\``).join(', ')} run after \`${target}\`; a fallback step runs only as a fallback`;
    }
    // No cycle check: a fallback step has no dependencies at all.
    return null;
  }
  if (roles.fallbackOf.has(target)) {
    return `\`${target}\` is the fallback of \`${roles.fallbackOf.get(target)}\`; it runs only when that step fails`;
  }
  if (roles.fallbackOf.has(source)) {
    return `\`${source}\` runs only as a fallback, so nothing can run after it; depend on \`${roles.fallbackOf.get(source)}\` instead`;
  }
  if (h.kind === 'case') {
    if (src.kind !== 'switch') return `\`${source}\` is not a switch`;
    const sw = src as SwitchStep;
    if (typeof h.index === 'number' && !(Array.isArray(sw.cases) && h.index < sw.cases.length)) {
      return `switch \`${source}\` has no case ${h.index}`;
    }
    const other = roles.switchOf.get(target);
    if (other && other.switch !== source) return `\`${target}\` is already a target of switch \`${other.switch}\``;
  }
  if (dependsOn(steps, source, target)) return `\`${source}\` already runs after \`${target}\`; this would make a cycle`;
  return null;
}

/** Writes a step's `after` explicitly when it was omitted, keeping its implicit dependency. */
export function materializeAfter(doc: Blueprint, id: string): Blueprint {
  const loc = locateStep(doc, id);
  if (!loc || Array.isArray(loc.step.after)) return doc;
  const steps = containerSteps(doc, loc.container)!;
  const deps = stepDeps(steps, loc.index);
  return updateStepById(doc, id, (s) => setKey(s, 'after', deps.after, STEP_KEY_ORDER));
}

/**
 * Turns the implicit edge `source → target` (the target follows the source by list
 * order) into an explicit one: the target's `after` is written with the source and
 * whatever else it depends on. Nothing changes when the edge is explicit already;
 * refused when the target does not depend on the source at all.
 */
export function makeExplicit(doc: Blueprint, source: string, target: string): Blueprint {
  const loc = locateStep(doc, target) ?? refuse(`there is no step \`${target}\``);
  const steps = containerSteps(doc, loc.container)!;
  const deps = stepDeps(steps, loc.index);
  if (!deps.after.includes(source)) refuse(`\`${target}\` does not run after \`${source}\``);
  return materializeAfter(doc, target);
}

/**
 * Connects `source → target`:
 * - from `out` (default): adds `source` to the target's `after`. When `after` was
 *   omitted it is first written out with the implicit dependency, so that edge stays;
 * - from a switch's `case-N` / `default` handle: adds the target to that case's `to`
 *   (moving it from another case of the same switch). By the format's rule a switch
 *   target no longer follows the previous step implicitly; an explicit `after` stays;
 * - from `fallback`: `setFallback(source, target)`.
 */
export function connect(doc: Blueprint, source: string, target: string, sourceHandle?: string | null): Blueprint {
  const problem = connectionProblem(doc, source, target, sourceHandle);
  if (problem) refuse(problem);
  const h = parseHandle(sourceHandle);
  if (h.kind === 'fallback') return setFallback(doc, source, target);
  if (h.kind === 'case') {
    return updateStepById(doc, source, (s) => {
      const sw = removeTarget(s as SwitchStep, target);
      if (h.index === 'default') {
        return setKey(sw, 'default', [...(Array.isArray(sw.default) ? sw.default : []), target], STEP_KEY_ORDER);
      }
      const i = h.index;
      return setKey(
        sw,
        'cases',
        sw.cases.map((c, k) => (k === i ? setKey(c, 'to', [...(Array.isArray(c.to) ? c.to : []), target]) : c)),
      );
    });
  }
  const next = materializeAfter(doc, target);
  const step = findStep(next, target)!;
  if (step.after!.includes(source)) return next;
  return updateStepById(next, target, (s) => setKey(s, 'after', [...s.after!, source]));
}

function removeTarget(sw: SwitchStep, target: string, only?: number | 'default'): SwitchStep {
  let out = sw;
  if (Array.isArray(sw.cases) && (only === undefined || typeof only === 'number')) {
    const cases = sw.cases.map((c, k) =>
      (only === undefined || only === k) && c && Array.isArray(c.to) && c.to.includes(target)
        ? setKey(c, 'to', c.to.filter((t) => t !== target))
        : c,
    );
    if (cases.some((c, k) => c !== sw.cases[k])) out = setKey(out, 'cases', cases);
  }
  if (Array.isArray(sw.default) && (only === undefined || only === 'default') && sw.default.includes(target)) {
    out = setKey(out, 'default', sw.default.filter((t) => t !== target));
  }
  return out;
}

/**
 * Removes the connection `source → target` that leaves from `sourceHandle`:
 * `after` (an implicit dependency is removed by writing `after` without it),
 * a switch case (`case-N` / `default`) or the fallback. Without a handle, whichever
 * of these exists is removed.
 */
export function disconnect(doc: Blueprint, source: string, target: string, sourceHandle?: string | null): Blueprint {
  const src = findStep(doc, source);
  const loc = locateStep(doc, target);
  if (!src || !loc) return doc;
  const h = sourceHandle == null ? null : parseHandle(sourceHandle);
  if (h?.kind === 'fallback' || (!h && src.fallback === target)) {
    return src.fallback === target ? setFallback(doc, source, null) : doc;
  }
  if (h?.kind === 'case' || (!h && src.kind === 'switch')) {
    if (src.kind !== 'switch') return doc;
    const next = updateStepById(doc, source, (s) => removeTarget(s as SwitchStep, target, h?.kind === 'case' ? h.index : undefined));
    if (next !== doc || h) return next;
  }
  const steps = containerSteps(doc, loc.container)!;
  const deps = stepDeps(steps, loc.index);
  if (!deps.after.includes(source)) return doc;
  const after = deps.after.filter((a) => a !== source);
  return updateStepById(doc, target, (s) => setKey(s, 'after', after, STEP_KEY_ORDER));
}

/**
 * Names the step that runs when `id` fails (or removes the fallback with `null`).
 * The fallback step loses its `after`: it runs only as a fallback.
 */
export function setFallback(doc: Blueprint, id: string, fallbackId: string | null): Blueprint {
  const step = requireStep(doc, id);
  if (fallbackId === null) return step.fallback === undefined ? doc : updateStepById(doc, id, (s) => deleteKey(s, 'fallback'));
  if (step.fallback === fallbackId) return doc;
  const problem = connectionProblem(doc, id, fallbackId, 'fallback');
  if (problem) refuse(problem);
  let next = updateStepById(doc, id, (s) => setKey(s, 'fallback', fallbackId, STEP_KEY_ORDER));
  next = updateStepById(next, fallbackId, (s) => deleteKey(s, 'after'));
  return next;
}

// ---------------------------------------------------------------------------------
// Settings

/** Sets top-level fields (`undefined` removes one); unknown keys are refused. */
export function setSettings(doc: Blueprint, patch: SettingsPatch): Blueprint {
  for (const k of Object.keys(patch)) {
    if (!(SETTINGS_KEYS as readonly string[]).includes(k)) refuse(`\`${k}\` is not a blueprint setting`);
  }
  if (patch.id === undefined && Object.prototype.hasOwnProperty.call(patch, 'id')) refuse('a blueprint needs an `id`');
  return setKeys(doc, patch as Record<string, unknown>, BLUEPRINT_KEY_ORDER);
}
