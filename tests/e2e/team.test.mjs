// A team's engine: PostgreSQL (a throwaway cluster, `mcpflow-testkit postgres`), one
// `mcpflow worker`, and a team service (`mcpflow service --db URL --listen 127.0.0.1:0`
// with a token). The studio connects to that service (MCPFLOW_SERVICE and
// MCPFLOW_SERVICE_TOKEN) and saves a blueprint into the team's store. A run of it queued
// from the CLI (`mcpflow run FILE --db URL --detach`) is claimed by the worker, and the
// open studio plays it live on its canvas — the slow step seen running, then the run
// succeeded — and History lists it, started by the CLI. Screenshots team-01.. (1400×900).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { APP, CLI, click, importDoc, nodeState, openStudio, runStatus, sel, shown, until, writeJson } from './harness.mjs';

const TESTKIT = join(dirname(APP), 'mcpflow-testkit');

const doc = {
  blueprint: 1,
  id: 'e2e-team',
  name: 'Team greeting',
  steps: [
    { id: 'wait', name: 'Wait a moment', kind: 'tool', server: 'echo', tool: 'sleep', args: { ms: 4000 } },
    { id: 'hello', name: 'Say hello', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hello from a worker' }, after: ['wait'] },
  ],
  output: '{{ hello }}',
};

/** Starts `command args`, collecting what it prints; resolves once `ready` matches. */
function start(command, args, env, ready, what) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let said = '';
  const heard = new Promise((resolve, reject) => {
    const hear = (d) => {
      said += d;
      const m = ready.exec(said);
      if (m) resolve(m);
    };
    child.stdout.on('data', hear);
    child.stderr.on('data', hear);
    child.on('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready: ${said}`)));
  });
  return { child, heard, said: () => said };
}

test('team: the studio on a team service sees a run the CLI queued go live on its canvas as a worker runs it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-team-'));
  const started = [];
  let studio;
  try {
    const pg = start(TESTKIT, ['postgres'], {}, /^(postgresql:\S+)$/m, 'the PostgreSQL cluster');
    started.push(pg.child);
    const [, url] = await pg.heard;
    const servers = join(dir, 'servers.json');
    writeJson(servers, { mcpServers: { echo: { command: TESTKIT, args: ['echo'] } } });
    const token = randomBytes(32).toString('hex');
    const env = { MCPFLOW_HOME: join(dir, 'service-home') };
    const service = start(
      CLI,
      ['service', '--db', url, '--listen', '127.0.0.1:0', '--servers', servers, '--allow-all-servers'],
      { ...env, MCPFLOW_SERVICE_TOKEN: token },
      /answers at (127\.0\.0\.1:\d+)/,
      'the team service',
    );
    started.push(service.child);
    const [, addr] = await service.heard;
    const worker = start(
      CLI,
      ['worker', '--db', url, '--poll', '200ms', '--servers', servers, '--allow-all-servers'],
      { MCPFLOW_HOME: join(dir, 'worker-home') },
      /worker \S+ on /,
      'the worker',
    );
    started.push(worker.child);
    await worker.heard;

    studio = await openStudio('team', { MCPFLOW_SERVICE: addr, MCPFLOW_SERVICE_TOKEN: token });
    const { browser } = studio;
    // The indicator says whose engine this is: the team's, its address on hover.
    const indicator = await shown(browser, `${sel('service-status')}[data-state="connected"]`, 30_000);
    assert.equal(await indicator.getProperty('textContent'), 'team');
    assert.match(await indicator.getAttribute('title'), new RegExp(`team's mcpflow service at ${addr.replace(/\./g, '\\.')}`));
    await importDoc(studio, doc);
    await click(browser, sel('file-save'));
    await click(browser, sel('save-as-confirm'));
    await until(async () => /saved revision 1/.test(await (await browser.$(sel('status'))).getText()), '"saved revision 1"');
    await studio.shot('saved-on-the-team-service');
    // The store is the team's: the CLI reads the blueprint the studio saved there.
    const listed = spawnSync(CLI, ['list', '--db', url], { encoding: 'utf8', env: { ...process.env, ...env } });
    assert.equal(listed.status, 0, listed.stderr);
    assert.match(listed.stdout, /e2e-team/);

    // Queued from the CLI, run by the worker, played on the canvas.
    const file = join(dir, 'team.json');
    writeJson(file, doc);
    const queued = spawnSync(CLI, ['run', file, '--db', url, '--detach'], { encoding: 'utf8', env: { ...process.env, ...env } });
    assert.equal(queued.status, 0, queued.stderr);
    const runId = queued.stdout.trim();
    assert.match(runId, /^[0-9a-f-]{36}$/, queued.stdout);
    await until(async () => (await nodeState(browser, 'wait')) === 'running', 'the worker’s sleep step to run on the canvas', 30_000).catch(async (e) => {
      const status = await (await browser.$(sel('status'))).getText().catch(() => '');
      throw new Error(`${e.message}; the status: ${status}; the worker said: ${worker.said()}; the service said: ${service.said()}`);
    });
    assert.equal(await runStatus(browser), 'running');
    assert.equal(await (await browser.$(sel('run-state'))).getAttribute('data-by'), 'CLI');
    assert.equal(await nodeState(browser, 'hello'), 'queued');
    await studio.shot('worker-run-live');
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the worker’s run to finish on the canvas', 60_000);
    assert.equal(await nodeState(browser, 'hello'), 'succeeded');
    await click(browser, sel('tab-history'));
    const row = await shown(browser, `${sel('history-row')}[data-run="${runId}"][data-status="succeeded"]`);
    assert.equal(await (await row.$(sel('history-by'))).getText(), 'CLI');
    await studio.shot('history-of-the-team');
  } finally {
    await studio?.close();
    for (const child of started.reverse()) {
      child.stdin?.end();
      child.kill('SIGTERM');
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
