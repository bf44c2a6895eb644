import { describe, expect, it } from 'vitest';
import { docToGraph } from './doc-to-graph';
import { example } from '../testing/examples';
import { copySteps, parseClipboard, pasteSteps } from '../doc/clipboard';
import { STEP_ID_PATTERN, RESERVED_STEP_IDS } from '../doc/ids';
import * as ops from '../doc/ops';
import { allStepIds, findStep, locateStep, stepPointer } from '../doc/query';
import { createDocStore } from '../doc/store';
import type { Blueprint, LoopStep, Step, SwitchStep } from '../doc/types';

const load = (name: string) => JSON.parse(example(name)) as Blueprint;
const step = (doc: Blueprint, id: string) => findStep(doc, id)!;
const edges = (doc: Blueprint) => docToGraph(doc).edges.map((e) => e.id).sort();
const wait = (id: string, extra: Partial<Step> = {}): Step => ({ id, kind: 'wait', ms: 1, ...extra }) as Step;
const bp = (steps: Step[], extra: Partial<Blueprint> = {}): Blueprint => ({ blueprint: 1, id: 't', steps, ...extra });

describe('connect and disconnect', () => {
  it('writes out an implicit `after` before adding, so the implicit dependency stays', () => {
    const doc = load('pipeline-prev'); // greet → weather → report → sum → shout, all implicit
    const next = ops.connect(doc, 'greet', 'report');
    expect(step(next, 'report').after).toEqual(['weather', 'greet']);
    expect(Object.keys(step(next, 'report')).slice(0, 4)).toEqual(['id', 'name', 'kind', 'after']);
    expect(edges(next)).toContain('after:weather->report');
    expect(edges(next)).toContain('after:greet->report');
    expect(docToGraph(next).edges.find((e) => e.id === 'after:weather->report')!.data).toEqual({ kind: 'after', implicit: false });
    // Nothing else changed.
    expect(next.steps.filter((s, i) => s !== doc.steps[i]).map((s) => s.id)).toEqual(['report']);
  });

  it('adds to an explicit `after` once', () => {
    const doc = load('fan-out-fan-in');
    const next = ops.connect(doc, 'readings', 'announce');
    expect(step(next, 'announce').after).toEqual(['extremes', 'readings']);
    expect(ops.connect(next, 'readings', 'announce')).toBe(next);
  });

  it('removes an explicit dependency', () => {
    const doc = load('fan-out-fan-in');
    const next = ops.disconnect(doc, 'chicago', 'readings');
    expect(step(next, 'readings').after).toEqual(['new_york', 'los_angeles']);
    expect(edges(next)).not.toContain('after:chicago->readings');
  });

  it('removes an implicit dependency by writing `after: []`', () => {
    const doc = load('pipeline-prev');
    const next = ops.disconnect(doc, 'weather', 'report', 'out');
    expect(step(next, 'report').after).toEqual([]);
    expect(edges(next)).not.toContain('after:weather->report');
    expect(edges(next)).toContain('after:report->sum');
  });

  it('connects from a switch case handle into that case', () => {
    const doc = load('switch-diamond');
    const withJoin = ops.connect(doc, 'route', 'join', 'case-1');
    expect((step(withJoin, 'route') as SwitchStep).cases[1]!.to).toEqual(['hot', 'join']);
    expect(step(withJoin, 'join').after).toEqual(['wet', 'hot', 'mild']);
    expect(edges(withJoin)).toContain('case:route:1->join');
    // Moving a target to another case of the same switch.
    const moved = ops.connect(doc, 'route', 'hot', 'default');
    const sw = step(moved, 'route') as SwitchStep;
    expect(sw.cases[1]!.to).toEqual([]);
    expect(sw.default).toEqual(['mild', 'hot']);
    // And out of it again.
    const removed = ops.disconnect(moved, 'route', 'hot', 'default');
    expect((step(removed, 'route') as SwitchStep).default).toEqual(['mild']);
    expect(edges(removed)).toContain('after:wet->hot'); // hot follows the previous step again
  });

  it('refuses connections that the format forbids', () => {
    const doc = load('retry-fallback');
    const refused = (f: () => unknown) => expect(f).toThrow(ops.EditRefused);
    refused(() => ops.connect(doc, 'report', 'slow_fallback')); // into a fallback step
    refused(() => ops.connect(doc, 'slow_fallback', 'report')); // out of a fallback step
    refused(() => ops.connect(doc, 'report', 'slow')); // a cycle
    refused(() => ops.connect(doc, 'slow', 'slow'));
    refused(() => ops.connect(doc, 'slow', 'report', 'case-0')); // not a switch
    const loops = load('loop-collect');
    refused(() => ops.connect(loops, 'batch', 'say')); // across lists
    expect(ops.connectionProblem(loops, 'say', 'measure')).toBeNull();
  });

  it('sets, moves and removes fallbacks', () => {
    const doc = load('retry-fallback');
    const none = ops.disconnect(doc, 'slow', 'slow_fallback', 'fallback');
    expect('fallback' in step(none, 'slow')).toBe(false);
    expect(edges(none)).not.toContain('fallback:slow->slow_fallback');
    // Once it is no longer a fallback, slow_fallback follows `report` implicitly.
    expect(edges(none)).toContain('after:report->slow_fallback');

    const again = ops.connect(none, 'weather', 'slow_fallback', 'fallback');
    expect(step(again, 'weather').fallback).toBe('slow_fallback');
    expect(Object.keys(step(again, 'weather')).slice(-3)).toEqual(['on_error', 'retry', 'fallback']);
    expect(edges(again)).toContain('fallback:weather->slow_fallback');
    expect(() => ops.setFallback(doc, 'weather', 'slow_fallback')).toThrow(/already the fallback of `slow`/);

    // A step with `after` loses it when it becomes a fallback.
    const fb = ops.setFallback(load('fan-out-fan-in'), 'announce', 'readings');
    expect('after' in step(fb, 'readings')).toBe(false);
    expect(edges(fb)).toContain('fallback:announce->readings');
    expect(edges(fb)).not.toContain('after:chicago->readings');
    // A step others name in `after` cannot become a fallback.
    expect(() => ops.setFallback(load('fan-out-fan-in'), 'new_york', 'chicago')).toThrow(/`readings` run after `chicago`/);
  });
});

