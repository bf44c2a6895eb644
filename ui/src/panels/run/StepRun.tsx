//! The inspector's run section for the selected step, while a run is shown: its state,
//! attempts and timings, resolved arguments, output (with its size), error and the raw
//! MCP result; for steps inside loops, which iteration is shown (the loop's grid picks
//! one). On a finished run, "Run this step" and "Run from here" run it again with the
//! other steps' outputs pinned from that run.
//!
//! Test hooks: `step-run` (`data-state`), `step-run-args`, `step-run-output`,
//! `step-run-error`, `step-run-raw`, `rerun-step`, `rerun-from`.

import { useDoc } from '../../doc/store';
import { locateStep } from '../../doc/query';
import { instanceAt, isFinished, pathKey, runStore, useRunStore, type StepFields } from '../../run';
import { formatMs } from '../../canvas/nodes/run';
import { JsonView } from './JsonView';
import { startRun, useSession } from './session';

function Timing({ f }: { f: StepFields }) {
  const parts = [
    f.attempt > 0 ? `attempt${f.attempt === 1 ? '' : 's'}: ${f.attempt}` : null,
    f.startedAtMs !== null ? `started at ${formatMs(f.startedAtMs)}` : null,
    f.durationMs !== null ? `took ${formatMs(f.durationMs)}` : null,
    f.recoveredBy ? `output from fallback ${f.recoveredBy}` : null,
  ].filter(Boolean);
  return parts.length ? <p className="step-run-timing">{parts.join(' · ')}</p> : null;
}

export function StepRun({ id }: { id: string }) {
  const mode = useRunStore((s) => s.mode);
  const view = useRunStore((s) => s.view);
  const picked = useRunStore((s) => s.instancePath);
  const runId = useRunStore((s) => s.runId);
  const active = useSession((s) => s.active);
  const topLevel = useDoc((s) => locateStep(s.doc, id)?.container === null);
  if (mode === 'idle') return null;
  const node = view.nodes[id];
  if (!node) return null;
  const inside = node.instances !== null;
  const path = inside && picked ? picked : [];
  const f = (inside && picked ? instanceAt(view, id, picked) : undefined) ?? node;
  const finished = isFinished(view) && !active;
  return (
    <section className="step-run" data-testid="step-run" data-state={f.state}>
      <header className="step-run-head">
        <span className={`run-chip run-chip-${f.state}`}>{f.state}</span>
        {inside && (
          <span className="step-run-instance">
            {picked ? `iteration ${pathKey(path)}` : `latest instance${node.latest ? ` (${node.latest})` : ''}`}
            {picked && (
              <button type="button" onClick={() => runStore.getState().selectInstance(null)}>
                latest
              </button>
            )}
          </span>
        )}
      </header>
      <Timing f={f} />
      {f.retry && f.state === 'retrying' && (
        <p className="step-run-retry">
          attempt {f.retry.attempt} in {formatMs(f.retry.delayMs)} after <code>{f.retry.error.code}</code>: {f.retry.error.message}
        </p>
      )}
      {f.error && (
        <div className="step-run-error" data-testid="step-run-error">
          <code>{f.error.code}</code> {f.error.message}
        </div>
      )}
      {f.args !== undefined && <JsonView value={f.args} title="resolved arguments" testId="step-run-args" />}
      {f.output !== undefined && <JsonView value={f.output} title="output" testId="step-run-output" />}
      {f.raw !== undefined && (
        <details className="step-run-raw" data-testid="step-run-raw">
          <summary>raw MCP result</summary>
          <JsonView value={f.raw} />
        </details>
      )}
      {finished && runId && topLevel && (
        <div className="insp-actions">
          <button
            type="button"
            data-testid="rerun-step"
            title="Run only this step again; the steps before it give their outputs from this run"
            onClick={() => void startRun({ debug: false, rerun: { runId, step: id, mode: 'step' } })}
          >
            Run this step
          </button>
          <button
            type="button"
            data-testid="rerun-from"
            title="Run this step and everything after it again; the others give their outputs from this run"
            onClick={() => void startRun({ debug: false, rerun: { runId, step: id, mode: 'from_here' } })}
          >
            Run from here
          </button>
        </div>
      )}
    </section>
  );
}
