// Live runs and debugging, end to end on the real app: run the demo blueprint and see
// every node reach succeeded with a duration; run a blueprint against the `faulty`
// fixture server and see a node retrying, then failed with its error; set a breakpoint,
// Debug, see the pause with the step's resolved arguments, step twice, continue to the
// end; open a past run from the history and move the timeline back to a point where a
// node was running; re-run from a step of it and find the re-run in the history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approveAll, click, importDoc, openStudio, runStatus, sel, shown, until } from './harness.mjs';


/** The run state of every node on the canvas: `{ stepId: state }`. */
async function nodeStates(browser) {
  return browser.execute(() => {
    const out = {};
    for (const el of document.querySelectorAll('[data-testid^="run-"][data-state]')) {
      out[el.getAttribute('data-testid').slice(4)] = el.getAttribute('data-state');
    }
    return out;
  });
}

/** The text of an element, whether or not it is scrolled into view (nodes may be small). */
async function text(browser, id) {
  const el = await browser.$(sel(id));
  await el.waitForExist({ timeout: 15_000 });
  return el.getProperty('textContent');
}

async function untilStatus(browser, wanted, timeout = 60_000) {
  await until(async () => wanted.includes(await runStatus(browser)), `the run to be ${wanted.join(' or ')}`, timeout);
  return runStatus(browser);
}

