import { describe, expect, it } from 'vitest';
import type { Blueprint } from '../../doc/types';
import { diffBlueprints, diffSummary, isSame } from './diff';

const doc = (steps: unknown[], extra: Record<string, unknown> = {}): Blueprint =>
  ({ blueprint: 1, id: 'b', name: 'B', steps, ...extra }) as unknown as Blueprint;

const echo = (id: string, message: string, more: Record<string, unknown> = {}) => ({
  id,
  kind: 'tool',
  server: 'echo',
  tool: 'echo',
  args: { message },
  ...more,
});

describe('diffBlueprints', () => {
  it('finds nothing between a document and a copy with its keys in another order', () => {
    const mine = doc([echo('a', 'hi')], { output: '{{ a }}' });
    const theirs = JSON.parse('{"output":"{{ a }}","steps":[{"args":{"message":"hi"},"tool":"echo","server":"echo","kind":"tool","id":"a"}],"name":"B","id":"b","blueprint":1}');
    const d = diffBlueprints(mine, theirs);
    expect(isSame(d)).toBe(true);
    expect(diffSummary(d)).toBe('no difference');
  });

  it('lists the steps added and removed by id, each in its own document order', () => {
    const d = diffBlueprints(doc([echo('a', '1'), echo('gone', '2'), echo('old', '3')]), doc([echo('new', '0'), echo('a', '1'), echo('wait', '9')]));
    expect(d.added).toEqual(['new', 'wait']);
    expect(d.removed).toEqual(['gone', 'old']);
    expect(d.changed).toEqual([]);
  });

  it('names the fields of a changed step', () => {
    const d = diffBlueprints(doc([echo('a', 'hi'), echo('b', 'x')]), doc([echo('a', 'hello', { after: ['b'] }), echo('b', 'x')]));
    expect(d.changed).toEqual([{ id: 'a', fields: ['after', 'args'] }]);
  });

  it('compares the steps of a loop body on their own, not as the loop’s field', () => {
    const loop = (body: unknown[], more: Record<string, unknown> = {}) => ({ id: 'each', kind: 'loop', over: '{{ inputs.list }}', steps: body, ...more });
    const d = diffBlueprints(doc([loop([echo('inner', 'a')])]), doc([loop([echo('inner', 'b'), echo('extra', 'c')])]));
    expect(d.changed).toEqual([{ id: 'inner', fields: ['args'] }]);
    expect(d.added).toEqual(['extra']);
    const renamed = diffBlueprints(doc([loop([echo('inner', 'a')])]), doc([loop([echo('inner', 'a')], { name: 'Each item' })]));
    expect(renamed.changed).toEqual([{ id: 'each', fields: ['name'] }]);
  });

  it('calls a step moved into a loop changed (`loop`)', () => {
    const mine = doc([echo('x', 'a'), { id: 'each', kind: 'loop', over: '[]', steps: [] }]);
    const theirs = doc([{ id: 'each', kind: 'loop', over: '[]', steps: [echo('x', 'a')] }]);
    expect(diffBlueprints(mine, theirs).changed).toEqual([{ id: 'x', fields: ['loop'] }]);
  });

  it('lists the top-level fields changed, added or removed, but not `steps`', () => {
    const d = diffBlueprints(doc([echo('a', '1')], { description: 'old', layout: { a: { x: 0, y: 0 } } }), doc([echo('b', '1')], { name: 'Renamed', output: '{{ b }}', layout: { a: { x: 0, y: 0 } } }));
    expect(d.fields).toEqual(['description', 'name', 'output']);
    expect(diffSummary(d)).toBe('steps: 1 added, 1 removed; description, name, output changed');
  });

  it('takes odd documents without throwing (steps not a list, steps without ids)', () => {
    const odd = { blueprint: 1, id: 'b', steps: 'nope' } as unknown as Blueprint;
    expect(diffBlueprints(odd, doc([echo('a', '1'), { kind: 'tool' }, null])).added).toEqual(['a']);
  });
});
