//! Batches live events for the canvas: events pushed one by one (or in arrays) are
//! handed over together, at most about 60 times a second, so thousands of events per
//! second cost one store update per frame.

/** Runs `cb` later; returns a function that cancels it. */
export type Schedule = (cb: () => void) => () => void;

export interface BatcherOptions {
  /** The shortest time between two flushes, in ms (default 16). */
  interval?: number;
  /** When a flush runs (default: the next animation frame at least `interval` ms after the last flush, else a timer). */
  schedule?: Schedule;
}

export interface Batcher<T> {
  /** Queues one item or several, in order. */
  push(items: T | readonly T[]): void;
  /** Flushes what is queued now. */
  flushNow(): void;
  /** Flushes what is left and stops scheduling; later pushes are flushed at once. */
  close(): void;
  /** How many items wait for the next flush. */
  readonly size: number;
}

export const DEFAULT_INTERVAL = 16;

/**
 * A batcher calling `flush` with everything pushed since the last flush. Arrays pushed
 * are spread (so push `[event]`, not an event that is itself an array).
 */
export function createBatcher<T>(flush: (items: T[]) => void, opts: BatcherOptions = {}): Batcher<T> {
  const interval = opts.interval ?? DEFAULT_INTERVAL;
  const schedule = opts.schedule ?? defaultSchedule(interval);
  let queue: T[] = [];
  let cancel: (() => void) | null = null;
  let closed = false;

  const run = () => {
    cancel = null;
    if (queue.length === 0) return;
    const items = queue;
    queue = [];
    flush(items);
  };

  return {
    push(items) {
      if (Array.isArray(items)) {
        for (const item of items as readonly T[]) queue.push(item);
      } else {
        queue.push(items as T);
      }
      if (closed) run();
      else if (!cancel && queue.length > 0) cancel = schedule(run);
    },
    flushNow() {
      cancel?.();
      run();
    },
    close() {
      closed = true;
      cancel?.();
      run();
    },
    get size() {
      return queue.length;
    },
  };
}

/**
 * The next animation frame that is at least `interval` ms after the previous flush
 * (a 120 Hz display still gets ~60 flushes a second); a timer where there are no
 * animation frames (tests, workers).
 */
export function defaultSchedule(interval: number): Schedule {
  const raf = globalThis.requestAnimationFrame?.bind(globalThis);
  const caf = globalThis.cancelAnimationFrame?.bind(globalThis);
  if (!raf || !caf) {
    return (cb) => {
      const t = setTimeout(cb, interval);
      return () => clearTimeout(t);
    };
  }
  let lastFlush = -Infinity;
  return (cb) => {
    let frame = 0;
    const tick = (now: number) => {
      // A little slack: frames at 60 Hz are 16.7 ms apart, but their timestamps jitter.
      if (now - lastFlush < interval - 2) {
        frame = raf(tick);
        return;
      }
      lastFlush = now;
      cb();
    };
    frame = raf(tick);
    return () => caf(frame);
  };
}
