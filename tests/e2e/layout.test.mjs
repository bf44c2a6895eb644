// The layout on the real app at 1400×900: on a first start the canvas gets at least 70%
// of the window and the first-start guide shows, is dismissed and comes back from Help
// (with the keyboard shortcuts); the left panel collapses (Ctrl+B) and the right one is
// resized by dragging its handle, and both come back the same after a restart on the
// same data folder; the toolbar's height and every button's box stay put before,
// during and after a run (polled while it runs, paused and finishes); a New document
// shows the empty-canvas hint and no red error, and its first Save asks for a name and
// an id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approveAll, click, dragBy, frames, importDoc, openStudio, runStatus, sel, shown, until } from './harness.mjs';


/** The `.react-flow` box against the window. */
async function canvasShare(browser) {
  return browser.execute(() => {
    const r = document.querySelector('.react-flow').getBoundingClientRect();
    return { w: r.width, h: r.height, winW: window.innerWidth, winH: window.innerHeight, share: (r.width * r.height) / (window.innerWidth * window.innerHeight) };
  });
}

async function width(browser, selector) {
  return browser.execute((s) => {
    const el = document.querySelector(s);
    return el ? el.getBoundingClientRect().width : -1;
  }, selector);
}

/** The toolbar's height and the box of every button in it, by test id (Pause and
 * Continue share one place). Only buttons drawn (not `display: none`) count. */
async function toolbarBoxes(browser) {
  return browser.execute(() => {
    const bar = document.querySelector('[data-testid="toolbar"]');
    const boxes = {};
    for (const b of bar.querySelectorAll('button')) {
      const r = b.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      let id = b.getAttribute('data-testid') ?? b.getAttribute('aria-label') ?? b.textContent;
      if (id === 'run-continue') id = 'run-pause';
      boxes[id] = [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)].join(',');
    }
    const r = bar.getBoundingClientRect();
    return { height: Math.round(r.height), boxes };
  });
}

/** Every button of `before` is where it was in `now`, and the toolbar is as high. */
function samePlaces(before, now, when) {
  assert.equal(now.height, before.height, `toolbar height ${when}`);
  for (const [id, box] of Object.entries(before.boxes)) {
    if (id === 'run-close') continue; // appears inside the fixed status slot after a run
    assert.equal(now.boxes[id], box, `the "${id}" button moved ${when}`);
  }
}


