// The node-editor conventions of issue 33 (points 6 and 7), on the real app: Ctrl+= and
// Ctrl+- zoom; Tab opens the quick-add at the pointer; a dragged card snaps to the
// background's 20 px grid; an edge's end dragged to another card re-routes that
// dependency; a step dropped from the palette lands centred at the pointer; an empty
// Loop dropped marks its card without popping the Problems panel open; Escape closes
// the Servers dialog with the focus lost to the page; the timeline counts time since
// the run started.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { click, dragBy, dragToCanvas, importDoc, openStudio, runStatus, sel, shown, standsStill, until, viewportZoom } from './harness.mjs';

const DOC = {
  blueprint: 1,
  id: 'conventions',
  name: 'Conventions',
  steps: [
    { id: 'a', kind: 'transform', value: 'a' },
    { id: 'b', kind: 'transform', value: 'b', after: ['a'] },
    { id: 'c', kind: 'transform', value: 'c', after: [] },
  ],
  layout: { a: { x: 0, y: 0 }, b: { x: 360, y: 0 }, c: { x: 360, y: 220 } },
};

/** Moves the pointer to client point (x, y) and optionally clicks there. */
async function pointerAt(browser, x, y, clickIt = false) {
  const actions = [{ type: 'pointerMove', duration: 0, x, y }];
  if (clickIt) actions.push({ type: 'pointerDown', button: 0 }, { type: 'pointerUp', button: 0 });
  await browser.performActions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions }]);
  await browser.releaseActions();
}

async function rect(browser, selector) {
  return browser.execute((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return r ? { x: r.left, y: r.top, w: r.width, h: r.height, cx: r.left + r.width / 2, cy: r.top + r.height / 2 } : null;
  }, selector);
}

/** A node's position in the flow (React Flow's transform of its wrapper). */
async function flowPosition(browser, id) {
  return browser.execute((nid) => {
    const el = document.querySelector(`.react-flow__node[data-id="${nid}"]`);
    const m = /translate\(\s*(-?[\d.]+)px,\s*(-?[\d.]+)px\)/.exec(el?.style.transform ?? '');
    return m ? { x: Number(m[1]), y: Number(m[2]) } : null;
  }, id);
}

