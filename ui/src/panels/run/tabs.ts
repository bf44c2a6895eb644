//! Which tab the bottom panel shows (Problems, Run, History, Tests). Showing a tab opens the
//! bottom panel: by the user (a click on a tab: it stays open) or by the studio (a run
//! starting calls `showTab('run')`: it opens even after the user collapsed it).

import { create } from 'zustand';
import { useLayout } from '../../shared/layout';

export type BottomTab = 'problems' | 'run' | 'history' | 'tests';

export const useBottomTab = create<{ tab: BottomTab }>()(() => ({ tab: 'problems' }));

export function showTab(tab: BottomTab, { byUser = false }: { byUser?: boolean } = {}): void {
  useBottomTab.setState({ tab });
  const layout = useLayout.getState();
  if (byUser) layout.setCollapsed('bottom', false, { byUser: true });
  else layout.openBottomFor(tab === 'problems' ? 'problems' : 'run');
}
