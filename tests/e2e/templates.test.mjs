// A template editor worth its name (issue 33, point 3), on the real app. After a run of
// `greet` (a transform) → `copy` (a transform of `{{ greet }}`: its fields are known only
// from the run) → `say` (the echo fixture's `echo`): in `say`'s message, `{{ copy.`
// completes `copy.said` (a field of the producing step's output, from the last run) and
// the live preview under the field shows its value against that run. The editor (⤢):
// several lines, the result live, a wrong key is the run's own error with the keys that
// exist, a syntax error shows as one types, the template reference opens from it, Apply
// writes the field; the template is coloured and a field of the last run dragged from
// beside it (or from the Run panel's Scope into a field) lands at the drop point. A blueprint never run says "no run yet".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approveAll, click, importDoc, openStudio, runStatus, sel, shown, until } from './harness.mjs';

const DOC = {
  blueprint: 1,
  id: 'template-preview',
  name: 'Template preview',
  steps: [
    { id: 'greet', kind: 'transform', value: { said: 'hello', who: ['ada', 'grace'] } },
    { id: 'copy', kind: 'transform', value: '{{ greet }}' },
    { id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'x' } },
  ],
};

async function jsClick(browser, selector) {
  const el = await browser.$(selector);
  await el.waitForExist({ timeout: 15_000 });
  await browser.execute((e) => e.click(), el);
}

/**
 * Drags `source` onto the bottom-right corner of `target` (inside its box) with HTML5
 * drag events dispatched in the page: WebDriver pointer actions give none in WebKit.
 */
async function dragOnto(browser, source, target) {
  const r = await browser.execute(
    (s, t) => {
      const from = document.querySelector(s);
      const to = document.querySelector(t);
      if (!from || !to) return `missing ${!from ? s : t}`;
      const box = to.getBoundingClientRect();
      const data = new DataTransfer();
      const at = { bubbles: true, cancelable: true, dataTransfer: data, clientX: box.right - 30, clientY: box.bottom - 8 };
      from.dispatchEvent(new DragEvent('dragstart', { ...at, clientX: 0, clientY: 0 }));
      to.dispatchEvent(new DragEvent('dragenter', at));
      to.dispatchEvent(new DragEvent('dragover', at));
      to.dispatchEvent(new DragEvent('drop', at));
      from.dispatchEvent(new DragEvent('dragend', at));
      return 'ok';
    },
    source,
    target,
  );
  assert.equal(r, 'ok');
}

/** Replaces the editor's text with the two lines the test checks the result of. */
async function typeTwoLines(browser, editor) {
  await browser.keys(['Control', 'a']);
  await browser.keys(['Backspace']);
  await editor.addValue('Hi {{ greet.who[0] }},');
  await browser.keys(['Enter']);
  await editor.addValue('copy says {{ copy.said }}');
}

async function text(browser, selector) {
  return (await shown(browser, selector)).getProperty('textContent');
}

async function previewKind(browser, within = '') {
  const el = await browser.$(`${within} ${sel('template-preview')}`.trim());
  return (await el.isExisting()) ? el.getAttribute('data-kind') : null;
}

