// The four-step task of issue 33, as a person does it: from an EMPTY canvas, with mouse
// and keyboard only (no import, no Raw JSON), build a loop over three names typed as a
// literal list that calls `everything`'s `echo`, store the results with `memory`'s
// `create_entities`, read the graph back with `read_graph`, run it, and check the graph
// holds the three entities. Each stage is a screenshot (walkthrough-*.png); the number
// of person actions and the wall time of the build are printed, not asserted.
//
// HTML5 drags are the one thing WebDriver cannot do in WebKit; this build needs none:
// steps come from the quick-add (double-click), edges from real pointer drags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { click, fill, openStudio, pointerDrag, runStatus, sel, shown, standsStill, until } from './harness.mjs';

async function rectOf(browser, selector) {
  return browser.execute((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return r ? { x: r.left, y: r.top, w: r.width, h: r.height } : null;
  }, selector);
}

async function doubleClickAt(browser, x, y) {
  const actions = [{ type: 'pointerMove', duration: 0, x: Math.round(x), y: Math.round(y) }];
  for (let i = 0; i < 2; i++) actions.push({ type: 'pointerDown', button: 0 }, { type: 'pointerUp', button: 0 });
  await browser.performActions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions }]);
  await browser.releaseActions();
}

test('the four-step blueprint built from an empty canvas by hand runs and writes three entities', async () => {
  const studio = await openStudio('walkthrough');
  const { browser } = studio;
  let actions = 0;
  const act = async (what) => {
    actions += 1;
    return what();
  };
  try {
    await shown(browser, '.react-flow__node', 30_000);
    const started = Date.now();

    // An empty canvas: New.
    await act(() => click(browser, sel('file-new')));
    const ask = await browser.$(sel('ask-confirm'));
    if (await ask.waitForDisplayed({ timeout: 2_000 }).then(() => true, () => false)) await act(() => ask.click());
    await until(async () => (await browser.execute(() => document.querySelectorAll('.react-flow__node').length)) === 0, 'an empty canvas');
    await studio.shot('empty');

    // The two servers: approved from their palette sections (their tools are listed there
    // already, as shipped, under "Awaits approval").
    for (const server of ['everything', 'memory']) {
      await act(() => click(browser, sel(`palette-approve-${server}`)));
      await act(() => click(browser, sel('consent-approve')));
      await until(async () => !(await browser.$(sel(`palette-awaiting-${server}`)).isExisting()), `${server} approved and listed`, 60_000);
    }
    await studio.shot('servers-approved');

    // A Loop: double-click the canvas, type, pick.
    const pane = await rectOf(browser, '.react-flow__pane');
    const quickAdd = async (x, y, query, key) => {
      await act(() => doubleClickAt(browser, x, y));
      const input = await shown(browser, sel('quick-add-input'));
      await act(() => input.addValue(query));
      await act(() => click(browser, sel(`quick-add-item-${key}`)));
      await until(async () => !(await browser.$(sel('quick-add')).isExisting()), 'the quick-add closed');
    };
    await quickAdd(pane.x + 120, pane.y + 120, 'loop', 'kind-loop');
    await shown(browser, sel('step-loop'));
    await act(() => click(browser, `${sel('step-loop')} .loop-head`));
    await act(() => fill(browser, sel('loop-for-each'), '["ada","grace","linus"]'));
    await until(async () => (await (await browser.$(sel('loop-over-loop'))).getAttribute('data-value')) === 'list', 'the card shows a list');
    await studio.shot('loop');

    // `everything`'s echo inside the loop: double-click the loop's body.
    const loop = await rectOf(browser, sel('step-loop'));
    await quickAdd(loop.x + loop.w / 2, loop.y + loop.h - 20, 'echo', 'tool-everything-echo');
    await shown(browser, sel('step-echo'));
    await act(() => click(browser, `${sel('step-echo')} .step-head`));
    await act(() => fill(browser, '#root_message', '{{ item }}'));
    await studio.shot('echo-in-loop');

    // create_entities and read_graph on the canvas, wired with the pointer.
    await standsStill(browser);
    const after = await rectOf(browser, sel('step-loop'));
    await quickAdd(Math.min(after.x + after.w + 200, pane.x + pane.w - 250), pane.y + 120, 'create_entities', 'tool-memory-create_entities');
    await shown(browser, sel('step-create_entities'));
    await standsStill(browser);
    await act(() => pointerDrag(browser, sel('handle-loop-out'), sel('handle-create_entities-in')));
    await until(async () => browser.$(sel('rf__edge-after:loop->create_entities')).isExisting(), 'the edge loop → create_entities');
    await act(() => click(browser, `${sel('step-create_entities')} .step-head`));
    await act(() => click(browser, sel('template-toggle-root_entities')));
    await act(() => fill(browser, '#root_entities', "{{ loop[*].{name: @, entityType: 'person', observations: [@]} }}"));
    await studio.shot('create-entities');

    const ce = await rectOf(browser, sel('step-create_entities'));
    await quickAdd(ce.x + ce.w / 2, Math.min(ce.y + ce.h + 160, pane.y + pane.h - 60), 'read_graph', 'tool-memory-read_graph');
    await shown(browser, sel('step-read_graph'));
    await standsStill(browser);
    await act(() => pointerDrag(browser, sel('handle-create_entities-out'), sel('handle-read_graph-in')));
    await until(async () => browser.$(sel('rf__edge-after:create_entities->read_graph')).isExisting(), 'the edge create_entities → read_graph');
    const built = (Date.now() - started) / 1000;
    const buildActions = actions;
    await studio.shot('built');

    // Run: the graph holds the three entities.
    await act(() => click(browser, sel('run-start')));
    await until(async () => ['succeeded', 'failed', 'partial'].includes(await runStatus(browser)), 'the run to end', 90_000);
    await studio.shot('ran');
    assert.equal(await runStatus(browser), 'succeeded');
    await act(() => click(browser, `${sel('step-read_graph')} .step-head`));
    const output = await shown(browser, `${sel('step-run')} ${sel('step-run-output')}`);
    await act(() => click(browser, `${sel('step-run-output')} .json-mode`));
    const raw = await (await shown(browser, `${sel('step-run-output')} .json-raw`)).getProperty('textContent');
    const graph = JSON.parse(raw);
    const names = (graph.entities ?? []).map((e) => e.name);
    for (const n of ['ada', 'grace', 'linus']) assert.ok(names.some((m) => m.includes(n)), `the graph has ${n}: ${JSON.stringify(names)}`);
    assert.equal(names.length, 3, `three entities: ${JSON.stringify(names)}`);
    assert.ok(await output.isDisplayed());
    await studio.shot('graph');
    console.log(`walkthrough: built in ${built.toFixed(1)} s of scripted time with ${buildActions} person actions (${actions} with the run and the check)`);
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
