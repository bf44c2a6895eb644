//! Which argument a failed call was about, for the inspector to say it first and mark
//! that field: from the JSON pointer in the error (`/a: expected number, got object`, as
//! the engine's check before sending writes it), else — when the server rejected the
//! call in its own words — by checking the resolved arguments against the tool's input
//! schema. The error's own text is kept, shown below as "server said".

import { Validator, type Schema } from '@cfworker/json-schema';
import type { Json } from '../doc/types';
import type { StepError } from './events';

export interface ArgumentProblem {
  /** JSON pointer inside the step's `args` (`/a`, `/items/0/name`). */
  pointer: string;
  /** What is wrong with it, in our words (`expected number, got object`). */
  message: string;
  /** The error's full text when it is not just our message (the server's words). */
  server: string | null;
}

/** `/a: expected number, got object` anywhere in a message (a pointer, a colon, the problem). */
const POINTER_MESSAGE = /(?:^|[\s`'"(])(\/[A-Za-z0-9_.~\-]+(?:\/[A-Za-z0-9_.~\-]+)*)`?\s*:\s*([^\n]+)/;

/** Words a server uses when it refuses a call's arguments (MCP `-32602` and serde's texts). */
const REFUSAL = /(invalid (type|params|arguments?|value)|deserializ|expected|required|missing field|unknown field|-32602|schema)/i;

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function at(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const raw of pointer.split('/').slice(1)) {
    const t = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur && typeof cur === 'object') cur = (cur as Record<string, unknown>)[t];
    else return undefined;
  }
  return cur;
}

/** The first problem of `args` against `schema`, pointed at: `{ pointer: '/a', message: 'expected number, got object' }`. */
export function checkArgs(args: Json, schema: object): { pointer: string; message: string } | null {
  let result;
  try {
    result = new Validator(schema as Schema, '2020-12', false).validate(args);
  } catch {
    return null;
  }
  if (result.valid) return null;
  for (const e of result.errors) {
    const pointer = e.instanceLocation.replace(/^#/, '');
    if (e.keyword === 'type') {
      const want = at(schema, e.keywordLocation.replace(/^#/, ''));
      const wanted = Array.isArray(want) ? want.join(' or ') : String(want);
      const got = typeOf(at(args, pointer));
      if (wanted === 'number' && got === 'integer') continue;
      return { pointer, message: `expected ${wanted}, got ${got}` };
    }
    if (e.keyword === 'required') {
      const m = /"([^"]+)"/.exec(e.error);
      return { pointer: m ? `${pointer}/${m[1]}` : pointer, message: 'required, missing' };
    }
    if (['properties', 'items', 'allOf', '$ref'].includes(e.keyword)) continue;
    return { pointer, message: e.error };
  }
  return null;
}

/**
 * The argument a step's error is about, if any: the pointer in its message, or (for a
 * refusal in the server's words) the first problem of the resolved `args` against the
 * tool's `schema`.
 */
export function argumentProblem(error: StepError | null | undefined, args?: Json, schema?: object): ArgumentProblem | null {
  if (!error) return null;
  const m = POINTER_MESSAGE.exec(error.message);
  if (m && (/ARG/.test(error.code) || /expected|required|missing|must|not allowed|invalid/i.test(m[2]!))) {
    const ours = `${m[1]}: ${m[2]!.trim()}`;
    return { pointer: m[1]!, message: m[2]!.trim(), server: error.message.trim() === ours ? null : error.message };
  }
  if (args === undefined || !schema || !REFUSAL.test(error.message)) return null;
  const found = checkArgs(args, schema);
  return found ? { ...found, server: error.message } : null;
}
