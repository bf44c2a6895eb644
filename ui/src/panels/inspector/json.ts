//! JSON text ⇄ values for the editors: parse errors with a line:column that does not
//! depend on the JavaScript engine's error message (WebKit's has no position), and
//! structural equality.

import type { Json } from '../../doc';

export type ParseResult =
  | { ok: true; value: Json }
  | { ok: false; message: string; offset: number; line: number; col: number };

/** 1-based line and column of `offset` in `text`. */
export function lineCol(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text[i] === '\n') {
      line++;
      start = i + 1;
    }
  }
  return { line, col: offset - start + 1 };
}

/** Parses JSON; on failure, where and why (found by a strict scanner of our own). */
export function parseJson(text: string): ParseResult {
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch (e) {
    const found = scan(text);
    const offset = found?.offset ?? 0;
    const message = found?.message ?? (e instanceof Error ? e.message : String(e));
    return { ok: false, message, offset, ...lineCol(text, offset) };
  }
}

/** "line 3:7: expected ',' or '}'" */
export function describeParseError(r: Extract<ParseResult, { ok: false }>): string {
  return `line ${r.line}:${r.col}: ${r.message}`;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** The first syntax error of `text`, or null when it is valid JSON. */
function scan(text: string): { offset: number; message: string } | null {
  let i = 0;
  const fail = (message: string, at = i): never => {
    throw new Stop(at, message);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const shown = () => (i >= text.length ? 'the end of the text' : `\`${text[i]}\``);
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"') return string();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    if (c === undefined) fail('expected a value, found the end of the text');
    if (c === "'") fail('strings are written in double quotes');
    fail(`expected a value, found ${shown()}`);
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === '}') fail('no comma after the last property');
      if (text[i] !== '"') fail(`expected a property name in double quotes, found ${shown()}`);
      string();
      ws();
      if (text[i] !== ':') fail(`expected \`:\` after the property name, found ${shown()}`);
      i++;
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return;
      }
      fail(`expected \`,\` or \`}\`, found ${shown()}`);
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === ']') fail('no comma after the last item');
      value();
      ws();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return;
      }
      fail(`expected \`,\` or \`]\`, found ${shown()}`);
    }
  };
  const string = () => {
    const start = i;
    i++;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape');
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail('invalid escape in a string');
        i += 2;
        continue;
      }
      if (c < ' ') fail(c === '\n' ? 'a string cannot span lines (write \\n)' : 'control character in a string');
      i++;
    }
    fail('unterminated string', start);
  };
  const number = () => {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (!m || m[0] === '-' || m[0] === '') fail('invalid number');
    i += m![0].length;
    if (/^[0-9.eE]/.test(text[i] ?? '')) fail('invalid number');
  };
  try {
    ws();
    if (i >= text.length) fail('the text is empty');
    value();
    ws();
    if (i < text.length) fail(`unexpected ${shown()} after the value`);
    return null;
  } catch (e) {
    if (e instanceof Stop) return { offset: e.offset, message: e.message };
    throw e;
  }
}

/** Pretty JSON as the editors show it. */
export function formatJson(value: unknown): string {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

/** Structural equality of JSON values (key order ignored; `undefined` members ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && jsonEqual(ao[k], bo[k]));
}

/** A copy without `undefined` members (what JSON would write). */
export function pruneUndefined<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : pruneUndefined(v))) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = pruneUndefined(v);
    return out as T;
  }
  return value;
}
