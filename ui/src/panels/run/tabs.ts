//! Which tab the bottom panel shows (Problems, Run, History).

import { create } from 'zustand';

export type BottomTab = 'problems' | 'run' | 'history';

export const useBottomTab = create<{ tab: BottomTab }>()(() => ({ tab: 'problems' }));

export function showTab(tab: BottomTab): void {
  useBottomTab.setState({ tab });
}
