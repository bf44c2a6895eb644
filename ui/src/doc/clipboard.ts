//! Copy and paste of steps. The clipboard is JSON text, so the shell can put it on
//! the system clipboard and other tools can produce it:
//!
//! ```json
//! { "mcpflow": "steps", "steps": [ … ], "layout": { … }, "deps": { "<id>": ["…"] } }
//! ```
//!
//! `steps` are the copied steps as written (loops with their bodies). `deps` holds,
//! for a copied step whose `after` was omitted, the dependencies the implicit order
//! gave it; a paste writes them out only where the new place would give different
//! ones. Paste also accepts a single step, an array of steps, or a whole blueprint.

import { listRoles, stepDeps } from './deps';
import { deleteKey, setKey, STEP_KEY_ORDER } from './key-order';
import { insertSteps, moveNodes } from './ops';
import { allStepIds, ancestors, containerSteps, findStep, locateStep, subtreeIds, updateContainer } from './query';
import type { Blueprint, Layout, Step, StepTemplate, SwitchStep, XY } from './types';

export interface ClipboardData {
  mcpflow: 'steps';
  steps: Step[];
  layout?: Layout;
  deps?: Record<string, string[]>;
}

/**
 * The clipboard for `ids`: the selected steps that are not inside another selected
 * loop, in document order. `positions` fills in canvas positions of steps that have
 * no `layout` entry (the canvas knows where it drew them).
 */
export function copySteps(doc: Blueprint, ids: readonly string[], positions: Record<string, XY> = {}): ClipboardData {
  const chosen = new Set(ids.filter((id) => findStep(doc, id)));
  const roots = allStepIds(doc).filter((id) => chosen.has(id) && !ancestors(doc, id).some((a) => chosen.has(a)));
  const rootSet = new Set(roots);
  const steps: Step[] = [];
  const deps: Record<string, string[]> = {};
  const layout: Layout = {};
  for (const id of roots) {
    const loc = locateStep(doc, id)!;
    const list = containerSteps(doc, loc.container)!;
    const roles = listRoles(list);
    const d = stepDeps(list, loc.index, roles);
    const step = loc.step;
    steps.push(step);
    if (!Array.isArray(step.after)) {
      // A fallback or switch target keeps its role only when its owner comes along.
      const ownerCopied =
        (d.fallbackOf !== null && rootSet.has(d.fallbackOf)) || (d.switchFrom !== null && rootSet.has(d.switchFrom.switch));
      if (!ownerCopied) deps[id] = d.after;
    }
    for (const sub of subtreeIds(step)) {
      const entry = doc.layout?.[sub] ?? (positions[sub] ? { x: positions[sub].x, y: positions[sub].y } : undefined);
      if (entry) layout[sub] = entry;
    }
  }
  const out: ClipboardData = { mcpflow: 'steps', steps };
  if (Object.keys(layout).length) out.layout = layout;
  if (Object.keys(deps).length) out.deps = deps;
  return out;
}

/** Reads clipboard text: the clipboard format, a step, an array of steps or a blueprint. Null if it is none. */
export function parseClipboard(text: string): ClipboardData | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  const isStep = (s: unknown): s is Step =>
    !!s && typeof s === 'object' && !Array.isArray(s) && typeof (s as Step).kind === 'string';
  if (Array.isArray(v)) return v.length > 0 && v.every(isStep) ? { mcpflow: 'steps', steps: v } : null;
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  if (Array.isArray(o.steps) && (o.mcpflow === 'steps' || 'blueprint' in o)) {
    if (!o.steps.every(isStep)) return null;
    const out: ClipboardData = { mcpflow: 'steps', steps: o.steps };
    if (o.layout && typeof o.layout === 'object') out.layout = o.layout as Layout;
    if (o.deps && typeof o.deps === 'object') out.deps = o.deps as Record<string, string[]>;
    return out;
  }
  return isStep(v) ? { mcpflow: 'steps', steps: [v] } : null;
}

export interface PasteOptions {
  /** The loop whose body receives the steps; default: the top level. */
  container?: string | null;
  /** Where the top-left of the pasted steps goes; default: 40 px right and down of where they were. */
  position?: XY;
}

