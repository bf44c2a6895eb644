//! The diagnostics list (bottom panel): one row per diagnostic; a click selects the
//! step and the field it is about. A new, empty blueprint's "no steps" is drawn as a
//! neutral hint, not an error. A diagnostic about another step's output (a template
//! reading a field the producing step's tool does not give) names that step too.
//! Test hooks: `diagnostics` on the list, `diagnostic` on each row (`data-level`: error,
//! warning or hint; `data-step`, `data-producer`), `diag-producer`.

import { memo } from 'react';
import { docStore, useDoc } from '../doc/store';
import { isEmptyDocHint } from './hints';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const DiagnosticsList = memo(function DiagnosticsList() {
  const diagnostics = useDoc((s) => s.diagnostics);
  const doc = useDoc((s) => s.doc);
  const rows = diagnostics.map((d) => ({ d, level: isEmptyDocHint(doc, d) ? ('hint' as const) : d.level }));
  const errors = rows.filter((r) => r.level === 'error').length;
  const warnings = rows.filter((r) => r.level === 'warning').length;
  const problems = errors + warnings;
  return (
    <section className="diagnostics" data-testid="diagnostics" aria-label="Diagnostics">
      <header className="panel-head">
        <span>Problems</span>
        <span className="diag-summary">{problems === 0 ? 'none' : `${plural(errors, 'error')}, ${plural(warnings, 'warning')}`}</span>
      </header>
      <ul className="diag-rows">
        {rows.map(({ d, level }, i) => (
          <li key={i}>
            <button
              type="button"
              className={`diag-row diag-${level}`}
              data-testid="diagnostic"
              data-code={d.code}
              data-level={level}
              data-step={d.step ?? ''}
              data-producer={d.producer ?? ''}
              onClick={() => docStore.getState().selectDiagnostic(d)}
              title={d.hint ?? undefined}
            >
              <span className="diag-level">{level === 'error' ? '✕' : level === 'warning' ? '!' : 'i'}</span>
              {level === 'hint' ? (
                <span className="diag-message">No steps yet: drag a tool from the palette, or double-click the canvas to add a step.</span>
              ) : (
                <>
                  <code className="diag-code">{d.code}</code>
                  <span className="diag-message">{d.message}</span>
                  <span className="diag-where">
                    {d.step ?? d.pointer}
                    {d.producer && d.producer !== d.step ? (
                      <span className="diag-producer" data-testid="diag-producer" title={`The output of step ${d.producer} is read here`}>
                        {' '}
                        ← {d.producer}
                      </span>
                    ) : null}
                  </span>
                  {d.hint ? <span className="diag-hint">{d.hint}</span> : null}
                </>
              )}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
});
