// Performance of the real studio on a large blueprint: a generated 1,000-step blueprint
// (scripts/gen-blueprint.mjs: lanes of pipelines, fan-out/fan-in, switches, loops,
// fallbacks; no `layout`, so the studio places every step itself) is imported through
// the Import button, and panning the canvas is timed.
//
// Everything is measured in the page with performance.now():
// - open+render: from the click on Import (done by the in-page script, after it has set
//   up a MutationObserver) to the last change inside the canvas before 1 s of quiet
//   ("settled": the new document's nodes drawn, measured, the opening view set, the
//   minimap drawn). Also reported: the first frame painted with the new document's
//   nodes. A document this large opens at its start at 100% with only the visible
//   nodes rendered (docs/studio.md, "Large blueprints"), so the count of nodes in the
//   DOM is reported, not awaited.
// - panning: the pane is dragged for 2 s (mouse events dispatched in the page, one move
//   per frame, d3-zoom pans as for a real drag) while the frame intervals are recorded;
//   median, p95, max and frames > 50 ms. The same drag over the small demo blueprint,
//   in the same window just before, is the baseline (what the machine's painting costs
//   with next to nothing on the canvas).
//
// The figures are printed (`perf: …`) and written to test-output/e2e/perf.json.
// Environment: Xvfb, WebKitGTK without a GPU, the debug build of the studio (the UI is
// the production Vite build).
//
// Budgets: the figures (open ≤ 1 s; pan p95 ≤ 50 ms, i.e. never below 20 fps)
// are asserted with MCPFLOW_PERF_STRICT=1 (`npm run perf:studio`). In CI, which shares
// the machine with whatever else runs, the test asserts twice those — and the pan p95 at
// most twice the same run's baseline when the machine is so busy that the baseline itself
// is slow: still enough to catch a regression of the kind it was written for (700 ms
// frames before the studio chose WebKit's renderer; 1.5 s opens with every node rendered).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateBlueprint } from '../../scripts/gen-blueprint.mjs';
import { OUTPUT, openStudio, shown, writeJson } from './harness.mjs';

const STEPS = 1000;
/** The generated blueprint's first step (scripts/gen-blueprint.mjs). */
const FIRST_STEP = 'start';
const RUNS = Number(process.env.PERF_RUNS ?? 3);
const STRICT = process.env.MCPFLOW_PERF_STRICT === '1';
/** The bound for open+render (median of the runs); doubled unless strict. */
const OPEN_BUDGET_MS = STRICT ? 1000 : 2000;
/** Pan: p95 frame time (a frame of 50 ms is 20 fps); doubled unless strict. */
const PAN_P95_BUDGET_MS = STRICT ? 50 : 100;
const PAN_MS = 2000;
/** The discard question over the large canvas: shown, and gone after Cancel (a click
 * should answer within a tenth of a second; doubled unless strict). */
const ASK_BUDGET_MS = STRICT ? 100 : 200;

const sel = (id) => `[data-testid="${id}"]`;
const NODE = '.react-flow__node';

