// scopeAt: the names templates see at a point of a run (DESIGN §2 "Templates").

import { describe, expect, it } from 'vitest';
import type { RunEvent, RunStartedEvent, StepFinishedEvent } from './events';
import { fixture } from './fixtures/load';
import { applyEvents, replay, scopeAt, startView } from './model';

const finished = (events: readonly RunEvent[]) =>
  events.filter((e): e is StepFinishedEvent => e.type === 'StepFinished' && e.path.length === 0);

describe('scopeAt', () => {
  it('has the inputs, the run and every finished top-level step of a finished run', () => {
    const f = fixture('loop-collect');
    const v = replay(f.stepIds, f.events, Infinity, { parents: f.parents, startedAt: '2026-01-02T03:04:05Z' });
    const started = f.events[0] as RunStartedEvent;
    const scope = scopeAt(v);
    expect(scope.inputs).toEqual(started.inputs);
    expect(scope.run).toEqual({ id: started.run_id, blueprint: 'loop-collect', started_at: '2026-01-02T03:04:05Z' });
    const top = finished(f.events);
    expect(top.map((e) => e.step).sort()).toEqual(['batch', 'each_message', 'report']);
    for (const e of top) {
      expect(scope[e.step]).toEqual(e.output);
      expect((scope.steps as Record<string, unknown>)[e.step]).toEqual({
        output: e.output,
        status: 'succeeded',
        error: null,
        attempts: e.attempts,
        duration_ms: e.duration_ms,
      });
    }
    // Body steps are not visible outside their loop.
    expect(scope).not.toHaveProperty('say');
    expect(scope).not.toHaveProperty('index');
  });

  it('has only the steps finished so far, and no started_at unless given', () => {
    const f = fixture('loop-collect');
    const loopStart = f.events.find((e) => e.type === 'StepStarted' && e.step === 'each_message')!;
    const scope = scopeAt(replay(f.stepIds, f.events, loopStart.seq, { parents: f.parents }));
    expect(Object.keys(scope).sort()).toEqual(['batch', 'inputs', 'run', 'steps']);
    expect(scope.run).toEqual({ id: (f.events[0] as RunStartedEvent).run_id, blueprint: 'loop-collect' });
  });

  it('gives a failed step null output and its error', () => {
    const f = fixture('retry-fallback');
    const scope = scopeAt(replay(f.stepIds, f.events));
    const weather = finished(f.events).find((e) => e.step === 'weather')!;
    expect(scope.weather).toBeNull();
    expect((scope.steps as Record<string, unknown>).weather).toMatchObject({ status: 'failed', output: null, error: weather.error });
    expect(scope.slow).toEqual(finished(f.events).find((e) => e.step === 'slow')!.output);
  });

  it('inside a paused iteration: that iteration body outputs and its index', () => {
    const v = applyEvents(startView(['prep', 'each', 'fetch', 'parse'], { parents: { fetch: 'each', parse: 'each' } }), [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bp', inputs: { q: 'x' } },
      { seq: 2, at_ms: 0, type: 'StepStarted', step: 'prep', path: [], attempt: 1 },
      { seq: 3, at_ms: 0, type: 'StepFinished', step: 'prep', path: [], status: 'succeeded', output: 7, attempts: 1, duration_ms: 0 },
      { seq: 4, at_ms: 0, type: 'StepStarted', step: 'each', path: [], attempt: 1, args: { items: 2 } },
      { seq: 5, at_ms: 1, type: 'StepStarted', step: 'fetch', path: [0], attempt: 1 },
      { seq: 6, at_ms: 2, type: 'StepFinished', step: 'fetch', path: [0], status: 'succeeded', output: 'zero', attempts: 1, duration_ms: 1 },
      { seq: 7, at_ms: 2, type: 'StepStarted', step: 'parse', path: [0], attempt: 1 },
      { seq: 8, at_ms: 2, type: 'StepFinished', step: 'parse', path: [0], status: 'succeeded', output: 0, attempts: 1, duration_ms: 0 },
      { seq: 9, at_ms: 2, type: 'StepProgress', step: 'each', path: [], progress: 1, total: 2 },
      { seq: 10, at_ms: 3, type: 'StepStarted', step: 'fetch', path: [1], attempt: 1 },
      { seq: 11, at_ms: 4, type: 'StepFinished', step: 'fetch', path: [1], status: 'succeeded', output: 'one', attempts: 1, duration_ms: 1 },
      { seq: 12, at_ms: 4, type: 'RunPaused', reason: 'breakpoint', step: 'parse', path: [1], args: null },
    ]);
    const scope = scopeAt(v);
    expect(scope.prep).toBe(7);
    expect(scope.fetch).toBe('one');
    expect(scope.index).toBe(1);
    expect(scope).not.toHaveProperty('parse');
    expect(scope).not.toHaveProperty('each');
    expect(scope.inputs).toEqual({ q: 'x' });
  });

  it('is the same object for the same view', () => {
    const f = fixture('faulty-loop');
    const v = replay(f.stepIds, f.events);
    expect(scopeAt(v)).toBe(scopeAt(v));
  });
});
