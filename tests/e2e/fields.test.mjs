// Fields take what people type (issue 33, point 1), on the real app: a loop's list field
// given `["ada","grace","linus"]` stores a list (not a string), shows it as chips with
// the Fixed / Expression switch on Fixed, the card shows a list (not the text), and the
// loop runs three iterations. The switch keeps the value both ways (Expression holds it
// as a literal template); JSON of the wrong type typed in Fixed is refused with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { click, fill, importDoc, openStudio, runStatus, sel, shown, until } from './harness.mjs';

const DOC = {
  blueprint: 1,
  id: 'names-loop',
  name: 'Greet names',
  steps: [
    {
      id: 'each',
      kind: 'loop',
      for_each: '{{ inputs.names }}',
      steps: [{ id: 'greet', kind: 'transform', value: 'hello {{ item }}' }],
    },
  ],
};


/** The loop's `for_each` as stored, read from the Raw JSON tab. */
async function storedForEach(browser) {
  await click(browser, sel('raw-json-tab'));
  const text = await browser.execute(() => document.querySelector('[data-testid="raw-json-editor"] .cm-content')?.textContent ?? '');
  await click(browser, sel('step-form-tab'));
  const m = /"for_each":\s*(\[[^\]]*\]|"(?:[^"\\]|\\.)*")/.exec(text);
  return m ? JSON.parse(m[1]) : undefined;
}

test('a JSON list typed into a loop’s list field is stored as a list, shown as one, and the loop runs', async () => {
  const studio = await openStudio('fields');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await importDoc(studio, DOC);
    await click(browser, `${sel('step-each')} .loop-head`);
    const field = await shown(browser, sel('loop-for-each-field'));
    assert.equal(await field.getAttribute('data-mode'), 'expression', 'a template opens as an expression');
    assert.equal(await (await browser.$(sel('loop-over-each'))).getAttribute('data-value'), 'expression');

    // Typed into the expression field as people do: it is JSON of the wanted type, so a list.
    await fill(browser, sel('loop-for-each'), '["ada","grace","linus"]');
    await until(async () => (await field.getAttribute('data-mode')) === 'fixed', 'the field to show Fixed');
    assert.deepEqual(await storedForEach(browser), ['ada', 'grace', 'linus']);
    const chips = await shown(browser, sel('fixed-chips'));
    assert.match(await chips.getText(), /list · 3 items\s*ada\s*grace\s*linus/);
    const over = await browser.$(sel('loop-over-each'));
    assert.equal(await over.getAttribute('data-value'), 'list', 'the card shows a list, not text');
    assert.match(await over.getText(), /list · 3 ada, grace, linus/);
    assert.equal(await (await browser.$(sel('loop-for-each-fixed'))).getAttribute('aria-checked'), 'true');
    await studio.shot('fixed-list');

    // Fixed refuses JSON of another type, saying why, and commits nothing.
    await fill(browser, sel('loop-for-each'), '{"name": "ada"}');
    const alert = await shown(browser, `${sel('loop-for-each-field')} [role="alert"]`);
    assert.equal(await alert.getText(), 'a JSON object; this field wants a list');
    await studio.shot('fixed-refuses-object');
    await (await shown(browser, sel('loop-for-each'))).click();
    await browser.keys(['Escape']);
    assert.deepEqual(await storedForEach(browser), ['ada', 'grace', 'linus']);

    // Expression keeps the value as a literal template; Fixed reads it back.
    await click(browser, sel('loop-for-each-expression'));
    await until(async () => (await field.getAttribute('data-mode')) === 'expression', 'Expression');
    assert.equal(await storedForEach(browser), '{{ `["ada","grace","linus"]` }}');
    assert.equal(await (await browser.$(sel('loop-over-each'))).getAttribute('data-value'), 'expression');
    await studio.shot('as-expression');
    await click(browser, sel('loop-for-each-fixed'));
    await until(async () => (await field.getAttribute('data-mode')) === 'fixed', 'Fixed again');
    assert.deepEqual(await storedForEach(browser), ['ada', 'grace', 'linus']);

    // The loop runs over the list.
    await click(browser, sel('run-start'));
    await until(async () => ['succeeded', 'failed', 'partial'].includes(await runStatus(browser)), 'the run to end', 60_000);
    assert.equal(await runStatus(browser), 'succeeded');
    await click(browser, `${sel('step-each')} .loop-head`);
    const output = await shown(browser, `${sel('step-run')} ${sel('step-run-output')}`);
    const text = await output.getProperty('textContent');
    for (const name of ['ada', 'grace', 'linus']) assert.match(text, new RegExp(`hello ${name}`), `the output has hello ${name}: ${text}`);
    await studio.shot('ran');
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
