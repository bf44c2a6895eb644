// @vitest-environment jsdom
// The inspector mounted on the app's document store: settings, the step form with
// the RJSF args form, template completion, the raw JSON tab, diagnostics focus and
// the multi-selection.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { docStore, findStep, type Blueprint } from '../../doc';
import { editorOf } from './CodeEditor';
import { Inspector } from './Inspector';
import type { Offer } from './offers';
import { allStepIds } from '../../doc';
import { EXAMPLES } from '../../testing/examples';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
// jsdom has no layout; CodeMirror measures text ranges when it scrolls.
const rangeProto = Range.prototype as unknown as Record<string, unknown>;
rangeProto.getClientRects ??= () => [];
rangeProto.getBoundingClientRect ??= () => ({ x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0 });

const OFFERS: Offer[] = [
  {
    server: 'everything',
    tools: [
      {
        server: 'everything',
        name: 'echo',
        description: 'Echoes back the input',
        input_schema: { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] },
      },
      {
        server: 'everything',
        name: 'mix',
        description: null,
        input_schema: {
          type: 'object',
          properties: { count: { type: 'integer' }, loud: { type: 'boolean' }, mode: { type: 'string', enum: ['a', 'b'] } },
        },
      },
    ],
    resources: [],
    prompts: [],
  },
];

const DOC: Blueprint = {
  blueprint: 1,
  id: 'demo',
  name: 'Demo',
  inputs: { type: 'object', properties: { who: { type: 'string' }, n: { type: 'integer' } } },
  steps: [
    { id: 'first', kind: 'transform', value: { greeting: 'hi' } },
    { id: 'say', kind: 'tool', server: 'everything', tool: 'echo', args: {} },
    { id: 'knobs', kind: 'tool', server: 'everything', tool: 'mix', args: { count: 2 } },
    { id: 'mystery', kind: 'tool', server: 'elsewhere', tool: 'unknown', args: { x: 1 } },
  ],
};

let root: Root;
let host: HTMLElement;
const q = <T extends Element = HTMLElement>(sel: string) => host.querySelector<T>(sel);
const s = () => docStore.getState();

const setValue = (el: HTMLInputElement | HTMLTextAreaElement, value: string) => {
  const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(el, value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
};
/** Focus, type the whole text, leave the field (a commit). */
const fill = async (el: HTMLInputElement | HTMLTextAreaElement, value: string, leave = true) => {
  await act(async () => el.focus());
  await act(async () => setValue(el, value));
  // The focused field: typing `{{` into a fixed number replaces it with an expression input.
  if (leave) await act(async () => (document.activeElement as HTMLElement | null)?.blur());
};
const key = (el: Element, k: string) => act(async () => void el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true })));
const click = (el: Element) => act(async () => (el as HTMLElement).click());

async function mount(doc: Blueprint = DOC, select: string[] = []) {
  await act(async () => {
    s().load(structuredClone(doc));
    if (select.length) s().select(select);
  });
  await act(async () => root.render(<Inspector offers={OFFERS} />));
}

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  vi.restoreAllMocks();
});

