//! The inspector's run section for the selected step, while a run is shown: its state,
//! attempts and timings, resolved arguments, output (with its size), error and the raw
//! MCP result; for steps inside loops, which iteration is shown (the loop's grid picks
//! one). On a finished run, "Run this step" and "Run from here" run it again with the
//! other steps' outputs pinned from that run.
//!
//! States that tell the truth: "not run" for a step that never started before the run
//! ended, "pinned" (with the run it came from) for a re-run's kept output. An argument
//! error says first which argument (`/a: expected number, got object`, see
//! `run/argerror.ts`), marks that field in the form below, and keeps the error's own
//! text under "server said".
//!
//! Test hooks: `step-run` (`data-state`, `data-shown`), `step-run-args`,
//! `step-run-output`, `step-run-error`, `step-run-arg-error` (`data-pointer`),
//! `step-run-server-said`, `step-run-pinned`, `step-run-raw`, `rerun-step`, `rerun-from`.

import { useMemo } from 'react';
import { docStore, useDoc } from '../../doc/store';
import { findStep, locateStep } from '../../doc/query';
import type { Json } from '../../doc/types';
import { instanceAt, isFinished, pathKey, runStore, shownState, STATE_LABELS, useRunStore, type StepFields } from '../../run';
import { argumentProblem, type ArgumentProblem } from '../../run/argerror';
import { formatMs } from '../../canvas/nodes/run';
import { findTool, inputSchemaOf, useOffers } from '../inspector/offers';
import { JsonView } from './JsonView';
import { openRun, startRun, useSession } from './session';
import { PausePreview } from './PausePreview';

/** The step instance the run section shows (the picked iteration, else the step's latest). */
function useShownFields(id: string): StepFields | undefined {
  const view = useRunStore((s) => (s.mode === 'idle' ? null : s.view));
  const picked = useRunStore((s) => s.instancePath);
  if (!view) return undefined;
  const node = view.nodes[id];
  if (!node) return undefined;
  return (node.instances !== null && picked ? instanceAt(view, id, picked) : undefined) ?? node;
}

/** The argument the shown run error of tool step `id` is about, if any. */
export function useArgumentProblem(id: string): ArgumentProblem | null {
  const f = useShownFields(id);
  const offers = useOffers();
  const step = useDoc((s) => findStep(s.doc, id));
  const tool = step?.kind === 'tool' ? findTool(offers, step.server, step.tool) : undefined;
  const schema = inputSchemaOf(tool);
  const error = f?.state === 'failed' ? f.error : null;
  const args = f?.args as Json | undefined;
  return useMemo(() => argumentProblem(error, args, schema), [error, args, schema]);
}

function ErrorBox({ id, f, problem }: { id: string; f: StepFields; problem: ArgumentProblem | null }) {
  if (!f.error) return null;
  if (!problem) {
    return (
      <div className="step-run-error" data-testid="step-run-error">
        <code>{f.error.code}</code> {f.error.message}
      </div>
    );
  }
  return (
    <div className="step-run-error has-arg" data-testid="step-run-error">
      <div className="step-run-arg-error" data-testid="step-run-arg-error" data-pointer={problem.pointer}>
        <code>{f.error.code}</code> argument <code className="arg-pointer">{problem.pointer}</code>: {problem.message}
      </div>
      <p className="step-run-arg-hint">
        The field is marked in the form below: fix the value (or its template) and run again.{' '}
        <button
          type="button"
          className="link"
          data-testid="step-run-arg-field"
          onClick={() => docStore.getState().select([id], { field: `/args${problem.pointer}`, reveal: false })}
        >
          Show the field
        </button>
      </p>
      {problem.server && (
        <details className="step-run-server-said" data-testid="step-run-server-said">
          <summary>server said</summary>
          <pre>{problem.server}</pre>
        </details>
      )}
    </div>
  );
}

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
  const problem = useArgumentProblem(id);
  if (mode === 'idle') return null;
  const node = view.nodes[id];
  if (!node) return null;
  const inside = node.instances !== null;
  const path = inside && picked ? picked : [];
  const f = (inside && picked ? instanceAt(view, id, picked) : undefined) ?? node;
  const finished = isFinished(view) && !active;
  const shown = shownState(view, id, f);
  return (
    <section className="step-run" data-testid="step-run" data-state={f.state} data-shown={shown}>
      <header className="step-run-head">
        <span className={`run-chip run-chip-${f.state} run-chip-shown-${shown}`}>{STATE_LABELS[shown]}</span>
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
      {shown === 'pinned' ? (
        <p className="step-run-pinned" data-testid="step-run-pinned">
          Not run again: its output is the one from{' '}
          {view.pinnedFrom ? (
            <button type="button" className="link" disabled={active !== null} title="Open that run" onClick={() => void openRun(view.pinnedFrom!)}>
              run {view.pinnedFrom.slice(0, 8)}
            </button>
          ) : (
            'the earlier run'
          )}
          .
        </p>
      ) : shown === 'not-run' ? (
        <p className="step-run-note">The run ended before this step started.</p>
      ) : (
        <Timing f={f} />
      )}
      {view.pause?.step === id && view.status === 'paused' && <PausePreview id={id} />}
      {f.retry && f.state === 'retrying' && (
        <p className="step-run-retry">
          attempt {f.retry.attempt} in {formatMs(f.retry.delayMs)} after <code>{f.retry.error.code}</code>: {f.retry.error.message}
        </p>
      )}
      <ErrorBox id={id} f={f} problem={problem} />
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
