//! The bottom panel: Problems (the diagnostics list), Run and History. Starting a run
//! shows the Run tab. Test hooks: `tab-problems`, `tab-run`, `tab-history`.

import { DiagnosticsList } from '../../diagnostics/DiagnosticsList';
import { useDoc } from '../../doc/store';
import { HistoryPanel, RunPanel } from './RunPanel';
import { showTab, useBottomTab, type BottomTab } from './tabs';

export function BottomTabs() {
  const tab = useBottomTab((s) => s.tab);
  const problems = useDoc((s) => s.diagnostics.length);
  const tabs: [BottomTab, string][] = [
    ['problems', problems ? `Problems (${problems})` : 'Problems'],
    ['run', 'Run'],
    ['history', 'History'],
  ];
  return (
    <div className="bottom-tabs">
      <nav className="tab-row" role="tablist">
        {tabs.map(([id, label]) => (
          <button
            key={id}
            type="button"
            role="tab"
            aria-selected={tab === id}
            className={`tab${tab === id ? ' is-active' : ''}`}
            data-testid={`tab-${id}`}
            onClick={() => showTab(id)}
          >
            {label}
          </button>
        ))}
      </nav>
      <div className="tab-body">
        {tab === 'problems' && <DiagnosticsList />}
        {tab === 'run' && <RunPanel />}
        {tab === 'history' && <HistoryPanel />}
      </div>
    </div>
  );
}
