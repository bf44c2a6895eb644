// The fallback when no `mcpflow service` can start: the studio holds the data folder
// itself (`MCPFLOW_STUDIO_IN_PROCESS=1` asks for it, as a missing CLI would). The status
// line says "in-process", no service process exists, the demo runs, and the folder's
// endpoint is the studio's own: `mcpflow list` reads through it. Screenshot
// in-process-01.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, OUTPUT, approveAll, click, openStudio, runStatus, sel, servicePid, shown, until, windowShot } from './harness.mjs';

test('in-process: with no service the studio holds the folder itself, runs the demo and answers the endpoint', async () => {
  const studio = await openStudio('in-process', { MCPFLOW_STUDIO_IN_PROCESS: '1' });
  try {
    const { browser, home } = studio;
    await shown(browser, sel('step-namespaces'), 30_000);
    const indicator = await browser.$(sel('service-status'));
    await until(async () => (await indicator.getAttribute('data-state')) === 'in_process', 'the indicator to say in-process');
    assert.equal(await indicator.getProperty('textContent'), 'in this window', 'the indicator says it in words a person reads');
    assert.equal(servicePid(home), null, 'no service was started');

    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the demo to succeed in process', 90_000);

    // The studio answers the folder's endpoint: the CLI reads through it (the store is locked).
    const list = spawnSync(CLI, ['list'], { env: { ...process.env, MCPFLOW_HOME: home }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /cmdb-sync-sketch/);
    await windowShot(browser, join(OUTPUT, 'in-process-01-demo-ran.png'));
  } finally {
    await studio.close();
  }
});
