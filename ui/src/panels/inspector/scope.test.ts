import { describe, expect, it } from 'vitest';
import type { Blueprint } from '../../doc';
import { example } from '../../testing/examples';
import { namesInScope, runsBefore } from './scope';

const load = (name: string) => JSON.parse(example(name)) as Blueprint;
const names = (doc: Blueprint, id: string | null, field?: string) => namesInScope(doc, id, { field }).map((n) => n.name);
/** The top-level names (no dots). */
const roots = (doc: Blueprint, id: string | null, field?: string) => names(doc, id, field).filter((n) => !n.includes('.'));

describe('namesInScope', () => {
  it('a pipeline: the steps before, prev with one dependency, inputs from the schema', () => {
    const doc = load('pipeline-prev');
    expect(roots(doc, 'report')).toEqual(['prev', 'greet', 'weather', 'inputs', 'steps', 'saved', 'run']);
    const all = names(doc, 'report');
    expect(all).toEqual(expect.arrayContaining(['inputs.message', 'inputs.city', 'inputs.offset', 'steps.greet', 'steps.weather.status', 'run.id']));
    // Later steps are not in scope, nor any loop or fallback name.
    for (const n of ['sum', 'shout', 'steps.sum', 'item', 'index', 'error']) expect(all).not.toContain(n);
    // A transform's object literal gives known output fields; a tool's output is unknown.
    expect(names(doc, 'shout')).toEqual(expect.arrayContaining(['report.greeting', 'report.temperature', 'sum']));
    expect(names(doc, 'shout').filter((n) => n.startsWith('weather.'))).toEqual([]);
    // The first step has no dependency, so no prev and no steps.
    expect(roots(doc, 'greet')).toEqual(['inputs', 'saved', 'run']);
    expect(namesInScope(doc, 'report').find((n) => n.name === 'prev')?.detail).toContain('weather');
  });

  it('a graph: several dependencies mean no prev; parallel steps do not see each other', () => {
    const doc = load('retry-fallback');
    expect(roots(doc, 'report')).toEqual(['slow', 'weather', 'inputs', 'steps', 'saved', 'run']);
    // `weather` has `after: []`: it starts at once and sees no step.
    expect(roots(doc, 'weather')).toEqual(['inputs', 'saved', 'run']);
  });

  it('a fallback sees what its step sees, plus error, and never prev', () => {
    const doc = load('retry-fallback');
    const n = names(doc, 'slow_fallback');
    expect(n).toEqual(expect.arrayContaining(['error', 'error.message', 'error.step', 'error.code']));
    expect(n).not.toContain('prev');
    expect(n).not.toContain('slow');
    // Nobody else sees `error`, and nobody sees the fallback step itself.
    expect(names(doc, 'report')).not.toContain('error');
    expect(names(doc, 'report')).not.toContain('slow_fallback');
    expect(names(doc, null)).not.toContain('slow_fallback');
  });

  it('a loop body: the loop variable (as), index, the steps before the loop and the body before it', () => {
    const doc = load('loop-collect');
    expect(roots(doc, 'say')).toEqual(['msg', 'index', 'batch', 'inputs', 'steps', 'saved', 'run']);
    expect(roots(doc, 'measure')).toEqual(['msg', 'index', 'prev', 'say', 'batch', 'inputs', 'steps', 'saved', 'run']);
    // After the loop only its collected output is visible.
    const after = roots(doc, 'report');
    expect(after).toContain('each_message');
    for (const n of ['say', 'measure', 'msg', 'index', 'item']) expect(after).not.toContain(n);
    // The loop's own for_each is evaluated outside; its collect inside, seeing the whole body.
    expect(roots(doc, 'each_message')).not.toContain('msg');
    expect(roots(doc, 'each_message', '/collect')).toEqual(['msg', 'index', 'say', 'measure', 'batch', 'inputs', 'steps', 'saved', 'run']);
  });

  it('last: in an until loop body, until and collect (the innermost loop decides), never in a for_each or outside', () => {
    const doc: Blueprint = {
      blueprint: 1,
      id: 'pages',
      steps: [
        { id: 'pages', kind: 'loop', until: '{{ !page.next }}', collect: '{{ page }}', steps: [
          { id: 'page', kind: 'wait', ms: 1 },
          { id: 'each', kind: 'loop', for_each: '{{ page.items }}', steps: [{ id: 'leaf', kind: 'wait', ms: 1 }] },
        ] },
        { id: 'after', kind: 'wait', ms: 1 },
      ],
    };
    expect(roots(doc, 'page').slice(0, 3)).toEqual(['item', 'index', 'last']);
    expect(roots(doc, 'pages', '/until')).toContain('last');
    expect(roots(doc, 'pages', '/collect')).toContain('last');
    expect(roots(doc, 'leaf')).not.toContain('last');
    expect(roots(doc, 'after')).not.toContain('last');
    expect(roots(doc, 'pages')).not.toContain('last');
  });

  it('the loop variable is item without `as`; nested loops see both variables', () => {
    const doc: Blueprint = {
      blueprint: 1,
      id: 'nested',
      steps: [
        { id: 'outer', kind: 'loop', for_each: '{{ inputs.xs }}', steps: [{ id: 'inner', kind: 'loop', as: 'y', for_each: '{{ item }}', steps: [{ id: 'leaf', kind: 'wait', ms: 1 }] }] },
      ],
    };
    expect(roots(doc, 'leaf').slice(0, 3)).toEqual(['y', 'item', 'index']);
    expect(roots(doc, 'inner').slice(0, 2)).toEqual(['item', 'index']);
    expect(roots(doc, 'outer')).not.toContain('item');
  });

  it('switch targets run after the switch: prev is the switch', () => {
    const doc = load('switch-diamond');
    expect(roots(doc, 'wet')).toEqual(['prev', 'measure', 'route', 'inputs', 'steps', 'saved', 'run']);
    expect(names(doc, 'wet')).toContain('route.case');
    expect(roots(doc, 'join')).toEqual(['measure', 'route', 'wet', 'hot', 'mild', 'inputs', 'steps', 'saved', 'run']);
  });

  it('saved names come from every `save` in the blueprint; the output sees the top level', () => {
    const doc = load('saved-cursor');
    expect(names(doc, 'previous')).toContain('saved.cursor');
    expect(roots(doc, null)).toEqual(['previous', 'advance', 'report', 'inputs', 'steps', 'saved', 'run']);
    expect(names(doc, 'nope')).toEqual([]);
  });

  it('runsBefore follows dependencies transitively, in list order', () => {
    const doc = load('switch-diamond');
    expect(runsBefore(doc.steps, 5)).toEqual(['measure', 'route', 'wet', 'hot', 'mild']);
    expect(runsBefore(doc.steps, 0)).toEqual([]);
  });
});
