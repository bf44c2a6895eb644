// @vitest-environment jsdom
// The args form over the real input schemas of the reference servers
// (server-everything, -memory, -filesystem; captured in testdata/).

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { docStore, findStep, type Blueprint, type JsonObject } from '../../doc';
import { Inspector } from './Inspector';
import type { Offer, OfferedTool } from './offers';
import tools from './testdata/reference-tools.json';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const TOOLS = tools as OfferedTool[];
const OFFERS: Offer[] = [...new Set(TOOLS.map((t) => t.server))].map((server) => ({
  server,
  tools: TOOLS.filter((t) => t.server === server),
  resources: [],
  prompts: [],
}));

let root: Root;
let host: HTMLElement;
const q = <T extends Element = HTMLElement>(sel: string) => host.querySelector<T>(sel);
const s = () => docStore.getState();
const args = (id = 'step') => (findStep(s().doc, id) as { args?: unknown }).args;

const setValue = (el: HTMLInputElement, value: string) => {
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(el, value);
  el.dispatchEvent(new Event('input', { bubbles: true }));
};
const fill = async (el: HTMLInputElement, value: string) => {
  await act(async () => el.focus());
  await act(async () => setValue(el, value));
  // The focused field: typing `{{` into a fixed number replaces it with an expression input.
  await act(async () => (document.activeElement as HTMLElement | null)?.blur());
};

