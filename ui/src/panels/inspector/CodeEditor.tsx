//! A small CodeMirror 6 JSON editor (@codemirror/view + lang-json + autocomplete):
//! syntax colours, bracket matching and closing, its own undo history (Ctrl/Cmd+Z
//! inside the editor never reaches the document's undo), and template completion
//! inside strings: typing `{{` offers the names in scope.
//!
//! `JsonField` builds on it: a JSON value that commits on blur when it parses (parse
//! errors are shown with line:column and nothing is committed).

import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap, type Completion, type CompletionContext } from '@codemirror/autocomplete';
import { json } from '@codemirror/lang-json';
import { bracketMatching, defaultHighlightStyle, getIndentation, indentOnInput, indentUnit, syntaxHighlighting } from '@codemirror/language';
import { Annotation, ChangeSet, EditorSelection, EditorState, StateEffect, StateField, Transaction } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, placeholder as placeholderExt, tooltips, type Command } from '@codemirror/view';
import { useContext, useEffect, useRef, useState } from 'react';
import type { Json } from '../../doc';
import { applyCompletion, suggest, templateContext } from './completion';
import { describeParseError, formatJson, jsonEqual, parseJson, type ParseResult } from './json';
import type { ScopeName } from './scope';
import { ScopeNames } from './TemplateInput';

// ---------------------------------------------------------------------------------
// A minimal undo history (@codemirror/commands is not a dependency).

interface HistoryEntry {
  /** Takes the document back to before the edit. */
  changes: ChangeSet;
  selection: EditorSelection;
  time: number;
}
interface History {
  done: HistoryEntry[];
  undone: HistoryEntry[];
}
const setHistory = StateEffect.define<History>();
const fromOutside = Annotation.define<boolean>();

const historyField = StateField.define<History>({
  create: () => ({ done: [], undone: [] }),
  update(h, tr) {
    for (const e of tr.effects) if (e.is(setHistory)) return e.value;
    if (!tr.docChanged) return h;
    if (tr.annotation(fromOutside)) return { done: [], undone: [] };
    const inverse = tr.changes.invert(tr.startState.doc);
    const last = h.done[h.done.length - 1];
    const now = Date.now();
    // Typing in quick succession is one undo step.
    if (last && now - last.time < 600 && tr.isUserEvent('input.type')) {
      return { done: [...h.done.slice(0, -1), { changes: inverse.compose(last.changes), selection: last.selection, time: now }], undone: [] };
    }
    return { done: [...h.done.slice(-199), { changes: inverse, selection: tr.startState.selection, time: now }], undone: [] };
  },
});

function travel(view: EditorView, from: 'done' | 'undone'): boolean {
  const h = view.state.field(historyField);
  const entry = h[from][h[from].length - 1];
  if (!entry) return false;
  const back: HistoryEntry = { changes: entry.changes.invert(view.state.doc), selection: view.state.selection, time: 0 };
  const to = from === 'done' ? 'undone' : 'done';
  const next: History = { ...h, [from]: h[from].slice(0, -1), [to]: [...h[to], back] } as History;
  view.dispatch({
    changes: entry.changes,
    selection: entry.selection,
    effects: setHistory.of(next),
    annotations: Transaction.addToHistory.of(false),
    userEvent: from === 'done' ? 'undo' : 'redo',
    scrollIntoView: true,
  });
  return true;
}
/** Undo / redo inside the editor (its own history, not the document's). */
export const undo: Command = (view) => travel(view, 'done');
export const redo: Command = (view) => travel(view, 'undone');

/** Enter: a new line indented like the syntax wants. */
const newline: Command = (view) => {
  const { state } = view;
  view.dispatch(
    state.changeByRange((range) => {
      const indent = getIndentation(state, range.from) ?? 0;
      const insert = '\n' + ' '.repeat(Math.max(0, indent));
      return { changes: { from: range.from, to: range.to, insert }, range: EditorSelection.cursor(range.from + insert.length) };
    }),
    { scrollIntoView: true, userEvent: 'input' },
  );
  return true;
};
const indentTab: Command = (view) => {
  view.dispatch(view.state.replaceSelection('  '), { userEvent: 'input' });
  return true;
};

// ---------------------------------------------------------------------------------
// Template completion inside the JSON text.

