// @vitest-environment jsdom
// Dragging an output field into a template field: the template the drag carries, and
// a drop on a field inserting it (at the caret where the engine cannot tell the point,
// as in jsdom) while the highlighted editor paints the new text.

import { act, useState } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TemplateInput } from './TemplateInput';
import { JsonView } from '../run/JsonView';
import { FIELD_MIME, fieldTemplate } from '../../shared/field-drop';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

describe('fieldTemplate', () => {
  it('writes the short form completion uses, quoting keys that are not identifiers', () => {
    expect(fieldTemplate('fetch', [])).toBe('{{ fetch }}');
    expect(fieldTemplate('fetch', ['items', 0, 'name'])).toBe('{{ fetch.items[0].name }}');
    expect(fieldTemplate('fetch', ['content-type'])).toBe('{{ fetch."content-type" }}');
  });
});

describe('dropping a field', () => {
  let host: HTMLDivElement;
  let root: Root;
  beforeEach(() => {
    host = document.createElement('div');
    document.body.appendChild(host);
    root = createRoot(host);
  });
  afterEach(() => {
    act(() => root.unmount());
    host.remove();
  });

  function dataTransfer(): DataTransfer {
    const data = new Map<string, string>();
    return {
      get types() {
        return [...data.keys()];
      },
      setData: (k: string, v: string) => void data.set(k, v),
      getData: (k: string) => data.get(k) ?? '',
      effectAllowed: 'all',
      dropEffect: 'none',
    } as unknown as DataTransfer;
  }

  function fire(el: Element, type: string, dt: DataTransfer) {
    const e = new Event(type, { bubbles: true, cancelable: true });
    Object.assign(e, { dataTransfer: dt, clientX: 0, clientY: 0 });
    act(() => void el.dispatchEvent(e));
    return e;
  }

  it('inserts the dragged key of a step output at the caret of the field, painted', () => {
    function Both() {
      const [text, setText] = useState('Hi !');
      return (
        <>
          <JsonView value={{ said: 'hello', who: ['ada'] }} step="greet" />
          <TemplateInput value={text} onChange={setText} multiline highlight data-testid="field" />
        </>
      );
    }
    act(() => root.render(<Both />));
    const key = [...host.querySelectorAll('[data-testid="json-drag-key"]')].find((k) => k.textContent === 'said')!;
    expect(key.getAttribute('draggable')).toBe('true');
    const dt = dataTransfer();
    fire(key, 'dragstart', dt);
    expect(dt.getData(FIELD_MIME)).toBe('{{ greet.said }}');

    const field = host.querySelector<HTMLTextAreaElement>('[data-testid="field"]')!;
    field.focus();
    field.setSelectionRange(3, 3);
    expect(fire(field, 'dragover', dt).defaultPrevented).toBe(true);
    expect(fire(field, 'drop', dt).defaultPrevented).toBe(true);
    expect(field.value).toBe('Hi {{ greet.said }}!');
    const paint = host.querySelector('[data-testid="template-highlight"]')!;
    expect(paint.textContent).toBe('Hi {{ greet.said }}!\n');
    expect(paint.querySelector('.tpl-t-path')?.textContent).toBe('greet.said');
  });

  it('leaves a drop of something else to the browser', () => {
    act(() => root.render(<TemplateInput value="x" onChange={() => {}} data-testid="field" />));
    const dt = dataTransfer();
    dt.setData('text/plain', 'y');
    const field = host.querySelector('[data-testid="field"]')!;
    expect(fire(field, 'drop', dt).defaultPrevented).toBe(false);
  });
});
