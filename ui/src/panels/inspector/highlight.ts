//! Template syntax colours, pure: `tokenize` splits a field's text into runs the
//! template editor paints behind its textarea — the `{{ }}` delimiters, paths
//! (`inputs.city`, `fetch.items[0]`), functions (`length(`), string and number
//! literals, operators (`|`, `||`, `==` …) and the plain text around templates.
//! The runs cover the text exactly, so the painted layer lines up with the caret.

export type TokenKind = 'text' | 'delim' | 'path' | 'func' | 'string' | 'number' | 'op' | 'space';

export interface Token {
  kind: TokenKind;
  text: string;
}

const INSIDE: [TokenKind, RegExp][] = [
  ['space', /^\s+/],
  ['string', /^'(?:[^'\\]|\\.)*'?/],
  ['string', /^"(?:[^"\\]|\\.)*"?/],
  ['string', /^`(?:[^`\\]|\\.)*`?/],
  ['number', /^-?\d+(?:\.\d+)?/],
  ['func', /^[A-Za-z_][A-Za-z0-9_]*(?=\s*\()/],
  ['path', /^@|^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[-?\d*\])*/],
];

/** The runs of `text`, in order; their texts joined give `text` back. */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  const push = (kind: TokenKind, t: string) => {
    if (!t) return;
    const last = out[out.length - 1];
    if (last && last.kind === kind && kind !== 'delim') last.text += t;
    else out.push({ kind, text: t });
  };
  let i = 0;
  while (i < text.length) {
    const open = findOpen(text, i);
    if (open === -1) {
      push('text', text.slice(i));
      break;
    }
    push('text', text.slice(i, open));
    push('delim', '{{');
    i = open + 2;
    while (i < text.length && !text.startsWith('}}', i)) {
      const rest = text.slice(i);
      const hit = INSIDE.map(([kind, re]) => [kind, re.exec(rest)?.[0]] as const).find(([, m]) => m);
      // `}` of an object literal right before `}}` stays an operator, not half a delimiter.
      const [kind, m] = hit ?? (['op', rest[0]!] as const);
      push(kind, m!);
      i += m!.length;
    }
    if (text.startsWith('}}', i)) {
      push('delim', '}}');
      i += 2;
    }
  }
  return out;
}

/** The next `{{` from `from` that is not escaped as `\{{`, or -1. */
function findOpen(text: string, from: number): number {
  let i = text.indexOf('{{', from);
  while (i > 0 && text[i - 1] === '\\') i = text.indexOf('{{', i + 2);
  return i;
}
