//! Form rows and plain controls of the inspector. Text and number fields commit on
//! blur / Enter (one undo entry per committed change); selects and checkboxes commit
//! at once. Each row carries `data-pointer` (its JSON pointer inside the step or the
//! blueprint) so a clicked diagnostic can find, focus and highlight it.

import { createContext, useContext, useId, type KeyboardEvent, type ReactNode } from 'react';
import type { Diagnostic, Json, Retry } from '../../doc';
import { useDraft } from './TemplateInput';

/** Diagnostics of the form's subject by pointer (relative to the step, or absolute for settings). */
export const FieldDiagnostics = createContext<ReadonlyMap<string, Diagnostic[]>>(new Map());

function levelAt(map: ReadonlyMap<string, Diagnostic[]>, pointer: string | undefined): 'error' | 'warning' | null {
  if (!pointer) return null;
  let level: 'error' | 'warning' | null = null;
  for (const [p, list] of map) {
    if (p === pointer || p.startsWith(pointer + '/')) {
      for (const d of list) {
        if (d.level === 'error') return 'error';
        level = 'warning';
      }
    }
  }
  return level;
}

export interface RowProps {
  label: ReactNode;
  /** JSON pointer of the field (inside the step, or `/…` of the blueprint for settings). */
  pointer?: string;
  htmlFor?: string;
  hint?: ReactNode;
  children: ReactNode;
  className?: string;
}

