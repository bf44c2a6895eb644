//! The layout's backend: the `get_ui_state`/`set_ui_state` commands (a JSON object in
//! the data folder). Outside the desktop app the layout stays in memory.

import { commands } from '../bindings';
import { inTauri } from '../backend';
import type { LayoutBackend, StoredLayout } from '../shared/layout';

export const desktopLayoutBackend: LayoutBackend = {
  async load() {
    const r = await commands.getUiState();
    if (r.status !== 'ok') throw new Error(r.error.message);
    return { state: r.data.state, guideOff: r.data.guide_off };
  },
  async save(state: StoredLayout) {
    const r = await commands.setUiState(state);
    if (r.status !== 'ok') throw new Error(r.error.message);
  },
};

/** Memory only (a browser preview, tests): starts from `initial`. */
export function memoryLayoutBackend(initial: unknown = {}, guideOff = false): LayoutBackend & { saved: StoredLayout[] } {
  const saved: StoredLayout[] = [];
  return {
    saved,
    load: async () => ({ state: saved.length ? saved[saved.length - 1] : initial, guideOff }),
    save: async (s) => {
      saved.push(s);
    },
  };
}

export const layoutBackend = (): LayoutBackend => (inTauri() ? desktopLayoutBackend : memoryLayoutBackend({}, true));
