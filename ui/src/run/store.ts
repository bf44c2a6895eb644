//! The run store (zustand): the run shown on the canvas — live, or opened from
//! history — as the events received so far and the view built from them.
//!
//! `view` follows the latest event unless the user scrubs the timeline: then `cursor`
//! is a seq and `view` is the replay up to it, while `live` keeps following.

import { useStore } from 'zustand';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { RunEvent } from './events';
import { applyEvents, replay, startView, type RunView, type StartOptions } from './model';

/** `live`: a run in progress (events keep coming); `history`: a finished run opened from the store. */
export type RunMode = 'idle' | 'live' | 'history';

export interface RunState {
  // ---- state (read with selectors; change only through the actions) ----
  mode: RunMode;
  runId: string | null;
  /** Every step id of the document the run is shown on. */
  stepIds: string[];
  /** The loop structure and start time the views are built with. */
  options: StartOptions;
  /** Every event received, in seq order, without duplicates. */
  events: RunEvent[];
  /** The view after every event received. */
  live: RunView;
  /** What the canvas shows: `live`, or the replay up to `cursor`. */
  view: RunView;
  /** `null`: follow the run; a seq: the view as it was after that event. */
  cursor: number | null;
  /** The instance of the selected step to show (iteration path; `[]` at the top level). */
  instancePath: number[] | null;

  // ---- actions ----
  /** Shows a new run on `stepIds` (all steps queued); `opts.parents` makes loop attribution exact. */
  begin(runId: string | null, stepIds: readonly string[], mode: Exclude<RunMode, 'idle'>, opts?: StartOptions): void;
  /** Adds events (duplicates and events already seen are dropped) and updates the view. */
  receive(events: readonly RunEvent[]): void;
  /** Moves the timeline to `seq` (`null`: follow the latest event). */
  seek(seq: number | null): void;
  selectInstance(path: readonly number[] | null): void;
  /** Back to idle: no run shown. */
  reset(): void;
}

export type RunStore = StoreApi<RunState>;

const EMPTY = startView([]);

function initial(): Pick<RunState, 'mode' | 'runId' | 'stepIds' | 'options' | 'events' | 'live' | 'view' | 'cursor' | 'instancePath'> {
  return {
    mode: 'idle',
    runId: null,
    stepIds: [],
    options: {},
    events: [],
    live: EMPTY,
    view: EMPTY,
    cursor: null,
    instancePath: null,
  };
}

/** A new, independent run store (the app uses `runStore`; tests make their own). */
export function createRunStore(): RunStore {
  return createStore<RunState>()((set, get) => ({
    ...initial(),

    begin(runId, stepIds, mode, opts = {}) {
      const live = startView(stepIds, opts);
      set({
        mode,
        runId,
        stepIds: [...stepIds],
        options: opts,
        events: [],
        live,
        view: live,
        cursor: null,
        instancePath: null,
      });
    },

    receive(batch) {
      const s = get();
      if (s.mode === 'idle' || batch.length === 0) return;
      let last = s.events.length ? s.events[s.events.length - 1]!.seq : 0;
      const fresh: RunEvent[] = [];
      for (const ev of batch) {
        if (ev.seq > last) {
          fresh.push(ev);
          last = ev.seq;
        }
      }
      if (fresh.length === 0) return;
      const live = applyEvents(s.live, fresh);
      set({
        events: s.events.concat(fresh),
        live,
        view: s.cursor === null ? live : s.view,
        // A run begun before its id was known takes the id from `RunStarted`.
        runId: s.runId ?? live.runId,
      });
    },

    seek(seq) {
      const s = get();
      if (seq === s.cursor) return;
      if (seq === null) {
        set({ cursor: null, view: s.live });
        return;
      }
      set({ cursor: seq, view: replay(s.stepIds, s.events, seq, s.options) });
    },

    selectInstance(path) {
      set({ instancePath: path ? [...path] : null });
    },

    reset() {
      set(initial());
    },
  }));
}

/** The app's run store. */
export const runStore: RunStore = createRunStore();

/** Reads the app's run store in a component: `useRunStore((s) => s.view.nodes[id])`. Select narrowly (or with `useShallow`). */
export function useRunStore<T>(selector: (s: RunState) => T): T {
  return useStore(runStore, selector);
}
