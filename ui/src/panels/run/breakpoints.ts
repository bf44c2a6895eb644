//! Breakpoints: step ids per blueprint, kept by the editor (and in local storage so
//! they outlive a restart), never in the blueprint file. A run in flight is told of
//! every change (`set_breakpoints`).

import { create } from 'zustand';

const KEY = 'mcpflow.breakpoints';

type ByBlueprint = Record<string, readonly string[]>;

function stored(): ByBlueprint {
  try {
    const raw = globalThis.localStorage?.getItem(KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const out: Record<string, string[]> = {};
    for (const [id, list] of Object.entries(parsed)) {
      if (Array.isArray(list)) out[id] = list.filter((s): s is string => typeof s === 'string');
    }
    return out;
  } catch {
    return {};
  }
}

function persist(all: ByBlueprint): void {
  try {
    globalThis.localStorage?.setItem(KEY, JSON.stringify(all));
  } catch {
    // Storage may be unavailable; breakpoints then last for this session.
  }
}

export interface BreakpointsState {
  byBlueprint: ByBlueprint;
  /** Sets or clears the breakpoint on `step` of `blueprint`; returns whether it is set now. */
  toggle(blueprint: string, step: string): boolean;
  clear(blueprint: string): void;
  /** Gives the breakpoints of `from` to `to` (a document first saved under another id). */
  move(from: string, to: string): void;
}

export const useBreakpoints = create<BreakpointsState>()((set, get) => ({
  byBlueprint: stored(),
  toggle(blueprint, step) {
    const list = get().byBlueprint[blueprint] ?? [];
    const on = !list.includes(step);
    const next = on ? [...list, step] : list.filter((s) => s !== step);
    const byBlueprint = { ...get().byBlueprint, [blueprint]: next };
    persist(byBlueprint);
    set({ byBlueprint });
    return on;
  },
  move(from, to) {
    const list = get().byBlueprint[from];
    if (!list || from === to) return;
    const byBlueprint = { ...get().byBlueprint, [to]: [...new Set([...(get().byBlueprint[to] ?? []), ...list])] };
    delete byBlueprint[from];
    persist(byBlueprint);
    set({ byBlueprint });
  },
  clear(blueprint) {
    const byBlueprint = { ...get().byBlueprint };
    delete byBlueprint[blueprint];
    persist(byBlueprint);
    set({ byBlueprint });
  },
}));

const NONE: readonly string[] = [];

/** The breakpoints of one blueprint (a stable empty list when there are none). */
export function breakpointsOf(blueprint: string): readonly string[] {
  return useBreakpoints.getState().byBlueprint[blueprint] ?? NONE;
}

export function useBreakpointsOf(blueprint: string): readonly string[] {
  return useBreakpoints((s) => s.byBlueprint[blueprint] ?? NONE);
}