export function Row({ label, pointer, htmlFor, hint, children, className }: RowProps) {
  const diags = useContext(FieldDiagnostics);
  const level = levelAt(diags, pointer);
  const own = pointer ? diags.get(pointer) : undefined;
  return (
    <div className={['insp-row', level ? `has-${level}` : '', className].filter(Boolean).join(' ')} data-pointer={pointer}>
      <label className="insp-label" htmlFor={htmlFor}>
        {label}
      </label>
      <div className="insp-control">{children}</div>
      {own?.length ? (
        <ul className="insp-row-diags">
          {own.map((d, i) => (
            <li key={i} className={`diag-${d.level}`}>
              {d.message}
              {d.hint ? <span className="insp-row-hint"> — {d.hint}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {hint ? <div className="insp-hint">{hint}</div> : null}
    </div>
  );
}

/** A group of rows under a small heading. */
export function Section({ title, children, actions }: { title: ReactNode; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="insp-section">
      <header className="insp-section-head">
        <span>{title}</span>
        {actions}
      </header>
      {children}
    </section>
  );
}

export interface TextInputProps {
  id?: string;
  value: string | undefined;
  /** The committed text; `undefined` when emptied (the key is removed) unless `keepEmpty`. */
  onCommit(text: string | undefined): void;
  /** Why the text cannot be committed (shown; the draft is kept). */
  validate?(text: string): string | null;
  placeholder?: string;
  multiline?: boolean;
  keepEmpty?: boolean;
  list?: string;
  'data-testid'?: string;
}

export function TextInput({ id, value, onCommit, validate, placeholder, multiline, keepEmpty, list, ...rest }: TextInputProps) {
  const { draft, setDraft, flush, revert } = useDraft(value ?? '', (t) => {
    if (validate?.(t)) return;
    onCommit(t === '' && !keepEmpty ? undefined : t);
  });
  const problem = draft !== (value ?? '') ? (validate?.(draft) ?? null) : null;
  const common = {
    id,
    value: draft,
    placeholder,
    'data-testid': rest['data-testid'],
    'aria-invalid': problem ? true : undefined,
    spellCheck: false,
    onBlur: flush,
    onKeyDown: (e: KeyboardEvent) => {
      if (e.key === 'Enter' && (!multiline || e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        flush();
      } else if (e.key === 'Escape') {
        e.preventDefault();
        revert();
      }
    },
  };
  return (
    <>
      {multiline ? (
        <textarea {...common} rows={3} onChange={(e) => setDraft(e.target.value)} />
      ) : (
        <input {...common} type="text" list={list} onChange={(e) => setDraft(e.target.value)} />
      )}
      {problem ? (
        <div className="insp-invalid" role="alert">
          {problem}
        </div>
      ) : null}
    </>
  );
}

export interface NumberInputProps {
  id?: string;
  value: number | undefined;
  onCommit(n: number | undefined): void;
  min?: number;
  integer?: boolean;
  placeholder?: string;
  'data-testid'?: string;
}

/** A number; empty removes the key. Invalid text is shown and not committed. */
export function NumberInput({ id, value, onCommit, min = 0, integer = true, placeholder, ...rest }: NumberInputProps) {
  const check = (t: string): string | null => {
    if (t.trim() === '') return null;
    const n = Number(t);
    if (!Number.isFinite(n)) return 'not a number';
    if (integer && !Number.isInteger(n)) return 'a whole number';
    if (n < min) return `at least ${min}`;
    return null;
  };
  return (
    <TextInput
      id={id}
      value={value === undefined || value === null ? undefined : String(value)}
      onCommit={(t) => onCommit(t === undefined ? undefined : Number(t))}
      validate={check}
      placeholder={placeholder}
      data-testid={rest['data-testid']}
    />
  );
}

export interface SelectProps<T extends string> {
  id?: string;
  value: T | '' | undefined;
  options: readonly { value: T | ''; label: string }[];
  onChange(v: T | ''): void;
  'data-testid'?: string;
}

export function Select<T extends string>({ id, value, options, onChange, ...rest }: SelectProps<T>) {
  const v = value ?? '';
  const known = options.some((o) => o.value === v);
  return (
    <select id={id} value={v} onChange={(e) => onChange(e.target.value as T | '')} data-testid={rest['data-testid']}>
      {known ? null : <option value={v}>{v}</option>}
      {options.map((o) => (
        <option key={o.value} value={o.value}>
          {o.label}
        </option>
      ))}
    </select>
  );
}

export function Check({ id, checked, onChange, label, ...rest }: { id?: string; checked: boolean; onChange(v: boolean): void; label: ReactNode; 'data-testid'?: string }) {
  return (
    <label className="insp-check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} data-testid={rest['data-testid']} />
      {label}
    </label>
  );
}

/** `retry`: attempts, delay, backoff, max delay. An all-empty retry commits `undefined`. */
export function RetryEditor({ value, onCommit, pointer, idPrefix }: { value: Retry | undefined; onCommit(r: Retry | undefined): void; pointer: string; idPrefix: string }) {
  const r = value && typeof value === 'object' ? value : {};
  const set = (patch: Partial<Retry>) => {
    const next: Record<string, Json | undefined> = { ...(r as Record<string, Json | undefined>), ...(patch as Record<string, Json | undefined>) };
    for (const k of Object.keys(next)) if (next[k] === undefined) delete next[k];
    onCommit(Object.keys(next).length ? (next as Retry) : undefined);
  };
  return (
    <div className="insp-grid" data-pointer={pointer}>
      <Row label="Attempts" pointer={`${pointer}/attempts`} htmlFor={`${idPrefix}-attempts`}>
        <NumberInput id={`${idPrefix}-attempts`} value={r.attempts} min={1} onCommit={(n) => set({ attempts: n })} placeholder="1" />
      </Row>
      <Row label="Delay (ms)" pointer={`${pointer}/delay_ms`} htmlFor={`${idPrefix}-delay`}>
        <NumberInput id={`${idPrefix}-delay`} value={r.delay_ms} onCommit={(n) => set({ delay_ms: n })} placeholder="0" />
      </Row>
      <Row label="Backoff" pointer={`${pointer}/backoff`} htmlFor={`${idPrefix}-backoff`}>
        <Select
          id={`${idPrefix}-backoff`}
          value={r.backoff ?? ''}
          options={[
            { value: '', label: 'default (fixed)' },
            { value: 'fixed', label: 'fixed' },
            { value: 'exponential', label: 'exponential' },
          ]}
          onChange={(v) => set({ backoff: v || undefined })}
        />
      </Row>
      <Row label="Max delay (ms)" pointer={`${pointer}/max_delay_ms`} htmlFor={`${idPrefix}-max`}>
        <NumberInput id={`${idPrefix}-max`} value={r.max_delay_ms} onCommit={(n) => set({ max_delay_ms: n })} />
      </Row>
    </div>
  );
}

/** A stable id for a control inside a row. */
export function useFieldId(name: string): string {
  return `insp-${name}-${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;
}