describe('Inspector: blueprint settings', () => {
  it('shows the settings when nothing is selected, and commits edits through setSettings on blur', async () => {
    await mount();
    const spy = vi.spyOn(s(), 'setSettings');
    expect(q('[data-testid="inspector"]')).not.toBeNull();
    expect(q('[data-testid="settings-form"]')).not.toBeNull();
    const name = q<HTMLInputElement>('[data-testid="settings-name"]')!;
    expect(name.value).toBe('Demo');

    await fill(name, 'Renamed', false);
    expect(s().doc.name).toBe('Demo'); // not per keystroke
    await act(async () => name.blur());
    expect(s().doc.name).toBe('Renamed');
    expect(spy).toHaveBeenCalledWith({ name: 'Renamed' });

    await fill(q<HTMLInputElement>('[data-testid="settings-concurrency"]')!, '4');
    expect(s().doc.limits).toEqual({ concurrency: 4 });
    // An invalid number is shown and not committed.
    await fill(q<HTMLInputElement>('[data-testid="settings-timeout"]')!, 'soon');
    expect(s().doc.limits).toEqual({ concurrency: 4 });
    expect(host.textContent).toContain('not a number');

    await click(q('[data-testid="settings-expose"]')!);
    expect(s().doc.expose).toBe(true);
    const sched = q<HTMLSelectElement>('[data-testid="settings-schedule-kind"]')!;
    await act(async () => {
      sched.value = 'every';
      sched.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(s().doc.schedule).toEqual({ every: '1h' });

    expect(s().past.map((e) => e.label)).toEqual(['Edit settings', 'Edit settings', 'Edit settings', 'Edit settings']);
    expect(spy).toHaveBeenCalledTimes(4);
    await act(async () => void s().undo());
    expect(s().doc.schedule).toBeUndefined();
  });

  it('edits the inputs schema as JSON: parse errors are shown and change nothing', async () => {
    await mount();
    const view = editorOf(q('[data-testid="settings-inputs"]'))!;
    expect(view.state.doc.toString()).toContain('"who"');
    const replace = (text: string) =>
      act(async () => {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
        view.contentDOM.dispatchEvent(new FocusEvent('blur'));
      });
    await replace('{ "type": "object", ');
    expect(s().doc.inputs).toEqual(DOC.inputs);
    expect(host.textContent).toContain('line 1:');
    await replace('{ "type": "object", "properties": { "city": { "type": "string" } } }');
    expect(s().doc.inputs).toEqual({ type: 'object', properties: { city: { type: 'string' } } });
    expect(s().past).toHaveLength(1);
  });
});

describe('Inspector: step form', () => {
  it('generates the args form from the tool schema; filling a required arg patches args once', async () => {
    await mount(DOC, ['say']);
    expect(q('[data-testid="step-form"]')).not.toBeNull();
    const form = q('[data-testid="args-form"]')!;
    expect(form.tagName).toBe('FORM');
    const message = q<HTMLInputElement>('#root_message')!;
    expect(message).not.toBeNull();
    expect(form.contains(message)).toBe(true);
    expect(host.querySelector('label[for="root_message"]')!.textContent).toContain('*');

    await act(async () => message.focus());
    for (const text of ['h', 'he', 'hello ', 'hello {{ inputs.who }}']) await act(async () => setValue(message, text));
    expect((findStep(s().doc, 'say') as { args: unknown }).args).toEqual({}); // buffered while typing
    await act(async () => message.blur());
    expect((findStep(s().doc, 'say') as { args: unknown }).args).toEqual({ message: 'hello {{ inputs.who }}' });
    expect(s().past).toHaveLength(1);
    expect(s().past[0]!.label).toBe('Edit step');

    // Clearing the field removes the key; undo brings it back into the form.
    await fill(q<HTMLInputElement>('#root_message')!, '');
    expect((findStep(s().doc, 'say') as { args: unknown }).args).toEqual({});
    await act(async () => void s().undo());
    expect(q<HTMLInputElement>('#root_message')!.value).toBe('hello {{ inputs.who }}');
  });

  it('takes templates in non-string fields through the Fixed / Expression switch', async () => {
    await mount(DOC, ['knobs']);
    const args = () => (findStep(s().doc, 'knobs') as { args: unknown }).args;
    const count = q<HTMLInputElement>('#root_count')!;
    expect(count.value).toBe('2');
    // `{{` typed into a fixed number makes it an expression.
    await fill(count, '{{ inputs.n }}');
    expect(args()).toEqual({ count: '{{ inputs.n }}' });
    expect(q('[data-testid="template-toggle-root_count"]')!.getAttribute('aria-pressed')).toBe('true');
    await click(q('[data-testid="template-toggle-root_count"]')!);
    await fill(q<HTMLInputElement>('#root_count')!, '7');
    expect(args()).toEqual({ count: 7 });

    // A checkbox commits at once.
    await click(q('#root_loud')!);
    expect(args()).toEqual({ count: 7, loud: true });

    // The switch turns the select into a template input with the same id.
    expect(q('#root_mode')!.tagName).toBe('SELECT');
    await click(q('[data-testid="template-toggle-root_mode"]')!);
    const mode = q<HTMLInputElement>('#root_mode')!;
    expect(mode.tagName).toBe('INPUT');
    await fill(mode, '{{ inputs.who }}');
    expect(args()).toEqual({ count: 7, loud: true, mode: '{{ inputs.who }}' });
    expect(s().past).toHaveLength(5);
  });

  it('completes the names in scope after {{', async () => {
    await mount(DOC, ['say']);
    const message = q<HTMLInputElement>('#root_message')!;
    await act(async () => message.focus());
    await act(async () => setValue(message, 'to {{ in'));
    const list = document.querySelector('[data-testid="template-suggestions"]')!;
    // In a fixed layer on the page, not inside the inspector (no panel can clip it).
    expect(list.parentElement).toBe(document.body);
    expect(host.contains(list)).toBe(false);
    expect([...list.querySelectorAll('[role="option"]')].map((o) => o.querySelector('code')!.textContent)).toEqual(['inputs']);
    await key(message, 'Enter');
    expect(message.value).toBe('to {{ inputs }}');
    // Steps before `say` are offered; later ones are not.
    await act(async () => setValue(message, '{{ '));
    const offered = [...document.querySelector('[data-testid="template-suggestions"]')!.querySelectorAll('code')].map((c) => c.textContent);
    expect(offered).toEqual(expect.arrayContaining(['prev', 'first', 'inputs', 'steps', 'run', 'saved']));
    expect(offered).not.toContain('knobs');
    await act(async () => setValue(message, '{{ first.'));
    expect([...document.querySelector('[data-testid="template-suggestions"]')!.querySelectorAll('code')].map((c) => c.textContent)).toEqual(['first.greeting']);
    await key(message, 'Escape');
    expect(document.querySelector('[data-testid="template-suggestions"]')).toBeNull();
  });

  it('falls back to a JSON editor for args when the tool is unknown', async () => {
    await mount(DOC, ['mystery']);
    expect(q('[data-testid="args-form"]')).toBeNull();
    const view = editorOf(q('[data-testid="args-json"]'))!;
    expect(JSON.parse(view.state.doc.toString())).toEqual({ x: 1 });
    await act(async () => {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: '{ "x": 2 }' } });
      view.contentDOM.dispatchEvent(new FocusEvent('blur'));
    });
    expect((findStep(s().doc, 'mystery') as { args: unknown }).args).toEqual({ x: 2 });
  });

  it('renames through the id field, refusing invalid, reserved and taken ids', async () => {
    await mount(DOC, ['say']);
    const id = () => q<HTMLInputElement>('[data-testid="step-id-input"]')!;
    for (const bad of ['inputs', '9lives', 'first']) {
      await fill(id(), bad);
      expect(findStep(s().doc, 'say')).toBeDefined();
    }
    expect(host.textContent).toContain('already exists');
    // Esc takes the field back to the stored id.
    await act(async () => id().focus());
    await key(id(), 'Escape');
    expect(id().value).toBe('say');
    expect(host.textContent).not.toContain('already exists');
    await fill(id(), 'shout');
    expect(findStep(s().doc, 'say')).toBeUndefined();
    expect(findStep(s().doc, 'shout')).toBeDefined();
    expect(s().selected).toEqual(['shout']);
    expect(s().past.map((e) => e.label)).toEqual(['Rename step']);
    expect(id().value).toBe('shout');
  });

  it('sets common fields and the fallback', async () => {
    await mount(DOC, ['say']);
    await fill(q<HTMLInputElement>('[data-testid="step-timeout"]')!, '1500');
    const on = q<HTMLSelectElement>('[data-testid="step-on-error"]')!;
    await act(async () => {
      on.value = 'continue';
      on.dispatchEvent(new Event('change', { bubbles: true }));
    });
    const fb = q<HTMLSelectElement>('[data-testid="step-fallback"]')!;
    const options = [...fb.options].map((o) => o.value);
    expect(options).toContain('mystery');
    expect(options).not.toContain('say');
    await act(async () => {
      fb.value = 'mystery';
      fb.dispatchEvent(new Event('change', { bubbles: true }));
    });
    expect(findStep(s().doc, 'say')).toMatchObject({ timeout_ms: 1500, on_error: 'continue', fallback: 'mystery' });
    expect(s().past.map((e) => e.label)).toEqual(['Edit step', 'Edit step', 'Set fallback']);
  });
});

