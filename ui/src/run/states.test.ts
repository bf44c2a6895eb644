// What a step shows after a run is over ("not run", "pinned"), the time a Debug run
// sat paused, and the timeline's labels and markers — over recorded event logs
// (fixtures/faulty-rerun*.ndjson: a failed run and its re-run from the failing step).

import { describe, expect, it } from 'vitest';
import type { RunEvent } from './events';
import { extraFixture } from './fixtures/load';
import { activeMs, applyEvents, instanceAt, replay, shownState, startView, STATE_LABELS } from './model';
import { clockTime, eventLabel, eventText, sinceStart, timelineMarkers } from './timeline';

describe('shown states', () => {
  it('after a failed run, a step inside a loop that never started shows "not run" (not "queued")', () => {
    const f = extraFixture('faulty-rerun');
    const done = replay(f.stepIds, f.events, Infinity, { parents: f.parents });
    expect(done.status).toBe('failed');
    expect(done.nodes.call!.state).toBe('queued');
    expect(shownState(done, 'call', done.nodes.call)).toBe('not-run');
    expect(STATE_LABELS['not-run']).toBe('not run');
    expect(shownState(done, 'each', done.nodes.each)).toBe('skipped');
    expect(shownState(done, 'boom', done.nodes.boom)).toBe('failed');
    expect(shownState(done, 'first', done.nodes.first)).toBe('succeeded');
    // While the run is still going, a step not reached yet is queued.
    const midway = replay(f.stepIds, f.events, 4, { parents: f.parents });
    expect(shownState(midway, 'call', midway.nodes.call)).toBe('queued');
    expect(shownState(midway, 'boom', midway.nodes.boom)).toBe('running');
  });

  it('a re-run shows its pinned steps as "pinned", with the run they came from', () => {
    const before = extraFixture('faulty-rerun');
    const f = extraFixture('faulty-rerun-pinned');
    const from = (before.events[0] as Extract<RunEvent, { type: 'RunStarted' }>).run_id;
    const v = replay(f.stepIds, f.events, Infinity, { parents: f.parents, pinnedFrom: from });
    expect(v.pinned).toEqual({ first: true });
    expect(v.pinnedFrom).toBe(from);
    expect(shownState(v, 'first', v.nodes.first)).toBe('pinned');
    expect(shownState(v, 'boom', v.nodes.boom)).toBe('failed');
    expect(shownState(v, 'call', v.nodes.call)).toBe('not-run');
    // The first run's `first` ran: it is not pinned there.
    const ran = replay(before.stepIds, before.events, Infinity, { parents: before.parents });
    expect(ran.pinned).toEqual({});
    expect(shownState(ran, 'first', instanceAt(ran, 'first'))).toBe('succeeded');
  });
});

describe('a disabled step', () => {
  it('shows "disabled" (not "skipped"), its output null, and the step after it runs', () => {
    const f = extraFixture('args-disabled');
    const v = replay(f.stepIds, f.events, Infinity, { parents: f.parents });
    const off = v.nodes.off!;
    expect(off.state).toBe('skipped');
    expect(off.skipReason).toBe('disabled');
    expect(off.output).toBeNull();
    expect(shownState(v, 'off', off)).toBe('disabled');
    expect(STATE_LABELS.disabled).toBe('disabled');
    expect(shownState(v, 'said', v.nodes.said)).toBe('succeeded');
    expect(v.nodes.said!.output).toBe('ran');
    // The timeline says so too.
    const skipped = f.events.find((e) => e.type === 'StepSkipped')!;
    expect(eventText(skipped)).toBe('off disabled, not run');
    // Other skips stay "skipped".
    const rerun = replay(extraFixture('faulty-rerun').stepIds, extraFixture('faulty-rerun').events, Infinity, { parents: extraFixture('faulty-rerun').parents });
    expect(rerun.nodes.each!.skipReason).toBeNull();
    expect(shownState(rerun, 'each', rerun.nodes.each)).toBe('skipped');
  });

  it('inside a loop, a disabled body step shows "disabled" per iteration and on the node', () => {
    const ev: RunEvent[] = [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bp', inputs: {} },
      { seq: 2, at_ms: 1, type: 'StepStarted', step: 'each', path: [], attempt: 1, args: { items: 2 } },
      { seq: 3, at_ms: 1, type: 'StepSkipped', step: 'off', path: [0], reason: 'disabled' },
      { seq: 4, at_ms: 2, type: 'StepSkipped', step: 'off', path: [1], reason: 'disabled' },
    ];
    const v = applyEvents(startView(['each', 'off'], { parents: { off: 'each' } }), ev);
    expect(shownState(v, 'off', v.nodes.off)).toBe('disabled');
    expect(shownState(v, 'off', instanceAt(v, 'off', [1]))).toBe('disabled');
    expect(v.nodes.off!.counts!.skipped).toBe(2);
  });
});