async function mountTool(server: string, tool: string, a: JsonObject = {}) {
  const doc: Blueprint = { blueprint: 1, id: 't', steps: [{ id: 'step', kind: 'tool', server, tool, args: a }] };
  await act(async () => {
    s().load(doc);
    s().select(['step']);
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

describe('ArgsForm over the reference servers’ tools', () => {
  it('renders a field with id root_<prop> for every property of every tool', async () => {
    const errors = vi.spyOn(console, 'error');
    expect(TOOLS.length).toBeGreaterThan(30);
    for (const t of TOOLS) {
      await mountTool(t.server, t.name);
      const form = q('[data-testid="args-form"]');
      expect(form, t.name).not.toBeNull();
      for (const prop of Object.keys((t.input_schema as { properties?: object }).properties ?? {})) {
        expect(q(`#root_${prop}`), `${t.name}.${prop}`).not.toBeNull();
      }
      expect(s().past, t.name).toHaveLength(0);
    }
    expect(errors).not.toHaveBeenCalled();
  });

  it('edits nested arrays of objects, and takes a template for a whole array', async () => {
    await mountTool('memory', 'create_entities');
    await act(async () => q<HTMLButtonElement>('[data-testid="args-form"] .btn-add')!.click());
    expect(args()).toEqual({ entities: [{}] });
    await fill(q<HTMLInputElement>('#root_entities_0_name')!, '{{ inputs.who }}');
    expect(args()).toEqual({ entities: [{ name: '{{ inputs.who }}' }] });

    await act(async () => q<HTMLButtonElement>('[data-testid="template-toggle-root_entities"]')!.click());
    await fill(q<HTMLInputElement>('#root_entities')!, '{{ prev.entities }}');
    expect(args()).toEqual({ entities: '{{ prev.entities }}' });
    // A stored template opens as a template input.
    await mountTool('memory', 'create_entities', { entities: '{{ prev.entities }}' });
    expect(q<HTMLInputElement>('#root_entities')!.value).toBe('{{ prev.entities }}');
  });

  it('keeps a number a number, and does not write schema defaults into args', async () => {
    await mountTool('everything', 'get-sum');
    await fill(q<HTMLInputElement>('#root_a')!, '2.5');
    await fill(q<HTMLInputElement>('#root_b')!, '{{ inputs.n }}');
    expect(args()).toEqual({ a: 2.5, b: '{{ inputs.n }}' });
    // The form never mutates the stored document: the snapshots undo keeps are intact.
    expect(s().past.map((e) => (e.doc.steps[0] as { args?: unknown }).args)).toEqual([{}, { a: 2.5 }]);
    await mountTool('everything', 'get-resource-links');
    expect(q<HTMLInputElement>('#root_count')!.value).toBe('');
    expect(q<HTMLInputElement>('#root_count')!.placeholder).toBe('default: 3');
    await fill(q<HTMLInputElement>('#root_count')!, '4');
    expect(args()).toEqual({ count: 4 });
  });

  it('shows schema errors under the field after it is left (templates are fine)', async () => {
    await mountTool('everything', 'get-resource-links');
    await fill(q<HTMLInputElement>('#root_count')!, '40');
    expect(q('#root_count')!.closest('.rjsf-field')!.textContent).toContain('10');
    await fill(q<HTMLInputElement>('#root_count')!, '{{ inputs.count }}');
    expect(q('#root_count')!.closest('.rjsf-field')!.querySelector('.error-detail')).toBeNull();
  });
});

/** Types `text` one character at a time into the field `#<id>`, finding it again each time (it may be replaced). */
async function typeInto(id: string, text: string) {
  for (let i = 1; i <= text.length; i++) {
    const el = q<HTMLInputElement>(`#${id}`)!;
    if (document.activeElement !== el) await act(async () => el.focus());
    await act(async () => setValue(el, text.slice(0, i)));
  }
}

describe('Fixed / Expression switch of number, integer and boolean fields', () => {
  it('keeps the dot: `{{ transform.said }}` typed into a number field is stored as typed', async () => {
    await mountTool('everything', 'get-sum');
    await typeInto('root_a', '{{ transform.said }}');
    // Typing `{{` turned the fixed number into an expression, the focus stayed in it.
    expect(q('[data-testid="template-toggle-root_a"]')!.getAttribute('aria-pressed')).toBe('true');
    expect(document.activeElement?.id).toBe('root_a');
    expect(q<HTMLInputElement>('#root_a')!.value).toBe('{{ transform.said }}');
    await act(async () => q<HTMLInputElement>('#root_a')!.blur());
    expect(args()).toEqual({ a: '{{ transform.said }}' });
  });

  it('number: fixed → expression → fixed, and what each writes to the document', async () => {
    await mountTool('everything', 'get-sum', { a: 3 });
    const toggle = () => q<HTMLButtonElement>('[data-testid="template-toggle-root_a"]')!;
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
    // Fixed: a typed number is a number, decimals typed one by one included.
    await typeInto('root_a', '2.05');
    await act(async () => q<HTMLInputElement>('#root_a')!.blur());
    expect(args()).toEqual({ a: 2.05 });
    // To expression: the field is a template input; what is typed is stored verbatim.
    await act(async () => toggle().click());
    expect(toggle().getAttribute('aria-pressed')).toBe('true');
    await fill(q<HTMLInputElement>('#root_a')!, '{{ inputs.n.value }}');
    expect(args()).toEqual({ a: '{{ inputs.n.value }}' });
    // A stored expression opens as one.
    await mountTool('everything', 'get-sum', { a: '{{ prev.x.y }}' });
    expect(toggle().getAttribute('aria-pressed')).toBe('true');
    expect(q<HTMLInputElement>('#root_a')!.value).toBe('{{ prev.x.y }}');
    // Back to fixed: the expression is cleared, the fixed input takes a number again.
    await act(async () => toggle().click());
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
    expect(args()).toEqual({});
    await fill(q<HTMLInputElement>('#root_a')!, '7');
    expect(args()).toEqual({ a: 7 });
  });

  it('boolean: fixed checkbox ↔ expression', async () => {
    await mountTool('filesystem', 'edit_file', { path: '/x', edits: [] });
    const toggle = () => q<HTMLButtonElement>('[data-testid="template-toggle-root_dryRun"]')!;
    await act(async () => q<HTMLInputElement>('#root_dryRun')!.click());
    expect((args() as { dryRun?: unknown }).dryRun).toBe(true);
    await act(async () => toggle().click());
    await fill(q<HTMLInputElement>('#root_dryRun')!, '{{ inputs.dry.run }}');
    expect((args() as { dryRun?: unknown }).dryRun).toBe('{{ inputs.dry.run }}');
    await act(async () => toggle().click());
    expect((args() as { dryRun?: unknown }).dryRun).toBeUndefined();
    expect(q<HTMLInputElement>('#root_dryRun')!.type).toBe('checkbox');
  });
});

describe('what is typed into an expression where the schema wants a value', () => {
  it('a JSON value of the wanted type is stored as that value, and the field shows it fixed', async () => {
    await mountTool('everything', 'get-sum', { a: 3 });
    const toggle = () => q<HTMLButtonElement>('[data-testid="template-toggle-root_a"]')!;
    await act(async () => toggle().click());
    await fill(q<HTMLInputElement>('#root_a')!, '12');
    expect(args()).toEqual({ a: 12 });
    expect(toggle().getAttribute('aria-pressed')).toBe('false');
  });
});
