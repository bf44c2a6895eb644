//! Run controls in the toolbar: Run and Debug when nothing runs; Pause or Continue,
//! Step and Cancel while a run is in flight; the run's status. Test hooks: `run-start`,
//! `run-debug`, `run-pause`, `run-continue`, `run-step`, `run-cancel`, `run-close`,
//! `run-state` (`data-status`).

import { inTauri } from '../../backend';
import { useRunStore } from '../../run';
import { closeRun, control, startRun, useSession } from './session';

export function RunToolbar() {
  const active = useSession((s) => s.active);
  const starting = useSession((s) => s.starting);
  const mode = useRunStore((s) => s.mode);
  const status = useRunStore((s) => s.live.status);
  const paused = useRunStore((s) => s.live.pause);
  const desktop = inTauri();
  const idle = !active && !starting;
  return (
    <div className="run-toolbar" role="group" aria-label="Run">
      {idle ? (
        <>
          <button
            type="button"
            data-testid="run-start"
            disabled={!desktop}
            title={desktop ? 'Run the blueprint on the canvas (saved or not)' : 'Runs need the desktop app'}
            onClick={() => void startRun({ debug: false })}
          >
            ▶ Run
          </button>
          <button
            type="button"
            data-testid="run-debug"
            disabled={!desktop}
            title="Debug: start paused, stop at breakpoints, step through"
            onClick={() => void startRun({ debug: true })}
          >
            ▷ Debug
          </button>
        </>
      ) : (
        <>
          {status === 'paused' ? (
            <button type="button" data-testid="run-continue" title="Continue to the next breakpoint or the end" onClick={() => void control('resume')}>
              ▶ Continue
            </button>
          ) : (
            <button type="button" data-testid="run-pause" disabled={!active} onClick={() => void control('pause')}>
              ❚❚ Pause
            </button>
          )}
          <button
            type="button"
            data-testid="run-step"
            disabled={!active || status !== 'paused'}
            title="Start the next ready step, then pause"
            onClick={() => void control('step')}
          >
            ⤼ Step
          </button>
          <button type="button" data-testid="run-cancel" disabled={!active} onClick={() => void control('cancel')}>
            ■ Cancel
          </button>
        </>
      )}
      {mode !== 'idle' && (
        <RunChip
          text={`${mode === 'history' ? 'past run · ' : ''}${status}${
            paused?.step ? (paused.reason === 'stepped' ? ` after ${paused.step}` : ` before ${paused.step}`) : ''
          }`}
          status={status}
        />
      )}
      {mode !== 'idle' && idle && (
        <button type="button" data-testid="run-close" title="Back to the blueprint alone" onClick={closeRun}>
          ✕
        </button>
      )}
    </div>
  );
}

/** The run's state in one line; a long step id is cut, the whole text is its tooltip. */
function RunChip({ text, status }: { text: string; status: string }) {
  return (
    <span className={`run-chip run-chip-${status}`} data-testid="run-state" data-status={status} title={text}>
      {text}
    </span>
  );
}
