//! View preferences of the canvas kept across restarts (local storage): whether the
//! minimap is shown.

import { create } from 'zustand';

const KEY = 'mcpflow.canvas.minimap';

function storedMinimap(): boolean {
  try {
    return globalThis.localStorage?.getItem(KEY) !== 'hidden';
  } catch {
    return true;
  }
}

export interface ViewPrefs {
  minimap: boolean;
  setMinimap(shown: boolean): void;
}

export const useViewPrefs = create<ViewPrefs>()((set) => ({
  minimap: storedMinimap(),
  setMinimap(shown) {
    try {
      globalThis.localStorage?.setItem(KEY, shown ? 'shown' : 'hidden');
    } catch {
      // Storage may be unavailable: the choice then lasts for this session.
    }
    set({ minimap: shown });
  },
}));
