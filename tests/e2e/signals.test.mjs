// SIGTERM and SIGHUP end the real studio as closing its window does: the run it started
// is cancelled (in the data folder's service, which runs it), and the process exits with
// the signal's code (143, 129). The servers belong to the service's shared pool: they are
// reaped — a grandchild the server left behind included — when the service stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP, CLI, ROOT, alive, importDoc, openStudio, servicePid, shown, stopService, studioPid, until } from './harness.mjs';

const sel = (id) => `[data-testid="${id}"]`;

test('signals: SIGTERM during a run cancels it, reaps the server and its grandchild', async () => {
  const studio = await openStudio('signals');
  const { browser, home } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);
    const bin = join(ROOT, 'target/debug/mcpflow-testkit');
    const pidfile = join(home, 'grandchild.pid');
    const doc = {
      blueprint: 1,
      id: 'hangs',
      servers: { lingering: { command: 'sh', args: ['-c', `sleep 300 & echo $! > '${pidfile}'; exec '${bin}' faulty`] } },
      steps: [{ id: 'wait_forever', kind: 'tool', server: 'lingering', tool: 'hang', args: {} }],
    };
    await importDoc(studio, doc);

    await (await shown(browser, sel('run-start'))).click();
    await (await shown(browser, sel('consent-approve'))).click();
    await until(async () => existsSync(pidfile), 'the server to start and leave its grandchild', 30_000);
    const grandchild = Number(readFileSync(pidfile, 'utf8').trim());
    assert.ok(alive(grandchild), 'the grandchild runs while the step hangs');
    await until(
      async () => (await (await browser.$(sel('run-state'))).getAttribute('data-status')) === 'running',
      'the run to be running',
    );
    await studio.shot('running-before-sigterm');

    const pid = studioPid(home);
    assert.ok(pid, 'the studio process is found');
    process.kill(pid, 'SIGTERM');
    await until(async () => !alive(pid), 'the studio to exit after SIGTERM', 15_000);
    // Its run ends with it, cancelled, in the service that ran it.
    const status = () => {
      const out = spawnSync(CLI, ['runs', '--json'], { env: { ...process.env, MCPFLOW_HOME: home }, encoding: 'utf8' });
      return JSON.parse(out.stdout || '[]').find((r) => r.blueprint === 'hangs')?.status;
    };
    await until(async () => status() === 'cancelled', 'the studio’s run to be cancelled', 15_000);
    assert.ok(servicePid(home) !== null, 'the service stays for its other clients');
    // The service stopping reaps the server's whole process group.
    await stopService(home);
    await until(async () => !alive(grandchild), `the server's grandchild ${grandchild} to be reaped`, 10_000);
  } finally {
    await studio.close();
  }
});

/** Whether process `pid` has a handler for `signal` (its bit in SigCgt). */
function catches(pid, signal) {
  const number = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal];
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mask = BigInt(`0x${/^SigCgt:\s*([0-9a-f]+)$/m.exec(status)[1]}`);
  return (mask & (1n << BigInt(number - 1))) !== 0n;
}

/** Starts the studio alone, waits until it has opened its store, signals it, returns its exit code. */
async function exitCodeAfter(signal) {
  const home = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-signal-'));
  try {
    const child = spawn(APP, [], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, MCPFLOW_HOME: home, MCPFLOW_DEMO_ROOT: ROOT },
    });
    const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, sig })));
    // The window's setup starts the signal watcher: wait until the process catches the
    // signal (its handler shows in /proc/PID/status).
    await until(() => catches(child.pid, signal), `the studio to catch ${signal}`, 30_000);
    child.kill(signal);
    const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 15_000));
    const result = await Promise.race([exited, timeout]);
    if (result === null) child.kill('SIGKILL');
    return result;
  } finally {
    await stopService(home);
    rmSync(home, { recursive: true, force: true });
  }
}

test('signals: the studio exits 143 on SIGTERM and 129 on SIGHUP', async () => {
  assert.deepEqual(await exitCodeAfter('SIGTERM'), { code: 143, sig: null });
  assert.deepEqual(await exitCodeAfter('SIGHUP'), { code: 129, sig: null });
});