describe('Inspector: raw JSON', () => {
  const openRaw = async () => {
    await mount(DOC, ['say']);
    await click(q('[data-testid="raw-json-tab"]')!);
    return editorOf(q('[data-testid="raw-json-editor"]'))!;
  };
  const setText = (view: ReturnType<typeof editorOf>, text: string) =>
    act(async () => void view!.dispatch({ changes: { from: 0, to: view!.state.doc.length, insert: text } }));

  it('applies nothing when the JSON is invalid, and keeps the text', async () => {
    const view = await openRaw();
    expect(JSON.parse(view.state.doc.toString())).toEqual(findStep(s().doc, 'say'));
    const before = s().doc;
    const bad = '{\n  "id": "say",\n  "kind": "tool"\n  "tool": "echo"\n}';
    await setText(view, bad);
    await click(q('[data-testid="raw-json-apply"]')!);
    expect(s().doc).toBe(before);
    expect(s().past).toHaveLength(0);
    expect(q('[data-testid="raw-json-error"]')!.textContent).toContain('line 4:3');
    expect(view.state.doc.toString()).toBe(bad);
    // Valid JSON that is not a step is refused too.
    await setText(view, '{ "id": "say" }');
    await click(q('[data-testid="raw-json-apply"]')!);
    expect(q('[data-testid="raw-json-error"]')!.textContent).toContain('kind');
    await setText(view, '{ "id": "first", "kind": "wait", "ms": 1 }');
    await click(q('[data-testid="raw-json-apply"]')!);
    expect(q('[data-testid="raw-json-error"]')!.textContent).toContain('already exists');
    expect(s().doc).toBe(before);
  });

  it('replaces the step, renaming it properly', async () => {
    const view = await openRaw();
    await setText(view, '{ "id": "shout", "kind": "tool", "server": "everything", "tool": "echo", "args": { "message": "hi" } }');
    await click(q('[data-testid="raw-json-apply"]')!);
    expect(q('[data-testid="raw-json-error"]')).toBeNull();
    expect(findStep(s().doc, 'shout')).toMatchObject({ args: { message: 'hi' } });
    expect(s().selected).toEqual(['shout']);
    expect(s().past).toHaveLength(1);
    // Still on the raw tab, showing the stored step.
    expect(JSON.parse(editorOf(q('[data-testid="raw-json-editor"]'))!.state.doc.toString()).id).toBe('shout');
  });
});

