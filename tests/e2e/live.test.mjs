// Working beside an agent: the real app is open on a saved blueprint (echo, approved in
// the studio by running it once); an agent — the official TypeScript SDK client through
// `mcpflow serve`, bridged into the studio's engine (tests/mcp/ts-live-client.mjs) —
// saves a changed version of that blueprint. The studio says so at once, with what
// changed (a step added, a step changed, a top-level field); Reload takes it. Then the
// agent runs the blueprint by id: the run plays live on the canvas (the `sleep` step is
// seen running), and History lists it as it runs and when it ends, started by
// `live-agent (MCP)`. Screenshots live-01.. of the window (1400×900).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { OUTPUT, ROOT, approveAll, click, importDoc, nodeState, openStudio, runStatus, sel, shown, until, windowShot, writeJson } from './harness.mjs';

const CLI = join(ROOT, 'target/debug/mcpflow');

let shots = 0;
async function shot(browser, label) {
  shots += 1;
  const file = join(OUTPUT, `live-${String(shots).padStart(2, '0')}-${label}.png`);
  return windowShot(browser, file);
}

const mine = {
  blueprint: 1,
  id: 'e2e-live',
  name: 'Greet',
  steps: [{ id: 'hello', name: 'Say hello', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hello from the studio' } }],
  output: '{{ hello }}',
};
// The agent's version: a slow step first, the greeting changed and after it, a description.
const theirs = {
  ...mine,
  description: 'Waits a moment, then greets (changed by an agent).',
  steps: [
    { id: 'wait', name: 'Wait a moment', kind: 'tool', server: 'echo', tool: 'sleep', args: { ms: 4000 } },
    { ...mine.steps[0], args: { message: 'hello from the agent' }, after: ['wait'] },
  ],
};

test('live: a blueprint the agent saves and runs shows in the open studio, and its run plays on the canvas', async () => {
  const studio = await openStudio('live');
  let agent;
  try {
    const { browser, home } = studio;
    await shown(browser, sel('step-namespaces'), 30_000);
    // The studio has the blueprint saved, and has run it once (which approves echo).
    await importDoc(studio, mine);
    await click(browser, sel('file-save'));
    await click(browser, sel('save-as-confirm'));
    await until(async () => /saved revision 1/.test(await (await browser.$(sel('status'))).getText()), '"saved revision 1"');
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the studio run to succeed', 60_000);
    await click(browser, sel('run-close'));
    await until(async () => (await runStatus(browser)) === null, 'the run view to close');
    await shot(browser, 'open-in-studio');

    // The agent saves its version.
    const file = join(home, 'theirs.json');
    writeJson(file, theirs);
    agent = spawn('node', [join(ROOT, 'tests/mcp/ts-live-client.mjs')], {
      env: { ...process.env, MCPFLOW_BIN: CLI, MCPFLOW_HOME: home, LIVE_BLUEPRINT: file },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let out = '';
    agent.stdout.on('data', (d) => (out += d));
    const exited = new Promise((ok) => agent.on('exit', ok));
    await until(() => /saved rev 2/.test(out) || /not ok/.test(out), 'the agent to save', 60_000);
    assert.match(out, /saved rev 2/, out);

    // The studio says so at once, with what changed.
    const notice = await shown(browser, sel('changed-notice'));
    assert.equal(await notice.getAttribute('data-rev'), '2');
    const steps = await browser.$$(sel('changed-step'));
    const lines = [];
    for (const s of steps) lines.push(`${await s.getAttribute('data-change')} ${await s.getAttribute('data-step')} ${await s.getText()}`);
    assert.deepEqual(lines.map((l) => l.split(' ').slice(0, 2).join(' ')), ['added wait', 'changed hello']);
    assert.match(lines[1], /after, args changed/);
    assert.equal(await (await browser.$(sel('changed-field'))).getAttribute('data-field'), 'description');
    assert.match(await notice.getText(), /Greet was saved elsewhere/);
    assert.equal(await (await browser.$(sel('step-wait'))).isExisting(), false, 'the canvas still has the studio’s version');
    await shot(browser, 'changed-notice');

    // Reload: the canvas has their version.
    await click(browser, sel('changed-reload'));
    await shown(browser, sel('step-wait'));
    assert.equal(await (await browser.$(sel('changed-notice'))).isExisting(), false);
    assert.match(await (await browser.$(sel('status'))).getText(), /reloaded Greet: revision 2/);

    // The agent runs it: it plays on the canvas, started by the agent.
    agent.stdin.end('run\n');
    await until(async () => (await nodeState(browser, 'wait')) === 'running', 'the agent’s sleep step to run on the canvas', 30_000).catch(async (e) => {
      const status = await (await browser.$(sel('status'))).getText().catch(() => '');
      throw new Error(`${e.message}; the agent said: ${out.trim()}; the status: ${status}`);
    });
    assert.equal(await runStatus(browser), 'running');
    assert.equal(await (await browser.$(sel('run-state'))).getAttribute('data-by'), 'live-agent (MCP)');
    assert.match(await (await shown(browser, sel('run-by'))).getText(), /Started by live-agent \(MCP\)/);
    assert.equal(await nodeState(browser, 'hello'), 'queued');
    await shot(browser, 'agent-run-live');

    // History lists it while it runs, started by the agent.
    await click(browser, sel('tab-history'));
    const row = await shown(browser, `${sel('history-row')}[data-status="running"]`);
    assert.equal(await (await row.$(sel('history-by'))).getText(), 'live-agent (MCP)');
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the agent’s run to finish on the canvas', 60_000);
    assert.equal(await nodeState(browser, 'hello'), 'succeeded');
    await until(() => /run \S+ succeeded/.test(out), 'the agent to report its run', 30_000);
    const runId = /run (\S+) succeeded/.exec(out)[1];
    const done = await shown(browser, `${sel('history-row')}[data-run="${runId}"][data-status="succeeded"]`);
    assert.equal(await (await done.$(sel('history-by'))).getText(), 'live-agent (MCP)');
    const studioRow = await shown(browser, `${sel('history-row')}:not([data-run="${runId}"])`);
    assert.equal(await (await studioRow.$(sel('history-by'))).getText(), 'studio');
    await shot(browser, 'history-by-agent');
    const code = await Promise.race([exited, new Promise((ok) => setTimeout(() => ok('still running after 30 s'), 30_000))]);
    assert.equal(code, 0, out);
  } finally {
    agent?.kill();
    await studio.close();
  }
});