describe('removeSteps', () => {
  it('removes every reference: after, switch targets, fallback, layout', () => {
    const doc = bp(
      [
        wait('a', { fallback: 'f' }),
        { id: 'sw', kind: 'switch', cases: [{ when: '{{ a }}', to: ['b', 'c'] }], default: ['d'] },
        wait('b'),
        wait('c'),
        wait('d'),
        wait('j', { after: ['b', 'c', 'd'] }),
        wait('f'),
      ],
      { layout: { a: { x: 0, y: 0 }, c: { x: 1, y: 1 }, f: { x: 2, y: 2 } } },
    );
    const next = ops.removeSteps(doc, ['c', 'f', 'd']);
    expect(allStepIds(next)).toEqual(['a', 'sw', 'b', 'j']);
    expect((step(next, 'sw') as SwitchStep).cases[0]!.to).toEqual(['b']);
    expect((step(next, 'sw') as SwitchStep).default).toEqual([]);
    expect(step(next, 'j').after).toEqual(['b']);
    expect('fallback' in step(next, 'a')).toBe(false);
    expect(next.layout).toEqual({ a: { x: 0, y: 0 } });
    expect(JSON.stringify(next)).not.toMatch(/"[cdf]"/);
  });

  it('removes a loop with its body, and the layout entries of the body', () => {
    const doc = load('loop-collect');
    const laid = ops.moveNodes(doc, { each_message: { x: 1, y: 1 }, say: { x: 2, y: 2 }, report: { x: 3, y: 3 } });
    const next = ops.removeSteps(laid, ['each_message']);
    expect(allStepIds(next)).toEqual(['batch', 'report']);
    expect(Object.keys(next.layout!)).toEqual(['report']);
    expect(ops.removeSteps(ops.removeSteps(laid, ['each_message']), ['report']).layout).toBeUndefined();
  });

  it('lets the next step follow the previous remaining one', () => {
    const next = ops.removeSteps(load('pipeline-prev'), ['report']);
    expect(edges(next)).toContain('after:weather->sum');
  });
});