/**
 * Pastes clipboard steps at the end of a list (so no existing step's implicit order
 * changes). Ids become unique; references among the pasted steps follow; `after`
 * entries naming steps that are neither pasted nor in the target list are dropped,
 * as are switch targets and fallbacks that were not pasted along.
 */
export function pasteSteps(
  doc: Blueprint,
  clip: ClipboardData,
  opts: PasteOptions = {},
): { doc: Blueprint; ids: string[] } {
  const container = opts.container ?? null;
  const list = containerSteps(doc, container) ?? [];
  const pastedIds = new Set(clip.steps.map((s) => s.id).filter((id): id is string => typeof id === 'string'));
  const targetRoles = listRoles(list);
  const existing = (id: string) => targetRoles.ids.has(id) && !targetRoles.fallbackOf.has(id);
  const keepRef = (id: unknown): id is string => typeof id === 'string' && (pastedIds.has(id) || existing(id));

  const templates: StepTemplate[] = clip.steps.map((step) => {
    let s: Step = step;
    const desired = Array.isArray(s.after) ? s.after : clip.deps?.[s.id];
    if (desired) s = setKey(s, 'after', desired.filter(keepRef), STEP_KEY_ORDER);
    if (typeof s.fallback === 'string' && !pastedIds.has(s.fallback)) s = deleteKey(s, 'fallback');
    if (s.kind === 'switch') s = keepSwitchTargets(s, pastedIds);
    return s as unknown as StepTemplate;
  });

  // Where the pasted steps go.
  const tops = clip.steps.map((s) => clip.layout?.[s.id]).filter((e): e is NonNullable<typeof e> => !!e);
  let translate: XY = { x: 40, y: 40 };
  if (opts.position && tops.length) {
    translate = {
      x: opts.position.x - Math.min(...tops.map((e) => e.x)),
      y: opts.position.y - Math.min(...tops.map((e) => e.y)),
    };
  }
  // Detached: a pasted step never follows an existing step just because it comes
  // after it in the list (only the dependencies it was copied with are kept).
  const r = insertSteps(doc, templates, { container, layout: clip.layout, translate, detach: true });
  let next = r.doc;

  // Restore the implicit order where the new place gives the same dependencies.
  const after = containerSteps(next, container)!;
  const roles = listRoles(after);
  const base = after.length - r.ids.length;
  clip.steps.forEach((orig, k) => {
    if (Array.isArray(orig.after) || !clip.deps?.[orig.id]) return;
    const id = r.ids[k]!;
    const cur = findStep(next, id)!;
    const withoutAfter = after.slice();
    withoutAfter[base + k] = deleteKey(cur, 'after');
    const implicit = stepDeps(withoutAfter, base + k, roles).after;
    if (sameList(implicit, cur.after ?? [])) {
      next = replaceInContainer(next, container, base + k, deleteKey(cur, 'after'));
    }
  });
  // Steps without a position (external JSON) go where the paste was asked for.
  if (opts.position) {
    const missing = r.ids.filter((id) => !next.layout?.[id]);
    const positions = Object.fromEntries(missing.map((id, i) => [id, { x: opts.position!.x + i * 40, y: opts.position!.y + i * 40 }]));
    if (missing.length) next = moveNodes(next, positions);
  }
  return { doc: next, ids: r.ids };
}

function replaceInContainer(doc: Blueprint, container: string | null, index: number, step: Step): Blueprint {
  return updateContainer(doc, container, (l) => {
    const copy = l.slice();
    copy[index] = step;
    return copy;
  });
}

function keepSwitchTargets(sw: SwitchStep, pasted: Set<string>): SwitchStep {
  let out = sw;
  if (Array.isArray(sw.cases)) {
    out = setKey(
      out,
      'cases',
      sw.cases.map((c) => (c && Array.isArray(c.to) ? setKey(c, 'to', c.to.filter((t) => pasted.has(t))) : c)),
    );
  }
  if (Array.isArray(sw.default)) out = setKey(out, 'default', sw.default.filter((t) => pasted.has(t)));
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
