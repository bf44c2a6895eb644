//! What a node shows of the run on the canvas (live or opened from history): its
//! state (a class on the card, `run-<shown state>`, and a status line — "not run" and
//! "disabled" greyed, a failed call's arguments named first, "asking the model…" while a
//! server's sampling request is open), the breakpoint toggle, and for loops
//! `done/total` with a grid of iterations. Test hooks: `run-<id>` on the status line
//! (`data-state`), `bp-<id>` on the breakpoint toggle (`aria-pressed`), `iters-<id>` on
//! a loop's grid and `iter-<id>-<key>` on each cell (`data-state`).

import { memo, useEffect, useMemo, useState } from 'react';
import { docStore, useDoc } from '../../doc/store';
import { runStore, shownState, useRunStore, type NodeView, type StepError } from '../../run';
import { argumentProblem, issuesText } from '../../run/argerror';
import { findStep } from '../../doc/query';
import { findTool, inputSchemaOf, useOffers } from '../../panels/inspector/offers';
import { useBreakpoints } from '../../panels/run/breakpoints';
import { syncBreakpoints } from '../../panels/run/session';
import { approve, useAnswers } from '../../panels/run/answers';
import { lastAsked } from '../../run/sampling';
import { formatMs } from '../../shared/duration';
import './run.css';

/** The step's run view, or undefined when no run is shown. */
export function useNodeRun(id: string): NodeView | undefined {
  return useRunStore((s) => (s.mode === 'idle' ? undefined : s.view.nodes[id]));
}

/** The case a switch output names (`{"case": 1}` → 1, `{"case": "default"}`), if any. */
export function caseOf(value: unknown): number | 'default' | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const c = (value as { case?: unknown }).case;
  return c === 'default' || (typeof c === 'number' && Number.isInteger(c)) ? c : null;
}

/**
 * How a switch's case rows show in the run: `taken` / `not-taken` once it finished
 * (from its output), `next` for the case it will take while paused before it (the
 * engine's preview); null when no run says.
 */
export function useSwitchCases(id: string): (key: number | 'default') => 'taken' | 'not-taken' | 'next' | null {
  const taken = useRunStore((s) => {
    if (s.mode === 'idle') return null;
    const n = s.view.nodes[id];
    return n && n.state === 'succeeded' && n.instances === null ? caseOf(n.output) : null;
  });
  const next = useRunStore((s) => {
    const p = s.view.pause;
    return s.mode !== 'idle' && s.view.status === 'paused' && p?.step === id && p.preview && 'case' in p.preview ? p.preview.case : null;
  });
  return (key) => {
    if (taken !== null) return key === taken ? 'taken' : 'not-taken';
    if (next !== null && key === next) return 'next';
    return null;
  };
}

/**
 * ` run-<state>` for the card's class list ('' when no run is shown): the state it
 * shows, so a step that never started in a finished run is `run-not-run` (greyed, not
 * the queued look) and a switched-off one `run-disabled`; a pinned step keeps
 * `run-succeeded`.
 */
export function useRunClass(id: string, node: NodeView | undefined): string {
  const shown = useRunStore((s) => (node ? shownState(s.view, id, node) : null));
  if (!node || !shown) return '';
  return ` run-${shown === 'pinned' ? node.state : shown}`;
}

/** Time since the node started running (or since `fromMs`), ticking while it runs in a live run. */
function Elapsed({ node, fromMs }: { node: NodeView; fromMs?: number }) {
  const live = useRunStore((s) => s.mode === 'live' && s.cursor === null);
  const atMs = useRunStore((s) => s.view.atMs);
  const [since] = useState(() => performance.now());
  const [, tick] = useState(0);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => tick((n) => n + 1), 200);
    return () => clearInterval(t);
  }, [live]);
  const start = fromMs ?? node.startedAtMs;
  const fromEvents = start !== null ? Math.max(0, atMs - start) : 0;
  const ms = live ? Math.max(fromEvents, performance.now() - since) : fromEvents;
  return <span className="run-elapsed">{formatMs(ms)}</span>;
}

