//! What the Servers panel's settings forms share ("Model for sampling",
//! `SamplingSettings.tsx`; "Telemetry", `TelemetrySettings.tsx`): the form scrolls into
//! view when it opens; Save shows the form's own problems or writes and reports; Remove
//! asks first; and the footer — the buttons above the problems, which appear below them,
//! so nothing moves under the pointer. Test hooks, with each form's prefix:
//! `{prefix}-remove`, `{prefix}-cancel`, `{prefix}-save`, `{prefix}-error` (one per
//! problem, `data-field`; the backend's refusal has `data-field=""`).

import { useEffect, useRef, useState } from 'react';
import { errorMessage, report } from '../../backend';
import { ask } from '../files/ask';

export type Problems<F extends string> = Partial<Record<F, string>>;

export function useSettingsEditor<F extends string>(onDone: () => void) {
  const formBox = useRef<HTMLFormElement>(null);
  // Opened below the list: bring it into view (once, when it opens).
  useEffect(() => {
    formBox.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);
  const [problems, setProblems] = useState<Problems<F>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  /** Runs `write`, reporting the line it resolves to at `level`; its failure is shown. */
  const writing = async (level: 'success' | 'info', write: () => Promise<string>) => {
    setBusy(true);
    try {
      report(level, await write());
      onDone();
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };

  return {
    formBox,
    problems,
    error,
    busy,
    /** The form's own problems, field by field; nothing is sent. */
    showProblems(found: Problems<F>) {
      setProblems(found);
      setError(null);
    },
    /** Saves: `write` sends the checked form and resolves to the line to report. */
    save(write: () => Promise<string>) {
      setProblems({});
      setError(null);
      return writing('success', write);
    },
    /** Asks `title` / `message` (a destructive Remove), then `write`s the removal. */
    async remove(title: string, message: string, write: () => Promise<string>) {
      if (!(await ask({ title, message, confirm: 'Remove', danger: true }))) return;
      await writing('info', write);
    },
  };
}

export function EditorFooter<F extends string>({
  prefix,
  labels,
  removeLabel,
  configured,
  busy,
  problems,
  error,
  onRemove,
  onCancel,
}: {
  prefix: string;
  labels: Record<F, string>;
  removeLabel: string;
  /** Whether there is something to remove. */
  configured: boolean;
  busy: boolean;
  problems: Problems<F>;
  error: string | null;
  onRemove: () => void;
  onCancel: () => void;
}) {
  const listed = (Object.keys(problems) as F[]).filter((k) => problems[k]);
  return (
    <>
      <div className="form-buttons">
        {configured ? (
          <button type="button" className="danger-text sampling-remove" data-testid={`${prefix}-remove`} onClick={onRemove} disabled={busy}>
            {removeLabel}
          </button>
        ) : null}
        <button type="button" data-testid={`${prefix}-cancel`} onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid={`${prefix}-save`} disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
      </div>
      {listed.length > 0 ? (
        <ul className="sampling-problems" role="alert">
          {listed.map((k) => (
            <li key={k} className="inline-error" data-testid={`${prefix}-error`} data-field={k}>
              <b>{labels[k]}:</b> {problems[k]}
            </li>
          ))}
        </ul>
      ) : null}
      {error ? (
        <p className="inline-error" role="alert" data-testid={`${prefix}-error`} data-field="">
          {error}
        </p>
      ) : null}
    </>
  );
}
