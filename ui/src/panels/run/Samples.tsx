//! Requests for the model (MCP sampling) in a run, readable: for each, which step and
//! server asked and when, the conversation it sent (the system prompt and the messages, cut
//! to a few lines each; the whole of each text on hover), and beside it the answer — the
//! model and its text — or why there was none (the error's code and the start of its
//! message, all of it on hover: the step's own error says it whole). The Run tab
//! lists every request of the run (`SamplesSection`); a step's run section in the inspector
//! lists its own (`SampleList`).
//!
//! Test hooks: `run-samples` (the Run tab's section), `run-sample` (one per request,
//! `data-step`, `data-server`, `data-state`: `open`, `answered` or `failed`),
//! `sample-request`, `sample-answer`, `sample-model`.

import { memo, useState } from 'react';
import { useRunStore, type SampleExchange } from '../../run';
import { cutText, modelAnswer, requestLines } from '../../run/sampling';
import { formatMs } from '../../shared/duration';
import './samples.css';

function stateOf(x: SampleExchange): 'open' | 'answered' | 'failed' {
  if (!x.answer) return 'open';
  return x.answer.error ? 'failed' : 'answered';
}

/** One request and its answer. `finished`: the run is over (an open request got no answer). */
export const SampleItem = memo(function SampleItem({ x, finished, showStep = true }: { x: SampleExchange; finished: boolean; showStep?: boolean }) {
  const state = stateOf(x);
  const lines = requestLines(x.request);
  const full = requestLines(x.request, 4096);
  const answer = x.answer?.result !== undefined ? modelAnswer(x.answer.result) : null;
  const took = x.answer ? formatMs(Math.max(0, x.answer.atMs - x.atMs)) : null;
  return (
    <li className={`sample sample-${state}`} data-testid="run-sample" data-step={x.step} data-server={x.server} data-state={state}>
      <div className="sample-head">
        {showStep ? (
          <>
            <b>{x.step}</b>
            {x.path.length ? <span className="muted"> (iteration {x.path.join('.')})</span> : null}
            {' · '}
          </>
        ) : null}
        <span>
          server <code>{x.server}</code> asked at {formatMs(x.atMs)}
        </span>
      </div>
      <div className="sample-body">
        <div className="sample-request" data-testid="sample-request">
          {lines.map((l, i) => (
            <p key={i} className={`sample-line role-${l.role}`} title={full[i]?.text !== l.text ? full[i]?.text : undefined}>
              <span className="sample-role">{l.role}</span>
              <span className="sample-text">{l.text}</span>
            </p>
          ))}
        </div>
        <div className="sample-answer" data-testid="sample-answer">
          {state === 'open' ? (
            finished ? (
              <p className="muted">No answer was recorded: the step ended first.</p>
            ) : (
              <p className="sample-waiting">
                <span className="run-sampling-mark" aria-hidden="true">
                  ✦
                </span>{' '}
                asking the model…
              </p>
            )
          ) : x.answer?.error ? (
            <p className="sample-error" title={x.answer.error.message}>
              <code>{x.answer.error.code}</code> {cutText(x.answer.error.message, 180)}
            </p>
          ) : (
            <>
              <p className="sample-line">
                <span className="sample-role" data-testid="sample-model">
                  {answer?.model ?? 'model'}
                </span>
                <span className="sample-text">{answer?.text ?? ''}</span>
              </p>
              <p className="sample-meta muted">
                answered in {took}
                {answer?.stopReason ? ` · ${answer.stopReason}` : ''}
              </p>
            </>
          )}
        </div>
      </div>
    </li>
  );
});

/** A list of requests (the inspector's, for one step instance). */
export function SampleList({ samples, finished, showStep }: { samples: readonly SampleExchange[]; finished: boolean; showStep?: boolean }) {
  return (
    <ol className="samples">
      {samples.map((x) => (
        <SampleItem key={x.seq} x={x} finished={finished} showStep={showStep} />
      ))}
    </ol>
  );
}

/** The Run tab's section: every request for the model in the run, oldest first. */
export const SamplesSection = memo(function SamplesSection() {
  const samples = useRunStore((s) => s.view.samples);
  const finished = useRunStore((s) => s.view.envelope !== null);
  const [open, setOpen] = useState(true);
  if (samples.length === 0) return null;
  const waiting = samples.filter((x) => !x.answer).length;
  return (
    <details className="run-samples" data-testid="run-samples" open={open} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>
        Model requests ({samples.length}){waiting > 0 && !finished ? ` · ${waiting} waiting for the model` : ''}
      </summary>
      {open && <SampleList samples={samples} finished={finished} />}
    </details>
  );
});
