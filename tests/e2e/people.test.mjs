// People in the loop, end to end on the real app: (a) a blueprint calls server-everything's
// `trigger-elicitation-request` (registered only because the pool declares elicitation):
// the node waits for input, the notification selects it, the server's form is in the
// inspector; the test types the required name and accepts, and the tool's output holds
// it. (b) an approval gate rejected from the node's own button: the run fails with
// INPUT_REJECTED and the step after it never runs; with `on_error: continue` the run is
// partial and the step after it runs. Then an `input` step dropped from the palette, its
// answer type set in the inspector. Screenshots of the waiting node with its form, the
// approval gate, the finished runs and the input step's inspector.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approveAll, click, dragToCanvas, importDoc, nodeState, openStudio, runStatus, sel, shown, standsStill, until } from './harness.mjs';

async function untilStatus(browser, wanted, timeout = 60_000) {
  await until(async () => wanted.includes(await runStatus(browser)), `the run to be ${wanted.join(' or ')}`, timeout);
  return runStatus(browser);
}

async function untilNode(browser, id, state, timeout = 60_000) {
  await until(async () => (await nodeState(browser, id)) === state, `${id} to be ${state}`, timeout);
}

/** Where an element is on the screen: to check nothing moved under the mouse. */
async function box(browser, selector) {
  return browser.execute((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return r ? { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) } : null;
  }, selector);
}

