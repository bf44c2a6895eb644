//! Which arguments a failed call was about, for the inspector to say them first and
//! mark those fields. Two shapes come from the engine (`crates/mcp/src/pool/args.rs`,
//! `crates/mcp/src/error.rs`, `crates/engine/src/scheduler.rs`):
//!
//! - our check before sending: `ARGS_INVALID` whose message lists each problem by JSON
//!   pointer, then says why in words — `/a: expected number, got object; /b: required,
//!   missing (the arguments of tool `add` on server `echo` do not fit its input schema;
//!   the call was not sent)`. The pointers are taken from the message; nothing was sent,
//!   so there is no "server said".
//! - the server refused them: `ARGS_INVALID` with our sentence as the message and the
//!   server's own text in `detail` (shown as "server said"). The message names no
//!   argument, so the resolved arguments are checked against the tool's input schema
//!   to point at one.
//!
//! Runs recorded before `ARGS_INVALID` existed (`TOOL_ERROR: failed to deserialize
//! parameters …`) get the same schema check, their message shown as the server's words.

import { Validator, type Schema } from '@cfworker/json-schema';
import type { Json } from '../doc/types';
import type { StepError } from './events';

/** One argument named: its JSON pointer inside the step's `args` and what is wrong with it. */
export interface ArgumentIssue {
  /** JSON pointer inside the step's `args` (`/a`, `/items/0/name`); `''` for the arguments as a whole. */
  pointer: string;
  /** What is wrong with it, in our words (`expected number, got object`). */
  message: string;
}

export interface ArgumentProblem {
  /** Each argument named, in the message's order (at least one). */
  issues: ArgumentIssue[];
  /** Problems the message counted but did not name (`and 3 more`). */
  more: number;
  /** Why, in our words (`the arguments of tool `add` … the call was not sent`), when the message says. */
  why: string | null;
  /** What the server itself said (the error's `detail`, or an old run's message); null when the call was not sent. */
  server: string | null;
  /** Where the pointers came from: the message (our check) or the schema (checked here, after a refusal). */
  source: 'message' | 'schema';
}

/** The error of a step whose call the arguments broke, with nothing pointed at yet. */
export const ARGS_INVALID = 'ARGS_INVALID';

/** A JSON pointer (`/a`, `/items/0/name`, `/` for the whole) at the start of a problem, then `: what`. */
const ISSUE = /^(\/(?:[^\s:/]+(?:\/[^\s:/]+)*)?)\s*:\s*(.+)$/s;
/** `… (the arguments of tool `add` on server `echo` do not fit its input schema; the call was not sent)` at the end. */
const WHY = /\s*\((the arguments of tool [\s\S]*)\)\s*$/;
/** `and 3 more`, the last item of a long list. */
const MORE = /^and (\d+) more$/;

/** Words a server uses when it refuses a call's arguments (MCP `-32602` and serde's texts). */
const REFUSAL = /(invalid (type|params|arguments?|value)|deserializ|expected|required|missing field|unknown field|-32602|schema)/i;
/** What a problem's text says when it is about an argument (an old message with a pointer in it). */
const ABOUT_ARGUMENT = /expected|required|missing|must|not allowed|invalid/i;

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

/** `/` (the arguments as a whole, as the engine writes it) is the empty pointer here. */
const normal = (pointer: string) => (pointer === '/' ? '' : pointer);

/** Every problem of `args` against `schema`, pointed at (`{ pointer: '/a', message: 'expected number, got object' }`), in order. */
export function checkAllArgs(args: Json, schema: object): ArgumentIssue[] {
  let result;
  try {
    result = new Validator(schema as Schema, '2020-12', false).validate(args);
  } catch {
    return [];
  }
  if (result.valid) return [];
  const out: ArgumentIssue[] = [];
  const seen = new Set<string>();
  const add = (issue: ArgumentIssue) => {
    if (seen.has(issue.pointer)) return;
    seen.add(issue.pointer);
    out.push(issue);
  };
  for (const e of result.errors) {
    const pointer = e.instanceLocation.replace(/^#/, '');
    if (e.keyword === 'type') {
      const want = at(schema, e.keywordLocation.replace(/^#/, ''));
      const wanted = Array.isArray(want) ? want.join(' or ') : String(want);
      const got = typeOf(at(args, pointer));
      if (wanted === 'number' && got === 'integer') continue;
      add({ pointer, message: `expected ${wanted}, got ${got}` });
      continue;
    }
    if (e.keyword === 'required') {
      const m = /"([^"]+)"/.exec(e.error);
      add({ pointer: m ? `${pointer}/${m[1]}` : pointer, message: 'required, missing' });
      continue;
    }
    if (['properties', 'items', 'allOf', '$ref', 'prefixItems', 'additionalProperties'].includes(e.keyword)) continue;
    add({ pointer, message: e.error });
  }
  return out.sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0));
}

