// The studio as a client of the data folder's `mcpflow service`.
//
// 1. A schedule fires with no studio and no terminal open: an MCP host (the official
//    TypeScript SDK client through `mcpflow serve`, tests/mcp/ts-save-client.mjs) saves a
//    blueprint that runs every 2 s and leaves; the service `serve` started on demand stays
//    up for it and fires it. The studio opened afterwards joins that same service (no
//    second one starts) and its History lists the runs, started by `schedule`.
// 2. The studio keeps working when its service is killed: SIGKILL to the service, the
//    status line says so, a new service is started and the studio reconnects; then it
//    runs the blueprint on the canvas as before.
// Screenshots service-01.. of the window (1400×900).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, OUTPUT, ROOT, alive, approveAll, click, openStudio, runStatus, sel, servicePid, shown, stopService, until, windowShot } from './harness.mjs';

let shots = 0;
async function shot(browser, label) {
  shots += 1;
  return windowShot(browser, join(OUTPUT, `service-${String(shots).padStart(2, '0')}-${label}.png`));
}

const scheduled = {
  blueprint: 1,
  id: 'e2e-every-2s',
  name: 'Every two seconds',
  schedule: { every: '2s' },
  steps: [{ id: 'stamp', name: 'Stamp the run', kind: 'transform', value: '{{ run.id }}' }],
  output: '{{ stamp }}',
};

function runsOf(home, blueprint) {
  const out = spawnSync(CLI, ['runs', '--json'], { env: { ...process.env, MCPFLOW_HOME: home }, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout).filter((r) => r.blueprint === blueprint);
}

async function openBlueprint(browser, id) {
  await click(browser, sel('file-open'));
  await click(browser, sel(`open-item-${id}`));
}

test('service: a schedule an agent saved fires on the service alone; the studio opened later joins it and lists the runs', async () => {
  const home = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-service-schedule-'));
  let studio;
  try {
    // The agent saves the blueprint and leaves; nothing else is open.
    const saved = spawnSync('node', [join(ROOT, 'tests/mcp/ts-save-client.mjs')], {
      env: { ...process.env, MCPFLOW_BIN: CLI, MCPFLOW_HOME: home, MCPFLOW_SERVICE_IDLE: '1', BLUEPRINT: JSON.stringify(scheduled) },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.match(saved.stdout, /ok - saved e2e-every-2s as revision 1/, saved.stdout + saved.stderr);
    const pid = servicePid(home);
    assert.ok(pid !== null, 'serve started a service on demand');
    // Its idle time is 1 s, yet the schedule keeps it: it fires with nobody connected.
    await until(() => runsOf(home, scheduled.id).length >= 2, 'two scheduled runs on the service alone', 20_000);
    assert.ok(alive(pid), 'the service stayed up for its schedule');
    for (const run of runsOf(home, scheduled.id)) {
      assert.equal(run.trigger, 'schedule');
    }

    // The studio opened afterwards joins that service: no second one.
    studio = await openStudio('service-schedule', {}, { home });
    const { browser } = studio;
    await shown(browser, sel('step-namespaces'), 30_000);
    await until(async () => (await (await browser.$(sel('service-status'))).getAttribute('data-state')) === 'connected', 'the studio connected to the service');
    assert.match(await (await browser.$(sel('service-status'))).getAttribute('title'), new RegExp(`pid ${pid}\\b`));
    assert.equal(servicePid(home), pid, 'the same service');
    await openBlueprint(browser, scheduled.id);
    await shown(browser, sel('step-stamp'));
    await click(browser, sel('tab-history'));
    await until(async () => (await browser.$$(sel('history-row'))).length >= 2, 'the scheduled runs in History');
    const rows = await browser.$$(sel('history-row'));
    for (const row of rows) {
      assert.equal(await (await row.$(sel('history-by'))).getText(), 'schedule');
      assert.equal(await row.getAttribute('data-status'), 'succeeded');
    }
    // New runs keep arriving while the studio is open.
    const before = rows.length;
    await until(async () => (await browser.$$(sel('history-row'))).length > before, 'a run fired while the studio is open', 20_000);
    await shot(browser, 'scheduled-runs-in-history');
  } finally {
    if (studio) await studio.close();
    await stopService(home);
    rmSync(home, { recursive: true, force: true });
  }
});

test('service: killed under the open studio, a new one starts, the studio reconnects and runs as before', async () => {
  const studio = await openStudio('service-restart');
  try {
    const { browser, home } = studio;
    await shown(browser, sel('step-namespaces'), 30_000);
    const indicator = async () => (await browser.$(sel('service-status'))).getAttribute('data-state');
    await until(async () => (await indicator()) === 'connected', 'connected to the service');
    const first = servicePid(home);
    assert.ok(first !== null, 'the studio started a service');
    await shot(browser, 'connected');

    process.kill(first, 'SIGKILL');
    // The status line tells of it, and of the new service.
    await until(async () => {
      const pid = servicePid(home);
      return pid !== null && pid !== first && (await indicator()) === 'connected';
    }, 'a new service, connected', 30_000);
    const second = servicePid(home);
    assert.match(await (await browser.$(sel('service-status'))).getAttribute('title'), new RegExp(`pid ${second}\\b`));
    await until(async () => /reconnected to the mcpflow service/.test(await (await browser.$(sel('status'))).getText()), '"reconnected" in the status line');
    await shot(browser, 'reconnected');

    // The demo on the canvas runs on the new service.
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the demo to succeed on the new service', 90_000);
    await shot(browser, 'ran-after-restart');
  } finally {
    await studio.close();
  }
});
