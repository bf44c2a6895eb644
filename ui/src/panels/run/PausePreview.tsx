//! Paused at a breakpoint before a `transform` or `switch`: what it would give — the
//! transform's value, or the switch's case with its `when` and targets — as the engine
//! evaluated it against the run's scope (`RunPaused.preview`; nothing ran). A template
//! error shows as an error.
//!
//! Test hooks: `pause-preview` (`data-kind`: `value` | `case` | `error`; `data-case`).

import { useDoc } from '../../doc/store';
import { findStep } from '../../doc/query';
import { useRunStore } from '../../run';
import { JsonView } from './JsonView';
import './debug.css';

export function PausePreview({ id }: { id: string }) {
  const preview = useRunStore((s) => (s.view.status === 'paused' && s.view.pause?.step === id ? s.view.pause.preview : undefined));
  const step = useDoc((s) => findStep(s.doc, id));
  if (!preview) return null;
  if ('error' in preview) {
    return (
      <div className="pause-preview is-error" data-testid="pause-preview" data-kind="error">
        <div className="pause-preview-head">It would fail</div>
        <code>{preview.error.code}</code> {preview.error.message}
      </div>
    );
  }
  if ('case' in preview) {
    const cases = step?.kind === 'switch' && Array.isArray(step.cases) ? step.cases : [];
    const c = preview.case;
    const targets = c === 'default' ? (step?.kind === 'switch' ? step.default ?? [] : []) : (cases[c]?.to ?? []);
    return (
      <div className="pause-preview" data-testid="pause-preview" data-kind="case" data-case={String(c)}>
        <div className="pause-preview-head">It will take</div>
        <div className="pause-preview-case">
          <span className="case-chip">{c === 'default' ? 'default' : `case ${c}`}</span>
          {c !== 'default' && cases[c]?.when ? <code className="pause-preview-when">{cases[c]!.when}</code> : <span className="run-note">no case matched</span>}
        </div>
        <div className="pause-preview-targets">
          → {targets.length ? targets.map((t) => <code key={t}>{t}</code>) : <span className="run-note">nothing (no steps run)</span>}
        </div>
        <p className="pause-preview-note">Evaluated against the current scope; nothing has run yet.</p>
      </div>
    );
  }
  return (
    <div className="pause-preview" data-testid="pause-preview" data-kind="value">
      <div className="pause-preview-head">It will produce</div>
      <JsonView value={preview.value} title="value" testId="pause-preview-value" />
      <p className="pause-preview-note">Evaluated against the current scope; nothing has run yet.</p>
    </div>
  );
}
