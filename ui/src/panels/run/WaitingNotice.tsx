//! The notice of the runs waiting for a person that the canvas does not show — after a
//! restart, the runs an earlier session left waiting: "2 runs are waiting for you", then
//! one line per run (its blueprint, what it asks, since when), three at most. A click on a
//! line opens that run's blueprint and the run, its question ready in the inspector
//! (`openWaitingRun`). Dismissed, it stays away until another run waits.
//! Test hooks: `waiting-notice` (`data-count`), `waiting-notice-run` (`data-run`).

import { memo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { WaitingRunInfo } from '../../backend';
import { useRunStore } from '../../run';
import { useSession } from './session';
import { openWaitingRun } from './waiting';
import './questions.css';

const SHOWN = 3;

function since(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : d.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });
}

const Line = memo(function Line({ w }: { w: WaitingRunInfo }) {
  const q = w.questions[0];
  const more = w.questions.length - 1;
  return (
    <li>
      <button
        type="button"
        className="waiting-notice-run"
        data-testid="waiting-notice-run"
        data-run={w.run.id}
        title={`Open run ${w.run.id} of ${w.run.blueprint}: its question is in the inspector`}
        onClick={() => void openWaitingRun(w)}
      >
        <span className="waiting-notice-what">
          <code>{w.run.blueprint}</code> · since {since(w.run.started_at)}
        </span>
        {q ? (
          <span className="waiting-notice-question">
            {q.message || `step ${q.step} asks`}
            {more > 0 ? ` (+${more} more)` : ''}
          </span>
        ) : null}
      </button>
    </li>
  );
});

export const WaitingNotice = memo(function WaitingNotice() {
  // A run the canvas shows live has its own notifications (QuestionToasts).
  const shown = useRunStore((s) => (s.mode === 'live' ? s.runId : null));
  const runs = useSession(useShallow((s) => s.waiting.filter((w) => w.run.id !== shown)));
  const key = runs.map((w) => w.run.id).join(' ');
  const [dismissed, setDismissed] = useState<string | null>(null);
  if (runs.length === 0 || dismissed === key) return null;
  const n = runs.length;
  return (
    <div className="toast waiting-notice" role="status" data-testid="waiting-notice" data-count={n}>
      <div className="waiting-notice-head">
        <span className="question-dot" aria-hidden="true" />
        <span className="toast-text">{n === 1 ? '1 run is waiting for you' : `${n} runs are waiting for you`}</span>
        <button type="button" className="status-dismiss" aria-label="Dismiss" title="Dismiss (History still shows them)" onClick={() => setDismissed(key)}>
          ×
        </button>
      </div>
      <ul className="waiting-notice-runs">
        {runs.slice(0, SHOWN).map((w) => (
          <Line key={w.run.id} w={w} />
        ))}
      </ul>
      {n > SHOWN ? <span className="question-toast-hint">and {n - SHOWN} more (see History)</span> : null}
      <span className="question-toast-hint">Open one to answer it: the run goes on from where it stopped.</span>
    </div>
  );
});
