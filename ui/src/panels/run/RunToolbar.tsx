//! Run controls in the toolbar, at fixed places: ▶ Run and ▷ Debug, then Pause (or
//! Continue, in the same place), Step and Cancel — every button always there, enabled
//! when it applies — and the run's status in a fixed-width slot (with ✕ to close a
//! finished run's view). Nothing moves when a run starts, pauses or ends. Run and Debug
//! wait, disabled, while the connection to the mcpflow service is lost. Test hooks:
//! `run-start`, `run-debug`, `run-pause`, `run-continue`, `run-step`, `run-cancel`,
//! `run-close`, `run-state` (`data-status`; `data-waiting` while a step waits for a person).

import { inTauri, reconnecting, useService } from '../../backend';
import { openQuestions, useRunStore } from '../../run';
import { closeRun, control, startRun, useSession } from './session';

export function RunToolbar() {
  const active = useSession((s) => s.active);
  const starting = useSession((s) => s.starting);
  const watching = useSession((s) => s.watching);
  const shownRun = useRunStore((s) => s.runId);
  const mode = useRunStore((s) => s.mode);
  const status = useRunStore((s) => s.live.status);
  const paused = useRunStore((s) => s.live.pause);
  // A run going on that waits for a person somewhere says so (its status stays `running`).
  const waiting = useRunStore((s) => s.mode === 'live' && s.live.status === 'running' && openQuestions(s.live).length > 0);
  const desktop = inTauri();
  const away = useService(reconnecting);
  const idle = !active && !starting;
  // Why Run and Debug cannot start, if they cannot (a run going on says so itself).
  const cannot = !desktop ? 'Runs need the desktop app' : away ? 'The mcpflow service is reconnecting: runs can start once it is back' : null;
  return (
    <div className="run-toolbar" role="group" aria-label="Run">
      <button
        type="button"
        data-testid="run-start"
        disabled={cannot !== null || !idle}
        title={cannot ?? 'Run the blueprint on the canvas (saved or not)'}
        onClick={() => void startRun({ debug: false })}
      >
        ▶ Run
      </button>
      <button
        type="button"
        data-testid="run-debug"
        disabled={cannot !== null || !idle}
        title={cannot ?? 'Debug: start paused, stop at breakpoints, step through'}
        onClick={() => void startRun({ debug: true })}
      >
        ▷ Debug
      </button>
      {active && status === 'paused' ? (
        <button type="button" className="icon" data-testid="run-continue" title="Continue to the next breakpoint or the end" aria-label="Continue" onClick={() => void control('resume')}>
          ▶
        </button>
      ) : (
        <button type="button" className="icon" data-testid="run-pause" disabled={!active} title="Pause the run" aria-label="Pause" onClick={() => void control('pause')}>
          ❚❚
        </button>
      )}
      <button
        type="button"
        className="icon"
        data-testid="run-step"
        disabled={!active || status !== 'paused'}
        title="Step: start the next ready step, then pause"
        aria-label="Step"
        onClick={() => void control('step')}
      >
        ⤼
      </button>
      <button type="button" className="icon" data-testid="run-cancel" disabled={!active} title="Cancel the run" aria-label="Cancel the run" onClick={() => void control('cancel')}>
        ■
      </button>
      <span className="run-chip-slot">
        {mode !== 'idle' && (
          <RunChip
            text={`${mode === 'history' ? 'past run · ' : ''}${waiting ? 'waiting for you' : status}${
              paused?.step ? (paused.reason === 'stepped' ? ` after ${paused.step}` : ` before ${paused.step}`) : ''
            }`}
            status={status}
            waiting={waiting}
            by={watching && watching.runId === shownRun ? watching.by : null}
          />
        )}
        {mode !== 'idle' && idle && (
          <button type="button" className="icon run-close" data-testid="run-close" title="Close the run: back to the blueprint alone" aria-label="Close the run" onClick={closeRun}>
            ✕
          </button>
        )}
      </span>
    </div>
  );
}

/** The run's state in one line; a long step id is cut, the whole text is its tooltip. */
function RunChip({ text, status, waiting, by }: { text: string; status: string; waiting: boolean; by: string | null }) {
  const whole = by ? `${text} · started by ${by}` : text;
  return (
    <span
      className={`run-chip run-chip-${waiting ? 'waiting' : status}`}
      data-testid="run-state"
      data-status={status}
      data-waiting={waiting ? 'true' : undefined}
      data-by={by ?? undefined}
      title={waiting ? `${whole}: a step waits for an answer (see the notifications)` : whole}
    >
      {text}
    </span>
  );
}