test('layout: canvas share, guide and Help, panels remembered across a restart, a still toolbar, the empty canvas', async () => {
  const home = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-layout-'));
  let studio = await openStudio('layout', {}, { home, guide: true });
  let browser = studio.browser;
  try {
    await shown(browser, '.react-flow__node', 30_000);

    // ---- First start: the canvas is the app, and the guide says what is where.
    const first = await canvasShare(browser);
    assert.equal(first.winW, 1400, `window width: ${JSON.stringify(first)}`);
    assert.ok(first.share >= 0.7, `the canvas gets ≥ 70% of the window: ${JSON.stringify(first)}`);
    await shown(browser, sel('guide'));
    // The toolbar fits the window on one line: nothing cut at its right end.
    const bar = await browser.execute(() => {
      const el = document.querySelector('[data-testid="toolbar"]');
      const more = document.querySelector('[data-testid="toolbar-more"]').getBoundingClientRect();
      const help = document.querySelector('[data-testid="help-menu"]').getBoundingClientRect();
      return { scroll: el.scrollWidth, client: el.clientWidth, height: el.getBoundingClientRect().height, more: more.right, help: help.top, win: window.innerWidth };
    });
    assert.ok(bar.more <= bar.win && bar.scroll <= bar.client, `the toolbar fits 1400 px: ${JSON.stringify(bar)}`);
    assert.ok(bar.height <= 44 && bar.help < 20, `one line: ${JSON.stringify(bar)}`);
    await studio.shot('first-start-guide');
    await click(browser, sel('guide-dismiss'));
    await until(async () => !(await browser.$(sel('guide')).isExisting()), 'the guide to close');
    await click(browser, sel('help-menu'));
    await click(browser, sel('help-guide'));
    await shown(browser, sel('guide'));
    await click(browser, sel('help-menu'));
    await studio.shot('help-menu');
    await click(browser, sel('help-shortcuts'));
    const shortcuts = await (await shown(browser, sel('shortcuts-dialog'))).getText();
    for (const key of ['Ctrl+B', 'Ctrl+Alt+B', 'Ctrl+J', 'Shift+1', 'Ctrl+0', 'F2']) assert.ok(shortcuts.includes(key), `the shortcuts list ${key}`);
    await studio.shot('shortcuts');
    await browser.keys(['Escape']);
    await until(async () => !(await browser.$(sel('shortcuts-dialog')).isExisting()), 'the shortcuts dialog to close');
    await click(browser, sel('guide-dismiss'));

    // ---- Panels: Ctrl+B collapses the palette to a rail; the inspector opens on a
    // selection and its handle resizes it.
    assert.equal(await browser.$(sel('left-rail')).isExisting(), false, 'the palette is open at first');
    await browser.keys(['Control', 'b']);
    await shown(browser, sel('left-rail'));
    assert.equal(await browser.$(sel('left-panel')).isDisplayed(), false, 'Ctrl+B hid the palette');
    await (await browser.$('.react-flow__node')).click();
    await shown(browser, sel('right-panel'));
    const before = await width(browser, sel('right-panel'));
    await dragBy(browser, sel('right-handle'), -120, 0);
    const after = await width(browser, sel('right-panel'));
    assert.ok(Math.abs(after - (before + 120)) <= 3, `dragging the handle 120 px left widens the inspector: ${before} → ${after}`);
    await studio.shot('resized');
    // The state reaches the data folder (debounced).
    await until(() => {
      try {
        const s = JSON.parse(readFileSync(join(home, 'ui-state.json'), 'utf8'));
        return s.left?.collapsed === true && Math.abs(s.right?.size - after) <= 1 && s.guideSeen === true;
      } catch {
        return false;
      }
    }, 'ui-state.json with the new sizes');

    // ---- Restart on the same data folder: the same layout, no guide.
    await studio.close();
    studio = await openStudio('layout-restart', {}, { home, guide: true });
    browser = studio.browser;
    await shown(browser, '.react-flow__node', 30_000);
    await shown(browser, sel('left-rail'));
    assert.equal(await browser.$(sel('guide')).isExisting(), false, 'the guide was dismissed on this data folder');
    await (await browser.$('.react-flow__node')).click();
    await shown(browser, sel('right-panel'));
    assert.ok(Math.abs((await width(browser, sel('right-panel'))) - after) <= 1, 'the inspector kept its width');
    await studio.shot('restarted');
    await click(browser, sel('left-rail'));
    await shown(browser, sel('left-panel'));
    // Ctrl+Alt+B closes the inspector to its rail, Ctrl+J opens and closes the bottom panel.
    await (await browser.$('.react-flow__pane')).click();
    await browser.keys(['Control', 'Alt', 'b']);
    await shown(browser, sel('right-rail'));
    await browser.keys(['Control', 'Alt', 'b']);
    await shown(browser, sel('right-panel'));
    await browser.keys(['Control', 'j']);
    await shown(browser, '.bottom-tabs:not(.is-collapsed)');
    await browser.keys(['Control', 'j']);
    await shown(browser, '.bottom-tabs.is-collapsed');
    // Not while typing: Ctrl+B in the palette's search box leaves the palette open.
    await (await shown(browser, '[data-testid="left-panel"] input')).click();
    await browser.keys(['Control', 'b']);
    await frames(browser);
    assert.equal(await browser.$(sel('left-rail')).isExisting(), false, 'Ctrl+B while typing does nothing');

    // ---- The toolbar does not move while a run's status changes.
    await importDoc(studio, {
      blueprint: 1,
      id: 'still-toolbar',
      name: 'A blueprint with a rather long name, to see the ellipsis at work',
      steps: [
        { id: 'hello', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hello' } },
        { id: 'nap', kind: 'wait', ms: 1500, after: ['hello'] },
        { id: 'bye', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'bye' }, after: ['nap'] },
      ],
    });
    const name = await browser.execute(() => {
      const el = document.querySelector('[data-testid="doc-name"]');
      return { w: el.getBoundingClientRect().width, title: el.getAttribute('title') };
    });
    assert.ok(name.w >= 150, `the name keeps its width: ${JSON.stringify(name)}`);
    assert.match(name.title, /rather long name/, 'the whole name on hover');
    const idle = await toolbarBoxes(browser);
    await click(browser, sel('run-debug'));
    await approveAll(browser, 20_000);
    const seen = new Set();
    // Paused at the start (Debug), then running, then finished: poll all along.
    await until(async () => {
      seen.add(await runStatus(browser));
      samePlaces(idle, await toolbarBoxes(browser), `while the run is ${[...seen].join('/')}`);
      return (await runStatus(browser)) === 'paused';
    }, 'the Debug run to pause', 30_000);
    await studio.shot('toolbar-paused');
    await click(browser, sel('run-continue'));
    await until(async () => {
      const status = await runStatus(browser);
      seen.add(status);
      samePlaces(idle, await toolbarBoxes(browser), `while the run is ${status}`);
      return status === 'succeeded';
    }, 'the run to succeed', 60_000);
    assert.ok(seen.has('running') || seen.has('paused'), `statuses seen: ${[...seen]}`);
    await studio.shot('toolbar-after-run');
    samePlaces(idle, await toolbarBoxes(browser), 'after the run');
    // The run opened the bottom panel by itself.
    await shown(browser, '.bottom-tabs:not(.is-collapsed)');

    // ---- A new document: the hint, no red error, and Save asks for a name and an id.
    await click(browser, sel('file-new'));
    const ask = await browser.$(sel('ask-dialog'));
    if (await ask.waitForDisplayed({ timeout: 2_000 }).then(() => true, () => false)) {
      assert.ok(await browser.$(sel('ask-save')).isDisplayed(), 'the discard question offers Save');
      await click(browser, sel('ask-confirm'));
    }
    await shown(browser, sel('empty-hint'));
    const hint = await (await browser.$(sel('empty-hint'))).getText();
    assert.match(hint, /Drag a tool from the palette, or double-click the canvas to add a step/);
    await shown(browser, '[data-testid^="empty-open-"]');
    await studio.shot('new-document');
    // Validation has answered once its hint is in the Problems panel; nothing says "error".
    await click(browser, sel('tab-problems'));
    await shown(browser, '[data-testid="diagnostic"][data-level="hint"]');
    const red = await browser.execute(() => ({
      errors: document.querySelectorAll('.diag-error, [data-level="error"]').length,
      problems: document.querySelector('[data-testid="tab-problems"]').textContent,
    }));
    assert.equal(red.errors, 0, `no error shown for a new document: ${JSON.stringify(red)}`);
    assert.equal(red.problems, 'Problems');
    await studio.shot('new-document-problems');

    // ---- A narrow window: the toolbar keeps one line (groups move into ⋯), the panels
    // shrink so that the canvas keeps ≥ 40% of the width.
    await browser.setWindowSize(1000, 760);
    await until(async () => (await browser.execute(() => window.innerWidth)) <= 1000, 'the window to shrink');
    const narrow = await browser.execute(() => {
      const bar = document.querySelector('[data-testid="toolbar"]');
      const flow = document.querySelector('.react-flow').getBoundingClientRect();
      return { scroll: bar.scrollWidth, client: bar.clientWidth, height: bar.getBoundingClientRect().height, canvas: flow.width / window.innerWidth, view: document.querySelector('[data-testid="fit-view"]').getClientRects().length };
    });
    assert.ok(narrow.scroll <= narrow.client && narrow.height <= 44, `one line at 1000 px: ${JSON.stringify(narrow)}`);
    assert.equal(narrow.view, 0, 'the View group left the bar');
    assert.ok(narrow.canvas >= 0.4, `the canvas keeps ≥ 40% of the width: ${JSON.stringify(narrow)}`);
    await click(browser, sel('toolbar-more'));
    await shown(browser, sel('more-fit'));
    await studio.shot('narrow-window-more-menu');
    await click(browser, sel('more-fit'));
  } finally {
    await studio.close();
    rmSync(home, { recursive: true, force: true });
  }
});
