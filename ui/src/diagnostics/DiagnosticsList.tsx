//! The diagnostics list (bottom panel): one row per diagnostic; a click selects the
//! step and the field it is about. Test hooks: `diagnostics` on the list,
//! `diagnostic` on each row.

import { memo } from 'react';
import { docStore, useDoc } from '../doc/store';

export const DiagnosticsList = memo(function DiagnosticsList() {
  const diagnostics = useDoc((s) => s.diagnostics);
  const errors = diagnostics.filter((d) => d.level === 'error').length;
  return (
    <section className="diagnostics" data-testid="diagnostics" aria-label="Diagnostics">
      <header className="panel-head">
        <span>Diagnostics</span>
        <span className="diag-summary">
          {diagnostics.length === 0
            ? 'none'
            : `${errors} error${errors === 1 ? '' : 's'}, ${diagnostics.length - errors} warning${diagnostics.length - errors === 1 ? '' : 's'}`}
        </span>
      </header>
      <ul className="diag-rows">
        {diagnostics.map((d, i) => (
          <li key={i}>
            <button
              type="button"
              className={`diag-row diag-${d.level}`}
              data-testid="diagnostic"
              data-code={d.code}
              onClick={() => docStore.getState().selectDiagnostic(d)}
              title={d.hint ?? undefined}
            >
              <span className="diag-level">{d.level === 'error' ? '✕' : '!'}</span>
              <code className="diag-code">{d.code}</code>
              <span className="diag-message">{d.message}</span>
              <span className="diag-where">{d.step ?? d.pointer}</span>
              {d.hint ? <span className="diag-hint">{d.hint}</span> : null}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
});
