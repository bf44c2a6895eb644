//! A text field for values that may hold templates: typing `{{` offers the names in
//! scope at the step (see `scope.ts`); ↑/↓ choose, Enter/Tab accept, Esc closes.
//!
//! A plain `<input>` (or `<textarea>`) with a suggestion list, not a CodeMirror view:
//! it keeps the element, its `id` and `.value` what forms and end-to-end tests expect
//! (RJSF ids like `#root_message` land on the `<input>` itself).
//!
//! - `TemplateInput` is controlled and reports every keystroke (`onChange`); RJSF uses it.
//! - `TemplateField` keeps a draft and commits on blur, Enter and unmount (one undo entry
//!   per committed edit); Esc reverts the draft.

import {
  createContext,
  useContext,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ChangeEvent,
  type KeyboardEvent,
} from 'react';
import { applyCompletion, suggest, templateContext } from './completion';
import type { ScopeName } from './scope';

/** The names in scope where the fields below are; the step form provides it. */
export const ScopeNames = createContext<readonly ScopeName[]>([]);

export interface TemplateInputProps {
  value: string;
  onChange(text: string): void;
  /** Enter (Ctrl/Cmd+Enter when multiline) with no suggestion open. */
  onEnter?(): void;
  /** Esc with no suggestion open. */
  onEscape?(): void;
  onBlur?(): void;
  onFocus?(): void;
  /** Overrides the names from `ScopeNames`. */
  names?: readonly ScopeName[];
  id?: string;
  name?: string;
  placeholder?: string;
  multiline?: boolean;
  disabled?: boolean;
  readOnly?: boolean;
  required?: boolean;
  autoFocus?: boolean;
  /** A `<datalist>` id for plain (non-template) suggestions. */
  list?: string;
  inputMode?: 'text' | 'decimal' | 'numeric';
  className?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
  'data-testid'?: string;
}

