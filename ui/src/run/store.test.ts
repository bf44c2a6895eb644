// The run store: begin, receive, seek (the timeline), reset; and a live run fed
// through the batcher.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBatcher } from './batcher';
import { fixture } from './fixtures/load';
import { replay, startView } from './model';
import { createRunStore } from './store';

describe('the run store', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts idle and ignores events until a run begins', () => {
    const store = createRunStore();
    const f = fixture('loop-collect');
    expect(store.getState().mode).toBe('idle');
    store.getState().receive(f.events);
    expect(store.getState().events).toEqual([]);
  });

  it('begin shows every step queued; receive follows the run', () => {
    const store = createRunStore();
    const s = () => store.getState();
    const f = fixture('loop-collect');
    s().begin('r1', f.stepIds, 'live', { parents: f.parents });
    expect(s().mode).toBe('live');
    expect(s().view).toEqual(startView(f.stepIds, { parents: f.parents }));
    expect(Object.values(s().view.nodes).every((n) => n.state === 'queued')).toBe(true);

    s().receive(f.events.slice(0, 10));
    s().receive(f.events.slice(5, 20)); // overlaps: 5 duplicates dropped
    s().receive(f.events.slice(20));
    expect(s().events.map((e) => e.seq)).toEqual(f.events.map((e) => e.seq));
    expect(s().view).toBe(s().live);
    expect(s().view).toEqual(replay(f.stepIds, f.events, Infinity, { parents: f.parents }));
    expect(s().view.status).toBe('succeeded');
  });

  it('takes the run id from RunStarted when the run began without one', () => {
    const store = createRunStore();
    const f = fixture('until-poll');
    store.getState().begin(null, f.stepIds, 'live', { parents: f.parents });
    store.getState().receive(f.events.slice(0, 1));
    expect(store.getState().runId).toBe(f.events[0]!.type === 'RunStarted' ? f.events[0].run_id : 'not a RunStarted');
  });

  it('seek shows the run as it was; receiving keeps the scrubbed view; seek(null) follows again', () => {
    const store = createRunStore();
    const s = () => store.getState();
    const f = fixture('retry-fallback');
    const opts = { parents: f.parents };
    s().begin('r1', f.stepIds, 'live', opts);
    s().receive(f.events.slice(0, 8));
    s().seek(3);
    expect(s().cursor).toBe(3);
    expect(s().view).toEqual(replay(f.stepIds, f.events, 3, opts));
    expect(s().view.lastSeq).toBe(3);

    s().receive(f.events.slice(8));
    expect(s().view.lastSeq).toBe(3);
    expect(s().live.lastSeq).toBe(f.events.at(-1)!.seq);

    s().seek(null);
    expect(s().view).toBe(s().live);
    expect(s().view.status).toBe('partial');
  });

  it('opens a finished run from history at its end, and scrubs through it', () => {
    const store = createRunStore();
    const s = () => store.getState();
    const f = fixture('faulty-abort');
    s().begin('r2', f.stepIds, 'history', { parents: f.parents });
    s().receive(f.events);
    expect(s().mode).toBe('history');
    expect(s().view.status).toBe('failed');
    for (const e of f.events) {
      s().seek(e.seq);
      expect(s().view.lastSeq).toBe(e.seq);
    }
    s().seek(0);
    expect(s().view.status).toBe('pending');
  });

  it('selects an instance path and resets to idle', () => {
    const store = createRunStore();
    const s = () => store.getState();
    const f = fixture('faulty-nested');
    s().begin('r3', f.stepIds, 'live', { parents: f.parents });
    s().receive(f.events);
    s().selectInstance([1, 1]);
    expect(s().instancePath).toEqual([1, 1]);
    s().seek(4);
    s().reset();
    expect(s()).toMatchObject({ mode: 'idle', runId: null, events: [], cursor: null, instancePath: null, stepIds: [] });
    expect(s().view.nodes).toEqual({});
  });

  it('a new run replaces the old one', () => {
    const store = createRunStore();
    const s = () => store.getState();
    const a = fixture('loop-collect');
    const b = fixture('until-poll');
    s().begin('a', a.stepIds, 'live', { parents: a.parents });
    s().receive(a.events);
    s().begin('b', b.stepIds, 'live', { parents: b.parents });
    expect(s().events).toEqual([]);
    expect(Object.keys(s().view.nodes).sort()).toEqual([...b.stepIds].sort());
    s().receive(b.events);
    expect(s().view.blueprintId).toBe('until-poll');
  });

  it('a live run pushed event by event through the batcher updates the store once per flush', () => {
    vi.useFakeTimers();
    const store = createRunStore();
    const f = fixture('faulty-loop');
    store.getState().begin('r', f.stepIds, 'live', { parents: f.parents });
    let updates = 0;
    const unsubscribe = store.subscribe(() => updates++);
    const batcher = createBatcher((events: typeof f.events) => store.getState().receive(events));
    const half = Math.floor(f.events.length / 2);
    for (const ev of f.events.slice(0, half)) batcher.push(ev);
    vi.advanceTimersByTime(16);
    for (const ev of f.events.slice(half)) batcher.push(ev);
    batcher.close();
    unsubscribe();
    expect(updates).toBe(2);
    expect(store.getState().view).toEqual(replay(f.stepIds, f.events, Infinity, { parents: f.parents }));
  });
});
