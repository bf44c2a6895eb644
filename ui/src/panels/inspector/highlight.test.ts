import { describe, expect, it } from 'vitest';
import { tokenize } from './highlight';

const kinds = (text: string) => tokenize(text).map((t) => [t.kind, t.text]);

describe('tokenize', () => {
  it('gives the text back exactly, whatever it is', () => {
    for (const s of ['', 'plain', 'a {{ b }} c', '{{ x', '{{ "un', '\\{{ no }}', '{{ {a: b} }}', '{{}}{{ }}']) {
      expect(tokenize(s).map((t) => t.text).join('')).toBe(s);
    }
  });

  it('marks delimiters, paths, functions, strings and operators', () => {
    expect(kinds("Hi {{ length(steps.fetch.output.items[0]) || 'none' }}!")).toEqual([
      ['text', 'Hi '],
      ['delim', '{{'],
      ['space', ' '],
      ['func', 'length'],
      ['op', '('],
      ['path', 'steps.fetch.output.items[0]'],
      ['op', ')'],
      ['space', ' '],
      ['op', '||'],
      ['space', ' '],
      ['string', "'none'"],
      ['space', ' '],
      ['delim', '}}'],
      ['text', '!'],
    ]);
  });

  it('paints pipes and numbers inside, and nothing outside a template', () => {
    expect(kinds('{{ inputs.a | [0] }} 1 | x')).toEqual([
      ['delim', '{{'],
      ['space', ' '],
      ['path', 'inputs.a'],
      ['space', ' '],
      ['op', '|'],
      ['space', ' '],
      ['op', '['],
      ['number', '0'],
      ['op', ']'],
      ['space', ' '],
      ['delim', '}}'],
      ['text', ' 1 | x'],
    ]);
  });

  it('leaves an escaped \\{{ as text', () => {
    expect(kinds('\\{{ a }}')).toEqual([['text', '\\{{ a }}']]);
  });
});
