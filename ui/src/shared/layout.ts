//! The layout store: the widths of the left and right panels and the height of the
//! bottom panel, each collapsed or not, and the first-start guide's flag. Sizes are
//! clamped to sane bounds and, when drawn, to the window (the panels never leave the
//! canvas less than ~40% of it). The state is kept in the data folder through the
//! `get_ui_state`/`set_ui_state` commands (debounced writes); without a backend (a
//! browser, Vitest) it lives in memory.
//!
//! The bottom panel opens itself for a run or for new problems, and collapses again
//! when what it opened for is gone — unless the user collapsed or opened it by hand
//! (an explicit collapse holds until the next run or new problem).

import { create } from 'zustand';

export type PanelId = 'left' | 'right' | 'bottom';

export interface PanelState {
  /** Width (left, right) or height (bottom) in CSS pixels, when open. */
  size: number;
  collapsed: boolean;
}

/** What is persisted (the JSON object in the data folder). */
export interface StoredLayout {
  left: PanelState;
  right: PanelState;
  bottom: PanelState;
  /** The first-start guide was dismissed (or is not to open by itself). */
  guideSeen: boolean;
}

export interface LayoutState extends StoredLayout {
  /** The guide card is shown. */
  guideOpen: boolean;
  /** The right panel was collapsed by the user (a selection does not reopen it). */
  rightByUser: boolean;
  /** The bottom panel was collapsed or opened by the user (it does not move by itself until the next run or new problem). */
  bottomByUser: boolean;
  /** The stored state was read (or there is none to read). */
  loaded: boolean;
  setSize(id: PanelId, px: number): void;
  toggle(id: PanelId): void;
  setCollapsed(id: PanelId, collapsed: boolean, opts?: { byUser?: boolean }): void;
  /** Back to the default size (double-click on a handle). */
  resetSize(id: PanelId): void;
  /** A step was selected: the inspector opens unless the user closed it. */
  revealRight(): void;
  /** A run started or new problems came: the bottom panel opens (an explicit collapse yields). */
  openBottomFor(reason: 'run' | 'problems'): void;
  /** What the bottom panel opened for is gone: it collapses unless the user opened it. */
  bottomHasNothingToSay(): void;
  showGuide(open: boolean): void;
}

/** Bounds of each panel's size, in CSS pixels. */
export const LIMITS: Record<PanelId, { min: number; max: number; default: number }> = {
  left: { min: 160, max: 480, default: 232 },
  right: { min: 240, max: 640, default: 320 },
  bottom: { min: 96, max: 640, default: 220 },
};

/** Thickness of a collapsed side panel's rail, of the bottom panel's tab bar, of a handle. */
export const RAIL = 28;
export const TAB_BAR = 30;
export const HANDLE = 5;
/** The toolbar's fixed height. */
export const TOOLBAR = 42;
/** The canvas keeps at least this share of the window's width/height. */
export const CANVAS_MIN_SHARE = 0.4;

/**
 * The defaults: the palette open and narrow, the inspector closed until a step is
 * selected, the bottom panel reduced to its tab bar until it has something to say.
 * At 1400×900 that leaves the canvas about 1136×828 px (≈75% of the window).
 */
export function defaultLayout(): StoredLayout {
  return {
    left: { size: LIMITS.left.default, collapsed: false },
    right: { size: LIMITS.right.default, collapsed: true },
    bottom: { size: LIMITS.bottom.default, collapsed: true },
    guideSeen: false,
  };
}

export const clampSize = (id: PanelId, px: number): number => {
  const { min, max } = LIMITS[id];
  if (!Number.isFinite(px)) return LIMITS[id].default;
  return Math.round(Math.min(max, Math.max(min, px)));
};

/** The sizes drawn in a window of `w`×`h` (0: collapsed): each open panel within its
 * bounds, and together leaving the canvas at least `CANVAS_MIN_SHARE` of the window
 * (a tiny window may still leave it less: the panels' minimums win). */
export function fitToWindow(l: Pick<StoredLayout, PanelId>, w: number, h: number): Record<PanelId, number> {
  let left = l.left.collapsed ? 0 : clampSize('left', l.left.size);
  let right = l.right.collapsed ? 0 : clampSize('right', l.right.size);
  const fixed = (l.left.collapsed ? RAIL : HANDLE) + (l.right.collapsed ? RAIL : HANDLE);
  const room = Math.max(0, w * (1 - CANVAS_MIN_SHARE) - fixed);
  if (left + right > room) {
    const scale = room / (left + right);
    if (left) left = Math.max(LIMITS.left.min, Math.floor(left * scale));
    if (right) right = Math.max(LIMITS.right.min, Math.floor(right * scale));
  }
  const middle = Math.max(0, h - TOOLBAR);
  const bottom = l.bottom.collapsed
    ? 0
    : Math.min(clampSize('bottom', l.bottom.size), Math.max(LIMITS.bottom.min, Math.floor(middle * (1 - CANVAS_MIN_SHARE)) - HANDLE));
  return { left, right, bottom };
}

