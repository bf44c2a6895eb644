// @vitest-environment jsdom
// The `input` step's inspector fields on the app's document store: the prompt, the
// schema editor (a type choice, the options of a list, raw JSON), the default typed
// by the schema, the timeout, the approval gate switch — each one undoable edit — and
// a destructive tool's offer to ask before each call.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { docStore, findStep, type Blueprint } from '../../doc';
import { editorOf } from './CodeEditor';
import { Inspector } from './Inspector';
import { optionsText, parseOptions, schemaFor, schemaMode } from './InputFields';
import type { Offer } from './offers';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;
const rangeProto = Range.prototype as unknown as Record<string, unknown>;
rangeProto.getClientRects ??= () => [];
rangeProto.getBoundingClientRect ??= () => ({ x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0 });

const OFFERS: Offer[] = [
  {
    server: 'cluster',
    tools: [
      { server: 'cluster', name: 'delete_pods', description: 'Deletes pods', input_schema: { type: 'object', properties: {} }, annotations: { destructiveHint: true } },
      { server: 'cluster', name: 'list_pods', description: 'Lists pods', input_schema: { type: 'object', properties: {} }, annotations: { destructiveHint: true, readOnlyHint: true } },
    ],
    resources: [],
    prompts: [],
  },
];

const DOC: Blueprint = {
  blueprint: 1,
  id: 'ask',
  steps: [
    { id: 'who', kind: 'input', prompt: 'Who?' },
    { id: 'del', kind: 'tool', server: 'cluster', tool: 'delete_pods', args: {} },
    { id: 'list', kind: 'tool', server: 'cluster', tool: 'list_pods', args: {} },
  ],
};

let root: Root;
let host: HTMLElement;
const q = <T extends Element = HTMLElement>(sel: string) => host.querySelector<T>(sel);
const tid = <T extends Element = HTMLElement>(id: string) => q<T>(`[data-testid="${id}"]`);
const s = () => docStore.getState();
const step = (id: string) => findStep(s().doc, id) as unknown as Record<string, unknown>;

async function fill(el: HTMLInputElement, value: string) {
  await act(async () => el.focus());
  await act(async () => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await act(async () => el.blur());
}
async function choose(el: HTMLSelectElement | null, value: string) {
  expect(el).not.toBeNull();
  await act(async () => {
    el!.value = value;
    el!.dispatchEvent(new Event('change', { bubbles: true }));
  });
}

async function mount(select: string) {
  await act(async () => {
    s().load(structuredClone(DOC));
    s().select([select]);
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
});

describe('the schema editor', () => {
  it('reads a schema as the answer it asks, and writes one back', () => {
    expect(schemaMode(undefined)).toBe('string');
    expect(schemaMode({ type: 'integer', title: 'Count' })).toBe('integer');
    expect(schemaMode({ type: 'string', enum: ['a', 'b'] })).toBe('enum');
    expect(schemaMode({ type: 'string', minLength: 2 })).toBe('json');
    expect(schemaMode({ type: 'object', properties: {} })).toBe('json');
    expect(schemaFor('boolean', { type: 'string', title: 'T' })).toEqual({ type: 'boolean', title: 'T' });
    expect(schemaFor('enum', undefined)).toEqual({ type: 'string', enum: ['yes', 'no'] });
    expect(schemaMode(schemaFor('json', undefined))).toBe('json');
    expect(optionsText({ enum: ['small', 'large'] })).toBe('small, large');
    expect(parseOptions(' a, b ,, a ')).toEqual(['a', 'b']);
  });
});

describe('an input step in the inspector', () => {
  it('edits prompt, answer type, options, default and timeout, each one undoable edit', async () => {
    await mount('who');
    await fill(tid<HTMLInputElement>('input-prompt')!, 'How many {{ inputs.unit }}?');
    expect(step('who').prompt).toBe('How many {{ inputs.unit }}?');

    await choose(tid('input-schema-mode'), 'integer');
    expect(step('who').schema).toEqual({ type: 'integer' });
    await fill(tid<HTMLInputElement>('input-default')!, '3');
    expect(step('who').default).toBe(3);
    await fill(tid<HTMLInputElement>('input-default')!, 'many');
    expect(step('who').default).toBe(3); // not a number: shown, not committed
    expect(host.textContent).toContain('a number, or a {{ template }}');

    await choose(tid('input-schema-mode'), 'enum');
    expect(step('who').schema).toEqual({ type: 'string', enum: ['yes', 'no'] });
    await fill(tid<HTMLInputElement>('input-options')!, 'small, large');
    expect(step('who').schema).toEqual({ type: 'string', enum: ['small', 'large'] });
    await choose(tid('input-default'), 'large');
    expect(step('who').default).toBe('large');

    await fill(tid<HTMLInputElement>('input-timeout')!, '60000');
    await choose(tid('input-on-timeout'), 'default');
    expect(step('who')).toMatchObject({ timeout_ms: 60000, on_timeout: 'default' });

    const edits = s().past.length;
    await act(async () => void s().undo());
    expect(step('who').on_timeout).toBeUndefined();
    expect(s().past.length).toBe(edits - 1);
  });

  it('the raw JSON schema edits a form of fields', async () => {
    await mount('who');
    await choose(tid('input-schema-mode'), 'json');
    expect(editorOf(tid('input-schema-json'))).not.toBeNull();
    expect(schemaMode(step('who').schema as never)).toBe('json');
  });

  it('the approval gate switch drops the schema and default; undo brings them back', async () => {
    await act(async () => {
      s().load({ ...structuredClone(DOC), steps: [{ id: 'who', kind: 'input', prompt: 'Who?', schema: { type: 'integer' }, default: 2 }] } as Blueprint);
      s().select(['who']);
    });
    await act(async () => root.render(<Inspector offers={OFFERS} />));
    await act(async () => tid('input-approve')!.click());
    expect(step('who')).toEqual({ id: 'who', kind: 'input', prompt: 'Who?', approve: true });
    expect(tid('input-schema-mode')).toBeNull();
    await act(async () => void s().undo());
    expect(step('who')).toEqual({ id: 'who', kind: 'input', prompt: 'Who?', schema: { type: 'integer' }, default: 2 });
  });
});

describe('a destructive tool', () => {
  it('offers to ask before each call, and sets confirm: destructive', async () => {
    await mount('del');
    expect(tid('confirm-notice')!.textContent).toContain('may destroy data');
    await act(async () => tid('confirm-on')!.click());
    expect(step('del').confirm).toBe('destructive');
    expect(tid('confirm-notice')!.textContent).toContain('approve each call');
    await act(async () => void s().undo());
    expect(step('del').confirm).toBeUndefined();
  });

  it('says nothing for a tool that only reads, whatever else it says', async () => {
    await mount('list');
    expect(tid('confirm-notice')).toBeNull();
  });
});
