// Issue 33, point 2: the palette lists the tools of a server that is not approved, from
// its last listing remembered in the store; such a tool is found by search, dropped, its
// node says the server awaits approval and approves it inline (the consent prompt with
// the exact command: nothing starts before that click), and it runs. A server never
// listed says "not listed yet". Along the way, four dead ends of the walk-through: the
// approval toast goes at the next press, an edge dragged onto a handle leaves no hint
// over the card, an edge let go on a card's body connects (it sprang back), and an
// empty Loop being built does not pop the Problems panel open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiCall, approveAll, click, dragToCanvas, fill, frames, openStudio, pointerDrag, runStatus, sel, shown, standsStill, until } from './harness.mjs';

async function rectOf(browser, selector) {
  return browser.execute((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return r ? { x: r.left, y: r.top, w: r.width, h: r.height } : null;
  }, selector);
}

const CHANGED = 'MCPFLOW_E2E_LISTED';

async function clearSearch(browser) {
  await click(browser, sel('palette-search'));
  await browser.keys(['Control', 'a']);
  await browser.keys(['Backspace']);
}

test('a tool of an unapproved server is found, dropped, approved on its node and run', async () => {
  const studio = await openStudio('listed');
  const { browser, home } = studio;
  try {
    await shown(browser, '.react-flow__node', 30_000);

    // Set-up: `everything` was listed once (approved then), and its entry has changed
    // since (a new variable), so that exact command line is not approved any more.
    const everything = (await apiCall(home, 'list_servers')).find((s) => s.name === 'everything');
    assert.ok(everything, 'the demo configures `everything`');
    await apiCall(home, 'approve_server', { name: 'everything' });
    const listed = (await apiCall(home, 'server_offers')).find((o) => o.server === 'everything');
    assert.ok(listed.tools.some((t) => t.name === 'echo'), `listed once: ${JSON.stringify(listed.error)}`);
    const config = { ...everything.config, env: { ...(everything.config.env ?? {}), [CHANGED]: '1' } };
    await apiCall(home, 'put_server', { name: 'everything', config });

    // The palette shows its tools as last listed, marked as awaiting approval.
    await click(browser, sel('palette-refresh'));
    await until(async () => (await browser.$(sel('palette-awaiting-everything')).isExisting()), 'everything shown as awaiting approval');
    await fill(browser, sel('palette-search'), 'echo');
    const item = await shown(browser, sel('palette-item-everything-echo'));
    assert.equal(await item.getAttribute('data-awaiting'), 'true');
    // A server never listed says so (the seeded ones were listed as shipped).
    await apiCall(home, 'put_server', { name: 'unlisted', config: { command: 'true', args: [] } });
    await click(browser, sel('palette-refresh'));
    await clearSearch(browser);
    const hint = await shown(browser, sel('palette-waiting-hint'));
    assert.match(await hint.getText(), /not listed yet/i);
    await fill(browser, sel('palette-search'), 'echo');
    await studio.shot('palette-search-echo');

    // An empty canvas, then the tool dropped on it.
    await click(browser, sel('file-new'));
    const ask = await browser.$(sel('ask-confirm'));
    if (await ask.waitForDisplayed({ timeout: 2_000 }).then(() => true, () => false)) await ask.click();
    await until(async () => (await browser.execute(() => document.querySelectorAll('.react-flow__node').length)) === 0, 'an empty canvas');
    const pane = await rectOf(browser, '.react-flow__pane');
    assert.equal(await dragToCanvas(browser, sel('palette-item-everything-echo'), Math.round(pane.x + pane.w * 0.3), Math.round(pane.y + pane.h * 0.3)), 'ok');
    await shown(browser, sel('step-echo'));
    const awaiting = await shown(browser, sel('node-awaiting-echo'));
    assert.match(await awaiting.getProperty('textContent'), /awaits approval/);
    const said = await (await awaiting.$('.server-approval-text')).getAttribute('title');
    assert.ok(said.startsWith('everything starts: ') && said.includes(CHANGED), `what it would start: ${said}`);
    await standsStill(browser);
    await studio.shot('dropped-awaiting');

    // Approve on the node: the consent prompt shows the exact command, variable included.
    await click(browser, sel('node-server-approve-echo'));
    const command = await (await shown(browser, sel('consent-command'))).getText();
    assert.ok(command.includes(CHANGED), `the exact command line: ${command}`);
    await studio.shot('approve-on-node');
    await click(browser, sel('consent-approve'));
    await until(async () => !(await browser.$(sel('node-awaiting-echo')).isExisting()), 'the node no longer awaiting approval', 30_000);
    await until(async () => (await browser.$(sel('palette-awaiting-everything')).isExisting()) === false, 'the palette listing it now');

    // The approval toast goes as soon as the person goes on working.
    await until(async () => /approved everything/.test(await (await browser.$(sel('status'))).getText()), 'the approval said');
    await click(browser, `${sel('step-echo')} .step-head`);
    await frames(browser);
    assert.equal(await (await browser.$(sel('status'))).getAttribute('data-level'), null, 'the toast is gone after the next press');

    // Its argument, then a second step wired with the pointer: no hint stays over the card.
    await fill(browser, '#root_message', 'hello');
    await clearSearch(browser);
    // The palette filters with a deferred value: the step kinds come back a render later.
    await shown(browser, sel('palette-item-kind-wait'));
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-wait'), Math.round(pane.x + pane.w * 0.7), Math.round(pane.y + pane.h * 0.3)), 'ok');
    await shown(browser, sel('step-wait'));
    await standsStill(browser);
    await pointerDrag(browser, sel('handle-echo-out'), sel('handle-wait-in'));
    await until(async () => browser.$(sel('rf__edge-after:echo->wait')).isExisting(), 'the edge echo → wait');
    await frames(browser);
    const hints = await browser.execute(() => ({
      shown: [...document.querySelectorAll('.handle-hint')].map((h) => h.textContent),
      titled: [...document.querySelectorAll('.react-flow__handle[title]')].map((h) => h.getAttribute('title')),
    }));
    assert.deepEqual(hints, { shown: [], titled: [] }, 'no hint left over the cards after the drag');
    await studio.shot('edge-dragged');

    // An edge let go on a card's body, not on its small handle, connects to that card.
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-transform'), Math.round(pane.x + pane.w * 0.35), Math.round(pane.y + pane.h * 0.55)), 'ok');
    await shown(browser, sel('step-transform'));
    await standsStill(browser);
    assert.equal(await browser.$$('.handle-hint').length, 0, 'no hint under the resting pointer once the canvas changed');
    await pointerDrag(browser, sel('handle-echo-out'), `${sel('step-transform')} .step-sub`);
    await until(async () => browser.$(sel('rf__edge-after:echo->transform')).isExisting(), 'the edge echo → transform, dropped on its card');
    await studio.shot('edge-dropped-on-card');
    await click(browser, `${sel('step-transform')} .step-head`);
    await browser.keys(['Delete']);
    await until(async () => !(await browser.$(sel('step-transform')).isExisting()), 'the transform deleted');

    // Run: the tool of the server approved on its node answers.
    await click(browser, sel('run-start'));
    assert.deepEqual(await approveAll(browser), [], 'nothing more to approve');
    await until(async () => ['succeeded', 'failed', 'partial'].includes(await runStatus(browser)), 'the run to end', 60_000);
    assert.equal(await runStatus(browser), 'succeeded');
    await studio.shot('ran');

    // An empty Loop being built (its list typed, no body yet) marks its card only.
    const open = async () => browser.$('.bottom-tabs:not(.is-collapsed)').isExisting();
    if (await open()) await click(browser, sel('bottom-toggle'));
    await until(async () => !(await open()), 'the bottom panel collapsed');
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-loop'), Math.round(pane.x + pane.w * 0.3), Math.round(pane.y + pane.h * 0.7)), 'ok');
    await shown(browser, sel('step-loop'));
    const before = await (await shown(browser, sel('diag-loop'), 10_000)).getAttribute('title');
    await click(browser, `${sel('step-loop')} .loop-head`);
    await fill(browser, sel('loop-for-each'), '["ada","grace"]');
    await until(async () => (await (await browser.$(sel('diag-loop'))).getAttribute('title')) !== before, 'the loop’s errors to change');
    await frames(browser);
    assert.equal(await open(), false, 'the Problems panel did not pop open while the Loop is built');
    await studio.shot('loop-being-built');
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