describe('Inspector: diagnostics and selection', () => {
  it('lists the step’s diagnostics and focuses the field a diagnostic points at', async () => {
    await mount(DOC, []);
    await act(async () =>
      s().setDiagnostics([
        { level: 'warning', code: 'ARG_MISSING', message: 'missing required argument `message`', pointer: '/steps/1/args/message', step: 'say', hint: null },
        { level: 'error', code: 'TIMEOUT', message: 'bad timeout', pointer: '/steps/1/timeout_ms', step: 'say', hint: null },
      ]),
    );
    await act(async () => s().selectDiagnostic(s().diagnostics[0]!));
    expect(q('[data-testid="inspector-diagnostics"]')!.textContent).toContain('ARG_MISSING');
    const message = q<HTMLInputElement>('#root_message')!;
    expect(document.activeElement).toBe(message);
    expect(message.closest('.rjsf-field')!.classList.contains('is-flagged')).toBe(true);
    // The diagnostic shows under the field too.
    expect(message.closest('.rjsf-field')!.textContent).toContain('missing required argument');

    const rows = host.querySelectorAll<HTMLElement>('[data-testid="inspector-diagnostic"]');
    await click(rows[1]!);
    const timeout = q<HTMLInputElement>('[data-testid="step-timeout"]')!;
    expect(document.activeElement).toBe(timeout);
    expect(timeout.closest('[data-pointer="/timeout_ms"]')!.className).toContain('has-error');
    // The raw JSON tab can still be opened afterwards; a new click comes back to the form.
    await click(q('[data-testid="raw-json-tab"]')!);
    expect(q('[data-testid="raw-json-editor"]')).not.toBeNull();
    await click(host.querySelectorAll<HTMLElement>('[data-testid="inspector-diagnostic"]')[0]!);
    expect(q('[data-testid="raw-json-editor"]')).toBeNull();
    expect(document.activeElement).toBe(q('#root_message'));
  });

  it('shows a multi-selection with Delete and Duplicate', async () => {
    await mount(DOC, ['first', 'say']);
    expect(q('[data-testid="multi-selection"]')!.textContent).toContain('2 steps selected');
    await click(q('[data-testid="inspector-duplicate"]')!);
    expect(findStep(s().doc, 'first_2')).toBeDefined();
    await act(async () => s().select(['first', 'say']));
    await click(q('[data-testid="inspector-delete"]')!);
    expect(findStep(s().doc, 'first')).toBeUndefined();
    expect(findStep(s().doc, 'say')).toBeUndefined();
    expect(q('[data-testid="settings-form"]')).not.toBeNull();
  });
});