const KIND_TYPE: Record<string, string> = {
  step: 'variable',
  field: 'property',
  input: 'property',
  steps: 'namespace',
  prev: 'keyword',
  loop: 'keyword',
  index: 'keyword',
  error: 'keyword',
  saved: 'namespace',
  run: 'namespace',
};

/** The `{{` completion source over the names in scope (exported for tests). */
export function templateSource(names: () => readonly ScopeName[]) {
  return (context: CompletionContext) => {
    const line = context.state.doc.lineAt(context.pos);
    const caret = context.pos - line.from;
    const ctx = templateContext(line.text, caret);
    if (!ctx) return null;
    const items = suggest(names(), ctx.prefix, 200);
    if (!items.length) return null;
    return {
      from: line.from + ctx.from,
      to: context.pos,
      filter: false,
      options: items.map(
        (n): Completion => ({
          label: n.name,
          detail: n.detail,
          type: KIND_TYPE[n.kind],
          apply: (view: EditorView) => {
            const now = view.state.doc.lineAt(view.state.selection.main.head);
            const c = view.state.selection.main.head - now.from;
            const t = templateContext(now.text, c);
            if (!t) return;
            const r = applyCompletion(now.text, c, t, n.name);
            view.dispatch({
              changes: { from: now.from, to: now.to, insert: r.text },
              selection: EditorSelection.cursor(now.from + r.caret),
              userEvent: 'input.complete',
            });
          },
        }),
      ),
    };
  };
}

const theme = EditorView.theme({
  '&': { fontSize: '12px', backgroundColor: 'var(--panel)', color: 'var(--text)' },
  '.cm-content': { fontFamily: 'var(--mono)', caretColor: 'var(--text)' },
  '.cm-gutters': { backgroundColor: 'var(--panel-2)', color: 'var(--muted)', border: 'none' },
  '&.cm-focused': { outline: '1px solid var(--accent)' },
  '.cm-tooltip': { backgroundColor: 'var(--panel)', border: '1px solid var(--border)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: 'var(--accent)', color: '#fff' },
});

// ---------------------------------------------------------------------------------

export interface CodeEditorProps {
  /** The text from outside; when it changes (and differs from the editor's) it replaces the editor's text. */
  value: string;
  onChange?(text: string): void;
  onBlur?(text: string): void;
  /** Ctrl/Cmd+Enter. */
  onSubmit?(text: string): void;
  /** Overrides the names from `ScopeNames` for `{{` completion. */
  names?: readonly ScopeName[];
  placeholder?: string;
  id?: string;
  'data-testid'?: string;
  'aria-label'?: string;
  className?: string;
}

export function CodeEditor(props: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const scoped = useContext(ScopeNames);
  const latest = useRef({ props, names: props.names ?? scoped });
  latest.current = { props, names: props.names ?? scoped };

  useEffect(() => {
    const state = EditorState.create({
      doc: latest.current.props.value,
      extensions: [
        historyField,
        lineNumbers(),
        EditorView.lineWrapping,
        indentUnit.of('  '),
        EditorState.tabSize.of(2),
        json(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        bracketMatching(),
        closeBrackets(),
        indentOnInput(),
        autocompletion({ override: [templateSource(() => latest.current.names)], icons: false }),
        // Completion lists in a fixed layer on the page: never clipped by the editor's box
        // or the panel around it; CodeMirror keeps them inside the window.
        tooltips({ position: 'fixed', parent: document.body }),
        keymap.of([
          ...closeBracketsKeymap,
          ...completionKeymap,
          { key: 'Mod-Enter', run: (v) => (latest.current.props.onSubmit?.(v.state.doc.toString()), !!latest.current.props.onSubmit) },
          { key: 'Enter', run: newline },
          { key: 'Tab', run: indentTab },
          { key: 'Mod-z', run: undo, preventDefault: true },
          { key: 'Mod-Shift-z', run: redo, preventDefault: true },
          { key: 'Mod-y', run: redo, preventDefault: true },
        ]),
        latest.current.props.placeholder ? placeholderExt(latest.current.props.placeholder) : [],
        theme,
        EditorView.contentAttributes.of({
          ...(latest.current.props['aria-label'] ? { 'aria-label': latest.current.props['aria-label'] } : {}),
          ...(latest.current.props.id ? { id: latest.current.props.id } : {}),
        }),
        EditorView.updateListener.of((u) => {
          if (u.docChanged && !u.transactions.some((t) => t.annotation(fromOutside))) {
            latest.current.props.onChange?.(u.state.doc.toString());
          }
        }),
        EditorView.domEventHandlers({
          blur: (_e, v) => {
            latest.current.props.onBlur?.(v.state.doc.toString());
            return false;
          },
        }),
      ],
    });
    const v = new EditorView({ state, parent: host.current! });
    view.current = v;
    return () => {
      view.current = null;
      v.destroy();
    };
  }, []);

  // Outside changes (undo, another field) replace the text.
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const now = v.state.doc.toString();
    if (now === props.value) return;
    v.dispatch({ changes: { from: 0, to: now.length, insert: props.value }, annotations: [fromOutside.of(true), Transaction.addToHistory.of(false)] });
  }, [props.value]);

  return <div ref={host} className={['code-editor', props.className].filter(Boolean).join(' ')} data-testid={props['data-testid']} />;
}

