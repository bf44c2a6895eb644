//! The bottom panel's run tabs.
//!
//! - **Run**: the inputs form (from the blueprint's `inputs` schema), the run's result,
//!   where it is paused with the step's resolved arguments, the requests servers made for
//!   the model with their answers (`Samples.tsx`), every name in scope with its value, and
//!   the log.
//! - **History**: past runs of the blueprint (status, Debug or not, active time — the
//!   time a Debug run sat paused is shown apart, from the run record's `paused_ms` —,
//!   when, and who started it: studio, CLI, schedule, or the MCP host's client name —
//!   runs started elsewhere are listed as they start; a run waiting for a person says what it waits for); opening one replays it on
//!   the canvas — one that waits opens live, its question ready in the inspector, and
//!   answering it resumes it —, and the timeline moves through its events, each
//!   labelled with its wall-clock time and what happened ("12:03:04.120 · fetch
//!   finished"), with markers for failures and pauses along the slider.
//!
//! A finished run's result has **Save as test** (`save-as-test`): the Tests tab replays it.
//!
//! Test hooks: `inputs-form`, `run-by` (who started a run shown that this window did not),
//! `run-trace-id` (the run's trace id, telemetry on; `data-trace-id`) and `run-trace-copy`, `run-result`, `run-active-time`, `pause-info`,
//! `pause-args`, `pause-preview`, `scope`, `scope-<name>`, `run-log`, `history`,
//! `history-row` (`data-run`, `data-status`, `data-debug`), `history-by`, `history-waits` (under a
//! waiting run's row: what it waits for), `resumes` / `resumed-by`, `history-duration`,
//! `timeline` (a range input over the events), `timeline-at` (`data-index`,
//! `data-count`, `data-at-ms` of the event shown), `timeline-marker`
//! (`data-kind`, `data-seq`).

import Form from '@rjsf/core/lib/components/Form.js';
import type { RJSFSchema } from '@rjsf/utils';
import { Fragment, memo, useEffect, useMemo, useState } from 'react';
import { docStore, useDoc } from '../../doc/store';
import type { Blueprint, Json } from '../../doc/types';
import { AUTH_REQUIRED, authServer, RunSignIn } from '../servers';
import { activeMs, eventLabel, runStore, scopeAt, timelineMarkers, useRunStore, type StepNames } from '../../run';
import { allStepIds, findStep } from '../../doc/query';
import { formatMs } from '../../shared/duration';
import { evalFreeValidator } from '../inspector/validator';
import { JsonView } from './JsonView';
import type { RerunOf as RerunOfDto, RunInfo } from '../../backend';
import { openRun, refreshHistory, refreshWaiting, setInputs, startRun, useSession } from './session';
import { PausePreview } from './PausePreview';
import { SamplesSection } from './Samples';
import { startedBy } from './started-by';
import { copyText } from '../../shared/copy';
import { inTauri, report } from '../../backend';
import { saveRunAsTest, useTests } from '../tests';
import './debug.css';

const EMPTY: Json = {};

function InputsForm() {
  const id = useDoc((s) => s.doc.id);
  const schema = useDoc((s) => s.doc.inputs);
  const value = useSession((s) => s.inputs[id] ?? EMPTY);
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || Object.keys(schema).length === 0) {
    return <p className="run-note">This blueprint takes no inputs.</p>;
  }
  return (
    <div className="inputs-form" data-testid="inputs-form">
      <Form
        schema={schema as RJSFSchema}
        formData={value}
        validator={evalFreeValidator}
        liveValidate={false}
        showErrorList={false}
        onChange={(e) => setInputs(id, (e.formData ?? {}) as Json)}
        uiSchema={{ 'ui:submitButtonOptions': { norender: true } }}
      />
    </div>
  );
}

/** The server a run error `AUTH_REQUIRED` is about: its step's server, else the one the message names. */
function authServerOf(doc: Blueprint, e: { step?: string | null; message: string }): string | null {
  const step = e.step ? findStep(doc, e.step) : undefined;
  if (step && 'server' in step && typeof step.server === 'string') return step.server;
  return authServer(e.message);
}