describe('renameStep', () => {
  it('updates after, switch targets, fallback and layout, but not templates', () => {
    const doc = ops.moveNodes(load('switch-diamond'), { measure: { x: 0, y: 0 }, hot: { x: 5, y: 5 }, join: { x: 9, y: 9 } });
    const next = ops.renameStep(doc, 'hot', 'scorching');
    expect((step(next, 'route') as SwitchStep).cases[1]!.to).toEqual(['scorching']);
    expect(step(next, 'join').after).toEqual(['wet', 'scorching', 'mild']);
    expect(Object.keys(next.layout!)).toEqual(['measure', 'scorching', 'join']);
    expect(JSON.stringify(step(next, 'join'))).toContain('steps.hot.status'); // templates untouched
    const fb = ops.renameStep(load('retry-fallback'), 'slow_fallback', 'explain');
    expect(step(fb, 'slow').fallback).toBe('explain');
    expect(Object.keys(step(fb, 'explain'))[0]).toBe('id');
  });

  it('refuses invalid, reserved and taken ids, nested ones included', () => {
    const doc = load('loop-collect');
    expect(() => ops.renameStep(doc, 'batch', 'say')).toThrow(/already exists/);
    expect(() => ops.renameStep(doc, 'batch', 'item')).toThrow(/reserved/);
    expect(() => ops.renameStep(doc, 'batch', 'a-b')).toThrow(/not a valid/);
    expect(ops.renameStep(doc, 'batch', 'batch')).toBe(doc);
  });

  it('renames through patchStep and updateStep', () => {
    const doc = load('pipeline-prev');
    const p = ops.patchStep(doc, 'greet', { id: 'hello', name: undefined, note: 'n' });
    expect(step(p, 'hello')).toMatchObject({ id: 'hello', kind: 'tool', note: 'n' });
    expect('name' in step(p, 'hello')).toBe(false);
    const u = ops.updateStep(load('fan-out-fan-in'), 'chicago', { id: 'windy', kind: 'wait', ms: 5 });
    expect(step(u, 'readings').after).toEqual(['new_york', 'windy', 'los_angeles']);
    expect(step(u, 'windy')).toEqual({ id: 'windy', kind: 'wait', ms: 5 });
  });
});

describe('adding steps and unique ids', () => {
  it('derives ids from the tool, prompt or kind, unique across nested bodies', () => {
    const store = createDocStore();
    store.getState().load(load('loop-collect'));
    const s = () => store.getState();
    expect(s().addStep({ kind: 'tool', server: 'everything', tool: 'get-sum', args: {} })).toBe('get_sum');
    expect(s().addStep({ kind: 'tool', tool: 'get-sum' })).toBe('get_sum_2');
    // `say` exists inside the loop body: a top-level step cannot take it.
    expect(s().addStep({ kind: 'tool', tool: 'say' })).toBe('say_2');
    expect(s().addStep({ kind: 'transform', value: 1 }, { container: 'each_message' })).toBe('transform');
    expect(s().addStep({ kind: 'prompt', prompt: 'run' })).toBe('run_step');
    expect(s().addStep({ kind: 'resource', uri: 'demo://resource/static/document/architecture.md' })).toBe('architecture');
    expect(s().addStep({ kind: 'tool', tool: '42 answers!' })).toBe('_42_answers');
    expect(s().addStep({ kind: '' })).toBeNull();
    expect(s().addStep({ kind: 'wait', ms: 1 }, { container: 'batch' })).toBeNull();
    const ids = allStepIds(s().doc);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(STEP_ID_PATTERN);
      expect(RESERVED_STEP_IDS.has(id)).toBe(false);
    }
    expect(locateStep(s().doc, 'transform')!.container).toBe('each_message');
  });

  it('puts the id first and the position in layout', () => {
    const { doc, id } = ops.addStep(load('pipeline-prev'), { kind: 'wait', ms: 10 }, { position: { x: 5.2, y: 7 } });
    expect(id).toBe('wait');
    expect(Object.keys(step(doc, id))).toEqual(['id', 'kind', 'after', 'ms']);
    expect(doc.layout).toEqual({ wait: { x: 5, y: 7 } });
    expect(stepPointer(doc, id)).toBe('/steps/5');
  });

  it('makes ids of an inserted loop body unique too', () => {
    const loop = { kind: 'loop', for_each: '{{ x }}', steps: [{ id: 'say', kind: 'wait', ms: 1 }, { id: 'next', kind: 'wait', ms: 1, after: ['say'] }] };
    const { doc, id } = ops.addStep(load('loop-collect'), loop);
    const body = (step(doc, id) as LoopStep).steps;
    expect(body.map((s) => s.id)).toEqual(['say_2', 'next']);
    expect(body[1]!.after).toEqual(['say_2']);
  });
});

