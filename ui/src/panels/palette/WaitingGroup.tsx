//! The palette's one entry for every server waiting for approval that was never listed
//! (so its tools are not known yet, as its line under the header says): a header with the
//! count that expands to one line
//! per server — its name, the command it would start
//! (one line under it, long paths shortened to their last two parts and cut with an
//! ellipsis, whole on hover) and a Review… button that opens the
//! consent prompt with the exact command. Nothing starts from here without consent.

import { memo, useState } from 'react';
import { requestConsent } from '../servers/store';
import { shortCommand, waitingTitle, type Waiting } from './waiting';
import './waiting.css';

export const WaitingGroup = memo(function WaitingGroup({ waiting }: { waiting: Waiting[] }) {
  const [open, setOpen] = useState(false);
  if (waiting.length === 0) return null;
  return (
    <section className="palette-section palette-waiting" aria-label="Servers waiting for approval" data-testid="palette-waiting">
      <button
        type="button"
        className="palette-waiting-toggle"
        aria-expanded={open}
        data-testid="palette-waiting-toggle"
        onClick={() => setOpen((o) => !o)}
        title={open ? 'Hide the servers' : 'Show the servers and what each would start'}
      >
        <span className="palette-waiting-caret" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        <span className="palette-waiting-title">{waitingTitle(waiting.length)}</span>
      </button>
      <p className="muted palette-waiting-hint" data-testid="palette-waiting-hint">
        Not listed yet — approve to see their tools.
      </p>
      {open ? (
        <ul className="palette-waiting-list">
          {waiting.map((w) => (
            <li key={w.server} className="palette-waiting-row" data-testid={`palette-waiting-${w.server}`}>
              <span className="palette-waiting-name" title={`${w.server}: not listed yet — Approve to see its tools`}>
                {w.server}
              </span>
              <code className="palette-waiting-command" title={w.command}>
                {shortCommand(w.command)}
              </code>
              <button
                type="button"
                data-testid={`approve-${w.server}`}
                onClick={() => void requestConsent(w.server)}
                title={`Review what ${w.server} starts, and approve it`}
              >
                Approve…
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
});