test("people: a server's form answered in the inspector; an approval gate rejected from the node", async () => {
  const studio = await openStudio('people');
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);

    // ---- (a) A server asks during a call (MCP elicitation, form mode).
    const elicit = {
      blueprint: 1,
      id: 'e2e-elicitation',
      name: 'A server asks for a name',
      steps: [{ id: 'ask', kind: 'tool', server: 'everything', tool: 'trigger-elicitation-request', args: {} }],
    };
    await importDoc(studio, elicit);
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await untilNode(browser, 'ask', 'waiting');
    assert.equal(await runStatus(browser), 'running', 'the run goes on waiting');
    assert.equal(await (await browser.$(sel('run-state'))).getAttribute('data-waiting'), 'true', 'the toolbar says it waits for you');
    const label = await (await browser.$(sel('run-ask'))).getProperty('textContent');
    assert.match(label, /waiting for input/, `the node says it waits: ${label}`);
    const waitingCard = await box(browser, sel('step-ask'));
    const toast = await shown(browser, sel('question-toast'));
    assert.match(await toast.getText(), /server everything/);
    await studio.shot('elicitation-waiting');
    await toast.click();
    const form = await shown(browser, sel('question'));
    assert.equal(await form.getAttribute('data-asking'), 'elicitation');
    await shown(browser, '#answer_name');
    await studio.shot('elicitation-form');
    await (await browser.$('#answer_name')).setValue('Ada Lovelace');
    await click(browser, sel('question-accept'));
    assert.equal(await untilStatus(browser, ['succeeded', 'partial', 'failed', 'cancelled']), 'succeeded');
    assert.equal(await nodeState(browser, 'ask'), 'succeeded');
    // The card kept its size from waiting to done: waiting moves nothing on the canvas.
    const doneCard = await box(browser, sel('step-ask'));
    assert.deepEqual([doneCard.w, doneCard.h], [waitingCard.w, waitingCard.h], 'the card did not change size');
    // The output as text (the viewer's own toggle, clicked in the page: the panel may scroll under the pointer).
    await browser.execute((s) => document.querySelector(s)?.click(), `${sel('step-run-output')} .json-mode`);
    const output = await shown(browser, `${sel('step-run-output')} .json-raw`);
    assert.match(await output.getText(), /Name: Ada Lovelace/, 'the tool got the name: its output says it');
    const answer = await shown(browser, sel('step-run-answer'));
    assert.equal(await answer.getAttribute('data-action'), 'accept');
    assert.equal(await (await browser.$(sel('question-toast'))).isExisting(), false, 'no notification once answered');
    await studio.shot('elicitation-succeeded');

    // ---- (b) An approval gate, rejected from the node: the run fails INPUT_REJECTED.
    const gate = (onError) => ({
      blueprint: 1,
      id: onError ? 'e2e-approval-continue' : 'e2e-approval',
      name: onError ? 'Approve, or go on without' : 'Approve before deleting',
      steps: [
        { id: 'count', kind: 'transform', value: 40 },
        { id: 'gate', kind: 'input', prompt: 'Delete the {{ count }} pods of namespace shop?', approve: true, ...(onError ? { on_error: 'continue' } : {}) },
        { id: 'delete', kind: 'transform', value: 'deleted {{ count }} pods' },
      ],
    });
    await click(browser, sel('run-close'));
    await importDoc(studio, gate(false));
    await click(browser, sel('run-start'));
    await untilNode(browser, 'gate', 'waiting');
    assert.match(await (await browser.$(sel('run-gate'))).getProperty('textContent'), /waiting for approval/);
    const reject = await shown(browser, sel('node-reject-gate'));
    await shown(browser, sel('node-approve-gate'));
    await browser.execute(() => document.querySelector('[data-testid="step-gate"]')?.scrollIntoView());
    // Select the gate too: its question shows in the inspector with the same buttons.
    await (await browser.$(sel('title-gate'))).click();
    await shown(browser, sel('question-approve'));
    assert.match(await (await browser.$(sel('question-message'))).getText(), /Delete the 40 pods of namespace shop\?/);
    const rejectAt = await box(browser, sel('node-reject-gate'));
    await studio.shot('approval-waiting');
    assert.deepEqual(await box(browser, sel('node-reject-gate')), rejectAt, 'the Reject button stays where it was');
    await reject.click();
    assert.equal(await untilStatus(browser, ['succeeded', 'partial', 'failed', 'cancelled']), 'failed');
    assert.equal(await nodeState(browser, 'gate'), 'failed');
    const error = await shown(browser, sel('step-run-error'));
    assert.equal(await error.getAttribute('data-code'), 'INPUT_REJECTED');
    assert.ok(['not-run', 'skipped'].includes(await (await browser.$(sel('run-delete'))).getAttribute('data-shown')), 'the step after the gate never ran');
    assert.equal(await (await browser.$(sel('node-reject-gate'))).isExisting(), false, 'the buttons go with the question');
    await studio.shot('approval-rejected-failed');

    // ---- The same gate with `on_error: continue`: rejected, the run is partial.
    await click(browser, sel('run-close'));
    await importDoc(studio, gate(true));
    await click(browser, sel('run-start'));
    await untilNode(browser, 'gate', 'waiting');
    await click(browser, sel('node-reject-gate'));
    assert.equal(await untilStatus(browser, ['succeeded', 'partial', 'failed', 'cancelled']), 'partial');
    assert.equal(await nodeState(browser, 'gate'), 'failed');
    assert.equal(await nodeState(browser, 'delete'), 'succeeded', 'the step after it ran');
    await studio.shot('approval-rejected-partial');

    // ---- An `input` step from the palette: its card, and its inspector fields.
    await click(browser, sel('run-close'));
    await click(browser, sel('file-new'));
    const discard = await browser.$(sel('ask-confirm'));
    if (await discard.waitForDisplayed({ timeout: 2_000 }).then(() => true, () => false)) await discard.click();
    await until(async () => (await browser.execute(() => document.querySelectorAll('.react-flow__node').length)) === 0, 'an empty canvas');
    const pane = await box(browser, '.react-flow__pane');
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-input'), pane.x + pane.w / 2, pane.y + pane.h / 2), 'ok');
    const card = await shown(browser, '.step-card[data-kind="input"]');
    const id = (await card.getAttribute('data-testid')).slice('step-'.length);
    // The canvas may still bring the new card into view: click it once it stands still.
    await standsStill(browser);
    await standsStill(browser, sel(`step-${id}`));
    await (await browser.$(sel(`title-${id}`))).click();
    const mode = await shown(browser, sel('input-schema-mode'));
    await mode.selectByAttribute('value', 'enum');
    await shown(browser, sel('input-options'));
    await until(async () => /one of 2/.test(await (await browser.$(sel(`step-${id}`))).getProperty('textContent')), 'the card to say what it asks for');
    await studio.shot('input-step-inspector');
  } finally {
    await studio.close();
  }
});