describe('a new step is not wired by list order', () => {
  it('writes `after: []` for a step added at the end, and changes no other step', () => {
    const doc = load('pipeline-prev'); // greet → weather → report → sum → shout, all implicit
    const { doc: next, id } = ops.addStep(doc, { kind: 'wait', ms: 10 });
    expect(step(next, id).after).toEqual([]);
    expect(edges(next).filter((e) => e.includes(id))).toEqual([]);
    expect(next.steps.slice(0, 5).every((s, i) => s === doc.steps[i])).toBe(true);
    // Connecting it afterwards makes the one edge the person drew.
    const wired = ops.connect(next, 'shout', id);
    expect(step(wired, id).after).toEqual(['shout']);
  });

  it('writes nothing for the first step of an empty list (it has no dependency anyway)', () => {
    const { doc, id } = ops.addStep(bp([]), { kind: 'wait', ms: 1 });
    expect('after' in step(doc, id)).toBe(false);
    const second = ops.addStep(doc, { kind: 'wait', ms: 1 });
    expect(step(second.doc, second.id).after).toEqual([]);
    expect(edges(second.doc)).toEqual([]);
  });

  it('keeps the implicit order of the steps after a step inserted mid-list', () => {
    const doc = load('pipeline-prev');
    const { doc: next, id } = ops.addStep(doc, { kind: 'wait', ms: 1 }, { index: 2 });
    expect(next.steps.map((s) => s.id)).toEqual(['greet', 'weather', id, 'report', 'sum', 'shout']);
    expect(step(next, id).after).toEqual([]);
    // report followed weather implicitly: it still does, written out.
    expect(step(next, 'report').after).toEqual(['weather']);
    expect('after' in step(next, 'sum')).toBe(false);
    expect(edges(next)).toEqual(edges(doc));
  });

  it('keeps the template`s own `after`, and follows the implicit order on request', () => {
    const doc = load('pipeline-prev');
    expect(step(ops.addStep(doc, { kind: 'wait', ms: 1, after: ['greet'] }).doc, 'wait').after).toEqual(['greet']);
    const implicit = ops.addStep(doc, { kind: 'wait', ms: 1 }, { implicit: true });
    expect('after' in step(implicit.doc, 'wait')).toBe(false);
  });

  it('adds through the store unconnected, in a loop body too', () => {
    const store = createDocStore();
    store.getState().load(load('loop-collect'));
    const id = store.getState().addStep({ kind: 'transform', value: 1 }, { container: 'each_message' })!;
    const doc = store.getState().doc;
    expect(step(doc, id).after).toEqual([]);
    expect(edges(doc)).toEqual(edges(load('loop-collect')));
  });

  it('pastes a bare step unconnected, and a pasted pipeline keeps its own order', () => {
    const doc = load('pipeline-prev');
    const one = pasteSteps(doc, parseClipboard('{"kind":"wait","ms":1}')!);
    expect(step(one.doc, one.ids[0]!).after).toEqual([]);
    expect(edges(one.doc)).toEqual(edges(doc));
    const two = pasteSteps(doc, parseClipboard('[{"id":"p","kind":"wait","ms":1},{"id":"q","kind":"wait","ms":2}]')!);
    expect(step(two.doc, 'p').after).toEqual([]);
    expect('after' in step(two.doc, 'q')).toBe(false);
    expect(edges(two.doc)).toEqual([...edges(doc), 'after:p->q'].sort());
  });
});