/** Starts the blueprint again (after signing in). */
function RunAgain() {
  const busy = useSession((s) => s.active !== null || s.starting);
  return (
    <button type="button" data-testid="run-again" disabled={busy} onClick={() => void startRun({ debug: false })}>
      Run again
    </button>
  );
}

/** "Save as test" under a finished run's result: its calls kept as a cassette, replayed by the Tests tab. */
function SaveAsTest({ status }: { status: string }) {
  const runId = useRunStore((s) => s.runId);
  const saving = useTests((s) => s.saving);
  const busy = useSession((s) => s.active !== null);
  if (!runId || !['succeeded', 'partial', 'failed'].includes(status)) return null;
  return (
    <button
      type="button"
      className="save-as-test"
      data-testid="save-as-test"
      disabled={saving || busy || !inTauri()}
      title="Keep this run's calls and result as a test of the blueprint (Tests tab); it replays with no server"
      onClick={() => void saveRunAsTest(docStore.getState().doc, runId)}
    >
      {saving ? 'Saving…' : 'Save as test'}
    </button>
  );
}

const Result = memo(function Result() {
  const envelope = useRunStore((s) => s.view.envelope);
  const doc = useDoc((s) => s.doc);
  const view = useRunStore((s) => s.view);
  if (!envelope) return null;
  const sum = envelope.summary;
  const time = activeMs(view);
  // Top-level steps switched off (the summary counts them among the skipped).
  const disabled = Object.values(view.nodes).filter((n) => n.instances === null && n.skipReason === 'disabled').length;
  return (
    <div className={`run-result run-result-${envelope.status}`} data-testid="run-result" data-status={envelope.status}>
      <strong>{envelope.status}</strong> in{' '}
      <span data-testid="run-active-time" title={time.pausedMs > 0 ? `${formatMs(time.totalMs)} in all, of which ${formatMs(time.pausedMs)} paused` : undefined}>
        {formatMs(time.activeMs)}
        {time.pausedMs > 0 ? ` (+${formatMs(time.pausedMs)} paused)` : ''}
      </span>{' '}
      · {sum.succeeded} ok, {sum.failed} failed, {sum.skipped} skipped{disabled > 0 ? ` (${disabled} disabled)` : ''} ·{' '}
      {sum.tool_calls} tool call{sum.tool_calls === 1 ? '' : 's'} <SaveAsTest status={envelope.status} />
      {envelope.errors.length > 0 && (
        <ul className="run-errors">
          {envelope.errors.map((e, i) => (
            <li key={i}>
              <code>{e.code}</code> {e.step ? <b>{e.step}</b> : null}: {e.message}
              {e.code === AUTH_REQUIRED && authServerOf(doc, e) ? <RunSignIn server={authServerOf(doc, e)!} message={e.message} doc={doc} after={<RunAgain />} /> : null}
            </li>
          ))}
        </ul>
      )}
      <JsonView value={envelope.output} title="output" testId="run-output" />
    </div>
  );
});

/**
 * The run's OpenTelemetry trace id (telemetry on): its first 8 digits, the whole id in the
 * title, and a button that copies the whole id (to find the trace in Jaeger, Tempo…).
 * Nothing when the run has none.
 */
