// The demo from anywhere, end to end on the real app: the studio started in a fresh
// temporary folder (not the repository) opens the demo legible (zoom ≥ 60%, card titles
// at a readable size inside the view, the canvas ≥ 70% of the 1400×900 window), groups the servers waiting for
// approval in one palette entry, asks consent for the seeded servers by their absolute
// commands, runs the demo to success with the memory graph written into the data folder,
// and the Servers panel then agrees that what was approved is approved. A blueprint that
// declares its own server under a configured name is told so on its step and in the
// Servers panel (the configured one is used).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approveAll, click, fill, importDoc, openStudio, ROOT, runStatus, sel, shown, standsStill, until } from './harness.mjs';


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

/**
 * What a new user sees: the window, the canvas's share of it, the zoom (React Flow's
 * viewport transform) and each card title's on-screen font size and whether it is inside
 * the canvas.
 */
async function firstSight(browser) {
  return browser.execute(() => {
    const flow = document.querySelector('.react-flow')?.getBoundingClientRect();
    const m = /scale\(([\d.]+)\)/.exec(document.querySelector('.react-flow__viewport')?.style.transform ?? '');
    const zoom = m ? Number(m[1]) : null;
    const titles = [...document.querySelectorAll('.react-flow__node [data-testid^="title-"]')].map((el) => {
      const r = el.getBoundingClientRect();
      const visible = !!flow && r.width > 0 && r.left >= flow.left && r.right <= flow.right && r.top >= flow.top && r.bottom <= flow.bottom;
      return { text: el.textContent, px: parseFloat(getComputedStyle(el).fontSize) * (zoom ?? 0), visible };
    });
    return {
      winW: window.innerWidth,
      winH: window.innerHeight,
      share: flow ? (flow.width * flow.height) / (window.innerWidth * window.innerHeight) : 0,
      zoom,
      titles,
    };
  });
}

test('the demo runs from a folder other than the repository, by the seeded servers, and consent agrees', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-demo-cwd-'));
  const studio = await openStudio('demo', {}, { cwd });
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);

    // ---- First sight: the window as configured, the demo legible, the canvas the app.
    await standsStill(browser, '.react-flow__viewport', 30_000);
    const view = await until(async () => {
      const b = await firstSight(browser);
      return b.zoom !== null && b.titles.length > 0 ? b : null;
    }, 'the demo to open', 30_000);
    await studio.shot('first-start');
    assert.deepEqual([view.winW, view.winH], [1400, 900], `the window: ${JSON.stringify(view)}`);
    assert.ok(view.zoom >= 0.6 && view.zoom <= 1, `the demo opens at a legible zoom: ${view.zoom}`);
    assert.ok(view.share >= 0.7, `the canvas gets ≥ 70% of the window: ${JSON.stringify(view)}`);
    const inView = view.titles.filter((t) => t.visible);
    assert.ok(inView.length >= 4, `several card titles in view: ${JSON.stringify(view.titles)}`);
    for (const t of inView) {
      assert.ok(t.px >= 10, `title "${t.text}" is drawn at ${t.px.toFixed(1)} px on screen (≥ 10 px)`);
    }

    // ---- The palette: the seeded servers' tools are there from the start, as shipped
    // (demo/listings.json), each server marked as awaiting approval; nothing started.
    const awaiting = await shown(browser, sel('palette-awaiting-memory'), 30_000);
    assert.match(await awaiting.getText(), /Awaits approval/);
    assert.equal(await browser.$$(sel('palette-waiting')).length, 0, 'no seeded server is "not listed yet"');
    await fill(browser, sel('palette-search'), 'create_entities');
    const item = await shown(browser, sel('palette-item-memory-create_entities'));
    assert.equal(await item.getAttribute('data-awaiting'), 'true');
    await studio.shot('palette-listed-awaiting');
    await click(browser, sel('palette-search'));
    await browser.keys(['Control', 'a']);
    await browser.keys(['Backspace']);
    // Approve… shows the exact command, by its absolute path; cancelled, nothing starts.
    await click(browser, sel('palette-approve-memory'));
    const command = await (await shown(browser, sel('consent-command'))).getText();
    assert.match(command, /server-memory\/dist\/index\.js/, 'the whole command');
    assert.ok(command.includes(ROOT), `an absolute path, not one relative to where the studio started: ${command}`);
    await studio.shot('palette-approve-memory');
    await click(browser, sel('consent-cancel'));
    await until(async () => !(await browser.$(sel('consent-command')).isExisting()), 'the consent prompt to close');

    // ---- Run the demo: consent for the seeded servers, by absolute command lines.
    await click(browser, sel('run-start'));
    const approved = await approveAll(browser);
    assert.ok(approved.length >= 2, `the cluster and memory servers asked first: ${JSON.stringify(approved)}`);
    for (const c of approved) {
      assert.doesNotMatch(c, /(^|\s)node_modules\//, `no path relative to the folder the studio started in: ${c}`);
    }
    assert.ok(approved.some((c) => /server-memory/.test(c) && c.includes('MEMORY_FILE_PATH')), `the seeded memory: ${approved}`);
    await until(async () => ['succeeded', 'partial', 'failed', 'cancelled'].includes(await runStatus(browser)), 'the run to end', 180_000);
    const status = await runStatus(browser);
    const states = await nodeStates(browser);
    await studio.shot('demo-run');
    assert.equal(status, 'succeeded', `the demo succeeds from ${cwd}: ${JSON.stringify(states)}`);
    for (const [id, state] of Object.entries(states)) assert.equal(state, 'succeeded', `${id} succeeded`);

    // The knowledge graph went into the data folder, not into node_modules or the cwd.
    const memory = join(studio.home, 'demo-memory.json');
    await until(async () => existsSync(memory), `${memory} to be written`, 15_000);
    assert.match(readFileSync(memory, 'utf8'), /"entityType"/);

    // ---- The Servers panel agrees: the memory the run approved is the one it lists.
    await click(browser, sel('servers-button'));
    await shown(browser, sel('server-approved-memory'));
    assert.equal(await (await browser.$(sel('server-unapproved-memory'))).isExisting(), false);
    await studio.shot('servers-approved');
    await browser.keys(['Escape']);

    // ---- A blueprint's own `echo` under a configured name: told on the step and in the panel.
    await importDoc(studio, {
      blueprint: 1,
      id: 'own-echo',
      name: 'Declares its own echo',
      servers: { echo: { command: 'node', args: ['node_modules/somewhere/echo.js'] } },
      steps: [{ id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hi' } }],
    });
    const badge = await shown(browser, sel('diag-say'));
    await until(async () => /SERVER_SHADOWED/.test(await badge.getAttribute('title')), 'the SERVER_SHADOWED warning on the step');
    const warning = await badge.getAttribute('title');
    await studio.shot('shadowed-warning');
    assert.match(warning, /node_modules\/somewhere\/echo\.js/, `names the blueprint's command: ${warning}`);
    assert.match(warning, /mcpflow-testkit/, `and the configured one: ${warning}`);
    await click(browser, sel('servers-button'));
    const notice = await shown(browser, sel('server-shadowed-echo'));
    assert.match(await notice.getText(), /declares its own “echo”/);
    await studio.shot('servers-shadowed');
  } finally {
    await studio.close();
    rmSync(cwd, { recursive: true, force: true });
  }
});