/** Reads a stored object defensively: anything missing or malformed is the default. */
export function fromStored(raw: unknown): StoredLayout {
  const d = defaultLayout();
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return d;
  const o = raw as Record<string, unknown>;
  const panel = (id: PanelId): PanelState => {
    const p = o[id];
    if (!p || typeof p !== 'object') return d[id];
    const { size, collapsed } = p as Record<string, unknown>;
    return {
      size: typeof size === 'number' ? clampSize(id, size) : d[id].size,
      collapsed: typeof collapsed === 'boolean' ? collapsed : d[id].collapsed,
    };
  };
  return { left: panel('left'), right: panel('right'), bottom: panel('bottom'), guideSeen: o.guideSeen === true };
}

export const toStored = (s: StoredLayout): StoredLayout => ({
  left: { ...s.left },
  right: { ...s.right },
  bottom: { ...s.bottom },
  guideSeen: s.guideSeen,
});

/** Where the layout is kept: the data folder (desktop) or nowhere (memory). */
export interface LayoutBackend {
  load(): Promise<{ state: unknown; guideOff: boolean }>;
  save(state: StoredLayout): Promise<void>;
}

export const useLayout = create<LayoutState>()((set, get) => {
  const panel = (id: PanelId, patch: Partial<PanelState>) => set({ [id]: { ...get()[id], ...patch } } as Partial<LayoutState>);
  return {
    ...defaultLayout(),
    guideOpen: false,
    rightByUser: false,
    bottomByUser: false,
    loaded: false,
    setSize(id, px) {
      panel(id, { size: clampSize(id, px), collapsed: false });
    },
    toggle(id) {
      get().setCollapsed(id, !get()[id].collapsed, { byUser: true });
    },
    setCollapsed(id, collapsed, { byUser = false } = {}) {
      panel(id, { collapsed });
      if (id === 'right' && byUser) set({ rightByUser: collapsed });
      if (id === 'bottom' && byUser) set({ bottomByUser: true });
    },
    resetSize(id) {
      panel(id, { size: LIMITS[id].default, collapsed: false });
    },
    revealRight() {
      if (get().right.collapsed && !get().rightByUser) panel('right', { collapsed: false });
    },
    openBottomFor() {
      set({ bottomByUser: false });
      if (get().bottom.collapsed) panel('bottom', { collapsed: false });
    },
    bottomHasNothingToSay() {
      if (!get().bottomByUser && !get().bottom.collapsed) panel('bottom', { collapsed: true });
    },
    showGuide(open) {
      set(open ? { guideOpen: true } : { guideOpen: false, guideSeen: true });
    },
  };
});

let saveTimer: ReturnType<typeof setTimeout> | undefined;
let unsubscribe: (() => void) | undefined;

/** Writes are debounced by this much (a drag writes once, when it settles). */
export const SAVE_DELAY_MS = 400;

/**
 * Loads the stored layout from `backend` and keeps it saved (debounced). The guide
 * opens on the first start of a data folder unless `guideOff`. Returns a stop function.
 */
export async function startLayout(backend: LayoutBackend): Promise<() => void> {
  unsubscribe?.();
  let loaded: { state: unknown; guideOff: boolean } = { state: {}, guideOff: true };
  try {
    loaded = await backend.load();
  } catch {
    // No stored layout (or no backend): the defaults, kept for this session; whether
    // this is a first start is unknown, so the guide waits for Help.
  }
  const stored = fromStored(loaded.state);
  useLayout.setState({ ...stored, loaded: true, guideOpen: !stored.guideSeen && !loaded.guideOff });
  const stop = useLayout.subscribe((now, before) => {
    const changed = (['left', 'right', 'bottom'] as const).some((id) => now[id] !== before[id]) || now.guideSeen !== before.guideSeen;
    if (!changed) return;
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => {
      backend.save(toStored(useLayout.getState())).catch(() => {
        // Not remembered this time; the layout still applies for this session.
      });
    }, SAVE_DELAY_MS);
  });
  unsubscribe = () => {
    clearTimeout(saveTimer);
    stop();
  };
  return unsubscribe;
}
