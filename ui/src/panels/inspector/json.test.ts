import { describe, expect, it } from 'vitest';
import { jsonEqual, parseJson, pruneUndefined } from './json';

describe('parseJson', () => {
  it('parses valid JSON', () => {
    expect(parseJson('{"a": [1, true, null, "x"]}')).toEqual({ ok: true, value: { a: [1, true, null, 'x'] } });
  });

  it('reports line:column of the first error, whatever the engine says', () => {
    expect(parseJson('{\n  "a": 1\n  "b": 2\n}')).toMatchObject({ ok: false, line: 3, col: 3, message: 'expected `,` or `}`, found `"`' });
    expect(parseJson('{"a": [1, 2,]}')).toMatchObject({ ok: false, line: 1, col: 13, message: 'no comma after the last item' });
    expect(parseJson("{'a': 1}")).toMatchObject({ ok: false, line: 1, col: 2 });
    expect(parseJson('{"a": "x')).toMatchObject({ ok: false, message: 'unterminated string', col: 7 });
    expect(parseJson('[1] x')).toMatchObject({ ok: false, col: 5 });
    expect(parseJson('')).toMatchObject({ ok: false, message: 'the text is empty' });
    expect(parseJson('{"a": 01}')).toMatchObject({ ok: false, message: 'invalid number' });
  });

  it('compares JSON structurally and prunes undefined', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, x: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(pruneUndefined({ a: undefined, b: { c: undefined, d: 1 } })).toEqual({ b: { d: 1 } });
  });
});