function countsText(node: NodeView): string | null {
  const c = node.counts;
  if (!c) return null;
  const parts = [
    c.waiting ? `${c.waiting} waiting` : null,
    c.running + c.retrying ? `${c.running + c.retrying} running` : null,
    c.succeeded ? `${c.succeeded} ok` : null,
    c.failed ? `${c.failed} failed` : null,
    c.skipped ? `${c.skipped} skipped` : null,
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : null;
}

/** An error in full for a tooltip: `CODE: message`, and what the server said when the error keeps it apart. */
function errorTitle(err: StepError): string {
  return `${err.code}: ${err.message}${err.detail ? `\n\nserver said: ${err.detail}` : ''}`;
}

/** A short JSON value as code: `false`, `null`, `[]`, cut to `max` characters. */
function shortJson(value: unknown, max = 24): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A failed step's label: the arguments it is about first (`✕ /a: expected number, got
 * object (+1 more)`), an exhausted `until` loop's iterations and the condition's last
 * value (`✕ until never true · 60/60` then `· last: false`, never cut off), else the code
 * and our message; on hover the full error and what the server said.
 */
function FailedLabel({ id, node }: { id: string; node: NodeView }) {
  const offers = useOffers();
  const step = useDoc((s) => findStep(s.doc, id));
  const tool = step?.kind === 'tool' ? findTool(offers, step.server, step.tool) : undefined;
  const schema = inputSchemaOf(tool);
  const problem = useMemo(() => argumentProblem(node.error, node.args, schema), [node.error, node.args, schema]);
  const err = node.error;
  const full = err ? errorTitle(err) : undefined;
  const exhausted = err?.exhausted;
  if (exhausted) {
    return (
      <>
        <span className="run-label run-error" title={full}>
          ✕ until never true · {exhausted.iterations}/{exhausted.max_iterations}
        </span>
        <span className="run-last" data-testid={`run-last-${id}`} title={full}>
          · last: <code>{shortJson(exhausted.last)}</code>
        </span>
      </>
    );
  }
  return (
    <span className="run-label run-error" title={full}>
      ✕ {problem ? issuesText(problem, 1) : err ? `${err.code}: ${err.message}` : 'failed'}
    </span>
  );
}

/** The status line under a card: what the step is doing or did. */
export const RunStatus = memo(function RunStatus({ id, node }: { id: string; node: NodeView }) {
  const counts = countsText(node);
  // "not run" once the run is over for a step that never started; "pinned" for a re-run's kept output.
  const shown = useRunStore((s) => shownState(s.view, id, node));
  const pinnedFrom = useRunStore((s) => s.view.pinnedFrom);
  let body;
  switch (shown) {
    case 'queued':
      body = <span className="run-label">queued</span>;
      break;
    case 'not-run':
      body = (
        <span className="run-label run-not-run" title="This step never started: the run ended before it was reached">
          not run
        </span>
      );
      break;
    case 'pinned':
      body = (
        <span className="run-label run-pinned" title={`Not run again: its output is the one from run ${pinnedFrom ?? '(earlier run)'}`}>
          ◆ pinned{pinnedFrom ? ` · from run ${pinnedFrom.slice(0, 8)}` : ' · earlier output'}
        </span>
      );
      break;
    case 'running':
      body = (
        <>
          <span className="run-spinner" aria-hidden="true" />
          <span className="run-label">running</span>
          <Elapsed key={`${node.startedAtMs}`} node={node} />
        </>
      );
      break;
    case 'retrying':
      body = (
        <span className="run-label" title={node.retry ? errorTitle(node.retry.error) : undefined}>
          ↻ retrying (attempt {node.retry?.attempt ?? node.attempt + 1})
        </span>
      );
      break;
    case 'paused':
      body = <span className="run-label">❚❚ paused before start</span>;
      break;
    case 'sampling': {
      const asked = lastAsked(node.sampling?.request);
      body = (
        <>
          <span
            className="run-label run-sampling"
            title={`${node.sampling?.server ?? 'The server'} asks the model${asked ? `: “${asked}”` : ''}\n\nThe request and the answer are in the Run tab.`}
          >
            <span className="run-sampling-mark" aria-hidden="true">
              ✦
            </span>
            asking the model…
          </span>
          <Elapsed key={`s${node.sampling?.atMs}`} node={node} fromMs={node.sampling?.atMs} />
        </>
      );
      break;
    }
    case 'waiting':
      body = (
        <span className="run-label run-waiting" title={node.question ? `${node.question.message}\n\nAnswer in the inspector (select this step).` : undefined}>
          <span className="run-waiting-dot" aria-hidden="true" />
          {node.question?.asking === 'approval' ? 'waiting for approval' : 'waiting for input'}
        </span>
      );
      break;
    case 'succeeded':
      body = (
        <span className="run-label">
          ✓ {node.durationMs !== null ? formatMs(node.durationMs) : 'done'}
          {node.attempt > 1 ? ` · ${node.attempt} attempts` : ''}
          {node.recoveredBy ? ` · by ${node.recoveredBy}` : ''}
        </span>
      );
      break;
    case 'failed':
      body = <FailedLabel id={id} node={node} />;
      break;
    case 'skipped':
      body = <span className="run-label">skipped</span>;
      break;
    case 'disabled':
      body = (
        <span className="run-label run-disabled" title="Disabled: not run; its output is null and the steps after it still run">
          disabled · not run
        </span>
      );
      break;
  }
  const progress = node.progress && !node.loop && node.state === 'running' ? node.progress : null;
  return (
    <div className={`run-status run-shown-${shown}`} data-testid={`run-${id}`} data-state={node.state} data-shown={shown}>
      {body}
      {progress && (
        <span className="run-progress">
          {progress.total ? `${progress.progress}/${progress.total}` : `${progress.progress}`}
          {progress.message ? ` ${progress.message}` : ''}
        </span>
      )}
      {counts && <span className="run-counts">{counts}</span>}
    </div>
  );
});

/** The breakpoint dot on a card: set, the run pauses before this step starts. */
export const BreakpointToggle = memo(function BreakpointToggle({ id }: { id: string }) {
  const blueprint = useDoc((s) => s.doc.id);
  const on = useBreakpoints((s) => (s.byBlueprint[blueprint] ?? []).includes(id));
  return (
    <button
      type="button"
      className={`bp-toggle nodrag${on ? ' is-on' : ''}`}
      data-testid={`bp-${id}`}
      aria-pressed={on}
      title={on ? 'Breakpoint: Debug pauses before this step (click to remove)' : 'Set a breakpoint (Debug pauses before this step)'}
      onClick={(e) => {
        e.stopPropagation();
        useBreakpoints.getState().toggle(blueprint, id);
        void syncBreakpoints(blueprint);
      }}
    />
  );
});

/** Iteration keys in order: numbers for a top-level loop (`"12"`), paths when nested (`"1.12"`), each parsed once. */
function sortedKeys(iterations: Record<string, unknown> | undefined): string[] {
  if (!iterations) return [];
  const keys = Object.keys(iterations);
  if (keys.every((k) => !k.includes('.'))) return keys.sort((a, b) => Number(a) - Number(b));
  const parsed = keys.map((k) => [k, k.split('.').map(Number)] as const);
  parsed.sort(([, a], [, b]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  });
  return parsed.map(([k]) => k);
}

/** Cells drawn in a loop's grid; past this, a count of the rest. */
const GRID_MAX = 240;

/** A loop's `done/total` and its iterations, failed ones standing out; a cell opens that iteration. */
export const LoopRun = memo(function LoopRun({ id, node }: { id: string; node: NodeView }) {
  const loop = node.loop;
  const picked = useRunStore((s) => s.instancePath);
  const keys = useMemo(() => sortedKeys(loop?.iterations), [loop?.iterations]);
  if (!loop) return null;
  const shown = keys.slice(0, GRID_MAX);
  const failed = keys.filter((k) => loop.iterations[k] === 'failed').length;
  const pickedKey = picked ? picked.join('.') : null;
  return (
    <div className="loop-run">
      <span className="loop-count" data-testid={`loop-count-${id}`}>
        {loop.done}
        {loop.total !== null ? `/${loop.total}` : ''}
      </span>
      {failed > 0 && <span className="loop-failed"> · {failed} failed</span>}
      {keys.length > 0 && (
        <div className="iter-grid nodrag" data-testid={`iters-${id}`}>
          {shown.map((k) => (
            <button
              key={k}
              type="button"
              className={`iter iter-${loop.iterations[k]}${pickedKey === k ? ' is-picked' : ''}`}
              data-testid={`iter-${id}-${k}`}
              data-state={loop.iterations[k]}
              title={`iteration ${k}: ${loop.iterations[k]}`}
              onClick={(e) => {
                e.stopPropagation();
                docStore.getState().select([id]);
                runStore.getState().selectInstance(k.split('.').map(Number));
              }}
            />
          ))}
          {keys.length > shown.length && <span className="iter-more">+{keys.length - shown.length}</span>}
        </div>
      )}
    </div>
  );
});

/**
 * Under a card whose step waits for a person (live run, latest event): an approval
 * gate's Approve / Reject, or for a form "Answer…" (selects the step: the form is in the
 * inspector). Drawn below the card, out of its box: the card keeps its size, so nothing
 * on the canvas moves when it comes or goes. Test hooks: `question-bar-<id>`,
 * `node-approve-<id>`, `node-reject-<id>`, `node-answer-<id>`.
 */
export const QuestionBar = memo(function QuestionBar({ id, node }: { id: string; node: NodeView }) {
  const live = useRunStore((s) => s.mode === 'live' && s.cursor === null && s.view.envelope === null);
  const q = node.question;
  const busy = useAnswers((s) => (q ? !!s.sending[q.id] || !!s.sent[q.id] : false));
  const problem = useAnswers((s) => (q ? s.problems[q.id] : undefined));
  if (!live || !q || node.state !== 'waiting') return null;
  const stop = (e: { stopPropagation(): void }) => e.stopPropagation();
  return (
    <div className="question-bar nodrag nopan" data-testid={`question-bar-${id}`} onDoubleClick={stop} onPointerDown={stop}>
      {q.asking === 'approval' ? (
        <>
          <button
            type="button"
            className="primary"
            data-testid={`node-approve-${id}`}
            disabled={busy}
            onClick={(e) => {
              e.stopPropagation();
              void approve(q, true);
            }}
          >
            ✓ Approve
          </button>
          <button
            type="button"
            className="danger"
            data-testid={`node-reject-${id}`}
            disabled={busy}
            title="The step fails with INPUT_REJECTED"
            onClick={(e) => {
              e.stopPropagation();
              void approve(q, false);
            }}
          >
            ✕ Reject
          </button>
        </>
      ) : (
        <button
          type="button"
          data-testid={`node-answer-${id}`}
          title={q.message}
          onClick={(e) => {
            e.stopPropagation();
            docStore.getState().select([id], { reveal: true });
          }}
        >
          Answer…
        </button>
      )}
      {problem ? (
        <span className="question-bar-problem" title={problem.message}>
          {problem.code}
        </span>
      ) : null}
    </div>
  );
});
