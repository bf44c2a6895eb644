//! Over the top-right corner of the canvas: the studio's connection to the mcpflow service
//! (`ServiceIndicator`, always there, a fixed size, at the top), and under it, drawn as
//! toasts, the status (`data-testid="status"`), the notice that the open blueprint was
//! saved elsewhere (`ChangedNotice`), the interrupted-runs notice, the runs waiting for
//! you (`WaitingNotice`) and the questions the run shown waits on (`QuestionToasts`).
//! Nothing in the toolbar moves when a message comes or goes, and the whole text is shown
//! (wrapped, never cut). Errors and warnings stay until dismissed or replaced; the others
//! fade after a while, or as soon as the person goes on working (a press anywhere but on
//! the toast), so an "approved …" never lies over the card being worked on.

import { memo, useEffect, useState } from 'react';
import { ServiceIndicator } from '../../shared/ServiceIndicator';
import { clearStatus, statusStore, useStatus } from '../../backend';
import { QuestionToasts } from '../run/QuestionToasts';
import { ChangedNotice } from './ChangedNotice';
import { WaitingNotice } from '../run/WaitingNotice';

export const FADE_MS = 10_000;

export const StatusLine = memo(function StatusLine() {
  const message = useStatus((s) => s.message);
  const level = useStatus((s) => s.level);
  const seq = useStatus((s) => s.seq);
  useEffect(() => {
    if (!message || level === 'error' || level === 'warning') return;
    const t = setTimeout(() => {
      if (statusStore.getState().seq === seq) clearStatus();
    }, FADE_MS);
    // The press that caused the message is over by now: the next one elsewhere ends it.
    const onPress = (e: PointerEvent) => {
      if (e.target instanceof Element && e.target.closest('[data-testid="status"]')) return;
      if (statusStore.getState().seq === seq) clearStatus();
    };
    document.addEventListener('pointerdown', onPress, true);
    return () => {
      clearTimeout(t);
      document.removeEventListener('pointerdown', onPress, true);
    };
  }, [message, level, seq]);
  const sticky = level === 'error' || level === 'warning';
  return (
    <div
      className={`status-line status-${level}${message ? ' toast' : ''}`}
      data-testid="status"
      data-level={message ? level : undefined}
      role={sticky ? 'alert' : 'status'}
      aria-live={sticky ? 'assertive' : 'polite'}
    >
      {message ? <span className="toast-text">{message}</span> : null}
      {message ? (
        <button type="button" className="status-dismiss" data-testid="status-dismiss" aria-label="Dismiss" title="Dismiss" onClick={clearStatus}>
          ×
        </button>
      ) : null}
    </div>
  );
});

export const InterruptedNotice = memo(function InterruptedNotice() {
  const interrupted = useStatus((s) => s.interrupted);
  const [hidden, setHidden] = useState(false);
  if (hidden || interrupted.length === 0) return null;
  const n = interrupted.length;
  return (
    <div
      className="interrupted-notice toast status-warning"
      data-testid="interrupted-notice"
      title={`Runs a previous session left running, now marked interrupted:\n${interrupted.join('\n')}`}
    >
      <span className="toast-text">
        {n} interrupted run{n === 1 ? '' : 's'}: the previous session closed while {n === 1 ? 'it was' : 'they were'} running (see History).
      </span>
      <button type="button" className="status-dismiss" aria-label="Dismiss" title="Dismiss" onClick={() => setHidden(true)}>
        ×
      </button>
    </div>
  );
});

/** The toasts' place over the canvas, under the service indicator. */
export function Toasts() {
  return (
    <div className="toasts" aria-label="Messages">
      <ServiceIndicator />
      <ChangedNotice />
      <InterruptedNotice />
      <WaitingNotice />
      <QuestionToasts />
      <StatusLine />
    </div>
  );
}