describe('implicit edges: make explicit, remove', () => {
  it('writes the target`s `after` with the source, and the edge stops being implicit', () => {
    const doc = load('everything-tour'); // settle → digest → reply by list order
    const next = ops.makeExplicit(doc, 'settle', 'digest');
    expect(step(next, 'digest').after).toEqual(['settle']);
    const e = docToGraph(next).edges.find((x) => x.id === 'after:settle->digest')!;
    expect(e.data).toEqual({ kind: 'after', implicit: false });
    expect(e.type).toBe('routed');
    expect(edges(next)).toEqual(edges(doc));
    // Already explicit: nothing changes; not a dependency at all: refused.
    expect(ops.makeExplicit(next, 'settle', 'digest')).toBe(next);
    expect(() => ops.makeExplicit(doc, 'reply', 'digest')).toThrow(/does not run after/);
  });

  it('removes an implicit edge by writing `after` without it, through the store in one undo entry', () => {
    const store = createDocStore();
    store.getState().load(load('everything-tour'));
    const s = () => store.getState();
    expect(s().disconnect('settle', 'digest', 'out')).toEqual({ ok: true });
    expect(step(s().doc, 'digest').after).toEqual([]);
    expect(edges(s().doc)).not.toContain('after:settle->digest');
    expect(s().makeExplicit('digest', 'reply')).toEqual({ ok: true });
    expect(step(s().doc, 'reply').after).toEqual(['digest']);
    expect(s().past.map((h) => h.label)).toEqual(['Disconnect', 'Make explicit']);
  });
});

