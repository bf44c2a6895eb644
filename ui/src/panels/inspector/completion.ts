//! Template completion, pure: where the caret is inside a `{{ … }}`, which names match
//! what is typed there, and the text after accepting one. Shared by `TemplateInput`
//! and the CodeMirror JSON editor.

import type { ScopeName } from './scope';

export interface TemplateContext {
  /** Start of the path being typed (what a completion replaces, up to the caret). */
  from: number;
  /** The path typed so far, e.g. `inputs.ci`. */
  prefix: string;
  /** Index of the `{{` the caret is in. */
  open: number;
  /** A `}}` closes this template after the caret. */
  closed: boolean;
}

/** Whether `text` holds a template (`{{`, not escaped as `\{{`). */
export function hasTemplate(text: string): boolean {
  return /(^|[^\\])\{\{/.test(text);
}

/** The unescaped `{{` before `caret` that is not closed before it, if any. */
function openBefore(text: string, caret: number): number | null {
  let i = text.lastIndexOf('{{', caret - 2);
  while (i >= 0) {
    if (i > 0 && text[i - 1] === '\\') {
      i = text.lastIndexOf('{{', i - 1);
      continue;
    }
    const close = text.indexOf('}}', i + 2);
    if (close !== -1 && close + 2 <= caret) return null;
    return i;
  }
  return null;
}

/** The template context at `caret`, or null when the caret is not inside an open `{{`. */
export function templateContext(text: string, caret: number): TemplateContext | null {
  const open = openBefore(text, caret);
  if (open === null) return null;
  const inside = text.slice(open + 2, caret);
  const m = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]*)*$/.exec(inside);
  const prefix = m ? m[0] : '';
  // `a.b` after `]` or `)` is a sub-path of an expression we cannot complete.
  const before = inside.slice(0, inside.length - prefix.length);
  if (/[\]\)\.]$/.test(before)) return null;
  const nextOpen = text.indexOf('{{', caret);
  const nextClose = text.indexOf('}}', caret);
  const closed = nextClose !== -1 && (nextOpen === -1 || nextClose < nextOpen);
  return { from: caret - prefix.length, prefix, open, closed };
}

/**
 * Names matching `prefix`, one path segment at a time: `in` offers `inputs` and
 * `index`, `inputs.` offers `inputs.city`. Case-insensitive; at most `limit`.
 */
export function suggest(names: readonly ScopeName[], prefix: string, limit = 50): ScopeName[] {
  const depth = prefix.split('.').length - 1;
  const p = prefix.toLowerCase();
  const out: ScopeName[] = [];
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n.name)) continue;
    if (n.name.split('.').length - 1 !== depth) continue;
    if (!n.name.toLowerCase().startsWith(p)) continue;
    if (n.name === prefix && !names.some((o) => o.name.startsWith(prefix + '.'))) continue;
    seen.add(n.name);
    out.push(n);
    if (out.length >= limit) break;
  }
  return out;
}

/** The text after accepting `name` at `ctx`, and where the caret goes (right after the name). */
export function applyCompletion(text: string, caret: number, ctx: TemplateContext, name: string): { text: string; caret: number } {
  const lead = ctx.from === ctx.open + 2 ? ' ' : '';
  const tail = ctx.closed ? '' : ' }}';
  const next = text.slice(0, ctx.from) + lead + name + tail + text.slice(caret);
  return { text: next, caret: ctx.from + lead.length + name.length };
}