function stats(intervals) {
  const s = [...intervals].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  const round = (n) => Math.round(n * 10) / 10;
  return {
    frames: s.length,
    median_ms: round(at(0.5)),
    p95_ms: round(at(0.95)),
    max_ms: round(s[s.length - 1]),
    over_50ms: s.filter((t) => t > 50).length,
    fps: round((1000 * s.length) / s.reduce((a, b) => a + b, 0)),
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * In the page: the import command alone (Rust reads and validates the file; the JSON
 * crosses IPC), without loading the result. Resolves with its time in ms.
 */
function timeImportCommand(done) {
  const t0 = performance.now();
  window.__TAURI_INTERNALS__
    .invoke('import_blueprint')
    .then((r) => done({ ms: performance.now() - t0, steps: r?.doc?.steps?.length ?? 0 }))
    .catch((e) => done({ error: String(e) }));
}

/**
 * In the page: observe the canvas, click Import, and time (ms from the click):
 * - `firstPaint`: the first frame painted with the new document's nodes in place of the
 *   old one's (its first step `firstId` in the DOM, none of the nodes there before);
 * - `settled`: the last change inside the canvas (nodes measured, the opening view
 *   set, the minimap drawn) before `quietMs` of quiet, plus the frame that paints it.
 * A large document opens at its start with only the visible nodes rendered, so the
 * count of nodes in the DOM is reported, not awaited.
 */
function importAndTime(firstId, quietMs, done) {
  const root = document.querySelector('.react-flow');
  const button = document.querySelector('[data-testid="file-import"]');
  if (!root || !button) return done({ error: 'no canvas or no Import button' });
  const nodeIds = () => [...root.querySelectorAll('.react-flow__node')].map((n) => n.getAttribute('data-id'));
  const old = new Set(nodeIds());
  old.delete(firstId);
  const viewport = root.querySelector('.react-flow__viewport');
  let t0 = 0;
  let rendered = null;
  let firstPaint = null;
  let last = 0;
  let mutations = 0;
  let quiet = null;
  let over = false;
  const end = (result) => {
    if (over) return;
    over = true;
    observer.disconnect();
    clearTimeout(quiet);
    clearTimeout(limit);
    done(result);
  };
  const finish = () => end({ rendered, firstPaint, settled: last - t0, mutations, nodes: nodeIds().length, view: viewport?.style.transform });
  const arm = () => {
    clearTimeout(quiet);
    quiet = setTimeout(() => (firstPaint === null ? arm() : finish()), quietMs);
  };
  const observer = new MutationObserver((records) => {
    last = performance.now();
    mutations += records.length;
    if (rendered === null) {
      const ids = nodeIds();
      if (ids.includes(firstId) && !ids.some((id) => old.has(id))) {
        rendered = last - t0;
        requestAnimationFrame(() => requestAnimationFrame(() => (firstPaint = performance.now() - t0)));
      }
    }
    arm();
  });
  observer.observe(root, { subtree: true, childList: true, attributes: true });
  const limit = setTimeout(() => end({ error: 'timed out', rendered, firstPaint, nodes: nodeIds().length }), 30_000);
  t0 = performance.now();
  last = t0;
  button.click();
  arm();
}

/**
 * In the page: drags the pane for `ms` of wall time and records the interval between
 * animation frames meanwhile. The drag is mouse events dispatched on the pane, one move
 * per frame (what a browser delivers: pointer moves are coalesced to one per frame),
 * along a loop left/right and up/down; d3-zoom pans the canvas as for a real drag.
 * Dispatching in the page keeps the drag to `ms` however slow frames are (WebDriver
 * pointer actions wait for every move to be handled, so slow frames stretch them).
 */
function panAndTime(ms, done) {
  const pane = document.querySelector('.react-flow__pane');
  const viewport = document.querySelector('.react-flow__viewport');
  if (!pane || !viewport) return done({ error: 'no pane' });
  // Press on a spot of the pane with nothing on it (not on a node, which would drag it).
  const r = pane.getBoundingClientRect();
  let start = null;
  for (let fy = 0.5; fy < 0.95 && !start; fy += 0.05) {
    for (let fx = 0.5; fx < 0.95 && !start; fx += 0.05) {
      const x = Math.round(r.left + r.width * fx);
      const y = Math.round(r.top + r.height * fy);
      if (document.elementFromPoint(x, y) === pane) start = { x, y };
    }
  }
  if (!start) return done({ error: 'no empty spot on the pane' });
  const amp = Math.min(300, r.width / 4);
  const at = (f) => ({
    x: Math.round(start.x - amp * Math.sin(2 * Math.PI * f) - amp * f),
    y: Math.round(start.y - (amp / 2) * Math.sin(4 * Math.PI * f)),
  });
  const mouse = (type, p) =>
    pane.dispatchEvent(
      new MouseEvent(type, {
        bubbles: true,
        cancelable: true,
        view: window,
        clientX: p.x,
        clientY: p.y,
        button: 0,
        buttons: type === 'mouseup' ? 0 : 1,
      }),
    );
  const before = viewport.style.transform;
  let moves = 0;
  const observer = new MutationObserver(() => (moves += 1));
  observer.observe(viewport, { attributes: true, attributeFilter: ['style'] });
  let mounted = 0;
  const nodesEl = document.querySelector('.react-flow__nodes');
  const mountObserver = new MutationObserver((rs) => rs.forEach((r) => (mounted += r.addedNodes.length)));
  if (nodesEl) mountObserver.observe(nodesEl, { childList: true });
  const intervals = [];
  const js = [];
  mouse('mousedown', start);
  const t0 = performance.now();
  let prev = null;
  const tick = (now) => {
    if (prev !== null) intervals.push(now - prev);
    prev = now;
    const f = (now - t0) / ms;
    if (f >= 1) {
      mouse('mouseup', at(1));
      observer.disconnect();
      mountObserver.disconnect();
      done({
        mounted,
        intervals,
        js,
        moves,
        edges: document.querySelectorAll('.react-flow__edge').length,
        before,
        after: viewport.style.transform,
        nodes: document.querySelectorAll('.react-flow__node').length,
      });
      return;
    }
    const j0 = performance.now();
    mouse('mousemove', at(f));
    // React renders store updates in a microtask queued during the dispatch: ours runs after it.
    queueMicrotask(() => js.push(performance.now() - j0));
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

/**
 * In the page, over the large canvas with unsaved changes: click New and time (ms from
 * the click) until the "discard unsaved changes?" question is painted; then answer
 * Cancel and time until it is gone. The document must stay as it was.
 */
function askAndTime(done) {
  const button = document.querySelector('[data-testid="file-new"]');
  if (!button) return done({ error: 'no New button' });
  const dialog = () => document.querySelector('[data-testid="ask-dialog"]');
  const limit = setTimeout(() => done({ error: 'the question did not come' }), 10_000);
  const t0 = performance.now();
  const seen = new MutationObserver(() => {
    if (!dialog()) return;
    seen.disconnect();
    requestAnimationFrame(() =>
      requestAnimationFrame(() => {
        const shown = performance.now() - t0;
        const text = dialog().textContent;
        const cancel = document.querySelector('[data-testid="ask-cancel"]');
        const t1 = performance.now();
        const gone = new MutationObserver(() => {
          if (dialog()) return;
          gone.disconnect();
          requestAnimationFrame(() =>
            requestAnimationFrame(() => {
              clearTimeout(limit);
              done({ shown, closed: performance.now() - t1, text });
            }),
          );
        });
        gone.observe(document.body, { subtree: true, childList: true });
        cancel.click();
      }),
    );
  });
  seen.observe(document.body, { subtree: true, childList: true });
  button.click();
}

test(`a generated ${STEPS}-step blueprint opens and renders in ≤ ${OPEN_BUDGET_MS} ms and pans at p95 ≤ ${PAN_P95_BUDGET_MS} ms a frame`, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpflow-perf-'));
  const file = join(dir, `generated-${STEPS}.blueprint.json`);
  writeFileSync(file, JSON.stringify(generateBlueprint({ steps: STEPS }), null, 2) + '\n');
  // Each run is a fresh studio (first start, the demo open), so no run pays for the one
  // before it and no "discard unsaved changes?" question comes between them.
  const loadBefore = loadavg();
  const runs = [];
  let frame;
  let baseline;
  let pan;
  let screen;
  let ipc;
  let ask;
  try {
    for (let i = 0; i < RUNS; i++) {
      const last = i === RUNS - 1;
      const studio = await openStudio('perf', { MCPFLOW_TEST_DIALOG_PATH: file });
      const { browser } = studio;
      try {
        await browser.setTimeout({ script: 60_000 });
        await shown(browser, NODE);
        screen ??= await browser.execute(() => ({ width: innerWidth, height: innerHeight, dpr: devicePixelRatio }));
        if (last) {
          // The baseline, in the same window and run: panning the small demo blueprint.
          const base = await browser.executeAsync(panAndTime, PAN_MS);
          assert.ok(!base.error, `baseline pan: ${base.error}`);
          baseline = { ...stats(base.intervals), nodes: base.nodes };
          console.log(`perf: baseline pan of the demo (${base.nodes} nodes): frame median ${baseline.median_ms} ms, p95 ${baseline.p95_ms} ms (${baseline.fps} fps); script per move: median ${stats(base.js).median_ms} ms`);
        }
        const r = await browser.executeAsync(importAndTime, FIRST_STEP, 1000);
        assert.ok(!r.error, `run ${i + 1}: ${r.error} (rendered ${r.rendered}, nodes ${r.nodes})`);
        runs.push(r);
        console.log(
          `perf: run ${i + 1}: the new document's nodes in the DOM ${Math.round(r.rendered)} ms after the click, painted ${Math.round(r.firstPaint)} ms, settled ${Math.round(r.settled)} ms (${r.mutations} mutation records; ${r.nodes} nodes in the DOM after; view ${r.view})`,
        );
        const status = await (await browser.$(sel('status'))).getProperty('textContent');
        assert.match(status, /imported .*generated-1000/, `the status reports the import: ${status}`);
        assert.doesNotMatch(status, /error/, `the generated blueprint has no errors: ${status}`);
        if (!last) continue;

        await studio.shot('opened-1000');
        // Pan: drag the pane for PAN_MS, frames recorded in the page.
        pan = await browser.executeAsync(panAndTime, PAN_MS);
        assert.ok(!pan.error, `pan: ${pan.error}`);
        frame = stats(pan.intervals);
        await studio.shot('panned');
        // The "discard unsaved changes?" question over the large canvas (the import is
        // unsaved): it must come at once, and Cancel must keep the document.
        ask = await browser.executeAsync(askAndTime);
        assert.ok(!ask.error, `discard question: ${ask.error}`);
        assert.match(ask.text, /Save your changes\?.*Discard changes/);
        // A new blueprint is empty: nodes on the canvas mean the large document stayed.
        assert.ok((await browser.$$(NODE)).length > 0, 'Cancel kept the large document on the canvas');
        // What the backend's part of an open is: the import command alone (not loaded).
        ipc = await browser.executeAsync(timeImportCommand);
        assert.ok(!ipc.error && ipc.steps > 0, `the import command answers: ${JSON.stringify(ipc)}`);
      } catch (e) {
        await studio.shot('failure').catch(() => {});
        throw e;
      } finally {
        await studio.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const open = median(runs.map((r) => r.settled));
  console.log(`perf: load average before: ${loadBefore.map((n) => n.toFixed(2)).join(' ')} (the machine's other work counts: Xvfb + WebKitGTK paint on the CPU)`);
  console.log(`perf: import command alone (Rust reads + validates, JSON over IPC): ${Math.round(ipc.ms)} ms`);
  console.log(`perf: open+render ${STEPS} steps: ${Math.round(open)} ms (median of ${RUNS}: ${runs.map((r) => Math.round(r.settled)).join(', ')} ms)`);
  console.log(`perf: first paint of the new document: ${runs.map((r) => Math.round(r.firstPaint)).join(', ')} ms`);
  console.log(`perf: "discard unsaved changes?" over the ${STEPS}-step canvas: painted ${Math.round(ask.shown)} ms after the click on New, gone ${Math.round(ask.closed)} ms after Cancel`);
  console.log(
    `perf: pan (${pan.nodes} nodes in the DOM) for ~${PAN_MS / 1000} s: frame median ${frame.median_ms} ms, p95 ${frame.p95_ms} ms, max ${frame.max_ms} ms, ${frame.over_50ms} frames > 50 ms of ${frame.frames} (${frame.fps} fps); ${pan.moves} viewport updates; script per move: median ${stats(pan.js).median_ms} ms, p95 ${stats(pan.js).p95_ms} ms; ${pan.edges} edges in the DOM; ${pan.mounted} nodes mounted meanwhile`,
  );
  writeJson(join(OUTPUT, 'perf.json'), {
    measured_at: new Date().toISOString(),
    environment: 'Xvfb, WebKitGTK (no GPU), target/debug/mcpflow-studio with the production UI build',
    load_average: { before: loadBefore.map((n) => Math.round(n * 100) / 100), after: loadavg().map((n) => Math.round(n * 100) / 100) },
    window: screen,
    steps: STEPS,
    import_command_ms: Math.round(ipc.ms),
    open: {
      definition: 'click on Import → the last change in the canvas before 1 s of quiet (ms, in the page); one fresh studio per run',
      median_ms: Math.round(open),
      runs_ms: runs.map((r) => Math.round(r.settled)),
      shown_ms: runs.map((r) => Math.round(r.firstPaint)),
      nodes_in_dom: runs.map((r) => r.nodes),
      budget_ms: OPEN_BUDGET_MS,
    },
    discard_question: { shown_ms: Math.round(ask.shown), closed_ms: Math.round(ask.closed), budget_ms: ASK_BUDGET_MS },
    baseline_pan_demo: baseline,
    strict: STRICT,
    pan: { ...frame, duration_ms: PAN_MS, viewport_updates: pan.moves, nodes_in_dom: pan.nodes, p95_budget_ms: PAN_P95_BUDGET_MS },
  });

  assert.ok(pan.moves > 0 && pan.before !== pan.after, `the drag panned the canvas (${pan.moves} viewport updates)`);
  assert.ok(open <= OPEN_BUDGET_MS, `open+render ${Math.round(open)} ms (median) ≤ ${OPEN_BUDGET_MS} ms`);
  // Outside strict mode the pan budget follows the machine: at most twice the baseline's
  // p95 (the small demo panned in the same window just before), never below the fixed
  // budget. A busy shared machine slows both alike; a regression slows only the large one.
  const panBudget = STRICT ? PAN_P95_BUDGET_MS : Math.max(PAN_P95_BUDGET_MS, 2 * baseline.p95_ms);
  assert.ok(frame.p95_ms <= panBudget, `pan p95 frame ${frame.p95_ms} ms ≤ ${panBudget} ms (baseline p95 ${baseline.p95_ms} ms)`);
  assert.ok(frame.frames >= 20, `frames were recorded while panning (${frame.frames})`);
  assert.ok(ask.shown <= ASK_BUDGET_MS && ask.closed <= ASK_BUDGET_MS, `the discard question came in ${Math.round(ask.shown)} ms and went in ${Math.round(ask.closed)} ms (≤ ${ASK_BUDGET_MS} ms)`);
});
