// The studio and the agents on one engine: with the real app open on its data folder, the
// official TypeScript SDK client launches `mcpflow serve` twice (as Claude Desktop or
// Cursor would, no options) — each serve finds the service the studio started answering
// the folder's endpoint and bridges into it instead of failing on the store's lock. One host saves a blueprint,
// both run at once on the studio's servers (echo, approved in the studio first); `mcpflow
// runs` reads the history through the studio too. Screenshot of the studio afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, alive, approveAll, click, importDoc, openStudio, runStatus, sel, servicePid, shown, studioPid, until } from './harness.mjs';

const CLI = join(ROOT, 'target/debug/mcpflow');

test('shared: MCP hosts bridge into the open studio, and the CLI reads through it', async () => {
  const studio = await openStudio('shared');
  try {
    const { browser, home } = studio;
    await shown(browser, sel('step-namespaces'), 30_000);
    // A person approves the echo server in the studio, by running it once.
    await importDoc(studio, {
      blueprint: 1, id: 'e2e-shared-approve', name: 'Approve echo',
      steps: [{ id: 'hello', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hi' } }],
    });
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the studio run to succeed', 60_000);

    const env = { ...process.env, MCPFLOW_BIN: CLI, MCPFLOW_HOME: home };
    const agents = spawnSync('node', [join(ROOT, 'tests/mcp/ts-service-client.mjs')], { env, encoding: 'utf8', timeout: 90_000 });
    assert.equal(agents.status, 0, `${agents.stdout}\n${agents.stderr}`);
    assert.match(agents.stdout, /ok - a blueprint saved through one bridge is listed through the other/);
    assert.match(agents.stdout, /ok - both runs succeeded at the same time/);
    const ids = agents.stdout.split('\n').find((l) => l.startsWith('runs: ')).slice(6).split(' ');

    // The studio holds the store; the CLI reads the runs through it.
    const runs = spawnSync(CLI, ['runs', '--json'], { env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(runs.status, 0, runs.stderr);
    const listed = JSON.parse(runs.stdout);
    for (const id of ids) {
      const run = listed.find((r) => r.id === id);
      assert.ok(run, `${id} is in the history: ${runs.stdout}`);
      assert.equal(run.status, 'succeeded');
      assert.equal(run.trigger, 'mcp');
    }
    await studio.shot('after-agents');
  } finally {
    await studio.close();
  }
});

test('shared: a service already holding the folder is joined by the studio, and outlives it', async () => {
  const home = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-join-'));
  const service = spawn(CLI, ['service', '--idle', '120'], { env: { ...process.env, MCPFLOW_HOME: home }, stdio: 'ignore' });
  try {
    await until(async () => existsSync(join(home, 'mcpflow.sock')), 'the service to answer', 20_000);
    const studio = await openStudio('shared-join', {}, { home });
    try {
      const { browser } = studio;
      await shown(browser, sel('step-namespaces'), 30_000);
      // The studio is that service's client: no second engine, the pid on the indicator.
      const indicator = await browser.$(sel('service-status'));
      await until(async () => (await indicator.getAttribute('data-state')) === 'connected', 'connected to the service');
      assert.match(await indicator.getAttribute('title'), new RegExp(`pid ${service.pid}\\b`));
      assert.equal(servicePid(home), service.pid, 'the service that was there');
      // It seeded the folder through the service: the CLI reads the examples through it.
      const env = { ...process.env, MCPFLOW_HOME: home };
      const list = spawnSync(CLI, ['list'], { env, encoding: 'utf8', timeout: 30_000 });
      assert.equal(list.status, 0, list.stderr);
      assert.match(list.stdout, /cmdb-sync/);
      await studio.shot('joined');
      // Closing the studio leaves the service to its other clients.
      await browser.deleteSession();
      await until(() => studioPid(home) === null, 'the studio to exit', 20_000);
      assert.ok(alive(service.pid), 'the service outlives the studio');
      const again = spawnSync(CLI, ['list'], { env, encoding: 'utf8', timeout: 30_000 });
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /cmdb-sync/);
    } finally {
      await studio.close();
    }
  } finally {
    service.kill('SIGKILL');
  }
});