describe('Inspector: a past run shown', () => {
  it('shows every field of the definition it used, none editable', async () => {
    await mount(DOC, ['say']);
    const inputs = () => [...host.querySelectorAll<HTMLInputElement>('[data-testid="inspector-fields"] input, [data-testid="inspector-fields"] textarea, [data-testid="inspector-fields"] select')];
    expect(inputs().length).toBeGreaterThan(3);
    expect(inputs().every((el) => !el.matches(':disabled'))).toBe(true);
    expect(q('[data-testid="inspector-read-only"]')).toBeNull();
    await act(async () => s().setReadOnly(true));
    expect(inputs().length).toBeGreaterThan(3);
    expect(inputs().filter((el) => !el.matches(':disabled')).map((el) => el.outerHTML)).toEqual([]);
    expect(q('[data-testid="inspector-read-only"]')!.textContent).toMatch(/past run used/);
    await act(async () => s().setReadOnly(false));
    expect(inputs().every((el) => !el.matches(':disabled'))).toBe(true);
  });
});

describe('Inspector: every example', () => {
  it('renders the settings and every step of every example without errors', async () => {
    const errors = vi.spyOn(console, 'error');
    for (const [name, text] of Object.entries(EXAMPLES)) {
      const doc = JSON.parse(text) as Blueprint;
      await mount(doc);
      expect(q('[data-testid="settings-form"]'), name).not.toBeNull();
      for (const id of allStepIds(doc)) {
        await act(async () => s().select([id]));
        expect(q('[data-testid="step-form"]'), `${name}/${id}`).not.toBeNull();
        expect(q<HTMLInputElement>('[data-testid="step-id-input"]')!.value).toBe(id);
      }
      // Looking is not editing.
      expect(s().past, name).toHaveLength(0);
    }
    expect(errors).not.toHaveBeenCalled();
  });
});
