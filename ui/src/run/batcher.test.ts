// The batcher: many pushes in one tick become one flush, in order, at most ~60 a second.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createBatcher, defaultSchedule, type Schedule } from './batcher';

describe('createBatcher with the default timer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('flushes 5,000 pushes made in one tick once, in order', () => {
    const flushes: number[][] = [];
    const b = createBatcher<number>((items) => flushes.push(items));
    for (let i = 0; i < 5000; i++) b.push(i);
    expect(flushes).toHaveLength(0);
    expect(b.size).toBe(5000);
    vi.advanceTimersByTime(16);
    expect(flushes).toHaveLength(1);
    expect(flushes[0]).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(b.size).toBe(0);
  });

  it('spreads arrays, keeping the order of single items and arrays', () => {
    const flushes: string[][] = [];
    const b = createBatcher<string>((items) => flushes.push(items));
    b.push('a');
    b.push(['b', 'c']);
    b.push('d');
    b.push([]);
    vi.runAllTimers();
    expect(flushes).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('flushes at most once per interval while pushes keep coming', () => {
    const flushes: number[][] = [];
    const b = createBatcher<number>((items) => flushes.push(items), { interval: 16 });
    // One push every millisecond for one second.
    for (let ms = 0; ms < 1000; ms++) {
      b.push(ms);
      vi.advanceTimersByTime(1);
    }
    vi.runAllTimers();
    expect(flushes.length).toBeLessThanOrEqual(1000 / 16 + 1);
    expect(flushes.length).toBeGreaterThan(50);
    expect(flushes.flat()).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('does not flush when nothing was pushed', () => {
    const flush = vi.fn();
    createBatcher(flush);
    vi.advanceTimersByTime(1000);
    expect(flush).not.toHaveBeenCalled();
  });

  it('close flushes what is left at once; later pushes go straight through', () => {
    const flushes: number[][] = [];
    const b = createBatcher<number>((items) => flushes.push(items));
    b.push([1, 2]);
    b.close();
    expect(flushes).toEqual([[1, 2]]);
    vi.runAllTimers();
    expect(flushes).toHaveLength(1);
    b.push(3);
    expect(flushes).toEqual([[1, 2], [3]]);
  });

  it('flushNow flushes and cancels the pending flush', () => {
    const flush = vi.fn();
    const b = createBatcher<number>(flush);
    b.push(1);
    b.flushNow();
    vi.runAllTimers();
    expect(flush).toHaveBeenCalledTimes(1);
    expect(flush).toHaveBeenCalledWith([1]);
  });
});

describe('createBatcher with an injected scheduler', () => {
  it('asks the scheduler once per batch and flushes when it says', () => {
    const pending: (() => void)[] = [];
    const schedule: Schedule = (cb) => {
      pending.push(cb);
      return () => pending.splice(pending.indexOf(cb), 1);
    };
    const flushes: number[][] = [];
    const b = createBatcher<number>((items) => flushes.push(items), { schedule });
    b.push(1);
    b.push(2);
    expect(pending).toHaveLength(1);
    pending.shift()!();
    b.push(3);
    expect(pending).toHaveLength(1);
    pending.shift()!();
    expect(flushes).toEqual([[1, 2], [3]]);
  });
});

describe('defaultSchedule with animation frames', () => {
  let frames: ((t: number) => void)[] = [];
  beforeEach(() => {
    frames = [];
    vi.stubGlobal('requestAnimationFrame', (cb: (t: number) => void) => frames.push(cb));
    vi.stubGlobal('cancelAnimationFrame', () => {});
  });
  afterEach(() => {
    vi.unstubAllGlobals();
  });
  const frame = (t: number) => {
    const due = frames;
    frames = [];
    for (const cb of due) cb(t);
  };

  it('flushes on the next frame, but not twice within the interval on a fast display', () => {
    const flushes: number[][] = [];
    const b = createBatcher<number>((items) => flushes.push(items), { schedule: defaultSchedule(16) });
    b.push(1);
    frame(100);
    expect(flushes).toEqual([[1]]);
    b.push(2);
    frame(108); // 120 Hz: too soon
    expect(flushes).toHaveLength(1);
    frame(116.5);
    expect(flushes).toEqual([[1], [2]]);
  });
});