test('runs: the demo succeeds, faulty retries and fails, breakpoints and stepping, history and the timeline', async () => {
  const studio = await openStudio('runs');
  const { browser } = studio;
  try {
    // The demo blueprint opens on first start.
    await shown(browser, sel('step-namespaces'), 30_000);

    // ---- 1. Run the demo: every node reaches succeeded, with a duration.
    await click(browser, sel('run-start'));
    // The demo servers ask for consent one by one before the run starts.
    const approved = await approveAll(browser);
    assert.ok(approved.length >= 2, `the cluster and memory servers asked first: ${JSON.stringify(approved)}`);
    assert.equal(await untilStatus(browser, ['succeeded', 'partial', 'failed', 'cancelled'], 120_000), 'succeeded');
    const states = await nodeStates(browser);
    const ids = Object.keys(states);
    assert.ok(ids.length >= 10, `every node shows its state (${JSON.stringify(states)})`);
    for (const [id, state] of Object.entries(states)) assert.equal(state, 'succeeded', `${id} succeeded`);
    const namespaces = await text(browser, 'run-namespaces');
    assert.match(namespaces, /✓ \d+(\.\d+)? (ms|s)/, `a duration on the node: ${namespaces}`);
    const loop = await text(browser, 'loop-count-per_namespace');
    assert.match(loop, /^(\d+)\/\1$/, `the loop shows done/total: ${loop}`);
    await studio.shot('demo-succeeded');

    // ---- 2. Against `faulty`: a node retries, then fails with its error.
    const faulty = {
      blueprint: 1,
      id: 'faulty-retry',
      name: 'A step that keeps failing',
      steps: [
        { id: 'warm', kind: 'tool', server: 'faulty', tool: 'echo', args: { message: 'hello' } },
        {
          id: 'flaky',
          kind: 'tool',
          server: 'faulty',
          tool: 'fail_n_times',
          args: { key: 'e2e', n: 9 },
          retry: { attempts: 3, delay_ms: 3000 },
          after: ['warm'],
        },
        { id: 'never', kind: 'transform', value: '{{ flaky }}' },
      ],
    };
    await click(browser, sel('run-close'));
    await importDoc(studio, faulty);
    await shown(browser, sel('step-flaky'));
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => (await nodeStates(browser)).flaky === 'retrying', 'flaky to be retrying', 30_000);
    const retrying = await text(browser, 'run-flaky');
    assert.match(retrying, /retrying \(attempt [23]\)/, retrying);
    await studio.shot('faulty-retrying');
    assert.equal(await untilStatus(browser, ['failed', 'succeeded', 'partial']), 'failed');
    const after = await nodeStates(browser);
    assert.equal(after.flaky, 'failed');
    assert.equal(after.never, 'skipped');
    const failed = await text(browser, 'run-flaky');
    assert.match(failed, /✕ \S+/, `the error on the node: ${failed}`);
    await click(browser, sel('step-flaky'));
    const error = await text(browser, 'step-run-error');
    assert.ok(error.length > 5, `the inspector shows the error: ${error}`);
    await studio.shot('faulty-failed');

    // ---- 3. A breakpoint: Debug pauses before the step with its resolved arguments;
    // step twice; continue to the end.
    const pipeline = {
      blueprint: 1,
      id: 'debug-me',
      inputs: { type: 'object', properties: { who: { type: 'string', default: 'debugger' } } },
      steps: [
        { id: 'first', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hello {{ inputs.who }}' } },
        { id: 'second', kind: 'tool', server: 'echo', tool: 'add', args: { a: 20, b: 22 } },
        { id: 'third', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'sum={{ second.sum }}' } },
        { id: 'fourth', kind: 'transform', value: { said: '{{ third }}', sum: '{{ second.sum }}' } },
      ],
    };
    await click(browser, sel('run-close'));
    await importDoc(studio, pipeline);
    await shown(browser, sel('step-second'));
    // The dot is 10 px wide on a zoomed-out canvas: click it in the page.
    // Breakpoints outlive a session (the webview's storage, kept per blueprint id), so
    // it may be set already from an earlier run of this test on the same machine.
    const dot = await shown(browser, sel('bp-second'));
    if ((await dot.getAttribute('aria-pressed')) !== 'true') await browser.execute((el) => el.click(), dot);
    await until(async () => (await dot.getAttribute('aria-pressed')) === 'true', 'the breakpoint to be set');
    await click(browser, sel('run-debug'));
    await approveAll(browser);
    await untilStatus(browser, ['paused']);
    const pause = await shown(browser, sel('pause-info'));
    assert.equal(await pause.getAttribute('data-step'), 'second');
    const args = await text(browser, 'pause-args');
    assert.match(args, /20/, `the resolved arguments: ${args}`);
    assert.equal((await nodeStates(browser)).first, 'succeeded');
    assert.equal((await nodeStates(browser)).second, 'paused');
    await studio.shot('debug-paused');

    await click(browser, sel('run-step'));
    await until(async () => (await nodeStates(browser)).second === 'succeeded', 'the first step to run second');
    await untilStatus(browser, ['paused']);
    assert.equal((await nodeStates(browser)).third, 'queued', 'one step at a time');
    await click(browser, sel('run-step'));
    await until(async () => (await nodeStates(browser)).third === 'succeeded', 'the second step to run third');
    await untilStatus(browser, ['paused']);
    assert.equal((await nodeStates(browser)).fourth, 'queued');
    await studio.shot('debug-stepped');
    await click(browser, sel('run-continue'));
    assert.equal(await untilStatus(browser, ['succeeded', 'failed', 'partial']), 'succeeded');
    const output = await text(browser, 'run-output');
    assert.match(output, /42/, output);

    // ---- 4. History: open the first run of this blueprint and move the timeline back
    // to a point where a node was running.
    await click(browser, sel('run-close'));
    await click(browser, sel('tab-history'));
    const rows = await browser.$$(sel('history-row'));
    assert.ok(rows.length >= 1, 'the run is in the history');
    // (WebKitWebDriver does not click table rows; their cells it does.)
    await click(browser, `${sel('history-row')} td`);
    assert.equal(await untilStatus(browser, ['succeeded', 'failed']), 'succeeded');
    const timeline = await shown(browser, sel('timeline'));
    const max = Number(await timeline.getAttribute('max'));
    assert.ok(max > 4, `the timeline has the run's events (${max + 1})`);
    // Move back one event at a time until some node is running.
    await timeline.click();
    let running = null;
    for (let i = max; i >= 0 && !running; i--) {
      await browser.execute(
        (el, v) => {
          const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
          setter.call(el, String(v));
          el.dispatchEvent(new Event('input', { bubbles: true }));
          el.dispatchEvent(new Event('change', { bubbles: true }));
        },
        timeline,
        i,
      );
      const now = await nodeStates(browser);
      running = Object.keys(now).find((k) => now[k] === 'running') ?? null;
    }
    assert.ok(running, 'at some point of the timeline a node was running');
    const at = await text(browser, 'timeline-at');
    assert.match(at, /^\+(\d+ ms|\d+\.\d\d s|\d+ min \d\d s) · \S.*/, at);
    await studio.shot('history-timeline');

    // ---- 5. Re-run from a step of that past run: `third` and `fourth` run again with
    // `first` and `second` pinned; the history records where the re-run came from.
    await browser.execute((el, v) => {
      const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
      setter.call(el, String(v));
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, timeline, max);
    const pastRun = await (await browser.$(`${sel('history-row')}.is-shown`)).getAttribute('data-run');
    await browser.execute((el) => el.click(), await shown(browser, sel('step-third')));
    await click(browser, sel('rerun-from'));
    await approveAll(browser);
    assert.equal(await untilStatus(browser, ['succeeded', 'failed', 'partial']), 'succeeded');
    assert.match(await text(browser, 'run-output'), /42/);
    await click(browser, sel('run-close'));
    await click(browser, sel('tab-history'));
    await until(async () => (await browser.$$(sel('rerun-of'))).length > 0, 'the re-run in the history');
    const newest = await browser.$(sel('history-row'));
    const origin = await (await newest.$(sel('rerun-of'))).getProperty('textContent');
    assert.match(origin, /re-ran from third of/, origin);
    assert.notEqual(await newest.getAttribute('data-run'), pastRun);
    await studio.shot('history-rerun');
  } catch (e) {
    await studio.shot('failure').catch(() => undefined);
    const status = await browser.$(sel('status')).then((el) => el.getProperty('textContent')).catch(() => '');
    console.error(`status line at the failure: ${status}`);
    throw e;
  } finally {
    await studio.close();
  }
});
