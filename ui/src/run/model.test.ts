// The run view built from recorded runs (fixtures/): node and instance states,
// attempts, durations and loop iterations at every seq, checked against what the raw
// events say; replay against incremental and randomly batched application.

import { describe, expect, it } from 'vitest';
import type { RunEvent, StepFinishedEvent, StepProgressEvent, StepStartedEvent } from './events';
import { fixture, FIXTURES, type Fixture } from './fixtures/load';
import { expectedInstances, expectedIterations, randomBatches, rng, splitKey } from './fixtures/oracle';
import {
  applyEvents,
  failedIterations,
  instanceAt,
  loopLabel,
  replay,
  startView,
  stepsRunning,
  type NodeState,
  type RunView,
} from './model';

const finishedOf = (events: readonly RunEvent[], step: string, path: number[] = []) =>
  events.find((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.step === step && e.path.join('.') === path.join('.'));

const full = (f: Fixture) => replay(f.stepIds, f.events, Infinity, { parents: f.parents });

/** The aggregate a node inside loops shows for these instance states. */
function aggregate(states: NodeState[]): NodeState {
  for (const s of ['paused', 'waiting', 'running', 'retrying', 'failed', 'succeeded', 'skipped'] as const) {
    if (states.includes(s)) return s;
  }
  return 'queued';
}

/** Checks every node, instance and loop of `view` against the events up to `upto`. */
function expectMatchesEvents(f: Fixture, view: RunView, upto: number) {
  const expected = expectedInstances(f.events, upto);
  const byStep = new Map<string, NodeState[]>();
  for (const [k, e] of expected) {
    const [step, path] = splitKey(k);
    const inst = instanceAt(view, step, path);
    expect({ at: upto, k, state: inst?.state, attempt: inst?.attempt, duration: inst?.durationMs }).toEqual({
      at: upto,
      k,
      state: e.state,
      attempt: e.attempt,
      duration: e.durationMs,
    });
    if (path.length > 0) byStep.set(step, [...(byStep.get(step) ?? []), e.state]);
  }
  for (const id of f.stepIds) {
    const node = view.nodes[id]!;
    if (f.parents[id]) {
      expect({ at: upto, id, state: node.state }).toEqual({ at: upto, id, state: aggregate(byStep.get(id) ?? []) });
    } else if (!expected.has(`${id}|`)) {
      expect({ at: upto, id, state: node.state }).toEqual({ at: upto, id, state: 'queued' });
    }
  }
  // Loops: every instance's iterations and done/total.
  const loops = new Set(Object.values(f.parents));
  for (const loop of loops) {
    const node = view.nodes[loop]!;
    const paths = f.parents[loop]
      ? Object.values(node.instances ?? {}).map((i) => i.path)
      : expected.has(`${loop}|`)
        ? [[]]
        : [];
    for (const path of paths) {
      const want = expectedIterations(f.events, f.parents, loop, path, upto);
      const got = instanceAt(view, loop, path)!.loop!;
      expect({ at: upto, loop, path, ...got }).toEqual({ at: upto, loop, path, ...want });
    }
  }
}

describe('the view of a recorded run', () => {
  for (const name of FIXTURES) {
    it(`${name}: matches the events at every seq`, () => {
      const f = fixture(name);
      let view = startView(f.stepIds, { parents: f.parents });
      for (const ev of f.events) {
        view = applyEvents(view, [ev]);
        expectMatchesEvents(f, view, ev.seq);
      }
      expect(view.status).toBe((f.events.at(-1) as Extract<RunEvent, { type: 'RunFinished' }>).envelope.status);
    });
  }

  it('loop-collect: succeeds with every iteration of the loop', () => {
    const f = fixture('loop-collect');
    const v = full(f);
    const items = (f.events[0] as Extract<RunEvent, { type: 'RunStarted' }>).inputs as { messages: string[] };
    const n = items.messages.length;
    expect(v.status).toBe('succeeded');
    expect(v.runId).toBe(f.events[0]!.type === 'RunStarted' ? f.events[0].run_id : null);
    expect(v.blueprintId).toBe('loop-collect');
    const loop = v.nodes.each_message!;
    expect(loop.state).toBe('succeeded');
    expect(loop.loop).toEqual({
      done: n,
      total: n,
      iterations: Object.fromEntries(items.messages.map((_, i) => [String(i), 'succeeded'])),
    });
    expect(loopLabel(loop)).toBe(`${n}/${n}`);
    expect(loop.durationMs).toBe(finishedOf(f.events, 'each_message')!.duration_ms);
    const say = v.nodes.say!;
    expect(say.state).toBe('succeeded');
    expect(say.counts).toEqual({ running: 0, retrying: 0, waiting: 0, paused: 0, succeeded: n, failed: 0, skipped: 0 });
    expect(Object.keys(say.instances!).sort()).toEqual(items.messages.map((_, i) => String(i)));
    for (let i = 0; i < n; i++) {
      const e = finishedOf(f.events, 'say', [i])!;
      expect(say.instances![String(i)]).toMatchObject({ state: 'succeeded', durationMs: e.duration_ms, output: e.output, attempt: 1 });
    }
    expect(v.nodes.report!.output).toEqual(finishedOf(f.events, 'report')!.output);
    expect(stepsRunning(v)).toEqual([]);
  });

  it('loop-collect: the loop is running with concurrency 2 while its first calls are out', () => {
    const f = fixture('loop-collect');
    // The seq of the second `say` start, before any finished.
    const secondStart = f.events.filter((e) => e.type === 'StepStarted' && e.step === 'say')[1]!.seq;
    const v = replay(f.stepIds, f.events, secondStart, { parents: f.parents });
    expect(v.status).toBe('running');
    expect(v.nodes.batch!.state).toBe('succeeded');
    expect(v.nodes.each_message!.state).toBe('running');
    expect(v.nodes.each_message!.loop).toEqual({ done: 0, total: 4, iterations: { '0': 'running', '1': 'running' } });
    expect(v.nodes.say!.counts!.running).toBe(2);
    expect(stepsRunning(v).sort()).toEqual(['each_message', 'say']);
    expect(v.nodes.measure!.state).toBe('queued');
    expect(v.nodes.report!.state).toBe('queued');
  });

  it('retry-fallback: retries with backoff, then the fallback recovers; the run is partial', () => {
    const f = fixture('retry-fallback');
    const retries = f.events.filter((e) => e.type === 'StepRetrying' && e.step === 'slow');
    expect(retries.length).toBeGreaterThan(0);
    const first = retries[0]! as Extract<RunEvent, { type: 'StepRetrying' }>;
    const atRetry = replay(f.stepIds, f.events, first.seq, { parents: f.parents });
    expect(atRetry.nodes.slow).toMatchObject({
      state: 'retrying',
      attempt: first.attempt - 1,
      retry: { attempt: first.attempt, delayMs: first.delay_ms, error: first.error, atMs: first.at_ms },
    });
    const v = full(f);
    const slow = finishedOf(f.events, 'slow')!;
    expect(slow.recovered_by).toBe('slow_fallback');
    expect(v.nodes.slow).toMatchObject({
      state: 'succeeded',
      attempt: retries.length + 1,
      recoveredBy: 'slow_fallback',
      durationMs: slow.duration_ms,
      output: slow.output,
    });
    expect(v.nodes.slow_fallback!.state).toBe('succeeded');
    const weather = finishedOf(f.events, 'weather')!;
    expect(v.nodes.weather).toMatchObject({ state: 'failed', error: weather.error, attempt: 1 });
    expect(v.status).toBe('partial');
    expect(v.envelope!.errors.map((e) => e.step)).toEqual(['weather']);
    expect(v.logs.some((l) => l.level === 'warn' && l.step === 'slow')).toBe(true);
  });

  it('faulty-loop: iterations that fail after their retry are failed, the others succeed', () => {
    const f = fixture('faulty-loop');
    const v = full(f);
    // From the events: the iterations whose `call` finished failed.
    const failed = f.events
      .filter((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.step === 'call' && e.status === 'failed')
      .map((e) => String(e.path[0]))
      .sort();
    expect(failed.length).toBeGreaterThan(0);
    expect(failedIterations(v.nodes.items!)).toEqual(failed);
    const loopStart = f.events.find((e): e is StepStartedEvent => e.type === 'StepStarted' && e.step === 'items')!;
    const total = (loopStart.args as { items: number }).items;
    expect(v.nodes.items!.loop!.done).toBe(total);
    expect(Object.values(v.nodes.items!.loop!.iterations).filter((s) => s === 'succeeded')).toHaveLength(total - failed.length);
    expect(v.nodes.call!.counts).toMatchObject({ failed: failed.length, succeeded: total - failed.length, running: 0 });
    // Body steps aggregate: any failed instance makes the node failed.
    expect(v.nodes.call!.state).toBe('failed');
    expect(v.nodes.note_it!.state).toBe('succeeded');
    // An instance that recovered on its retry.
    const recovered = f.events.find((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.step === 'call' && e.status === 'succeeded' && e.attempts > 1)!;
    expect(instanceAt(v, 'call', recovered.path)).toMatchObject({ state: 'succeeded', attempt: recovered.attempts, durationMs: recovered.duration_ms });
  });

  it('faulty-loop: a step whose fallback failed is failed at the end, with the error the envelope names', () => {
    const f = fixture('faulty-loop');
    // The engine sends no StepFinished for `flaky` (its fallback failed): only the envelope says so.
    expect(finishedOf(f.events, 'flaky')).toBeUndefined();
    const end = f.events.at(-1)!;
    const before = replay(f.stepIds, f.events, end.seq - 1, { parents: f.parents });
    expect(before.nodes.flaky!.state).toBe('running');
    const v = full(f);
    const entry = v.envelope!.errors.find((e) => e.step === 'flaky')!;
    expect(v.nodes.flaky).toMatchObject({ state: 'failed', error: { code: entry.code, message: entry.message } });
    expect(v.nodes.flaky_rescue!.state).toBe('failed');
  });

  it('faulty-loop: MCP progress of a call is kept on its node', () => {
    const f = fixture('faulty-loop');
    const progress = f.events.filter((e): e is StepProgressEvent => e.type === 'StepProgress' && e.step === 'drip');
    expect(progress.length).toBeGreaterThan(0);
    const last = progress.at(-1)!;
    const v = replay(f.stepIds, f.events, last.seq, { parents: f.parents });
    expect(v.nodes.drip).toMatchObject({
      state: 'running',
      progress: { progress: last.progress, total: last.total ?? null, message: last.message ?? null },
      loop: null,
    });
  });

  it('faulty-abort: the failing iteration fails the loop and the run; the rest is cancelled or skipped', () => {
    const f = fixture('faulty-abort');
    const v = full(f);
    expect(v.status).toBe('failed');
    const bad = f.events.find((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.step === 'check' && e.status === 'failed')!;
    const started = new Set(f.events.filter((e) => e.type === 'StepStarted' && e.step === 'check').map((e) => String((e as { path: number[] }).path[0])));
    const loop = v.nodes.each!;
    expect(loop.state).toBe('failed');
    expect(failedIterations(loop)).toEqual([String(bad.path[0])]);
    expect(Object.keys(loop.loop!.iterations).sort()).toEqual([...started].sort());
    expect(loop.loop!.total).toBe(4);
    expect(v.nodes.stuck).toMatchObject({ state: 'failed', error: { code: 'CANCELLED' } });
    expect(v.nodes.after_loop!.state).toBe('skipped');
  });

  it('faulty-nested: inner loops per outer iteration, summed on the node', () => {
    const f = fixture('faulty-nested');
    const v = full(f);
    const members = v.nodes.members!;
    const failed = f.events
      .filter((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.step === 'touch' && e.status === 'failed')
      .map((e) => e.path.join('.'));
    expect(failedIterations(members)).toEqual(failed);
    const touches = new Set(f.events.filter((e) => e.type === 'StepStarted' && e.step === 'touch').map((e) => (e as { path: number[] }).path.join('.')));
    expect(members.loop!.done).toBe(touches.size);
    expect(members.loop!.total).toBe(touches.size);
    expect(Object.keys(members.loop!.iterations).sort()).toEqual([...touches].sort());
    // Each inner loop instance has its own iterations, keyed by full path.
    const inner = members.instances!['1']!.loop!;
    expect(Object.keys(inner.iterations).every((k) => k.startsWith('1.'))).toBe(true);
    // The outer loop's iterations only see their direct body (the inner loops succeeded).
    expect(Object.values(v.nodes.groups!.loop!.iterations).every((s) => s === 'succeeded')).toBe(true);
    expect(v.nodes.touch!.instances!['0.2']).toMatchObject({ state: 'succeeded', attempt: 2 });
  });

  it('until-poll: an until loop has no total', () => {
    const f = fixture('until-poll');
    const v = full(f);
    const polls = f.events.filter((e) => e.type === 'StepStarted' && e.step === 'probe').length;
    expect(v.nodes.poll!.loop).toMatchObject({ done: polls, total: null });
    expect(loopLabel(v.nodes.poll!)).toBe(String(polls));
    expect(loopLabel(v.nodes.probe!)).toBeNull();
  });
});

describe('replay', () => {
  for (const name of FIXTURES) {
    it(`${name}: the view at every seq equals applying the events one by one and in random batches`, () => {
      const f = fixture(name);
      const opts = { parents: f.parents };
      let oneByOne = startView(f.stepIds, opts);
      const random = rng(name.length * 7919);
      for (const ev of f.events) {
        oneByOne = applyEvents(oneByOne, [ev]);
        const upto = f.events.filter((e) => e.seq <= ev.seq);
        const batched = randomBatches(upto, random).reduce(applyEvents, startView(f.stepIds, opts));
        const replayed = replay(f.stepIds, f.events, ev.seq, opts);
        expect(replayed).toEqual(oneByOne);
        expect(batched).toEqual(oneByOne);
      }
    });

    it(`${name}: is deterministic`, () => {
      const f = fixture(name);
      const a = replay(f.stepIds, f.events, Infinity, { parents: f.parents });
      const b = replay(f.stepIds, [...f.events].reverse(), Infinity, { parents: f.parents });
      expect(JSON.stringify(a)).toBe(JSON.stringify(b));
      expect(a).not.toBe(b);
    });

    it(`${name}: without the loop structure, guesses the same loops`, () => {
      const f = fixture(name);
      const guessed = replay(f.stepIds, f.events);
      expect(guessed.parents).toEqual(f.parents);
      expect(guessed.nodes).toEqual(full(f).nodes);
    });
  }

  it('stops at uptoSeq', () => {
    const f = fixture('loop-collect');
    expect(replay(f.stepIds, f.events, 0)).toEqual(startView(f.stepIds));
    const v = replay(f.stepIds, f.events, 5, { parents: f.parents });
    expect(v.lastSeq).toBe(5);
    expect(v.atMs).toBe(f.events[4]!.at_ms);
  });
});

describe('applyEvents', () => {
  it('ignores events it has seen (duplicates after a reconnect)', () => {
    const f = fixture('faulty-loop');
    const opts = { parents: f.parents };
    const once = applyEvents(startView(f.stepIds, opts), f.events);
    expect(applyEvents(once, f.events)).toBe(once);
    expect(applyEvents(once, f.events.slice(3, 9))).toBe(once);
    // Overlapping batches: the overlap counts once.
    const overlapping = applyEvents(applyEvents(startView(f.stepIds, opts), f.events.slice(0, 30)), f.events.slice(20));
    expect(overlapping).toEqual(once);
    // A batch with a repeat inside it.
    const withRepeat = applyEvents(startView(f.stepIds, opts), [...f.events.slice(0, 10), f.events[4]!, ...f.events.slice(10)]);
    expect(withRepeat).toEqual(once);
  });

  it('returns the same view for no events', () => {
    const v = startView(['a']);
    expect(applyEvents(v, [])).toBe(v);
  });

  it('keeps the identity of nodes and instances a batch does not touch', () => {
    const f = fixture('loop-collect');
    const opts = { parents: f.parents };
    // Up to the first `say` finish, then one batch with the next events.
    const cut = f.events.findIndex((e) => e.type === 'StepFinished' && e.step === 'say');
    const before = applyEvents(startView(f.stepIds, opts), f.events.slice(0, cut));
    const batch = f.events.slice(cut, cut + 1); // `say` [0] finishes
    const after = applyEvents(before, batch);
    expect(after).not.toBe(before);
    expect(after.nodes).not.toBe(before.nodes);
    expect(after.nodes.say).not.toBe(before.nodes.say);
    for (const id of ['batch', 'measure', 'report']) expect(after.nodes[id]).toBe(before.nodes[id]);
    // The other instance of `say` is the same object; the finished one is new.
    expect(after.nodes.say!.instances!['1']).toBe(before.nodes.say!.instances!['1']);
    expect(after.nodes.say!.instances!['0']).not.toBe(before.nodes.say!.instances!['0']);
    expect(after.logs).toBe(before.logs);
    // The earlier view is unchanged.
    expect(before.nodes.say!.instances!['0']!.state).toBe('running');
    expect(after.nodes.say!.instances!['0']!.state).toBe('succeeded');

    // A body step starting in an iteration that already runs changes only that step.
    const next = applyEvents(after, f.events.slice(cut + 1, cut + 2));
    expect(f.events[cut + 1]).toMatchObject({ type: 'StepStarted', step: 'measure' });
    expect(next.nodes.measure).not.toBe(after.nodes.measure);
    for (const id of ['batch', 'each_message', 'say', 'report']) expect(next.nodes[id]).toBe(after.nodes[id]);
  });

  it('adds steps it did not know', () => {
    const v = applyEvents(startView(['a']), [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'b', inputs: {} },
      { seq: 2, at_ms: 1, type: 'StepStarted', step: 'ghost', path: [], attempt: 1 },
      { seq: 3, at_ms: 2, type: 'StepStarted', step: 'inner', path: [0], attempt: 1 },
    ]);
    expect(v.nodes.a!.state).toBe('queued');
    expect(v.nodes.ghost!.state).toBe('running');
    expect(v.nodes.inner).toMatchObject({ state: 'running', counts: { running: 1 } });
    expect(v.parents).toEqual({ inner: 'ghost' });
    expect(v.nodes.ghost!.loop).toEqual({ done: 0, total: null, iterations: { '0': 'running' } });
  });

  it('keeps the last 500 log lines', () => {
    const events: RunEvent[] = Array.from({ length: 620 }, (_, i) => ({
      seq: i + 1,
      at_ms: i,
      type: 'Log',
      level: 'info',
      message: `line ${i + 1}`,
    }));
    const v = applyEvents(applyEvents(startView([]), events.slice(0, 300)), events.slice(300));
    expect(v.logs).toHaveLength(500);
    expect(v.logs[0]!.message).toBe('line 121');
    expect(v.logs.at(-1)).toEqual({ seq: 620, atMs: 619, level: 'info', message: 'line 620', step: null });
  });

  it('applies 5,000 events of a loop of fast tool calls in one batch, or in batches of 100, to the same view', () => {
    // Synthetic: the recorded fixtures are kept small. A loop over 1,700 items, each
    // iteration one call: start, finish, loop progress.
    const n = 1700;
    const events: RunEvent[] = [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bench', inputs: {} },
      { seq: 2, at_ms: 0, type: 'StepStarted', step: 'each', path: [], attempt: 1, args: { items: n } },
    ];
    let seq = 2;
    for (let i = 0; i < n && events.length < 5000; i++) {
      events.push({ seq: ++seq, at_ms: i, type: 'StepStarted', step: 'call', path: [i], attempt: 1, args: { i } });
      events.push({ seq: ++seq, at_ms: i + 1, type: 'StepFinished', step: 'call', path: [i], status: 'succeeded', output: { i }, attempts: 1, duration_ms: 1 });
      events.push({ seq: ++seq, at_ms: i + 1, type: 'StepProgress', step: 'each', path: [], progress: i + 1, total: n, message: `${i + 1}/${n}` });
    }
    const batch = events.slice(0, 5000);
    const base = startView(['each', 'call'], { parents: { call: 'each' } });
    // How fast: `npm run ui:bench` (ui/src/ui.bench.ts).
    const v = applyEvents(base, batch);
    const iterations = Math.floor((batch.length - 2) / 3);
    expect(v.nodes.call!.counts!.succeeded).toBe(iterations);
    expect(v.nodes.each!.loop!.done).toBe(iterations);

    // And in batches of 100 (a live run, ~60 flushes a second): the same view.
    let w = base;
    for (let i = 0; i < batch.length; i += 100) w = applyEvents(w, batch.slice(i, i + 100));
    expect(w).toEqual(v);
  });
});

describe('loop iterations', () => {
  const loop = (events: RunEvent[]) =>
    applyEvents(startView(['each', 'a', 'b'], { parents: { a: 'each', b: 'each' } }), [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bp', inputs: {} },
      { seq: 2, at_ms: 0, type: 'StepStarted', step: 'each', path: [], attempt: 1, args: { items: 3 } },
      ...events,
    ]);

  it('counts as done the iteration that settled last when several have nothing running', () => {
    // Iteration 0's `a` is done but its `b` waits for a call slot; iteration 1 then
    // completes: the loop's progress is about iteration 1.
    const v = loop([
      { seq: 3, at_ms: 1, type: 'StepStarted', step: 'a', path: [0], attempt: 1 },
      { seq: 4, at_ms: 1, type: 'StepStarted', step: 'a', path: [1], attempt: 1 },
      { seq: 5, at_ms: 2, type: 'StepFinished', step: 'a', path: [0], status: 'succeeded', attempts: 1, duration_ms: 1 },
      { seq: 6, at_ms: 3, type: 'StepFinished', step: 'a', path: [1], status: 'succeeded', attempts: 1, duration_ms: 2 },
      { seq: 7, at_ms: 3, type: 'StepStarted', step: 'b', path: [1], attempt: 1 },
      { seq: 8, at_ms: 4, type: 'StepFinished', step: 'b', path: [1], status: 'succeeded', attempts: 1, duration_ms: 1 },
      { seq: 9, at_ms: 4, type: 'StepProgress', step: 'each', path: [], progress: 1, total: 3, message: '1/3' },
    ]);
    expect(v.nodes.each!.loop).toEqual({ done: 1, total: 3, iterations: { '0': 'running', '1': 'succeeded' } });
    const later = applyEvents(v, [
      { seq: 10, at_ms: 5, type: 'StepStarted', step: 'b', path: [0], attempt: 1 },
      { seq: 11, at_ms: 6, type: 'StepFinished', step: 'b', path: [0], status: 'succeeded', attempts: 1, duration_ms: 1 },
      { seq: 12, at_ms: 6, type: 'StepProgress', step: 'each', path: [], progress: 2, total: 3, message: '2/3' },
    ]);
    expect(later.nodes.each!.loop!.iterations).toEqual({ '0': 'succeeded', '1': 'succeeded' });
  });

  it('a failure recovered by a fallback does not fail the iteration; one that continues does', () => {
    const v = loop([
      { seq: 3, at_ms: 1, type: 'StepStarted', step: 'a', path: [0], attempt: 1 },
      { seq: 4, at_ms: 2, type: 'StepFinished', step: 'a', path: [0], status: 'succeeded', output: 'fb', attempts: 1, duration_ms: 1, recovered_by: 'a_fb' },
      { seq: 5, at_ms: 2, type: 'StepStarted', step: 'b', path: [0], attempt: 1 },
      { seq: 6, at_ms: 3, type: 'StepFinished', step: 'b', path: [0], status: 'succeeded', attempts: 1, duration_ms: 1 },
      { seq: 7, at_ms: 3, type: 'StepProgress', step: 'each', path: [], progress: 1, total: 3 },
      { seq: 8, at_ms: 4, type: 'StepStarted', step: 'a', path: [1], attempt: 1 },
      { seq: 9, at_ms: 5, type: 'StepFinished', step: 'a', path: [1], status: 'failed', error: { code: 'X', message: 'x' }, attempts: 1, duration_ms: 1 },
    ]);
    expect(v.nodes.each!.loop!.iterations).toEqual({ '0': 'succeeded', '1': 'failed' });
    expect(failedIterations(v.nodes.each!)).toEqual(['1']);
  });

  it('without progress events, done counts the iterations the finished loop saw end', () => {
    const v = loop([
      { seq: 3, at_ms: 1, type: 'StepStarted', step: 'a', path: [0], attempt: 1 },
      { seq: 4, at_ms: 2, type: 'StepFinished', step: 'a', path: [0], status: 'succeeded', attempts: 1, duration_ms: 1 },
      { seq: 5, at_ms: 2, type: 'StepFinished', step: 'each', path: [], status: 'failed', error: { code: 'C', message: 'c' }, attempts: 1, duration_ms: 2 },
    ]);
    expect(v.nodes.each!.loop).toEqual({ done: 1, total: 3, iterations: { '0': 'succeeded' } });
  });
});

describe('pause, resume and step', () => {
  const ids = ['fetch', 'save'];
  const start: RunEvent[] = [
    { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r1', blueprint: 'bp', inputs: { n: 1 } },
    { seq: 2, at_ms: 1, type: 'RunPaused', reason: 'breakpoint', step: 'fetch', path: [], args: { url: 'u' } },
  ];

  it('a breakpoint pauses the run and the step, with its arguments, until it starts', () => {
    let v = applyEvents(startView(ids), start);
    expect(v.status).toBe('paused');
    expect(v.pause).toEqual({ reason: 'breakpoint', step: 'fetch', path: [], args: { url: 'u' } });
    expect(v.nodes.fetch).toMatchObject({ state: 'paused', args: { url: 'u' }, attempt: 0 });
    expect(stepsRunning(v)).toEqual([]);

    v = applyEvents(v, [{ seq: 3, at_ms: 50, type: 'RunResumed' }]);
    expect(v.status).toBe('running');
    expect(v.pause).toBeNull();
    expect(v.nodes.fetch!.state).toBe('paused');

    v = applyEvents(v, [{ seq: 4, at_ms: 51, type: 'StepStarted', step: 'fetch', path: [], attempt: 1, args: { url: 'u' } }]);
    expect(v.nodes.fetch).toMatchObject({ state: 'running', attempt: 1, startedAtMs: 51 });
    expect(stepsRunning(v)).toEqual(['fetch']);
  });

  it('stepping runs one step and pauses again; the step keeps running', () => {
    const v = applyEvents(startView(ids), [
      ...start,
      { seq: 3, at_ms: 10, type: 'RunResumed' },
      { seq: 4, at_ms: 10, type: 'StepStarted', step: 'fetch', path: [], attempt: 1 },
      { seq: 5, at_ms: 10, type: 'RunPaused', reason: 'stepped', step: 'fetch', path: [] },
    ]);
    expect(v.status).toBe('paused');
    expect(v.pause).toMatchObject({ reason: 'stepped', step: 'fetch' });
    expect(v.nodes.fetch!.state).toBe('running');
    expect(v.nodes.save!.state).toBe('queued');
  });

  it('a breakpoint inside a loop pauses that instance; the node shows paused', () => {
    const v = applyEvents(startView(['each', 'call'], { parents: { call: 'each' } }), [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bp', inputs: {} },
      { seq: 2, at_ms: 0, type: 'StepStarted', step: 'each', path: [], attempt: 1, args: { items: 3 } },
      { seq: 3, at_ms: 0, type: 'StepStarted', step: 'call', path: [0], attempt: 1 },
      { seq: 4, at_ms: 1, type: 'StepFinished', step: 'call', path: [0], status: 'succeeded', output: 1, attempts: 1, duration_ms: 1 },
      { seq: 5, at_ms: 1, type: 'StepProgress', step: 'each', path: [], progress: 1, total: 3 },
      { seq: 6, at_ms: 1, type: 'RunPaused', reason: 'breakpoint', step: 'call', path: [1], args: { i: 1 } },
    ]);
    expect(v.nodes.call!.state).toBe('paused');
    expect(v.nodes.call!.instances!['1']).toMatchObject({ state: 'paused', args: { i: 1 } });
    expect(v.nodes.each!.loop).toEqual({ done: 1, total: 3, iterations: { '0': 'succeeded' } });
  });

  it('a requested pause marks no step', () => {
    const v = applyEvents(startView(ids), [
      start[0]!,
      { seq: 2, at_ms: 5, type: 'RunPaused', reason: 'requested' },
    ]);
    expect(v.status).toBe('paused');
    expect(v.nodes.fetch!.state).toBe('queued');
  });

  it('a run cancelled at a breakpoint skips the held step', () => {
    const v = applyEvents(startView(ids), [
      ...start,
      { seq: 3, at_ms: 9, type: 'StepSkipped', step: 'fetch', path: [] },
      { seq: 4, at_ms: 9, type: 'StepSkipped', step: 'save', path: [] },
      {
        seq: 5,
        at_ms: 9,
        type: 'RunFinished',
        envelope: {
          run_id: 'r1',
          blueprint: 'bp',
          status: 'cancelled',
          output: null,
          summary: { steps: 2, succeeded: 0, failed: 0, skipped: 2, tool_calls: 0 },
          errors: [{ step: '', code: 'CANCELLED', message: 'the run was cancelled' }],
          duration_ms: 9,
        },
      },
    ]);
    expect(v.status).toBe('cancelled');
    expect(v.pause).toBeNull();
    expect(v.nodes.fetch!.state).toBe('skipped');
  });
});
