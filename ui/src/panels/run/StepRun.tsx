//! The inspector's run section for the selected step, while a run is shown: its state,
//! attempts and timings, resolved arguments, output (with its size), error and the raw
//! MCP result; for steps inside loops, which iteration is shown (the loop's grid picks
//! one). On a finished run, "Run this step" and "Run from here" run it again with the
//! other steps' outputs pinned from that run.
//!
//! States that tell the truth: "not run" for a step that never started before the run
//! ended, "pinned" (with the run it came from) for a re-run's kept output, "disabled"
//! for a step switched off in the document. An argument error (`ARGS_INVALID`, see
//! `run/argerror.ts`) says first which arguments, one line each (`/a: expected number,
//! got object`), then our sentence; those fields are marked in the form below; what the
//! server itself said (the error's `detail`) is folded under "server said".
//!
//! Test hooks: `step-run` (`data-state`, `data-shown`), `step-run-args`,
//! `step-run-output`, `step-run-error` (`data-code`), `step-run-arg-error` (one per
//! argument, `data-pointer`), `step-run-error-why`, `step-run-server-said`,
//! `step-run-disabled`, `step-run-pinned`, `step-run-raw`, `rerun-step`, `rerun-from`,
//! `step-run-answer` (`data-action`), `step-run-samples` (the instance's requests for the
//! model, `Samples.tsx`); a question waiting here is a `QuestionForm` (`question`).

import { useMemo } from 'react';
import { docStore, useDoc } from '../../doc/store';
import { findStep, locateStep } from '../../doc/query';
import type { Json } from '../../doc/types';
import { instanceAt, isFinished, pathKey, runStore, shownState, STATE_LABELS, useRunStore, type StepFields } from '../../run';
import { argumentProblem, type ArgumentProblem } from '../../run/argerror';
import type { StepError } from '../../run/events';
import { formatMs } from '../../shared/duration';
import { findTool, inputSchemaOf, useOffers } from '../inspector/offers';
import { JsonView } from './JsonView';
import { openRun, startRun, useSession } from './session';
import { PausePreview } from './PausePreview';
import { QuestionForm } from './QuestionForm';
import { SampleList } from './Samples';
import { AUTH_REQUIRED, authServer, RunSignIn } from '../servers';

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

/** Our sentence under the arguments named: why they matter, as a sentence. */
function whyText(problem: ArgumentProblem, error: StepError): string {
  const sentence = (t: string) => {
    const s = t.trim();
    return s ? `${s[0]!.toUpperCase()}${s.slice(1)}${/[.!?)]$/.test(s) ? '' : '.'}` : '';
  };
  if (problem.source === 'message') return sentence(problem.why ?? error.message);
  // Pointed at here, against the tool's schema, after the server refused the call.
  const refused = error.code === 'ARGS_INVALID' ? sentence(error.message) : 'The server refused the call.';
  return `${refused} Checked against the tool's input schema, the arguments above do not fit it.`;
}

/** What the server itself said, folded. */
function ServerSaid({ text }: { text: string }) {
  return (
    <details className="step-run-server-said" data-testid="step-run-server-said">
      <summary>server said</summary>
      <pre>{text}</pre>
    </details>
  );
}