/** The first problem of `args` against `schema`, pointed at; null when they fit. */
export function checkArgs(args: Json, schema: object): ArgumentIssue | null {
  return checkAllArgs(args, schema)[0] ?? null;
}

/**
 * The problems named in a message of our check before sending: `{ issues, more, why }`,
 * or null when the message does not start with a pointer.
 */
export function parseIssues(message: string): { issues: ArgumentIssue[]; more: number; why: string | null } | null {
  const why = WHY.exec(message);
  const list = why ? message.slice(0, why.index) : message;
  const issues: ArgumentIssue[] = [];
  let more = 0;
  // Problems are joined with `; `; one's own text may hold `; ` too, so split only
  // where the next part starts a pointer (or is the count of the rest).
  for (const part of list.split(/;\s+(?=\/|and \d+ more$)/)) {
    const count = MORE.exec(part.trim());
    if (count) {
      more = Number(count[1]);
      continue;
    }
    const m = ISSUE.exec(part.trim());
    if (!m) return null;
    issues.push({ pointer: normal(m[1]!), message: m[2]!.trim() });
  }
  return issues.length ? { issues, more, why: why ? why[1]! : null } : null;
}

/** `/a: expected number, got object` somewhere inside an older message (not at its start). */
const POINTER_INSIDE = /(?:^|[\s`'"(])(\/[A-Za-z0-9_.~\-]+(?:\/[A-Za-z0-9_.~\-]+)*)`?\s*:\s*([^\n;]+)/;

/**
 * The arguments a step's error is about, if any: the pointers of our check's message;
 * else, for a refusal in the server's words (`detail`, or an old run's message), the
 * problems of the resolved `args` against the tool's `schema`.
 */
export function argumentProblem(error: StepError | null | undefined, args?: Json, schema?: object): ArgumentProblem | null {
  if (!error) return null;
  const detail = error.detail?.trim() ? error.detail : null;
  const parsed = parseIssues(error.message.trim());
  if (parsed && (error.code === ARGS_INVALID || parsed.issues.every((i) => ABOUT_ARGUMENT.test(i.message)))) {
    return { ...parsed, server: detail, source: 'message' };
  }
  // An older message with a pointer inside it (`… of `get-sum`: /items/0/name: expected …`).
  const inside = error.code !== ARGS_INVALID || !detail ? POINTER_INSIDE.exec(error.message) : null;
  if (inside && ABOUT_ARGUMENT.test(inside[2]!)) {
    const ours = error.code === ARGS_INVALID;
    return {
      issues: [{ pointer: normal(inside[1]!), message: inside[2]!.trim() }],
      more: 0,
      why: ours ? error.message : null,
      server: detail ?? (ours ? null : error.message),
      source: 'message',
    };
  }
  // A refusal in the server's words: point at the arguments by checking them here.
  const refused = error.code === ARGS_INVALID || REFUSAL.test(error.message) || (detail !== null && REFUSAL.test(detail));
  if (args === undefined || !schema || !refused) return null;
  const issues = checkAllArgs(args, schema);
  if (!issues.length) return null;
  return { issues, more: 0, why: null, server: detail ?? (error.code === ARGS_INVALID ? null : error.message), source: 'schema' };
}

/** `/a: expected number, got object; /b: required, missing` (`(the arguments)` for the empty pointer), for a one-line label. */
export function issuesText(problem: ArgumentProblem, max = problem.issues.length): string {
  const shown = problem.issues.slice(0, max).map((i) => `${i.pointer || '(the arguments)'}: ${i.message}`);
  const rest = problem.issues.length - shown.length + problem.more;
  return rest > 0 ? `${shown.join('; ')} (+${rest} more)` : shown.join('; ');
}
