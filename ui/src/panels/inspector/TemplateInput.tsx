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
//!
//! The suggestion list is drawn in a portal on `document.body`, `position: fixed` at
//! the caret (measured with a mirror of the field), below it or above when there is no
//! room, and kept inside the window: no panel or box around the field clips it.

import { createPortal } from 'react-dom';
import {
  createContext,
  useContext,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ChangeEvent,
  type DragEvent,
  type KeyboardEvent,
  type UIEvent,
} from 'react';
import { applyCompletion, suggest, templateContext } from './completion';
import { FIELD_MIME, offsetAtPoint } from '../../shared/field-drop';
import { tokenize } from './highlight';
import { useTemplatePreview } from './preview';
import type { ScopeName } from './scope';
import { TemplateEditor } from './TemplateEditor';
import { PreviewScope, TemplatePreviewLine } from './TemplatePreview';

const MIRRORED_STYLES = [
  'boxSizing',
  'width',
  'borderLeftWidth',
  'borderRightWidth',
  'borderTopWidth',
  'borderBottomWidth',
  'paddingLeft',
  'paddingRight',
  'paddingTop',
  'paddingBottom',
  'fontFamily',
  'fontSize',
  'fontWeight',
  'fontStyle',
  'letterSpacing',
  'lineHeight',
  'textTransform',
  'wordSpacing',
  'tabSize',
] as const;

/** The caret of a text field in window coordinates: its left, its line's top and bottom. */
export function caretRect(el: HTMLInputElement | HTMLTextAreaElement, at: number): { left: number; top: number; bottom: number } {
  const box = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  const mirror = el.ownerDocument.createElement('div');
  for (const k of MIRRORED_STYLES) mirror.style[k] = style[k];
  mirror.style.position = 'fixed';
  mirror.style.visibility = 'hidden';
  mirror.style.left = '0';
  mirror.style.top = '0';
  mirror.style.whiteSpace = el instanceof HTMLTextAreaElement ? 'pre-wrap' : 'pre';
  mirror.style.overflowWrap = 'break-word';
  mirror.textContent = el.value.slice(0, at);
  const mark = el.ownerDocument.createElement('span');
  mark.textContent = el.value.slice(at) || '.';
  mirror.appendChild(mark);
  el.ownerDocument.body.appendChild(mirror);
  const lineHeight = mark.offsetHeight || parseFloat(style.fontSize) * 1.3 || 16;
  const left = box.left + mark.offsetLeft - el.scrollLeft;
  const top = box.top + mark.offsetTop - el.scrollTop;
  mirror.remove();
  // Inside the field's box, whatever the measure said (a jsdom without layout gives 0s).
  const clampedLeft = Math.min(Math.max(left, box.left), Math.max(box.left, box.right - 8));
  const clampedTop = Math.min(Math.max(top, box.top), Math.max(box.top, box.bottom - lineHeight));
  return { left: clampedLeft, top: clampedTop, bottom: clampedTop + lineHeight };
}

/** Where the suggestion list goes: under the caret, or above it without room below; inside the window. */
export function placeList(
  caret: { left: number; top: number; bottom: number },
  size: { width: number; height: number },
  win: { width: number; height: number },
): { left: number; top: number } {
  const margin = 4;
  const left = Math.max(margin, Math.min(caret.left, win.width - size.width - margin));
  const below = caret.bottom + 2;
  const top = below + size.height <= win.height - margin || caret.top - size.height - 2 < margin ? below : caret.top - size.height - 2;
  return { left, top: Math.max(margin, Math.min(top, win.height - size.height - margin)) };
}

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
  /** Colours the template syntax (a layer painted behind a multi-line field). */
  highlight?: boolean;
  /**
   * Offers the template editor (the ⤢ button) and a live preview under the field while
   * it is focused — inside the inspector (`PreviewScope`), unless false.
   */
  expandable?: boolean;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
  'data-testid'?: string;
}