export function TemplateInput(props: TemplateInputProps) {
  const { value, onChange, names: own, multiline } = props;
  const scoped = useContext(ScopeNames);
  const names = own ?? scoped;
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const listId = useId();
  const [caret, setCaret] = useState<number | null>(null);
  const [active, setActive] = useState(0);
  // The text at which Esc closed the list; it reopens once the text changes.
  const [dismissed, setDismissed] = useState<string | null>(null);
  const pendingCaret = useRef<number | null>(null);

  const ctx = caret !== null ? templateContext(value, Math.min(caret, value.length)) : null;
  const items = ctx ? suggest(names, ctx.prefix, 40) : [];
  const open = items.length > 0 && dismissed !== value && !props.readOnly && !props.disabled;
  const current = open ? Math.min(active, items.length - 1) : -1;

  useLayoutEffect(() => {
    const p = pendingCaret.current;
    const el = ref.current;
    if (p === null || !el) return;
    pendingCaret.current = null;
    el.setSelectionRange(p, p);
    setCaret(p);
  });

  useEffect(() => {
    if (!open || current < 0) return;
    document.getElementById(`${listId}-${current}`)?.scrollIntoView?.({ block: 'nearest' });
  }, [open, current, listId]);

  const track = () => {
    const el = ref.current;
    if (el && el.ownerDocument.activeElement === el) setCaret(el.selectionStart ?? el.value.length);
  };

  const accept = (n: ScopeName) => {
    if (!ctx || caret === null) return;
    const r = applyCompletion(value, Math.min(caret, value.length), ctx, n.name);
    pendingCaret.current = r.caret;
    setActive(0);
    onChange(r.text);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement | HTMLTextAreaElement>) => {
    if (open) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        const d = e.key === 'ArrowDown' ? 1 : -1;
        setActive((current + d + items.length) % items.length);
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        accept(items[current]!);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        setDismissed(value);
        return;
      }
    }
    if (e.key === 'Enter' && (!multiline || e.ctrlKey || e.metaKey)) {
      // Never submit an enclosing form; commit instead.
      e.preventDefault();
      props.onEnter?.();
      return;
    }
    if (e.key === 'Escape' && props.onEscape) {
      e.preventDefault();
      props.onEscape();
    }
  };

  const common = {
    ref,
    id: props.id,
    name: props.name,
    value,
    placeholder: props.placeholder,
    disabled: props.disabled,
    readOnly: props.readOnly,
    required: props.required,
    autoFocus: props.autoFocus,
    className: ['tpl-input', props.className].filter(Boolean).join(' '),
    spellCheck: false,
    autoComplete: 'off',
    role: 'combobox',
    'aria-autocomplete': 'list' as const,
    'aria-expanded': open,
    'aria-controls': open ? listId : undefined,
    'aria-activedescendant': open && current >= 0 ? `${listId}-${current}` : undefined,
    'aria-describedby': props['aria-describedby'],
    'aria-invalid': props['aria-invalid'],
    'data-testid': props['data-testid'],
    onChange: (e: ChangeEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      setActive(0);
      setCaret(e.target.selectionStart ?? e.target.value.length);
      onChange(e.target.value);
    },
    onKeyDown,
    onKeyUp: track,
    onClick: track,
    onSelect: track,
    onFocus: () => {
      track();
      props.onFocus?.();
    },
    onBlur: () => {
      setCaret(null);
      setDismissed(null);
      props.onBlur?.();
    },
  };

  return (
    <div className={`tpl${multiline ? ' tpl-multiline' : ''}`}>
      {multiline ? (
        <textarea {...common} rows={3} />
      ) : (
        <input {...common} type="text" list={props.list} inputMode={props.inputMode} />
      )}
      {open ? (
        <ul className="tpl-suggestions" id={listId} role="listbox" data-testid="template-suggestions">
          {items.map((n, i) => (
            <li
              key={n.name}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === current}
              className={`tpl-option tpl-kind-${n.kind}${i === current ? ' is-active' : ''}`}
              // Keep the focus in the field.
              onMouseDown={(e) => {
                e.preventDefault();
                accept(n);
              }}
              onMouseEnter={() => setActive(i)}
            >
              <code className="tpl-option-name">{n.name}</code>
              {n.detail ? <span className="tpl-option-detail">{n.detail}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/**
 * A draft that commits on blur, Enter and unmount — one undo entry per committed edit.
 * `commit` gets the draft; nothing is committed when it equals `value`.
 */
export function useDraft<T>(value: T, commit: (next: T) => void, equal: (a: T, b: T) => boolean = Object.is) {
  const [draft, setDraft] = useState(value);
  const latest = useRef({ draft, value, commit, equal });
  latest.current = { draft, value, commit, equal };
  // The draft last handed to `commit`, so a blur then an unmount do not commit twice.
  const committed = useRef<{ draft: T } | null>(null);
  // A new value from outside (this commit landing, another edit, undo) replaces the draft.
  useEffect(() => {
    committed.current = null;
    setDraft(value);
    latest.current.draft = value;
  }, [value]);
  const flush = () => {
    const l = latest.current;
    if (l.equal(l.draft, l.value)) return;
    if (committed.current && l.equal(committed.current.draft, l.draft)) return;
    committed.current = { draft: l.draft };
    l.commit(l.draft);
  };
  useEffect(() => () => flush(), []); // eslint-disable-line react-hooks/exhaustive-deps
  const update = (next: T) => {
    latest.current.draft = next;
    setDraft(next);
  };
  const revert = () => update(latest.current.value);
  return { draft, setDraft: update, flush, revert };
}

export interface TemplateFieldProps extends Omit<TemplateInputProps, 'value' | 'onChange' | 'onEnter' | 'onEscape'> {
  /** The stored text; undefined shows an empty field. */
  value: string | undefined;
  /** The committed text; an empty field commits `undefined` (the key is removed). */
  onCommit(text: string | undefined): void;
}

/** A `TemplateInput` that commits on blur / Enter / unmount. */
export function TemplateField({ value, onCommit, onBlur, ...rest }: TemplateFieldProps) {
  const { draft, setDraft, flush, revert } = useDraft(value ?? '', (t) => onCommit(t === '' ? undefined : t));
  return (
    <TemplateInput
      {...rest}
      value={draft}
      onChange={setDraft}
      onEnter={flush}
      onEscape={revert}
      onBlur={() => {
        flush();
        onBlur?.();
      }}
    />
  );
}
