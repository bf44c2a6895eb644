// The installed package, as a new user meets it: the studio from `/usr/bin` (the .deb,
// installed with dpkg -i), started with a fresh HOME and its default data folder
// (`~/.local/share/mcpflow`, no MCPFLOW_HOME, no MCPFLOW_DEMO_ROOT), opens the demo with
// the first-start guide, asks consent for the demo servers it seeded from
// `/usr/lib/mcpflow`, and runs the demo to success from its window.
//
// Run by scripts/check-deb-installed.sh, which installs the package, makes the fresh
// HOME and sets MCPFLOW_STUDIO_BIN and MCPFLOW_INSTALLED_HOME; skipped without them (in
// `bash scripts/e2e.sh`, which tests the repository's debug build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { APP, OUTPUT, ROOT, approveAll, click, openStudio, runStatus, sel, shown, until, windowShot } from './harness.mjs';

const HOME = process.env.MCPFLOW_INSTALLED_HOME;
const LIB = process.env.MCPFLOW_INSTALLED_LIB ?? '/usr/lib/mcpflow';
const skip =
  !HOME || !process.env.MCPFLOW_STUDIO_BIN
    ? 'checks an installed package: run `bash scripts/check-deb-installed.sh DEB` (sets MCPFLOW_STUDIO_BIN and MCPFLOW_INSTALLED_HOME)'
    : false;

test('the installed studio starts with a fresh HOME, seeds its default data folder and runs the demo', { skip }, async () => {
  assert.ok(!APP.startsWith(`${ROOT}/`), `MCPFLOW_STUDIO_BIN must be the installed studio, not a build in the repository: ${APP}`);
  const data = join(HOME, '.local/share/mcpflow');
  assert.equal(existsSync(data), false, `the data folder ${data} must not exist yet (a fresh HOME)`);
  // The studio's default data folder under the fresh HOME: the harness's MCPFLOW_HOME and
  // MCPFLOW_DEMO_ROOT are blanked (both ignore an empty value), the XDG folders too.
  const env = {
    HOME,
    MCPFLOW_HOME: '',
    MCPFLOW_DEMO_ROOT: '',
    XDG_DATA_HOME: '',
    XDG_CONFIG_HOME: '',
    XDG_CACHE_HOME: '',
    XDG_STATE_HOME: '',
  };
  const studio = await openStudio('installed', env, { home: data, keep: true, cwd: HOME, guide: true });
  const { browser } = studio;
  try {
    // ---- First start: the guide over the demo.
    await shown(browser, sel('guide'), 60_000);
    await shown(browser, sel('step-namespaces'), 30_000);
    await windowShot(browser, join(OUTPUT, 'installed-01-first-start-guide.png'));
    await click(browser, sel('guide-dismiss'));
    await until(async () => !(await browser.$(sel('guide')).isExisting()), 'the guide to close');
    assert.ok(existsSync(join(data, 'seeded')), `the studio seeded its default data folder ${data}`);

    // ---- Run the demo from the window: consent for the servers seeded from the package.
    await click(browser, sel('run-start'));
    const approved = await approveAll(browser, 30_000);
    assert.ok(approved.length >= 2, `the cluster and memory servers asked first: ${JSON.stringify(approved)}`);
    for (const command of approved) {
      assert.ok(command.includes(`${LIB}/`), `a server of the package (${LIB}): ${command}`);
      assert.ok(!command.includes(ROOT), `nothing from the repository: ${command}`);
    }
    await until(async () => ['succeeded', 'partial', 'failed', 'cancelled'].includes(await runStatus(browser)), 'the run to end', 240_000);
    const status = await runStatus(browser);
    const states = await browser.execute(() => {
      const out = {};
      for (const el of document.querySelectorAll('[data-testid^="run-"][data-state]')) {
        out[el.getAttribute('data-testid').slice(4)] = el.getAttribute('data-state');
      }
      return out;
    });
    const shot = await windowShot(browser, join(OUTPUT, 'installed-02-demo-run.png'));
    console.log(`screenshot of the demo run: ${shot}`);
    console.log(`approved: ${JSON.stringify(approved)}`);
    console.log(`steps: ${JSON.stringify(states)}`);
    assert.equal(status, 'succeeded', `the demo run: ${JSON.stringify(states)}`);
    assert.ok(Object.keys(states).length >= 5, `the demo's steps show their state: ${JSON.stringify(states)}`);
    for (const [id, state] of Object.entries(states)) assert.equal(state, 'succeeded', `${id} succeeded`);

    // The packaged server-memory wrote the graph into the default data folder.
    const memory = join(data, 'demo-memory.json');
    await until(async () => existsSync(memory), `${memory} to be written`, 15_000);
    assert.match(readFileSync(memory, 'utf8'), /"entityType"/);
    console.log(`data folder: ${data}: ${readdirSync(data).sort().join(', ')}`);
  } finally {
    await studio.close();
  }
});
