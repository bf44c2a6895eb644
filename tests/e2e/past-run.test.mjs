// Issue 33, point 5, on the real app: a past run opens with the definition it ran. A
// run of a two-step blueprint, then one step deleted: opening the run from the history
// shows its own definition (the deleted step back, read-only, in the inspector too) under a banner; "Show
// current" goes back to the edited document, "Restore this version" makes the old one
// the document again (unsaved, undoable). Screenshots: past-run-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { click, importDoc, openStudio, OUTPUT, runStatus, sel, shown, until, windowShot } from './harness.mjs';

const DOC = {
  blueprint: 1,
  id: 'past-run',
  name: 'Past run',
  steps: [
    { id: 'keep', kind: 'transform', value: 'kept' },
    { id: 'gone', kind: 'transform', value: 'more' },
  ],
  layout: { keep: { x: 0, y: 0 }, gone: { x: 320, y: 0 } },
};

const node = (browser, id) => browser.$(`.react-flow__node[data-id="${id}"]`);
const exists = async (browser, id) => (await node(browser, id)).isExisting();

async function openTheRun(browser) {
  // The History tab, unless it is shown already (a click on the tab shown folds the panel).
  const list = await browser.$(`${sel('history-row')} td`);
  if (!((await list.isExisting()) && (await list.isDisplayed()))) await click(browser, sel('tab-history'));
  await until(async () => (await browser.$$(sel('history-row'))).length === 1, 'the run in History');
  await click(browser, `${sel('history-row')} td`);
}

test('a past run opens with the definition it ran; Show current and Restore this version', async () => {
  const studio = await openStudio('past-run');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await importDoc(studio, DOC);
    await click(browser, sel('run-start'));
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed');

    // The definition changes after the run: a step deleted.
    await click(browser, '.react-flow__node[data-id="gone"]');
    await browser.keys(['Delete']);
    await until(async () => !(await exists(browser, 'gone')), 'the step to be deleted');

    // The run opens with its own definition, read-only, under the banner.
    await openTheRun(browser);
    await shown(browser, sel('past-definition'));
    await until(() => exists(browser, 'gone'), 'the run`s definition (with the deleted step) on the canvas');
    assert.equal(await (await browser.$(sel('run-gone'))).getAttribute('data-state'), 'succeeded', 'the step shows how it ran');
    await windowShot(browser, join(OUTPUT, 'past-run-01-earlier-version.png'));
    // Read-only: Delete deletes nothing, and the inspector shows the step without letting
    // anyone type into it.
    await click(browser, '.react-flow__node[data-id="gone"]');
    await shown(browser, sel('inspector-read-only'));
    const editable = await browser.execute(() =>
      [...document.querySelectorAll('[data-testid="inspector-fields"] input, [data-testid="inspector-fields"] textarea, [data-testid="inspector-fields"] select')]
        .filter((el) => !el.matches(':disabled'))
        .map((el) => el.outerHTML.slice(0, 80)),
    );
    assert.deepEqual(editable, [], 'no field of a past run`s definition takes typing');
    await windowShot(browser, join(OUTPUT, 'past-run-01-read-only-inspector.png'));
    await browser.keys(['Delete']);
    await until(() => exists(browser, 'keep'), 'the canvas to stay');
    assert.ok(await exists(browser, 'gone'), 'a past run`s definition cannot be edited');

    // Show current: the edited document again, the banner gone.
    await click(browser, sel('past-show-current'));
    await until(async () => !(await exists(browser, 'gone')), 'the current document (without the step)');
    assert.equal(await (await browser.$(sel('past-definition'))).isExisting(), false, 'no banner over the current document');
    assert.equal(await (await browser.$(sel('dirty-mark'))).isExisting(), true, 'the current document keeps its unsaved edit');

    // Restore this version: the old definition is the document, editable and unsaved.
    await openTheRun(browser);
    await shown(browser, sel('past-definition'));
    await click(browser, sel('past-restore'));
    await until(async () => !(await (await browser.$(sel('past-definition'))).isExisting()), 'the banner to go');
    assert.ok(await exists(browser, 'gone'), 'the restored definition has the step again');
    assert.equal(await (await browser.$(sel('dirty-mark'))).isExisting(), true, 'restored, not saved yet');
    await windowShot(browser, join(OUTPUT, 'past-run-02-restored.png'));
    // One Undo goes back to the document before the restore.
    await click(browser, sel('undo'));
    await until(async () => !(await exists(browser, 'gone')), 'Undo to go back before the restore');
  } catch (e) {
    await studio.shot('past-run-failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
