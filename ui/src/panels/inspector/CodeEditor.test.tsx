// @vitest-environment jsdom
import { CompletionContext, type Completion } from '@codemirror/autocomplete';
import { EditorState } from '@codemirror/state';
import { act } from 'react';
import { createRoot } from 'react-dom/client';
import { describe, expect, it } from 'vitest';
import { CodeEditor, editorOf, redo, templateSource, undo } from './CodeEditor';
import type { ScopeName } from './scope';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
// jsdom has no layout; CodeMirror measures text ranges when it scrolls.
const rangeProto = Range.prototype as unknown as Record<string, unknown>;
rangeProto.getClientRects ??= () => [];
rangeProto.getBoundingClientRect ??= () => ({ x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0 });

const NAMES: ScopeName[] = [
  { name: 'inputs', kind: 'input' },
  { name: 'inputs.city', kind: 'input' },
  { name: 'prev', kind: 'prev' },
];

describe('CodeEditor', () => {
  it('completes names inside a JSON string after {{', async () => {
    const doc = '{ "a": "{{ inputs.c" }';
    const pos = doc.indexOf('.c') + 2;
    const source = templateSource(() => NAMES);
    const result = await source(new CompletionContext(EditorState.create({ doc }), pos, false));
    expect(result!.options.map((o: Completion) => o.label)).toEqual(['inputs.city']);
    expect(result!.from).toBe(doc.indexOf('inputs'));
    // Outside a template: nothing.
    expect(await source(new CompletionContext(EditorState.create({ doc: '{ "a": "x" }' }), 9, false))).toBeNull();
  });

  it('keeps its own undo history; outside value changes replace the text', async () => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const root = createRoot(host);
    await act(async () => root.render(<CodeEditor value="{}" />));
    const view = editorOf(host)!;
    act(() => view.dispatch({ changes: { from: 1, insert: '"a": 1' }, userEvent: 'input.paste' }));
    expect(view.state.doc.toString()).toBe('{"a": 1}');
    expect(undo(view)).toBe(true);
    expect(view.state.doc.toString()).toBe('{}');
    expect(redo(view)).toBe(true);
    expect(view.state.doc.toString()).toBe('{"a": 1}');
    await act(async () => root.render(<CodeEditor value="[1]" />));
    expect(view.state.doc.toString()).toBe('[1]');
    // An outside change is not undoable inside the editor.
    expect(undo(view)).toBe(false);
    act(() => root.unmount());
    host.remove();
  });
});