test('zoom keys, Tab quick-add, snap, edge re-route, drop at the pointer, quiet Loop, Escape, timeline', async () => {
  const studio = await openStudio('conventions');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');
    await importDoc(studio, DOC);
    await shown(browser, '[data-testid="rf__edge-after:a->b"]');
    const pane = await rect(browser, '.react-flow__pane');
    const empty = { x: Math.round(pane.x + 30), y: Math.round(pane.y + 30) };
    await pointerAt(browser, empty.x, empty.y, true);
    // The view settled after the import's fit.
    await standsStill(browser);

    // Ctrl+= zooms in, Ctrl+- zooms out.
    await browser.execute(() => {
      window.__keys = [];
      window.addEventListener('keydown', (e) => window.__keys.push(`${e.key}|${e.code}|${e.ctrlKey}|${e.defaultPrevented}|${e.target?.className ?? e.target?.tagName}`), true);
    });
    const z0 = await viewportZoom(browser);
    await browser.keys(['Control', '=']);
    await browser.keys(['Control']);
    await until(async () => (await viewportZoom(browser)) > z0 + 0.05, `Ctrl+= to zoom in from ${z0}`, 5_000).catch(async (e) => {
      throw new Error(`${e.message}; keys seen: ${JSON.stringify(await browser.execute(() => window.__keys))}`);
    });
    const z1 = await viewportZoom(browser);
    await browser.keys(['Control', '-']);
    await browser.keys(['Control']);
    await until(async () => (await viewportZoom(browser)) < z1 - 0.05, `Ctrl+- to zoom out from ${z1}`);
    await click(browser, sel('zoom-fit-button'));
    await standsStill(browser);

    // Tab opens the quick-add at the pointer; a step picked there lands there.
    const at = { x: Math.round(pane.x + pane.w * 0.3), y: Math.round(pane.y + pane.h * 0.75) };
    await pointerAt(browser, at.x, at.y, true);
    await browser.keys(['Tab']);
    const quick = await shown(browser, sel('quick-add'));
    const q = await rect(browser, sel('quick-add'));
    // At the pointer, moved up only as far as the window needs.
    assert.ok(Math.abs(q.x - at.x) < 40 && q.y <= at.y + 40 && q.y + q.h >= at.y - 40, `the quick-add opens at the pointer: ${JSON.stringify(q)} vs ${JSON.stringify(at)}`);
    await studio.shot('tab-quick-add');
    await browser.keys(['Escape']);
    await until(async () => !(await quick.isExisting()), 'the quick-add closed');

    // A dragged card snaps to the 20 px grid.
    await dragBy(browser, `${sel('step-c')} .step-head`, 37, 23);
    await until(async () => {
      const p = await flowPosition(browser, 'c');
      return p && p.x % 20 === 0 && p.y % 20 === 0 && (p.x !== 360 || p.y !== 220);
    }, 'card c moved onto the grid');

    // An edge's end dragged from b to c: c runs after a now, b no longer does.
    const edge = '[data-testid="rf__edge-after:a->b"]';
    const end = await browser.execute((s) => {
      const c = document.querySelector(`${s} .react-flow__edgeupdater-target`);
      const r = c?.getBoundingClientRect();
      return r ? { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) } : null;
    }, edge);
    assert.ok(end, 'the edge has a draggable end');
    const target = await rect(browser, sel('handle-c-in'));
    await browser.performActions([
      {
        type: 'pointer',
        id: 'mouse',
        parameters: { pointerType: 'mouse' },
        actions: [
          { type: 'pointerMove', duration: 0, x: end.x, y: end.y },
          { type: 'pointerDown', button: 0 },
          { type: 'pointerMove', duration: 150, x: Math.round((end.x + target.cx) / 2), y: Math.round((end.y + target.cy) / 2) },
          { type: 'pointerMove', duration: 150, x: Math.round(target.cx), y: Math.round(target.cy) },
          { type: 'pointerUp', button: 0 },
        ],
      },
    ]);
    await browser.releaseActions();
    await until(async () => await browser.$('[data-testid="rf__edge-after:a->c"]').isExisting(), 'the edge a → c');
    assert.equal(await browser.$(edge).isExisting(), false, 'a → b is gone');
    await studio.shot('edge-rerouted');

    // A step dropped from the palette lands at the pointer: centred across it, its title under it.
    const drop = { x: Math.round(pane.x + pane.w * 0.5), y: Math.round(pane.y + pane.h * 0.8) };
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-wait'), drop.x, drop.y), 'ok');
    await shown(browser, sel('step-wait'));
    const card = await rect(browser, sel('step-wait'));
    assert.ok(Math.abs(card.cx - drop.x) <= 20 && drop.y > card.y && drop.y < card.y + card.h, `the drop point is on the card's title: ${JSON.stringify(card)} vs ${JSON.stringify(drop)}`);

    // An empty Loop: its card is marked, the Problems panel stays as it was.
    assert.equal(await browser.$('.bottom-tabs:not(.is-collapsed)').isExisting(), false, 'the bottom panel starts collapsed');
    const loopAt = { x: Math.round(pane.x + pane.w * 0.2), y: Math.round(pane.y + pane.h * 0.25) };
    assert.equal(await dragToCanvas(browser, sel('palette-item-kind-loop'), loopAt.x, loopAt.y), 'ok');
    await shown(browser, sel('step-loop'));
    await shown(browser, sel('diag-loop'), 10_000);
    assert.equal(await browser.$('.bottom-tabs:not(.is-collapsed)').isExisting(), false, 'the Problems panel did not pop open');
    await studio.shot('empty-loop-marked');
    await browser.keys(['Control', 'z']);
    await until(async () => !(await browser.$(sel('step-loop')).isExisting()), 'the loop undone');

    // Escape closes the Servers dialog, even with the focus lost to the page.
    await click(browser, sel('servers-button'));
    await shown(browser, sel('servers-panel'));
    await browser.execute(() => document.activeElement instanceof HTMLElement && document.activeElement.blur());
    await browser.keys(['Escape']);
    await until(async () => !(await browser.$(sel('servers-panel')).isExisting()), 'the Servers dialog closed');

    // The timeline counts from the run's start.
    await click(browser, sel('run-start'));
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed', 60_000);
    await click(browser, sel('tab-history'));
    const label = await (await shown(browser, sel('timeline-at'))).getText();
    assert.match(label, /^\+\d+(\.\d+)? (ms|s) · /, `time since the start: ${label}`);
    await studio.shot('timeline-since-start');
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