test('a template completed from an output field of the last run, with its value previewed', async () => {
  const studio = await openStudio('templates');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await importDoc(studio, DOC);
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => ['succeeded', 'failed'].includes(await runStatus(browser)), 'the run to end', 60_000);
    assert.equal(await runStatus(browser), 'succeeded');
    // A field of the run's Scope (the Run panel) dragged into a step's template field
    // lands where it is dropped, as n8n's drag from the input panel.
    await jsClick(browser, sel('step-say'));
    await shown(browser, '#root_message');
    await click(browser, `${sel('scope')} > summary`);
    const scoped = `${sel('scope-copy')} [data-template="{{ copy.said }}"]`;
    await shown(browser, scoped);
    await dragOnto(browser, scoped, '#root_message');
    await until(async () => (await (await browser.$('#root_message')).getValue()) === 'x{{ copy.said }}', 'the dropped field in the message');
    await studio.shot('scope-dragged');
    await browser.keys(['Tab']);

    // The run closed: previews read the newest run in History.
    await click(browser, sel('run-close'));

    await jsClick(browser, sel('step-say'));
    const message = await shown(browser, '#root_message');
    await message.click();
    await browser.keys(['Control', 'a']);
    await browser.keys(['Backspace']);
    await message.addValue('{{ copy.');
    const list = await shown(browser, sel('template-suggestions'));
    const offered = await list.getText();
    assert.match(offered, /copy\.said/, `copy's fields from the last run are offered: ${offered}`);
    assert.match(offered, /copy\.who/);
    await studio.shot('completion-from-run');
    await browser.keys(['Enter']);
    assert.equal(await message.getValue(), '{{ copy.said }}');
    await until(async () => (await previewKind(browser, sel('args-form'))) === 'value', 'the preview under the field');
    assert.equal(await text(browser, `${sel('args-form')} ${sel('template-preview')}`), '= "hello"');
    await studio.shot('inline-preview');

    // A key that is not there: the run's own error, with the keys that exist.
    await browser.keys(['Backspace', 'Backspace', 'Backspace', 'Backspace']);
    await until(async () => (await previewKind(browser, sel('args-form'))) === 'problem', 'an error as one types');
    const problem = await text(browser, `${sel('args-form')} ${sel('template-preview')}`);
    assert.match(problem, /TEMPLATE/, problem);

    // The editor: multi-line, the result live, errors as one types, the reference.
    await click(browser, sel('template-expand-root_message'));
    const editor = await shown(browser, sel('template-editor-input'));
    // It opens focused (the suggestions may cover it): select all and type over it.
    await until(async () => browser.execute(() => document.activeElement?.getAttribute('data-testid') === 'template-editor-input'), 'the editor focused');
    await typeTwoLines(browser, editor);
    await until(async () => /Hi ada,\\ncopy says hello|Hi ada,\ncopy says hello/.test(await text(browser, sel('template-editor-result'))), 'the result of two lines');
    await studio.shot('editor-result');
    await editor.addValue(' {{ copy.saidd }}');
    await until(async () => (await (await browser.$(sel('template-editor-result'))).getAttribute('data-kind')) === 'problem', 'the error');
    const unresolved = await text(browser, sel('template-editor-result'));
    assert.match(unresolved, /TEMPLATE_UNRESOLVED/, unresolved);
    assert.match(unresolved, /said/, `it names the key that exists: ${unresolved}`);
    await studio.shot('editor-error');
    await typeTwoLines(browser, editor);
    // Coloured: the delimiters, paths and plain text each painted behind the text.
    const path = await browser.execute(() => [...document.querySelectorAll('[data-testid="template-highlight"] .tpl-t-path')].map((e) => e.textContent));
    assert.deepEqual(path, ['greet.who[0]', 'copy.said']);
    // The last run's values beside it: a key dragged in lands where it is dropped.
    const said = `${sel('template-fields-copy')} [data-template="{{ copy.said }}"]`;
    await shown(browser, said);
    await editor.addValue(' and ');
    await dragOnto(browser, said, sel('template-editor-input'));
    await until(async () => (await editor.getValue()).endsWith('copy says {{ copy.said }} and {{ copy.said }}'), 'the dropped field in the text');
    await until(async () => /copy says hello and hello/.test(await text(browser, sel('template-editor-result'))), 'the result with the dropped field');
    await studio.shot('editor-highlight-drag');
    // Long enough to wrap and scroll: the painted letters stay under the typed ones.
    await editor.addValue(' and a long tail of words'.repeat(40));
    const drift = await browser.execute(() => {
      const ta = document.querySelector('[data-testid="template-editor-input"]');
      const pre = document.querySelector('[data-testid="template-highlight"]');
      return { width: ta.clientWidth - pre.clientWidth, scroll: ta.scrollTop - pre.scrollTop, height: ta.scrollHeight - pre.scrollHeight };
    });
    assert.deepEqual(drift, { width: 0, scroll: 0, height: 0 }, 'the painted layer lines up with the textarea');
    await studio.shot('editor-long-text');
    await typeTwoLines(browser, editor);
    await click(browser, sel('template-reference-link'));
    assert.match(await text(browser, sel('template-reference')), /Strict paths/);
    await studio.shot('reference');
    await browser.keys(['Escape']);
    await until(async () => !(await browser.$(sel('template-reference')).isExisting()), 'the reference closed');
    await click(browser, sel('template-editor-apply'));
    await until(async () => (await message.getValue()).startsWith('Hi {{ greet.who[0] }},'), 'the field holding the editor’s text');
    assert.equal(await message.getValue(), 'Hi {{ greet.who[0] }},\ncopy says {{ copy.said }}');

    // A blueprint never run: no run yet (the syntax still checked).
    await importDoc(studio, { ...DOC, id: 'never-run', name: 'Never run' });
    await jsClick(browser, sel('step-say'));
    const fresh = await shown(browser, '#root_message');
    await fresh.click();
    await browser.keys(['Control', 'a']);
    await browser.keys(['Backspace']);
    await fresh.addValue('{{ copy.said }}');
    await until(async () => (await previewKind(browser, sel('args-form'))) === 'no-run', '"no run yet"');
    await fresh.addValue(' {{ copy. }}');
    await until(async () => (await previewKind(browser, sel('args-form'))) === 'problem', 'a syntax error without a run');
    await studio.shot('no-run-syntax-error');
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
