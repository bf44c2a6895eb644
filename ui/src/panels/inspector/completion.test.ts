import { describe, expect, it } from 'vitest';
import { applyCompletion, hasTemplate, suggest, templateContext } from './completion';
import { placeList } from './TemplateInput';
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

describe('placeList (where template suggestions open)', () => {
  const win = { width: 1400, height: 900 };
  const size = { width: 300, height: 200 };
  it('opens under the caret, at its left', () => {
    expect(placeList({ left: 500, top: 100, bottom: 116 }, size, win)).toEqual({ left: 500, top: 118 });
  });
  it('stays inside the window on the right and opens above when there is no room below', () => {
    expect(placeList({ left: 1300, top: 800, bottom: 816 }, size, win)).toEqual({ left: 1096, top: 598 });
  });
  it('never leaves the window, even when neither side has room', () => {
    const tall = { width: 300, height: 880 };
    const at = placeList({ left: -20, top: 450, bottom: 466 }, tall, win);
    expect(at.left).toBe(4);
    expect(at.top).toBeGreaterThanOrEqual(4);
    expect(at.top + tall.height).toBeLessThanOrEqual(win.height);
  });
});
