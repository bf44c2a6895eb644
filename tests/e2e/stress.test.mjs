// A stress run on the real app: a loop of 4,000 fast calls against cluster-sim streams
// its ~12,000 events onto the canvas while the page keeps drawing frames.
//
// Measured in the page: the interval between animation frames (requestAnimationFrame)
// while the run streams — median, p95, the longest, and how many exceed 50 ms — and the
// event rate: the run's events (the timeline's count) over its duration (the last
// event's `at_ms`). The figures go to test-output/e2e/stress.json and the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUT, openStudio, shown, until, writeJson } from './harness.mjs';

const sel = (id) => `[data-testid="${id}"]`;
const ITEMS = Number(process.env.MCPFLOW_STRESS_ITEMS ?? 4000);

async function click(browser, selector) {
  await (await shown(browser, selector)).click();
}

async function runStatus(browser) {
  const el = await browser.$(sel('run-state'));
  return (await el.isExisting()) ? el.getAttribute('data-status') : null;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

test('stress: thousands of events a second, the page keeps drawing', async () => {
  const studio = await openStudio('stress');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node', 30_000);
    writeJson(studio.dialogPath, {
      blueprint: 1,
      id: 'stress',
      name: `${ITEMS} fast calls`,
      steps: [
        { id: 'items', kind: 'transform', value: Array.from({ length: ITEMS }, (_, i) => i) },
        { id: 'first', kind: 'tool', server: 'cluster', tool: 'list_namespaces', args: {} },
        {
          id: 'each',
          kind: 'loop',
          for_each: '{{ items }}',
          after: ['first'],
          concurrency: 32,
          max_iterations: ITEMS,
          steps: [{ id: 'get', kind: 'tool', server: 'cluster', tool: 'get_resource', args: { kind: 'Namespace', name: 'accounts' } }],
          collect: '{{ get.metadata.name }}',
        },
        { id: 'count', kind: 'transform', value: '{{ length(each) }}' },
      ],
    });
    await click(browser, sel('file-import'));
    await shown(browser, sel('step-get'));

    // The page's own pace first: frame intervals for 2 s with nothing running.
    const idle = await browser.executeAsync((done) => {
      const out = [];
      let last = performance.now();
      const end = last + 2000;
      const tick = (t) => {
        out.push(t - last);
        last = t;
        if (t < end) requestAnimationFrame(tick);
        else done(out);
      };
      requestAnimationFrame(tick);
    });
    const idleSorted = idle.slice(1).sort((a, b) => a - b);

    // Frame intervals from now until told to stop.
    await browser.execute(() => {
      const w = window;
      w.__frames = [];
      w.__framing = true;
      let last = performance.now();
      const tick = (t) => {
        w.__frames.push(t - last);
        last = t;
        if (w.__framing) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await click(browser, sel('run-start'));
    const dialog = await browser.$(sel('consent-dialog'));
    if (await dialog.waitForDisplayed({ timeout: 10_000 }).then(() => true, () => false)) {
      await click(browser, sel('consent-approve'));
    }
    // While the run streams, the page answers scripts (the canvas is not frozen).
    const probes = [];
    await until(
      async () => {
        const t0 = Date.now();
        const status = await runStatus(browser);
        probes.push(Date.now() - t0);
        return ['succeeded', 'failed', 'partial', 'cancelled'].includes(status) && status;
      },
      'the stress run to finish',
      300_000,
    );
    const frames = await browser.execute(() => {
      window.__framing = false;
      return window.__frames;
    });
    const result = await browser.$(sel('run-result'));
    const resultText = (await result.isExisting()) ? await result.getProperty('textContent') : '';
    assert.equal(await runStatus(browser), 'succeeded', resultText);
    await studio.shot('finished');

    await click(browser, sel('tab-history'));
    const atEl = await browser.$(sel('timeline-at'));
    const at = await atEl.getProperty('textContent');
    const events = Number(await atEl.getAttribute('data-count'));
    const durationMs = Number(await atEl.getAttribute('data-at-ms'));
    assert.ok(events > 0 && durationMs > 0, `the timeline reads the run's events: ${at}`);
    const rate = Math.round(events / (durationMs / 1000));

    // The frames while the run streamed (the first ones cover the start and consent).
    const sorted = frames.slice(2).sort((a, b) => a - b);
    const figures = {
      items: ITEMS,
      events,
      run_ms: Math.round(durationMs),
      events_per_second: rate,
      frames: sorted.length,
      frame_ms_median: Number(quantile(sorted, 0.5).toFixed(1)),
      frame_ms_p95: Number(quantile(sorted, 0.95).toFixed(1)),
      frame_ms_max: Number(sorted[sorted.length - 1].toFixed(1)),
      frames_over_50ms: sorted.filter((f) => f > 50).length,
      idle_frame_ms_median: Number(quantile(idleSorted, 0.5).toFixed(1)),
      idle_frame_ms_p95: Number(quantile(idleSorted, 0.95).toFixed(1)),
      script_probe_ms_median: probes.sort((a, b) => a - b)[Math.floor(probes.length / 2)],
    };
    writeFileSync(join(OUTPUT, 'stress.json'), JSON.stringify(figures, null, 2));
    console.log(`stress: ${JSON.stringify(figures)}`);
    // Every call's events reached the window (none lost on the way), the page kept
    // drawing and answering while they streamed. In CI (the debug build beside the
    // webview on 2 shared cores) the rate and frame times are reported, not asserted:
    // they measure the machine as much as the studio. With MCPFLOW_PERF_STRICT=1
    // (`npm run perf:stress`: the release build) the figures are asserted:
    // ≥ 5,000 events a second while frames stay at p95 ≤ 50 ms (never below 20 fps).
    assert.ok(events >= 3 * ITEMS, `every call is in the events (${events})`);
    assert.ok(sorted.length >= 10, `the page kept drawing frames during the run (${sorted.length})`);
    assert.ok(figures.script_probe_ms_median < 2000, `the page answered while the run streamed (${figures.script_probe_ms_median} ms)`);
    if (process.env.MCPFLOW_PERF_STRICT === '1') {
      assert.ok(rate >= 5000, `≥ 5,000 events a second (${rate})`);
      assert.ok(figures.frame_ms_p95 <= 50, `frames while streaming: p95 ${figures.frame_ms_p95} ms ≤ 50 ms`);
    }
  } finally {
    await studio.close();
  }
});
