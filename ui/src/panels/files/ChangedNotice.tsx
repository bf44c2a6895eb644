//! The notice that the blueprint on the canvas was saved elsewhere (`elsewhere.ts`): who
//! won what — the steps added, removed and changed in their revision, and the top-level
//! fields —, and Reload (take theirs) or Keep mine. It stays until one is chosen.
//! Test hooks: `changed-notice` (`data-id`, `data-rev`), `changed-step` (`data-change`:
//! added / removed / changed, `data-step`), `changed-field` (`data-field`),
//! `changed-reload`, `changed-keep`.

import { memo } from 'react';
import { useDoc } from '../../doc/store';
import { keepMine, reloadTheirs, useElsewhere, type ChangedElsewhere } from './elsewhere';
import './changed.css';

/** At most this many lines of the diff; the rest is counted. */
const SHOWN = 8;

type Line = { change: 'added' | 'removed' | 'changed'; step: string; detail: string } | { change: 'field'; field: string };

function lines(c: ChangedElsewhere): Line[] {
  return [
    ...c.diff.added.map((step) => ({ change: 'added' as const, step, detail: 'added' })),
    ...c.diff.removed.map((step) => ({ change: 'removed' as const, step, detail: 'removed' })),
    ...c.diff.changed.map(({ id, fields }) => ({ change: 'changed' as const, step: id, detail: fields.join(', ') })),
    ...c.diff.fields.map((field) => ({ change: 'field' as const, field })),
  ];
}

const MARK = { added: '+', removed: '−', changed: '~', field: '~' } as const;

export const ChangedNotice = memo(function ChangedNotice() {
  const change = useElsewhere((s) => s.change);
  const dirty = useDoc((s) => s.dirty);
  if (!change) return null;
  const all = lines(change);
  return (
    <div className="toast status-warning changed-notice" role="alert" data-testid="changed-notice" data-id={change.id} data-rev={change.rev}>
      <div className="changed-head">
        <strong>{change.name}</strong> was saved elsewhere
        <span className="changed-revs">
          revision {change.rev} · yours is {change.mine}
        </span>
      </div>
      <ul className="changed-list" aria-label="What their revision changes">
        {all.slice(0, SHOWN).map((l) =>
          l.change === 'field' ? (
            <li key={`field ${l.field}`} className="is-field" data-testid="changed-field" data-field={l.field}>
              <span className="changed-mark" aria-hidden="true">
                {MARK.field}
              </span>
              <code>{l.field}</code> <span className="changed-what">field changed</span>
            </li>
          ) : (
            <li key={`${l.change} ${l.step}`} className={`is-${l.change}`} data-testid="changed-step" data-change={l.change} data-step={l.step}>
              <span className="changed-mark" aria-hidden="true">
                {MARK[l.change]}
              </span>
              <code>{l.step}</code> <span className="changed-what">{l.change === 'changed' ? `${l.detail} changed` : l.detail}</span>
            </li>
          ),
        )}
      </ul>
      {all.length > SHOWN ? <span className="changed-hint">and {all.length - SHOWN} more</span> : null}
      <span className="changed-hint">
        {dirty ? 'Reload discards your unsaved edits.' : 'You have no unsaved edits.'} Keep mine: Save then makes revision {change.rev + 1} from yours.
      </span>
      <div className="changed-actions">
        <button type="button" className="primary" data-testid="changed-reload" title={`Show revision ${change.rev} on the canvas`} onClick={reloadTheirs}>
          Reload
        </button>
        <button type="button" data-testid="changed-keep" title="Keep the canvas as it is; Save makes the next revision" onClick={keepMine}>
          Keep mine
        </button>
      </div>
    </div>
  );
});
