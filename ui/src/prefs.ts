//! UI preferences (a store of their own, apart from the document): the colour theme.
//! `system` follows `prefers-color-scheme`; `light`/`dark` set `data-theme` on <html>.

import { create } from 'zustand';

export type Theme = 'system' | 'light' | 'dark';
const KEY = 'mcpflow.theme';

function stored(): Theme {
  try {
    const v = globalThis.localStorage?.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

export function applyTheme(theme: Theme): void {
  if (typeof document === 'undefined') return;
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

export interface Prefs {
  theme: Theme;
  setTheme(theme: Theme): void;
  /** system → light → dark → system. */
  cycleTheme(): void;
}

export const usePrefs = create<Prefs>()((set, get) => ({
  theme: stored(),
  setTheme(theme) {
    try {
      globalThis.localStorage?.setItem(KEY, theme);
    } catch {
      // Storage may be unavailable; the choice then lasts for this session.
    }
    applyTheme(theme);
    set({ theme });
  },
  cycleTheme() {
    const order: Theme[] = ['system', 'light', 'dark'];
    get().setTheme(order[(order.indexOf(get().theme) + 1) % order.length]!);
  },
}));
