//! What people type, taken as the type a field wants (issue 33, point 1): text typed
//! where a schema wants an array, object, number, integer or boolean is read as JSON
//! when it is one of those, as n8n does; a template, or text of another type, stays
//! the text it is. Pure: the form and the loop's list field call it when they commit.

import type { Json, JsonObject } from '../../doc';
import { hasTemplate } from './completion';
import { parseJson } from './json';

export type JsonType = 'array' | 'object' | 'number' | 'integer' | 'boolean' | 'string' | 'null';

/** The JSON type of a value (`integer` only when asked for: a whole number is also a `number`). */
export function typeOf(v: Json): Exclude<JsonType, 'integer'> {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as 'object' | 'number' | 'boolean' | 'string';
}

function fits(v: Json, wants: readonly JsonType[]): boolean {
  const t = typeOf(v);
  if (wants.includes(t)) return true;
  return t === 'number' && wants.includes('integer') && Number.isInteger(v);
}

/**
 * `text` read as JSON of one of the `wants` types, or null: a template, text that is
 * not JSON, or JSON of another type (the caller keeps the text).
 */
export function parseTyped(text: string, wants: readonly JsonType[]): Json | null {
  const t = text.trim();
  if (t === '' || hasTemplate(t)) return null;
  const r = parseJson(t);
  if (!r.ok || r.value === null) return null;
  return fits(r.value, wants) ? r.value : null;
}

/** Why `text` is not a value of `wants` (for a field in fixed mode), or null when it is. */
export function typedProblem(text: string, wants: readonly JsonType[]): string | null {
  const t = text.trim();
  if (t === '') return null;
  if (hasTemplate(t)) return 'a template: switch the field to Expression';
  const r = parseJson(t);
  if (!r.ok) return `not JSON (line ${r.line}:${r.col}: ${r.message})`;
  if (fits(r.value, wants)) return null;
  return `a JSON ${typeOf(r.value)}; this field wants ${wants.map(article).join(' or ')}`;
}

function article(t: JsonType): string {
  return t === 'array' ? 'a list' : t === 'object' || t === 'integer' ? `an ${t}` : `a ${t}`;
}

function typesOf(schema: JsonObject): JsonType[] {
  const t = schema.type;
  if (Array.isArray(t)) return t.filter((x): x is JsonType => typeof x === 'string') as JsonType[];
  return typeof t === 'string' ? [t as JsonType] : [];
}

/**
 * `value` with every string that the schema's field does not take as a string, and
 * that reads as JSON of a type it does take, replaced by that JSON (nested objects and
 * array items included). Templates and strings a field may hold are left alone.
 */
export function coerceBySchema(schema: JsonObject | undefined, value: Json): Json {
  if (!schema || typeof schema !== 'object') return value;
  const wants = typesOf(schema);
  if (typeof value === 'string') {
    if (wants.length === 0 || wants.includes('string')) return value;
    return parseTyped(value, wants) ?? value;
  }
  if (Array.isArray(value)) {
    const items = schema.items;
    if (!items || typeof items !== 'object' || Array.isArray(items)) return value;
    let changed = false;
    const out = value.map((v) => {
      const c = coerceBySchema(items as JsonObject, v);
      if (c !== v) changed = true;
      return c;
    });
    return changed ? out : value;
  }
  if (value && typeof value === 'object') {
    const props = schema.properties;
    if (!props || typeof props !== 'object' || Array.isArray(props)) return value;
    let changed = false;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const sub = (props as JsonObject)[k];
      const c = sub && typeof sub === 'object' && !Array.isArray(sub) && v !== undefined ? coerceBySchema(sub as JsonObject, v) : v;
      if (c !== v) changed = true;
      out[k] = c;
    }
    return changed ? out : value;
  }
  return value;
}

/**
 * A value as a template that yields it: a JMESPath literal (`{{ \`["a"]\` }}`), what a
 * fixed value becomes when its field is switched to Expression (n8n keeps the value too).
 */
export function literalTemplate(v: Json): string {
  return `{{ \`${JSON.stringify(v).replace(/`/g, '\\`')}\` }}`;
}

/** The value of a template that is one JMESPath literal (`{{ \`…\` }}`), else undefined. */
export function literalOf(text: string): Json | undefined {
  const m = /^\{\{\s*`((?:[^`\\]|\\.)*)`\s*\}\}$/.exec(text.trim());
  if (!m) return undefined;
  const r = parseJson(m[1]!.replace(/\\`/g, '`'));
  return r.ok ? r.value : undefined;
}
