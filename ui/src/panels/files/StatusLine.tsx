//! The status line (`data-testid="status"`) and the interrupted-runs notice. Errors
//! and warnings stay until the next message; the others fade after a while.

import { memo, useEffect, useState } from 'react';
import { clearStatus, statusStore, useStatus } from '../../backend';

const FADE_MS = 10_000;

export const StatusLine = memo(function StatusLine() {
  const message = useStatus((s) => s.message);
  const level = useStatus((s) => s.level);
  const seq = useStatus((s) => s.seq);
  useEffect(() => {
    if (!message || level === 'error' || level === 'warning') return;
    const t = setTimeout(() => {
      if (statusStore.getState().seq === seq) clearStatus();
    }, FADE_MS);
    return () => clearTimeout(t);
  }, [message, level, seq]);
  return (
    <span
      className={`status-line status-${level}`}
      data-testid="status"
      data-level={message ? level : undefined}
      role="status"
      aria-live="polite"
      title={message ?? undefined}
    >
      {message ?? ''}
      {message && (level === 'error' || level === 'warning') ? (
        <button type="button" className="status-dismiss" aria-label="Dismiss" onClick={clearStatus}>
          ×
        </button>
      ) : null}
    </span>
  );
});

export const InterruptedNotice = memo(function InterruptedNotice() {
  const interrupted = useStatus((s) => s.interrupted);
  const [hidden, setHidden] = useState(false);
  if (hidden || interrupted.length === 0) return null;
  const n = interrupted.length;
  return (
    <span
      className="interrupted-notice"
      data-testid="interrupted-notice"
      title={`Runs a previous session left running, now marked interrupted:\n${interrupted.join('\n')}`}
    >
      {n} interrupted run{n === 1 ? '' : 's'}
      <button type="button" className="status-dismiss" aria-label="Dismiss" onClick={() => setHidden(true)}>
        ×
      </button>
    </span>
  );
});
