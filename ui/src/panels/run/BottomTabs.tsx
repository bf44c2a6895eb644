//! The bottom panel: Problems (the diagnostics list), Run, History and Tests, and a button
//! that collapses it to its tab row (Ctrl+J). A click on a tab opens it there.
//! Test hooks: `tab-problems`, `tab-run`, `tab-history`, `tab-tests`, `bottom-toggle`.

import { useLayout } from '../../shared/layout';
import { keyLabel } from '../../shared/shortcut-list';
import { DiagnosticsList } from '../../diagnostics/DiagnosticsList';
import { problemsOf } from '../../diagnostics/hints';
import { useDoc } from '../../doc/store';
import { TestsPanel } from '../tests';
import { HistoryPanel, RunPanel } from './RunPanel';
import { showTab, useBottomTab, type BottomTab } from './tabs';

export function BottomTabs() {
  const tab = useBottomTab((s) => s.tab);
  const problems = useDoc((s) => problemsOf(s.doc, s.diagnostics).length);
  const errors = useDoc((s) => problemsOf(s.doc, s.diagnostics).filter((d) => d.level === 'error').length);
  const collapsed = useLayout((s) => s.bottom.collapsed);
  const tabs: [BottomTab, string][] = [
    ['problems', problems ? `Problems (${problems})` : 'Problems'],
    ['run', 'Run'],
    ['history', 'History'],
    ['tests', 'Tests'],
  ];
  const hint = `${collapsed ? 'Show' : 'Hide'} the bottom panel (${keyLabel('Ctrl+J')})`;
  return (
    <div className={`bottom-tabs${collapsed ? ' is-collapsed' : ''}`}>
      <nav className="tab-row" role="tablist">
        {tabs.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={!collapsed && tab === id}
            className={`tab${!collapsed && tab === id ? ' is-active' : ''}${id === 'problems' && errors ? ' has-errors' : ''}`}
            data-testid={`tab-${id}`}
            onClick={() => (!collapsed && tab === id ? useLayout.getState().toggle('bottom') : showTab(id, { byUser: true }))}
          >
            {label}
          </button>
        ))}
        <button type="button" className="panel-collapse bottom-toggle" data-testid="bottom-toggle" title={hint} aria-label={hint} onClick={() => useLayout.getState().toggle('bottom')}>
          {collapsed ? '▴' : '▾'}
        </button>
      </nav>
      {/* Mounted while collapsed too (hidden): the lists keep their state and scroll. */}
      <div className="tab-body" hidden={collapsed}>
        {tab === 'problems' && <DiagnosticsList />}
        {tab === 'run' && <RunPanel />}
        {tab === 'history' && <HistoryPanel />}
        {tab === 'tests' && <TestsPanel />}
      </div>
    </div>
  );
}