const RunTrace = memo(function RunTrace() {
  const traceId = useRunStore((s) => s.view.traceId);
  const [copied, setCopied] = useState(false);
  useEffect(() => setCopied(false), [traceId]);
  if (!traceId) return null;
  const copy = async () => {
    if (await copyText(traceId)) {
      setCopied(true);
    } else {
      report('error', `could not reach the clipboard; the trace id is ${traceId}`);
    }
  };
  return (
    <p className="run-trace" data-testid="run-trace-id" data-trace-id={traceId} title={`trace id ${traceId}`}>
      Trace <code>{traceId.slice(0, 8)}…</code>
      <button type="button" className="run-trace-copy" data-testid="run-trace-copy" onClick={() => void copy()} aria-label={`Copy the trace id ${traceId}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </p>
  );
});

const Pause = memo(function Pause() {
  const pause = useRunStore((s) => s.view.pause);
  const status = useRunStore((s) => s.view.status);
  if (!pause || status !== 'paused') return null;
  return (
    <div className="pause-info" data-testid="pause-info" data-step={pause.step ?? ''}>
      <div>
        ❚❚ Paused{' '}
        {pause.step ? (
          <>
            {/* A breakpoint pauses before its step; Step pauses once the step it let through has started. */}
            {pause.reason === 'stepped' ? 'after stepping into' : pause.reason === 'breakpoint' ? 'at a breakpoint before' : 'at'}{' '}
            <b>{pause.step}</b>
            {pause.path && pause.path.length ? ` (iteration ${pause.path.join('.')})` : ''}
            {pause.reason === 'stepped' ? '; Step runs the next ready step' : ''}
          </>
        ) : pause.reason === 'breakpoint' ? (
          'at a breakpoint'
        ) : (
          'on request'
        )}
      </div>
      {pause.step && <PausePreview id={pause.step} />}
      {pause.args !== undefined && <JsonView value={pause.args} title="resolved arguments" testId="pause-args" />}
    </div>
  );
});

/** Every name in scope with its value; drawn only while open (it changes with every event). */
const Scope = memo(function Scope() {
  const paused = useRunStore((s) => s.view.status === 'paused');
  const [open, setOpen] = useState(paused);
  useEffect(() => {
    if (paused) setOpen(true);
  }, [paused]);
  return (
    <details className="scope" data-testid="scope" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>Scope</summary>
      {open && <ScopeNames />}
    </details>
  );
});

function ScopeNames() {
  const view = useRunStore((s) => s.view);
  const scope = useMemo(() => scopeAt(view), [view]);
  const names = Object.keys(scope).filter((k) => k !== 'steps');
  return (
    <>
      {names.map((name) => (
        <div key={name} className="scope-entry" data-testid={`scope-${name}`}>
          <JsonView value={scope[name]} title={name} step={name} />
        </div>
      ))}
    </>
  );
}

const Log = memo(function Log() {
  const logs = useRunStore((s) => s.view.logs);
  if (logs.length === 0) return null;
  return (
    <details className="run-log" data-testid="run-log">
      <summary>Log ({logs.length})</summary>
      <ol>
        {logs.map((l) => (
          <li key={l.seq} className={`log-${l.level}`}>
            <span className="log-at">{formatMs(l.atMs)}</span> {l.step ? <b>{l.step}</b> : null} {l.message}
          </li>
        ))}
      </ol>
    </details>
  );
});

/** Who started the run shown, when something else did (an agent, the CLI, a schedule). */
function StartedBy() {
  const shown = useRunStore((s) => s.runId);
  const by = useSession((s) => (s.watching && s.watching.runId === shown ? s.watching.by : null));
  if (!by) return null;
  return (
    <p className="run-by" data-testid="run-by">
      Started by <strong>{by}</strong>, not in this window: it plays here as it runs.
    </p>
  );
}

export function RunPanel() {
  const mode = useRunStore((s) => s.mode);
  return (
    <section className="run-panel" aria-label="Run">
      <div className="run-col">
        <h3>Inputs</h3>
        <InputsForm />
      </div>
      <div className="run-col run-col-wide">
        {mode === 'idle' ? (
          <p className="run-note">Run or Debug the blueprint to see it here; breakpoints are the dots on the nodes.</p>
        ) : (
          <>
            <StartedBy />
            <Pause />
            <RunTrace />
            <Result />
            <SamplesSection />
            <Scope />
            <Log />
          </>
        )}
      </div>
    </section>
  );
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A re-run's origin in the history: the step it re-ran, and a link to the past run. */
function RerunOf({ of, runs, disabled }: { of: RerunOfDto; runs: RunInfo[]; disabled: boolean }) {
  const source = runs.find((r) => r.id === of.run);
  const what = of.mode === 'step' ? `step ${of.step}` : `from ${of.step}`;
  return (
    <span className="rerun-of" data-testid="rerun-of">
      {' '}
      · re-ran {what} of{' '}
      <button
        type="button"
        className="link"
        data-testid="rerun-source"
        disabled={disabled}
        title={source ? 'Open the run it re-ran' : `Run ${of.run} (not in this list)`}
        onClick={(e) => {
          e.stopPropagation();
          void openRun(of.run);
        }}
      >
        {source ? when(source.started_at) : of.run.slice(0, 8)}
      </button>
    </span>
  );
}

/** A resumed run's origin (a waiting run answered, or an interrupted one), or a run's resumer. */
function Resumed({ id, runs, of, disabled }: { id: string; runs: RunInfo[]; of: boolean; disabled: boolean }) {
  const other = runs.find((r) => r.id === id);
  return (
    <span className="rerun-of" data-testid={of ? 'resumes' : 'resumed-by'}>
      {' '}
      · {of ? 'resumes' : 'resumed by'}{' '}
      <button
        type="button"
        className="link"
        disabled={disabled}
        title={other ? 'Open that run' : `Run ${id} (not in this list)`}
        onClick={(e) => {
          e.stopPropagation();
          void openRun(id);
        }}
      >
        {other ? when(other.started_at) : id.slice(0, 8)}
      </button>
    </span>
  );
}

/** Under a History row of a run that waits: what it waits for, and how to answer. */
function WaitsFor({ run, disabled }: { run: RunInfo; disabled: boolean }) {
  const waiting = useSession((s) => s.waiting.find((w) => w.run.id === run.id));
  const open = useRunStore((s) => s.mode === 'live' && s.runId === run.id);
  const names = useStepNames();
  const how = open ? 'answer it in the inspector' : 'open the run to answer it';
  const q = waiting?.questions[0];
  const more = (waiting?.questions.length ?? 0) - 1;
  return (
    <tr className="history-waits" data-testid="history-waits" data-run={run.id} onClick={() => void (disabled ? undefined : openRun(run.id))}>
      <td colSpan={4}>
        {q ? (
          <>
            waits at <b>{names[q.step] ?? q.step}</b>
            {q.path.length ? ` (iteration ${q.path.join('.')})` : ''}: {q.message}
            {more > 0 ? ` (+${more} more)` : ''} — {how}
          </>
        ) : (
          `waits for an answer — ${how}`
        )}
      </td>
    </tr>
  );
}

/** The clock of the run shown: its recorded start (history), or when this window started it (live). */
function useClockStart(): number | null {
  const startedAt = useRunStore((s) => s.options.startedAt ?? null);
  const wall = useRunStore((s) => s.options.wallStartMs ?? null);
  if (startedAt) {
    const t = Date.parse(startedAt);
    if (Number.isFinite(t)) return t;
  }
  return wall;
}

/** The names of the document's steps that have one. */
function useStepNames(): StepNames {
  const doc = useDoc((s) => s.doc);
  return useMemo(() => {
    const out: Record<string, string> = {};
    for (const id of allStepIds(doc)) {
      const name = findStep(doc, id)?.name;
      if (typeof name === 'string' && name.trim()) out[id] = name.trim();
    }
    return out;
  }, [doc]);
}

function Timeline() {
  const mode = useRunStore((s) => s.mode);
  const names = useStepNames();
  const count = useRunStore((s) => s.events.length);
  const cursor = useRunStore((s) => s.cursor);
  const events = useRunStore((s) => s.events);
  const start = useClockStart();
  const markers = useMemo(() => timelineMarkers(events, start, names), [events, start, names]);
  if (mode === 'idle' || count === 0) return null;
  const index = cursor === null ? count - 1 : Math.max(0, events.findIndex((e) => e.seq === cursor));
  const seek = (i: number) => runStore.getState().seek(i >= count - 1 && mode === 'live' ? null : events[i]!.seq);
  const current = events[index];
  return (
    <div className="timeline">
      <div className="timeline-track">
        <input
          type="range"
          data-testid="timeline"
          min={0}
          max={count - 1}
          value={index}
          aria-label="Timeline: move through the run's events"
          aria-valuetext={current ? eventLabel(current, start, names) : undefined}
          onChange={(e) => seek(Number(e.target.value))}
        />
        <div className="timeline-markers" aria-hidden={markers.length === 0}>
          {markers.map((m) => (
            <button
              key={m.seq}
              type="button"
              className={`timeline-marker is-${m.kind}`}
              data-testid="timeline-marker"
              data-kind={m.kind}
              data-seq={m.seq}
              style={{ left: count > 1 ? `${(m.index / (count - 1)) * 100}%` : '0%' }}
              title={m.label}
              aria-label={`Go to: ${m.label}`}
              onClick={() => seek(m.index)}
            />
          ))}
        </div>
      </div>
      <span
        className="timeline-at"
        data-testid="timeline-at"
        data-index={index}
        data-count={count}
        data-at-ms={current?.at_ms ?? 0}
        title={`event ${index + 1} of ${count}`}
      >
        {current ? eventLabel(current, start, names) : ''}
      </span>
    </div>
  );
}

/** A history row's time: active time, with the time paused apart (Debug runs). */
function Duration({ run }: { run: RunInfo }) {
  if (run.duration_ms === null || run.duration_ms === undefined) return <>—</>;
  const paused = run.paused_ms ?? 0;
  const active = Math.max(0, run.duration_ms - paused);
  return (
    <span data-testid="history-duration" title={paused > 0 ? `${formatMs(run.duration_ms)} in all, of which ${formatMs(paused)} paused` : undefined}>
      {formatMs(active)}
      {paused > 0 ? <span className="history-paused"> +{formatMs(paused)} paused</span> : null}
    </span>
  );
}

export function HistoryPanel() {
  const id = useDoc((s) => s.doc.id);
  const history = useSession((s) => s.history);
  const historyFor = useSession((s) => s.historyFor);
  const active = useSession((s) => s.active);
  const shown = useRunStore((s) => s.runId);
  useEffect(() => {
    if (historyFor !== id) void refreshHistory();
  }, [id, historyFor]);
  // Shown: what waits for an answer now (a run may have been answered elsewhere).
  useEffect(() => {
    void refreshWaiting();
  }, []);
  const runs = historyFor === id ? history : [];
  // The run that resumed each one (a waiting run answered, an interrupted one resumed).
  const resumers = useMemo(() => new Map(runs.flatMap((r) => (r.resumed_from ? [[r.resumed_from, r.id] as const] : []))), [runs]);
  return (
    <section className="history-panel" data-testid="history" aria-label="History">
      <Timeline />
      <div className="history-head">
        <span>Runs of {id}</span>
        <button type="button" onClick={() => void refreshHistory()}>
          Refresh
        </button>
      </div>
      {runs.length === 0 ? (
        <p className="run-note">No runs recorded for this blueprint yet.</p>
      ) : (
        <table className="history-table">
          <thead>
            <tr>
              <th>status</th>
              <th>started</th>
              <th title="Active time; a Debug run's time paused is shown apart">active time</th>
              <th>by</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <Fragment key={r.id}>
              <tr
                className={`history-row${shown === r.id ? ' is-shown' : ''}${r.status === 'waiting' ? ' has-waits' : ''}`}
                data-testid="history-row"
                data-run={r.id}
                data-status={r.status}
                data-debug={r.debug ? 'true' : 'false'}
                tabIndex={0}
                onClick={() => void (active ? undefined : openRun(r.id))}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && !active) void openRun(r.id);
                }}
                title={active ? 'A run is in flight' : 'Open this run on the canvas'}
              >
                <td className={`status-${r.status}${resumers.has(r.id) ? ' is-resumed' : ''}`}>
                  {r.status === 'waiting' ? <span className="history-waiting">waiting</span> : r.status}
                  {r.debug ? (
                    <span className="history-debug" title="Started with Debug (breakpoints)">
                      debug
                    </span>
                  ) : null}
                </td>
                <td>{when(r.started_at)}</td>
                <td>
                  <Duration run={r} />
                </td>
                <td>
                  <span className="history-by" data-testid="history-by">
                    {startedBy(r)}
                  </span>
                  {r.rerun_of && <RerunOf of={r.rerun_of} runs={runs} disabled={active !== null} />}
                  {r.resumed_from && <Resumed id={r.resumed_from} runs={runs} of disabled={active !== null} />}
                  {resumers.get(r.id) && <Resumed id={resumers.get(r.id)!} runs={runs} of={false} disabled={active !== null} />}
                </td>
              </tr>
              {r.status === 'waiting' && <WaitsFor run={r} disabled={active !== null} />}
              </Fragment>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
