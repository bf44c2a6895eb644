//! The fields of a step's output the template editor completes (issue 33, point 3):
//! from the tool's output schema when its server gives one, else from the value the
//! step produced in the last run. Pure.

import type { Json, Step } from '../../doc';
import { findTool, type Offer } from './offers';
import { knownOutputFields } from './scope';

const DEPTH = 2;
const MAX = 60;

/** `a`, `a.b`, … of an output schema's object properties (two levels). */
export function fieldsOfSchema(schema: unknown, depth = DEPTH, at = ''): string[] {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return [];
  const props = (schema as { properties?: unknown }).properties;
  if (!props || typeof props !== 'object' || Array.isArray(props)) return [];
  const out: string[] = [];
  for (const [k, sub] of Object.entries(props)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) continue;
    const path = at ? `${at}.${k}` : k;
    out.push(path);
    if (depth > 1) out.push(...fieldsOfSchema(sub, depth - 1, path));
  }
  return out.slice(0, MAX);
}

/** `a`, `a.b`, … of an output value's object keys (two levels; a list's first item for `[0]`). */
export function fieldsOfValue(value: Json | undefined, depth = DEPTH, at = ''): string[] {
  if (value === null || value === undefined || typeof value !== 'object') return [];
  if (Array.isArray(value)) {
    // The fields of a list of objects, through its first item.
    return at && value.length > 0 ? fieldsOfValue(value[0], depth, `${at}[0]`) : [];
  }
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) continue;
    const path = at ? `${at}.${k}` : k;
    out.push(path);
    if (depth > 1) out.push(...fieldsOfValue(v, depth - 1, path));
  }
  return out.slice(0, MAX);
}

/**
 * The output fields completion offers for `step`: its tool's output schema's, else the
 * ones known without running (a transform's object), else those of its last output.
 */
export function outputFieldsOf(step: Step, offers: readonly Offer[], scope: Record<string, Json> | null | undefined): string[] | undefined {
  if (step.kind === 'tool') {
    const tool = findTool(offers, step.server, step.tool);
    const fromSchema = fieldsOfSchema(tool?.output_schema);
    if (fromSchema.length) return fromSchema;
  }
  const known = knownOutputFields(step);
  if (known?.length) return known;
  const fromRun = scope && step.id in scope ? fieldsOfValue(scope[step.id]) : [];
  return fromRun.length ? fromRun : known;
}
