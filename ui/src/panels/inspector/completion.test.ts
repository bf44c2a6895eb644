import { describe, expect, it } from 'vitest';
import { applyCompletion, hasTemplate, suggest, templateContext } from './completion';
import type { ScopeName } from './scope';

const N = (...names: string[]): ScopeName[] => names.map((name) => ({ name, kind: 'step' }));

describe('template completion', () => {
  it('finds the open template and the path typed so far', () => {
    expect(templateContext('hello {{ inp', 12)).toMatchObject({ prefix: 'inp', from: 9, open: 6, closed: false });
    expect(templateContext('{{ inputs.ci }}', 12)).toMatchObject({ prefix: 'inputs.ci', from: 3, closed: true });
    expect(templateContext('{{ length(inputs.', 17)).toMatchObject({ prefix: 'inputs.' });
    // Closed before the caret, escaped, or not a template at all.
    expect(templateContext('{{ a }} b', 9)).toBeNull();
    expect(templateContext('\\{{ a', 5)).toBeNull();
    expect(templateContext('plain', 5)).toBeNull();
    // A sub-path of an expression cannot be completed.
    expect(templateContext('{{ items[0].na', 14)).toBeNull();
  });

  it('suggests one path segment at a time', () => {
    const names = N('inputs', 'inputs.city', 'inputs.count', 'index', 'item', 'steps', 'steps.a');
    expect(suggest(names, '').map((n) => n.name)).toEqual(['inputs', 'index', 'item', 'steps']);
    expect(suggest(names, 'in').map((n) => n.name)).toEqual(['inputs', 'index']);
    expect(suggest(names, 'inputs.').map((n) => n.name)).toEqual(['inputs.city', 'inputs.count']);
    expect(suggest(names, 'INPUTS.CI').map((n) => n.name)).toEqual(['inputs.city']);
    // A complete leaf name is not offered again.
    expect(suggest(names, 'item')).toEqual([]);
  });

  it('accepting inserts the name, spacing and the closing braces when missing', () => {
    const t = 'a {{inp';
    const ctx = templateContext(t, t.length)!;
    expect(applyCompletion(t, t.length, ctx, 'inputs')).toEqual({ text: 'a {{ inputs }}', caret: 11 });
    const u = '{{ inputs.c }} tail';
    const c2 = templateContext(u, 11)!;
    expect(applyCompletion(u, 11, c2, 'inputs.city')).toEqual({ text: '{{ inputs.city }} tail', caret: 14 });
  });

  it('recognises templates', () => {
    expect(hasTemplate('{{ x }}')).toBe(true);
    expect(hasTemplate('a {{x')).toBe(true);
    expect(hasTemplate('\\{{ literal')).toBe(false);
    expect(hasTemplate('none')).toBe(false);
  });
});