describe('copy, paste and duplicate', () => {
  it('duplicates with fresh ids and keeps dependencies on steps that stay', () => {
    const store = createDocStore();
    store.getState().load(load('fan-out-fan-in'));
    const s = () => store.getState();
    const ids = s().duplicate(['chicago', 'readings']);
    expect(ids).toEqual(['chicago_2', 'readings_2']);
    expect(s().selected).toEqual(ids);
    expect(step(s().doc, 'readings_2').after).toEqual(['new_york', 'chicago_2', 'los_angeles']);
    expect(step(s().doc, 'chicago_2').after).toEqual([]);
    // The originals are untouched, and the copies were appended.
    expect(allStepIds(s().doc)).toEqual([...allStepIds(load('fan-out-fan-in')), 'chicago_2', 'readings_2']);
    expect(s().past).toHaveLength(1);
    const again = s().duplicate(['chicago_2']);
    expect(again).toEqual(['chicago_3']);
  });

  it('keeps a pasted pipeline implicit and starts it fresh', () => {
    const doc = load('pipeline-prev');
    const clip = copySteps(doc, ['weather', 'report', 'sum']);
    const { doc: next, ids } = pasteSteps(doc, clip);
    expect(ids).toEqual(['weather_2', 'report_2', 'sum_2']);
    // weather depended on greet (still there), so that dependency is written out;
    // report_2 and sum_2 follow the step before them implicitly, as before.
    expect(step(next, 'weather_2').after).toEqual(['greet']);
    expect('after' in step(next, 'report_2')).toBe(false);
    expect('after' in step(next, 'sum_2')).toBe(false);
    expect(edges(next)).toEqual(expect.arrayContaining(['after:greet->weather_2', 'after:weather_2->report_2', 'after:report_2->sum_2']));
  });

  it('pastes JSON text into another blueprint, dropping references that do not resolve', () => {
    const text = JSON.stringify(copySteps(load('switch-diamond'), ['route', 'wet', 'join']));
    const target = load('pipeline-prev');
    const clip = parseClipboard(text)!;
    const { doc, ids } = pasteSteps(target, clip, { position: { x: 100, y: 200 } });
    expect(ids).toEqual(['route', 'wet', 'join']);
    const sw = step(doc, 'route') as SwitchStep;
    expect(sw.cases.map((c) => c.to)).toEqual([['wet'], []]);
    expect(sw.default).toEqual([]);
    expect(step(doc, 'join').after).toEqual(['wet']);
    // `measure` does not exist here: route starts on its own.
    expect(step(doc, 'route').after).toEqual([]);
    expect(Object.keys(doc.layout!)).toEqual(['route', 'wet', 'join']);
    expect(doc.layout!.route!.x).toBe(100);
    expect(doc.layout!.wet!.y).toBe(240);
  });

  it('pastes inside loop bodies with ids unique across the blueprint', () => {
    const doc = load('cmdb-sync-sketch');
    const clip = copySteps(doc, ['per_namespace']);
    const { doc: next, ids } = pasteSteps(doc, clip);
    expect(ids).toEqual(['per_namespace_2']);
    const body = (step(next, 'per_namespace_2') as LoopStep).steps;
    expect(body.map((s) => s.id)).toEqual(['pods_2', 'services_2', 'deployments_2', 'namespace_entities_2']);
    expect(body[3]!.after).toEqual(['pods_2', 'services_2', 'deployments_2']);
    const all = allStepIds(next);
    expect(new Set(all).size).toBe(all.length);
    // Pasting into a loop body.
    const inner = pasteSteps(next, copySteps(next, ['pods']), { container: 'per_namespace' });
    expect(inner.ids).toEqual(['pods_3']);
    expect(locateStep(inner.doc, 'pods_3')!.container).toBe('per_namespace');
  });

  it('reads a bare step, an array of steps or a blueprint as clipboard, and nothing else', () => {
    expect(parseClipboard('{"kind":"tool","server":"s","tool":"t","args":{}}')!.steps).toHaveLength(1);
    expect(parseClipboard('[{"kind":"wait","ms":1},{"kind":"wait","ms":2}]')!.steps).toHaveLength(2);
    expect(parseClipboard(example('loop-collect'))!.steps).toHaveLength(3);
    expect(parseClipboard('hello')).toBeNull();
    expect(parseClipboard('{"a":1}')).toBeNull();
    expect(parseClipboard('[1,2]')).toBeNull();
  });

  it('copies to text and pastes it back through the store', () => {
    const store = createDocStore();
    store.getState().load(load('everything-tour'));
    const s = () => store.getState();
    const text = s().copy(['settle']);
    expect(JSON.parse(text)).toMatchObject({ mcpflow: 'steps', layout: { settle: { x: 320, y: 180 } } });
    expect(s().paste()).toEqual(['settle_2']);
    // 40 px right and down of the original would cover it: moved just below it instead.
    expect(s().doc.layout!.settle_2).toEqual({ x: 360, y: 320 });
    expect(s().paste({ x: 0, y: 0 }, { text })).toEqual(['settle_3']);
    // (0, 0) is where `architecture` is: the paste goes just above it instead.
    expect(s().doc.layout!.settle_3).toEqual({ x: 0, y: -140 });
    expect(s().paste(undefined, { text: 'not json' })).toEqual([]);
    // Pasted again at the same spot: off the first paste too.
    expect(s().paste({ x: 0, y: 0 }, { text })).toEqual(['settle_4']);
    expect(s().doc.layout!.settle_4).not.toEqual(s().doc.layout!.settle_3);
    expect(s().past).toHaveLength(3);
  });

  it('moves duplicates off the originals, together', () => {
    const store = createDocStore();
    store.getState().load(load('everything-tour'));
    const s = () => store.getState();
    const ids = s().duplicate(['settle', 'digest']);
    const rect = (id: string) => ({ ...s().doc.layout![id]!, width: 240, height: 110 });
    const all = allStepIds(s().doc);
    for (const id of ids) {
      for (const other of all.filter((o) => !ids.includes(o) && s().doc.layout?.[o])) {
        const a = rect(id);
        const b = rect(other);
        const apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y + a.height <= b.y || b.y + b.height <= a.y;
        expect(apart, `${id} / ${other}`).toBe(true);
      }
    }
    // Moved together: the copies keep their distance.
    const d = (l: Record<string, { x: number; y: number }>, a: string, b: string) => [l[b]!.x - l[a]!.x, l[b]!.y - l[a]!.y];
    expect(d(s().doc.layout!, ids[0]!, ids[1]!)).toEqual(d(s().doc.layout!, 'settle', 'digest'));
  });
});
