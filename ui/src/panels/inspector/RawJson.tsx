//! The selected step as JSON. Apply replaces the step (`updateStep`, one undo entry)
//! only when the text parses to a step: an object with a `kind`, and an id that is
//! the same or a valid new one (a rename updates the references, as `renameStep`
//! does). Anything else shows why — parse errors with line:column — and changes
//! nothing; the text stays as typed.

import { useEffect, useRef, useState } from 'react';
import { allStepIds, checkStepId, docStore, findStep, isLoop, subtreeIds, type Blueprint, type Step } from '../../doc';
import { CodeEditor } from './CodeEditor';
import { describeParseError, formatJson, parseJson } from './json';

/** Why `value` cannot replace step `id` in `doc`, or null. */
export function rawStepProblem(doc: Blueprint, id: string, value: unknown, current: Step): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'a step is a JSON object';
  const v = value as Record<string, unknown>;
  if (typeof v.kind !== 'string' || v.kind === '') return 'a step needs a `kind`';
  if (v.id !== undefined && typeof v.id !== 'string') return '`id` must be a string';
  const newId = typeof v.id === 'string' ? v.id : id;
  // Ids of the rest of the blueprint (the step's own subtree may be rewritten).
  const outside = new Set(allStepIds(doc));
  for (const old of subtreeIds(current)) outside.delete(old);
  if (newId !== id) {
    const why = checkStepId(newId, outside);
    if (why) return why;
  }
  if (v.kind === 'loop' && Array.isArray(v.steps)) {
    const seen = new Set<string>([newId]);
    const visit = (list: unknown[]): string | null => {
      for (const s of list) {
        if (!s || typeof s !== 'object') return 'a loop body holds step objects';
        const sid = (s as { id?: unknown }).id;
        if (typeof sid !== 'string') return 'every body step needs an `id`';
        const why = checkStepId(sid, outside) ?? (seen.has(sid) ? `the id \`${sid}\` is used twice` : null);
        if (why) return why;
        seen.add(sid);
        if (isLoop(s as Step)) {
          const inner = visit((s as { steps: unknown[] }).steps);
          if (inner) return inner;
        }
      }
      return null;
    };
    return visit(v.steps);
  }
  return null;
}

export function RawJson({ step }: { step: Step }) {
  const [text, setText] = useState(() => formatJson(step));
  const [error, setError] = useState<string | null>(null);
  const [applied, setApplied] = useState(false);
  // The step the text was made from; when the stored step changes and the text was not
  // edited, the text follows it.
  const base = useRef(step);
  const baseText = formatJson(base.current);
  const edited = text !== baseText;
  const stale = base.current !== step;

  useEffect(() => {
    if (base.current === step) return;
    if (text === formatJson(base.current)) {
      base.current = step;
      setText(formatJson(step));
      setError(null);
    }
  }, [step, text]);

  const apply = (source = text) => {
    setApplied(false);
    const p = parseJson(source);
    if (!p.ok) {
      setError(describeParseError(p));
      return;
    }
    const s = docStore.getState();
    const problem = rawStepProblem(s.doc, step.id, p.value, step);
    if (problem) {
      setError(problem);
      return;
    }
    const value = p.value as unknown as Step;
    const r = s.updateStep(step.id, typeof value.id === 'string' ? value : ({ ...value, id: step.id } as Step));
    if (!r.ok) {
      setError(r.reason);
      return;
    }
    setError(null);
    setApplied(true);
    // The store's step (maybe renamed, so this component may be replaced) becomes the base.
    const after = docStore.getState();
    const id = typeof value.id === 'string' ? value.id : step.id;
    const stored = findStep(after.doc, id);
    if (stored) {
      base.current = stored;
      setText(formatJson(stored));
    }
  };

  const revert = () => {
    base.current = step;
    setText(formatJson(step));
    setError(null);
  };

  return (
    <div className="raw-json" data-testid="raw-json">
      <div className="insp-hint">The step as it is stored. Ctrl/Cmd+Enter or Apply replaces it; invalid JSON changes nothing.</div>
      <CodeEditor
        value={text}
        onChange={(t) => {
          setText(t);
          setApplied(false);
        }}
        onSubmit={(t) => apply(t)}
        data-testid="raw-json-editor"
        aria-label="Step JSON"
      />
      {error ? (
        <div className="json-error" role="alert" data-testid="raw-json-error">
          {error}
        </div>
      ) : null}
      {stale && edited ? (
        <div className="insp-notice" data-testid="raw-json-stale">
          The step changed since you started editing; Apply replaces it with this text, Revert reloads it.
        </div>
      ) : null}
      <div className="insp-actions">
        <button type="button" className="primary" data-testid="raw-json-apply" onClick={() => apply()} disabled={!edited}>
          Apply
        </button>
        <button type="button" data-testid="raw-json-revert" onClick={revert} disabled={!edited && !stale}>
          Revert
        </button>
        {applied ? <span className="insp-ok">Applied</span> : null}
      </div>
    </div>
  );
}
