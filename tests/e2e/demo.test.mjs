// The demo from anywhere, end to end on the real app: the studio started in a fresh
// temporary folder (not the repository) opens the demo, groups the servers waiting for
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
import { importDoc, openStudio, ROOT, shown, until } from './harness.mjs';

const sel = (id) => `[data-testid="${id}"]`;

async function click(browser, selector) {
  const el = await shown(browser, selector);
  await el.click();
}

async function runStatus(browser) {
  const el = await browser.$(sel('run-state'));
  return (await el.isExisting()) ? el.getAttribute('data-status') : null;
}

/** Approves every server the consent prompt asks for; returns the commands approved. */
async function approveAll(browser, timeout = 15_000) {
  const approved = [];
  const dialog = await browser.$(sel('consent-dialog'));
  const chip = await browser.$(sel('run-state'));
  await until(async () => (await dialog.isDisplayed()) || (await chip.isExisting()), 'a consent prompt or the run', timeout);
  while (await dialog.isDisplayed()) {
    const command = await (await browser.$(sel('consent-command'))).getText();
    await click(browser, sel('consent-approve'));
    approved.push(command);
    await until(
      async () => !(await dialog.isDisplayed()) || (await (await browser.$(sel('consent-command'))).getText()) !== command,
      `the prompt for ${command} to close`,
      30_000,
    );
    await new Promise((r) => setTimeout(r, 300));
  }
  return approved;
}

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

test('the demo runs from a folder other than the repository, by the seeded servers, and consent agrees', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-demo-cwd-'));
  const studio = await openStudio('demo', {}, { cwd });
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);

    // ---- The palette: one grouped entry for the servers waiting for approval.
    const group = await shown(browser, sel('palette-waiting'), 30_000);
    const title = await (await shown(browser, sel('palette-waiting-toggle'))).getText();
    const waitingCount = Number(/^(\d+) servers? waiting for approval$/.exec(title.replace(/^[▸▾]\s*/, ''))?.[1]);
    assert.ok(waitingCount >= 4, `one entry for the seeded servers: "${title}"`);
    assert.equal(await browser.$$('.palette-consent').length, 0, 'no box per server any more');
    await studio.shot('palette-grouped');
    await click(browser, sel('palette-waiting-toggle'));
    const row = await shown(browser, sel('palette-waiting-memory'));
    const command = await row.$('.palette-waiting-command');
    const shape = await browser.execute((el) => {
      const r = el.getBoundingClientRect();
      return { height: r.height, lineHeight: parseFloat(getComputedStyle(el).lineHeight) || 16, cut: el.scrollWidth > el.clientWidth, title: el.title, text: el.textContent };
    }, command);
    assert.ok(shape.height <= shape.lineHeight * 1.5, `one line: ${JSON.stringify(shape)}`);
    assert.ok(shape.cut || shape.text.startsWith('node …/'), `long paths shortened or cut: ${JSON.stringify(shape)}`);
    assert.match(shape.title, /server-memory\/dist\/index\.js/, 'the whole command on hover');
    assert.ok(shape.title.includes(ROOT), `an absolute path, not one relative to where the studio started: ${shape.title}`);
    assert.ok(await (await row.$(sel('approve-memory'))).isDisplayed(), 'a Review… button per server');
    await studio.shot('palette-waiting-open');
    assert.ok(await group.isDisplayed());

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
