// Issue 33, point 7's smaller items, on the real app: the Save dialog's labels sit over
// their fields; a "not saved" error about the document goes once the error is fixed;
// Delete and Backspace delete the selected step on every press; the shortcut sheet's
// key chips stay out of their text; the service indicator says "in this window" when
// the studio holds the folder itself. Screenshots: polish-*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { click, importDoc, openStudio, OUTPUT, sel, shown, standsStill, until, windowShot } from './harness.mjs';

const KEPT = ['a', 'b', 'c', 'd', 'e', 'f'];
const DOC = {
  blueprint: 1,
  id: 'polish',
  name: 'Polish',
  steps: [
    ...KEPT.map((id) => ({ id, kind: 'transform', value: id, after: [] })),
    // The one error: a dependency on a step that does not exist.
    { id: 'bad', kind: 'transform', value: 'x', after: ['nowhere'] },
  ],
  // Two columns: the inspector, opening on the right, covers none of them.
  layout: Object.fromEntries([...KEPT, 'bad'].map((id, i) => [id, { x: (i % 2) * 280, y: Math.floor(i / 2) * 140 }])),
};

const statusText = async (browser) => (await (await browser.$(sel('status'))).getText().catch(() => '')) ?? '';
const exists = async (browser, id) => (await browser.$(`.react-flow__node[data-id="${id}"]`)).isExisting();

test('Save dialog labels, an error toast that goes when fixed, Delete/Backspace every press, the shortcut sheet', async () => {
  const studio = await openStudio('polish');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await importDoc(studio, DOC);

    // Save: the first save asks for a name and an id; each label sits over its field.
    await click(browser, sel('file-save'));
    await shown(browser, sel('save-as-name'));
    for (const field of ['save-as-name', 'save-as-id']) {
      const gap = await browser.execute((s) => {
        const input = document.querySelector(s);
        const label = input?.closest('label')?.querySelector('span');
        if (!input || !label) return null;
        return input.getBoundingClientRect().top - label.getBoundingClientRect().bottom;
      }, sel(field));
      assert.ok(gap !== null && gap >= 2, `the label of ${field} sits over its field with room between (gap ${gap} px)`);
    }
    await windowShot(browser, join(OUTPUT, 'polish-01-save-dialog.png'));
    await click(browser, sel('save-as-confirm'));
    await until(async () => /not saved: 1 error/.test(await statusText(browser)), 'the "not saved: 1 error" toast');
    await windowShot(browser, join(OUTPUT, 'polish-02-error-toast.png'));

    // Fixing the error (deleting the broken step) ends the toast; nothing else does.
    await click(browser, '.react-flow__node[data-id="bad"]');
    await browser.keys(['Delete']);
    await until(async () => !(await exists(browser, 'bad')), 'the broken step to be deleted');
    await until(async () => (await statusText(browser)) === '', 'the error toast to go once the error is fixed');

    // Every press deletes the selected step, Delete and Backspace alike.
    for (const [i, id] of KEPT.entries()) {
      await click(browser, `.react-flow__node[data-id="${id}"]`);
      await until(async () => (await browser.$(`.react-flow__node[data-id="${id}"]`).getAttribute('class')).includes('selected'), `${id} selected`);
      await browser.keys([i % 2 ? 'Backspace' : 'Delete']);
      await until(async () => !(await exists(browser, id)), `${id} deleted by press ${i + 1} (${i % 2 ? 'Backspace' : 'Delete'})`);
    }

    // The shortcut sheet: no key chip runs into the words beside it.
    await click(browser, sel('help-menu'));
    await click(browser, sel('help-shortcuts'));
    await shown(browser, sel('shortcuts-dialog'));
    const overlaps = await browser.execute(() =>
      [...document.querySelectorAll('.shortcut-row')].flatMap((row) => {
        const dd = row.querySelector('dd').getBoundingClientRect();
        return [...row.querySelectorAll('kbd')]
          .map((k) => [k.textContent, k.getBoundingClientRect()])
          .filter(([, r]) => r.right > dd.left && r.left < dd.right && r.bottom > dd.top && r.top < dd.bottom)
          .map(([t]) => t);
      }),
    );
    await windowShot(browser, join(OUTPUT, 'polish-03-shortcuts.png'));
    assert.deepEqual(overlaps, [], 'key chips over their descriptions');
    await browser.keys(['Escape']);
  } finally {
    await studio.close();
  }
});

test('the demo opens fitted beside the first-start guide, none of its cards under it', async () => {
  const studio = await openStudio('polish-guide', {}, { guide: true });
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);
    await shown(browser, sel('guide'));
    // Wait for the opened view to settle (the open fit happens once the cards are measured).
    await standsStill(browser);
    const covered = await browser.execute(() => {
      const g = document.querySelector('[data-testid="guide"]').getBoundingClientRect();
      return [...document.querySelectorAll('.react-flow__node')]
        .filter((n) => {
          const r = n.getBoundingClientRect();
          return r.right > g.left && r.left < g.right && r.bottom > g.top && r.top < g.bottom;
        })
        .map((n) => n.getAttribute('data-id'));
    });
    assert.deepEqual(covered, [], 'cards under the guide');
    await windowShot(browser, join(OUTPUT, 'polish-04-demo-beside-guide.png'));
  } finally {
    await studio.close();
  }
});
