// A blueprint has its id from creation (issue 33, point 4), on the real app: a new
// blueprint gets an id no run was recorded under; run it and set a breakpoint before
// saving; the first Save names it (another id); History still lists the run made before,
// and the breakpoint is still set. A second new blueprint starts with an empty History.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { click, dragToCanvas, openStudio, runStatus, sel, shown, until } from './harness.mjs';

async function historyRows(browser) {
  return browser.execute(() => [...document.querySelectorAll('[data-testid="history-row"]')].map((r) => r.getAttribute('data-run')));
}

test('runs and breakpoints made before the first save stay with the blueprint', async () => {
  const studio = await openStudio('identity');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await click(browser, sel('file-new'));
    await until(async () => (await browser.$$('.react-flow__node')).length === 0, 'an empty canvas');

    // A transform from the palette, dropped at the middle of the canvas.
    const pane = await browser.execute(() => {
      const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
      return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) };
    });
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-transform'), pane.x, pane.y), 'ok');
    await shown(browser, sel('step-transform'));

    // Run it, unsaved; History lists the run.
    await click(browser, sel('run-start'));
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed', 60_000);
    await click(browser, sel('tab-history'));
    await until(async () => (await historyRows(browser)).length === 1, 'one run in History');
    const [run] = await historyRows(browser);
    await click(browser, sel('run-close'));

    // A breakpoint on the step.
    const dot = await shown(browser, sel('bp-transform'));
    await browser.execute((el) => el.click(), dot);
    await until(async () => (await dot.getAttribute('aria-pressed')) === 'true', 'the breakpoint set');

    // The first save names it: another id.
    await click(browser, sel('file-save'));
    const name = await shown(browser, sel('save-as-name'));
    await name.click();
    await browser.keys(['Control', 'a']);
    await browser.keys(['Backspace']);
    await name.addValue('Kept history');
    assert.equal(await (await browser.$(sel('save-as-id'))).getValue(), 'kept-history');
    await studio.shot('first-save');
    await click(browser, sel('save-as-confirm'));
    await until(async () => !(await browser.$(sel('dirty-mark')).isExisting()), 'saved');

    // History still lists the run made before the save; the breakpoint is still set.
    await click(browser, sel('tab-history'));
    await until(async () => (await historyRows(browser)).join() === run, `run ${run} in History after the save`);
    assert.equal(await (await shown(browser, sel('bp-transform'))).getAttribute('aria-pressed'), 'true');
    await studio.shot('history-kept');

    // A new blueprint starts with nothing in History (the id it gets has no runs).
    await click(browser, sel('file-new'));
    await until(async () => (await browser.$$('.react-flow__node')).length === 0, 'an empty canvas');
    await click(browser, sel('tab-history'));
    assert.deepEqual(await historyRows(browser), []);
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
