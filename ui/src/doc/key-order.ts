//! Key-order-preserving object edits. Blueprints are written by people and diffed in
//! review, so an edit keeps every untouched key where it was; a new key goes where a
//! person would put it (its place in a canonical order), not at the end.

/** Where top-level keys go, as in the examples and the engine's serializer. */
export const BLUEPRINT_KEY_ORDER = [
  '$schema',
  'blueprint',
  'id',
  'name',
  'description',
  'inputs',
  'servers',
  'on_error',
  'retry',
  'limits',
  'schedule',
  'expose',
  'steps',
  'output',
  'layout',
] as const;

/** Where step keys go. */
export const STEP_KEY_ORDER = [
  'id',
  'name',
  'kind',
  'after',
  'server',
  'tool',
  'uri',
  'prompt',
  'workflow',
  'args',
  'value',
  'ms',
  'cases',
  'default',
  'for_each',
  'until',
  'as',
  'concurrency',
  'max_iterations',
  'delay_ms',
  'steps',
  'collect',
  'timeout_ms',
  'retry',
  'on_error',
  'fallback',
  'save',
  'note',
] as const;

export const LAYOUT_ENTRY_KEY_ORDER = ['x', 'y', 'width', 'height'] as const;

type Obj = object;

/**
 * Returns `obj` with `key` set to `value`. An existing key keeps its position; a new
 * one is inserted before the first existing key that comes after it in `order`
 * (keys not in `order` are appended). Returns `obj` itself when nothing changes.
 * `undefined` removes the key.
 */
export function setKey<T extends Obj>(obj: T, key: string, value: unknown, order: readonly string[] = []): T {
  if (value === undefined) return deleteKey(obj, key);
  const rec = obj as Record<string, unknown>;
  if (Object.prototype.hasOwnProperty.call(rec, key)) {
    if (Object.is(rec[key], value)) return obj;
    return { ...rec, [key]: value } as T;
  }
  const rank = order.indexOf(key);
  if (rank < 0) return { ...rec, [key]: value } as T;
  const out: Record<string, unknown> = {};
  let placed = false;
  for (const k of Object.keys(rec)) {
    if (!placed) {
      const r = order.indexOf(k);
      if (r > rank) {
        out[key] = value;
        placed = true;
      }
    }
    out[k] = rec[k];
  }
  if (!placed) out[key] = value;
  return out as T;
}

/** Applies several `setKey`s (undefined removes). Returns `obj` itself when nothing changes. */
export function setKeys<T extends Obj>(obj: T, patch: Record<string, unknown>, order: readonly string[] = []): T {
  let out = obj;
  for (const [k, v] of Object.entries(patch)) out = setKey(out, k, v, order);
  return out;
}

/** Returns `obj` without `key` (the same object when the key is absent). */
export function deleteKey<T extends Obj>(obj: T, key: string): T {
  if (!Object.prototype.hasOwnProperty.call(obj, key)) return obj;
  const out = { ...(obj as Record<string, unknown>) };
  delete out[key];
  return out as T;
}

/** Renames a key in place (its value and position kept). */
export function renameKey<T extends Obj>(obj: T, from: string, to: string): T {
  const rec = obj as Record<string, unknown>;
  if (from === to || !Object.prototype.hasOwnProperty.call(rec, from)) return obj;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(rec)) {
    if (k === to) continue;
    out[k === from ? to : k] = rec[k];
  }
  return out as T;
}