/** The editor's text (for tests and e2e helpers): `EditorView.findFromDOM`. */
export function editorOf(el: Element | null): EditorView | null {
  const cm = el?.classList.contains('cm-editor') ? el : el?.querySelector('.cm-editor');
  return cm ? EditorView.findFromDOM(cm as HTMLElement) : null;
}

// ---------------------------------------------------------------------------------

export interface JsonFieldProps {
  value: Json | undefined;
  /** Called on blur (and unmount) when the text parses to something else than `value`. */
  onCommit(next: Json | undefined): void;
  /** An empty editor commits `undefined` (the key is removed). Default true. */
  allowEmpty?: boolean;
  /** Refuses some values (e.g. "must be an object"): shown, not committed. */
  check?(v: Json): string | null;
  names?: readonly ScopeName[];
  placeholder?: string;
  id?: string;
  'data-testid'?: string;
  'aria-label'?: string;
}

/** Parse state of an editor's text; `empty` when it is blank. */
function parseText(text: string): ParseResult | { ok: 'empty' } {
  return text.trim() === '' ? { ok: 'empty' } : parseJson(text);
}

/** A JSON value edited as text; commits on blur when it parses (one undo entry), shows parse errors. */
export function JsonField({ value, onCommit, allowEmpty = true, check, names, placeholder, id, ...aria }: JsonFieldProps) {
  const [text, setText] = useState(() => formatJson(value));
  const latest = useRef({ text, value, onCommit });
  latest.current = { text, value, onCommit };

  // A new value from outside replaces the text, unless the text already says the same.
  useEffect(() => {
    const p = parseText(latest.current.text);
    const same = p.ok === 'empty' ? value === undefined : p.ok && jsonEqual(p.value, value);
    if (!same) {
      const t = formatJson(value);
      latest.current.text = t;
      setText(t);
    }
  }, [value]);

  const problem = (t: string): string | null => {
    const p = parseText(t);
    if (p.ok === 'empty') return allowEmpty ? null : 'a value is required';
    if (!p.ok) return describeParseError(p);
    return check?.(p.value) ?? null;
  };

  const commit = (t: string) => {
    if (problem(t)) return;
    const p = parseText(t);
    const next = p.ok === true ? p.value : undefined;
    const cur = latest.current.value;
    if (next === undefined ? cur === undefined : jsonEqual(next, cur)) return;
    latest.current.value = next;
    latest.current.onCommit(next);
  };

  useEffect(() => () => commit(latest.current.text), []); // eslint-disable-line react-hooks/exhaustive-deps

  const error = problem(text);
  return (
    <div className={`json-field${error ? ' has-parse-error' : ''}`}>
      <CodeEditor
        value={text}
        onChange={(t) => {
          latest.current.text = t;
          setText(t);
        }}
        onBlur={commit}
        onSubmit={commit}
        names={names}
        placeholder={placeholder}
        id={id}
        data-testid={aria['data-testid']}
        aria-label={aria['aria-label']}
      />
      {error ? (
        <div className="json-error" role="alert" data-testid="json-error">
          {error} — not applied
        </div>
      ) : null}
    </div>
  );
}