function ErrorBox({ id, f, problem }: { id: string; f: StepFields; problem: ArgumentProblem | null }) {
  const error = f.error;
  const step = useDoc((s) => findStep(s.doc, id));
  const doc = useDoc((s) => s.doc);
  if (!error) return null;
  if (!problem) {
    const authFor = error.code === AUTH_REQUIRED ? ((step && 'server' in step && typeof step.server === 'string' ? step.server : null) ?? authServer(error.message)) : null;
    return (
      <div className="step-run-error" data-testid="step-run-error" data-code={error.code}>
        <div className="step-run-error-head">
          <code>{error.code}</code> {error.message}
        </div>
        {authFor ? <RunSignIn server={authFor} message={error.message} doc={doc} /> : null}
        {error.detail && <ServerSaid text={error.detail} />}
      </div>
    );
  }
  const first = problem.issues.find((i) => i.pointer) ?? problem.issues[0]!;
  const several = problem.issues.length + problem.more > 1;
  return (
    <div className="step-run-error has-arg" data-testid="step-run-error" data-code={error.code}>
      <div className="step-run-error-head">
        <code>{error.code}</code> · {problem.issues.length + problem.more} argument{several ? 's' : ''}
      </div>
      <ul className="step-run-arg-list">
        {problem.issues.map((issue) => (
          <li key={issue.pointer} className="step-run-arg-error" data-testid="step-run-arg-error" data-pointer={issue.pointer}>
            argument {issue.pointer ? <code className="arg-pointer">{issue.pointer}</code> : <span className="arg-pointer-root">(as a whole)</span>}: {issue.message}
          </li>
        ))}
        {problem.more > 0 && <li className="step-run-arg-more">and {problem.more} more</li>}
      </ul>
      <p className="step-run-error-why" data-testid="step-run-error-why">
        {whyText(problem, error)}
      </p>
      {first.pointer && (
        <p className="step-run-arg-hint">
          {several ? 'The fields are' : 'The field is'} marked in the form below: fix the value (or its template) and run again.{' '}
          <button
            type="button"
            className="link"
            data-testid="step-run-arg-field"
            onClick={() => docStore.getState().select([id], { field: `/args${first.pointer}`, reveal: false })}
          >
            Show the field
          </button>
        </p>
      )}
      {problem.server && <ServerSaid text={problem.server} />}
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

const ANSWERED = { accept: 'answered', decline: 'declined', cancel: 'cancelled' } as const;

/** The answer the step got, once answered. */
function AnswerLine({ f }: { f: StepFields }) {
  const a = f.answer!;
  const content = a.content !== undefined && a.content !== null && !(typeof a.content === 'object' && !Array.isArray(a.content) && Object.keys(a.content).length === 0) ? a.content : undefined;
  return (
    <div className={`step-run-answer answer-${a.action}`} data-testid="step-run-answer" data-action={a.action}>
      <span>
        {ANSWERED[a.action]} at {formatMs(a.atMs)}
      </span>
      {content !== undefined && <JsonView value={content} title="answer" />}
    </div>
  );
}

/** The requests for the model made during this step instance's call, with their answers. */
function StepSamples({ id, pathKey: key, finished }: { id: string; pathKey: string; finished: boolean }) {
  const all = useRunStore((s) => s.view.samples);
  const mine = useMemo(() => all.filter((x) => x.step === id && pathKey(x.path) === key), [all, id, key]);
  if (mine.length === 0) return null;
  return (
    <div className="step-run-samples" data-testid="step-run-samples">
      <div className="step-run-samples-head">Requests for the model ({mine.length})</div>
      <SampleList samples={mine} finished={finished} showStep={false} />
    </div>
  );
}

export function StepRun({ id }: { id: string }) {
  const mode = useRunStore((s) => s.mode);
  const view = useRunStore((s) => s.view);
  const picked = useRunStore((s) => s.instancePath);
  const runId = useRunStore((s) => s.runId);
  const cursor = useRunStore((s) => s.cursor);
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
  // A question is answered only in the live run, at its latest event (not while scrubbing).
  const isLive = mode === 'live' && cursor === null && !isFinished(view);
  const shown = shownState(view, id, f);
  return (
    <section className="step-run" data-testid="step-run" data-state={f.state} data-shown={shown}>
      <header className="step-run-head">
        <span className={`run-chip run-chip-${f.state} run-chip-shown-${shown}`}>
          {shown === 'waiting' && f.question?.asking === 'approval' ? 'waiting for approval' : STATE_LABELS[shown]}
        </span>
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
      ) : shown === 'disabled' ? (
        <p className="step-run-note" data-testid="step-run-disabled">
          Disabled: not run. Its output is <code>null</code> and the steps after it still run.
        </p>
      ) : (
        <Timing f={f} />
      )}
      {f.question && (isLive ? <QuestionForm question={f.question} /> : <p className="step-run-note">It was waiting for an answer here: {f.question.message}</p>)}
      {f.answer && !f.question && <AnswerLine f={f} />}
      <StepSamples id={id} pathKey={inside ? (picked ? pathKey(picked) : (node.latest ?? '')) : ''} finished={isFinished(view)} />
      {view.pause?.step === id && view.status === 'paused' && <PausePreview id={id} />}
      {f.retry && f.state === 'retrying' && (
        <div className="step-run-retry">
          attempt {f.retry.attempt} in {formatMs(f.retry.delayMs)} after <code>{f.retry.error.code}</code>: {f.retry.error.message}
          {f.retry.error.detail && <ServerSaid text={f.retry.error.detail} />}
        </div>
      )}
      <ErrorBox id={id} f={f} problem={problem} />
      {f.args !== undefined && <JsonView value={f.args} title="resolved arguments" testId="step-run-args" />}
      {f.output !== undefined && <JsonView value={f.output} title="output" testId="step-run-output" step={id} />}
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
