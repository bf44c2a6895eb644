//! The bottom panel's Tests tab: the blueprint's tests (saved from runs with "Save as
//! test" in the Run tab), **Run all**, and each test's result — passed, or failed with
//! the reason (`mcpflow test`'s words: the status and errors, the output expected and
//! got, the assertion that broke, the request the cassette has no answer for).
//!
//! Test hooks: `tests-panel`, `tests-run-all`, `tests-folder`, `test-row` (`data-name`,
//! `data-result`: `passed` | `failed` | `not-run`), `test-failure`, `tests-error`.

import { useEffect } from 'react';
import { inTauri } from '../../backend';
import { docStore, useDoc } from '../../doc/store';
import { refreshTests, runAllTests, useTests } from './store';
import './tests.css';

export function TestsPanel() {
  const id = useDoc((s) => s.doc.id);
  const of = useTests((s) => s.of);
  const tests = useTests((s) => s.tests);
  const folder = useTests((s) => s.folder);
  const running = useTests((s) => s.running);
  const error = useTests((s) => s.error);
  useEffect(() => {
    if (of !== id) void refreshTests(id);
  }, [id, of]);
  const shown = of === id ? tests : [];
  const passed = shown.filter((t) => t.passed === true).length;
  const failed = shown.filter((t) => t.passed === false).length;
  return (
    <section className="tests-panel" data-testid="tests-panel" aria-label="Tests">
      <div className="history-head">
        <span>
          Tests of {id}
          {passed + failed > 0 ? ` · ${passed} passed, ${failed} failed` : ''}
        </span>
        <span className="tests-actions">
          <button
            type="button"
            data-testid="tests-run-all"
            disabled={!inTauri() || running || shown.length === 0}
            title="Replay every test over its recorded calls, with the blueprint on the canvas (no server starts)"
            onClick={() => void runAllTests(docStore.getState().doc)}
          >
            {running ? 'Running…' : 'Run all'}
          </button>
          <button type="button" disabled={running} onClick={() => void refreshTests(id)}>
            Refresh
          </button>
        </span>
      </div>
      {error && (
        <p className="tests-error" data-testid="tests-error">
          {error}
        </p>
      )}
      {shown.length === 0 ? (
        <p className="run-note">
          No tests yet. Run the blueprint, then <b>Save as test</b> in the Run tab: the run’s calls are kept, and the test
          replays them with no server, expecting the same result.
        </p>
      ) : (
        <table className="history-table tests-table">
          <thead>
            <tr>
              <th>result</th>
              <th>test</th>
              <th>why</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((t) => {
              const result = t.passed === true ? 'passed' : t.passed === false ? 'failed' : 'not-run';
              return (
                <tr key={t.name} className={`test-row is-${result}`} data-testid="test-row" data-name={t.name} data-result={result} title={t.file}>
                  <td className={`test-result is-${result}`}>{result === 'passed' ? '✓ passed' : result === 'failed' ? '✕ failed' : '—'}</td>
                  <td>{t.name}</td>
                  <td>
                    {t.failure ? (
                      <span className="test-failure" data-testid="test-failure">
                        {t.failure}
                      </span>
                    ) : t.status ? (
                      `replayed: ${t.status}`
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {folder && (
        <p className="run-note tests-folder" data-testid="tests-folder">
          In <code>{folder}</code>; from a terminal: <code>mcpflow test {folder}/*.test.json</code>
        </p>
      )}
    </section>
  );
}
