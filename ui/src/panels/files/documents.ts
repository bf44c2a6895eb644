//! Documents the files panel loads: a new empty blueprint, and a check that JSON from
//! the store or a file is a blueprint the editor can hold.

import type { Blueprint } from '../../doc/types';

/**
 * A new blueprint. The format requires `blueprint` and `id` (`[a-z0-9][a-z0-9_-]*`);
 * `steps` defaults to `[]`, but the validator refuses to save a blueprint without
 * steps ("add at least one step"), so a new one is saved once it has a step.
 */
export function newBlueprintDoc(id = 'untitled'): Blueprint {
  return { blueprint: 1, id, name: 'Untitled', steps: [] };
}

/** `untitled`, or `untitled-2`, `untitled-3`, … — the first id not stored yet. */
export function freeBlueprintId(taken: Iterable<string>, base = 'untitled'): string {
  const ids = new Set(taken);
  if (!ids.has(base)) return base;
  for (let n = 2; ; n++) if (!ids.has(`${base}-${n}`)) return `${base}-${n}`;
}

/**
 * The JSON as a blueprint the editor can hold, or why not. Anything that is an object
 * is opened (the diagnostics say what to fix); a missing `steps` becomes `[]` (its
 * default), a `steps` that is not a list cannot be drawn.
 */
export function asBlueprint(json: unknown): { doc: Blueprint } | { problem: string } {
  if (!json || typeof json !== 'object' || Array.isArray(json)) {
    return { problem: 'the file is not a blueprint: a blueprint is a JSON object with "blueprint": 1, an "id" and "steps"' };
  }
  const o = json as Record<string, unknown>;
  if (o.steps === undefined) return { doc: { ...o, steps: [] } as unknown as Blueprint };
  if (!Array.isArray(o.steps)) return { problem: 'the file is not a blueprint: "steps" is not a list' };
  if (!o.steps.every((s) => s && typeof s === 'object' && !Array.isArray(s))) {
    return { problem: 'the file is not a blueprint: every entry of "steps" must be an object' };
  }
  return { doc: o as unknown as Blueprint };
}