describe('paused time', () => {
  const run: RunEvent[] = [
    { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bp', inputs: {} },
    { seq: 2, at_ms: 10, type: 'RunPaused', reason: 'breakpoint', step: 'pick', path: [] },
    { seq: 3, at_ms: 5010, type: 'RunResumed' },
    { seq: 4, at_ms: 5012, type: 'StepStarted', step: 'pick', path: [], attempt: 1 },
    { seq: 5, at_ms: 5012, type: 'RunPaused', reason: 'stepped', step: 'pick', path: [] },
    { seq: 6, at_ms: 6012, type: 'RunResumed' },
    { seq: 7, at_ms: 6020, type: 'StepFinished', step: 'pick', path: [], status: 'succeeded', output: { case: 1 }, attempts: 1, duration_ms: 1008 },
    {
      seq: 8,
      at_ms: 6020,
      type: 'RunFinished',
      envelope: { run_id: 'r', blueprint: 'bp', status: 'succeeded', output: null, summary: { steps: 1, succeeded: 1, failed: 0, skipped: 0, tool_calls: 0 }, errors: [], duration_ms: 6020 },
    },
  ];

  it('a Debug run’s active time leaves out the time it sat paused', () => {
    const v = applyEvents(startView(['pick']), run);
    expect(activeMs(v)).toEqual({ totalMs: 6020, pausedMs: 6000, activeMs: 20 });
    // Paused now: the pause so far counts as paused.
    const now = replay(['pick'], run, 2);
    expect(activeMs(applyEvents(now, [{ seq: 3, at_ms: 2010, type: 'Log', level: 'info', message: 'x' }]))).toEqual({ totalMs: 2010, pausedMs: 2000, activeMs: 10 });
  });
});

describe('timeline labels', () => {
  it('labels events with wall-clock time and step names', () => {
    const f = extraFixture('faulty-rerun');
    const start = new Date(2026, 10, 25, 12, 3, 4, 97).getTime();
    const finished = f.events.find((e) => e.type === 'StepFinished' && e.step === 'first')!;
    expect(eventLabel(finished, start)).toBe(`${sinceStart(finished.at_ms)} · first finished`);
    expect([sinceStart(0), sinceStart(850), sinceStart(1250), sinceStart(125_000)]).toEqual(['+0 ms', '+850 ms', '+1.25 s', '+2 min 05 s']);
    expect(clockTime(start, 23)).toBe('12:03:04.120');
    expect(f.events.map((e) => eventText(e))).toEqual([
      'run started',
      'first started',
      'first finished',
      'boom started',
      'boom failed: TOOL_ERROR',
      'each skipped',
      'run failed',
    ]);
    // Without a known start: time since the run started.
    expect(eventLabel(finished, null)).toBe('+23 ms · first finished');
    const pinned = extraFixture('faulty-rerun-pinned').events;
    expect(eventText(pinned[2]!)).toBe('first pinned from the earlier run');
    expect(eventText({ seq: 2, at_ms: 1, type: 'RunPaused', reason: 'breakpoint', step: 'pick', path: [1] })).toBe('paused before pick (iteration 1)');
    // A step with a name is called by it.
    expect(eventLabel(finished, null, { first: 'Fetch the list' })).toBe('+23 ms · Fetch the list finished');
    expect(eventText(f.events[4]!, { boom: 'Explode' })).toBe('Explode failed: TOOL_ERROR');
  });

  it('marks failures and pauses along the slider', () => {
    const f = extraFixture('faulty-rerun');
    expect(timelineMarkers(f.events, null).map((m) => [m.index, m.kind])).toEqual([
      [4, 'failure'],
      [6, 'failure'],
    ]);
    const paused: RunEvent[] = [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r', blueprint: 'bp', inputs: {} },
      { seq: 2, at_ms: 3, type: 'RunPaused', reason: 'breakpoint', step: 'pick', path: [] },
    ];
    expect(timelineMarkers(paused, null)).toEqual([{ index: 1, seq: 2, kind: 'pause', label: '+3 ms · paused before pick' }]);
  });
});