export function TemplateInput(props: TemplateInputProps) {
  const { value, onChange, names: own } = props;
  // A one-line field given several lines (from the template editor) keeps them.
  const multiline = props.multiline || value.includes('\n');
  const scoped = useContext(ScopeNames);
  const names = own ?? scoped;
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const listId = useId();
  const [caret, setCaret] = useState<number | null>(null);
  const [active, setActive] = useState(0);
  // The text at which Esc closed the list; it reopens once the text changes.
  const [dismissed, setDismissed] = useState<string | null>(null);
  const pendingCaret = useRef<number | null>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const paintRef = useRef<HTMLPreElement>(null);
  const [, relayout] = useState(0);
  const previewScope = useContext(PreviewScope);
  const [focused, setFocused] = useState(false);
  const [editing, setEditing] = useState(false);
  const withEditor = props.expandable !== false && previewScope !== undefined;
  const preview = useTemplatePreview(value, previewScope?.scope ?? null, focused && withEditor);

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

  // Place the list at the caret after each render while open, and again on scroll/resize.
  useLayoutEffect(() => {
    const el = ref.current;
    const list = listRef.current;
    if (!open || !el || !list || caret === null) return;
    const r = caretRect(el, Math.min(caret, el.value.length));
    const win = { width: window.innerWidth, height: window.innerHeight };
    const pos = placeList(r, { width: list.offsetWidth, height: list.offsetHeight }, win);
    list.style.left = `${pos.left}px`;
    list.style.top = `${pos.top}px`;
  });
  useEffect(() => {
    if (!open) return;
    const again = () => relayout((n) => n + 1);
    window.addEventListener('scroll', again, true);
    window.addEventListener('resize', again);
    return () => {
      window.removeEventListener('scroll', again, true);
      window.removeEventListener('resize', again);
    };
  }, [open]);

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
      setFocused(true);
      props.onFocus?.();
    },
    onDragOver: (e: DragEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      if (e.dataTransfer.types.includes(FIELD_MIME)) e.preventDefault();
    },
    // A field dragged from a step's output (its run output in the inspector) lands where
    // it is dropped, as `{{ step.path }}` (n8n's drag from the input panel).
    onDrop: (e: DragEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      const dropped = e.dataTransfer.getData(FIELD_MIME);
      const el = ref.current;
      if (!dropped || !el || props.readOnly || props.disabled) return;
      e.preventDefault();
      const at = offsetAtPoint(el, e.clientX, e.clientY) ?? el.selectionStart ?? value.length;
      pendingCaret.current = at + dropped.length;
      el.focus();
      onChange(value.slice(0, at) + dropped + value.slice(at));
    },
    onScroll: (e: UIEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      if (paintRef.current) paintRef.current.scrollTop = e.currentTarget.scrollTop;
    },
    onBlur: () => {
      setFocused(false);
      setCaret(null);
      setDismissed(null);
      props.onBlur?.();
    },
  };

  return (
    <div className={`tpl${multiline ? ' tpl-multiline' : ''}${withEditor && !props.readOnly && !props.disabled ? ' tpl-expandable' : ''}`}>
      {multiline && props.highlight ? (
        <div className="tpl-hl">
          <pre ref={paintRef} className="tpl-hl-paint" aria-hidden="true" data-testid="template-highlight">
            {tokenize(value).map((t, i) => (
              <span key={i} className={`tpl-t-${t.kind}`}>
                {t.text}
              </span>
            ))}
            {/* A last empty line keeps its height, as the textarea's does. */}
            {'\n'}
          </pre>
          <textarea {...common} rows={3} />
        </div>
      ) : multiline ? (
        <textarea {...common} rows={3} />
      ) : (
        <input {...common} type="text" list={props.list} inputMode={props.inputMode} />
      )}
      {withEditor && !props.readOnly && !props.disabled ? (
        <button
          type="button"
          className="tpl-expand"
          title="Open the template editor: several lines, completion of output fields, the result against the last run"
          aria-label="Open the template editor"
          data-testid={props.id ? `template-expand-${props.id}` : 'template-expand'}
          onClick={() => setEditing(true)}
        >
          ⤢
        </button>
      ) : null}
      {withEditor ? <TemplatePreviewLine preview={preview} runId={previewScope?.runId} /> : null}
      {editing ? (
        <TemplateEditor
          value={value}
          names={names}
          title={props.id?.startsWith('root_') ? props.id.slice(5) : undefined}
          onClose={() => setEditing(false)}
          onApply={(text) => {
            if (text === value) return;
            onChange(text);
            // Committed once the new text has landed (a form reports it after its own update).
            requestAnimationFrame(() => props.onEnter?.());
          }}
        />
      ) : null}
      {open
        ? createPortal(
        <ul ref={listRef} className="tpl-suggestions" id={listId} role="listbox" data-testid="template-suggestions">
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
        </ul>,
            document.body,
          )
        : null}
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
