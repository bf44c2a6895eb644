// Signing in to an OAuth server from the real studio: the TypeScript SDK's example server
// (`simpleStreamableHttp --oauth`, its demo authorization server approving at once) is
// configured through the Servers panel's import; Test says it needs a sign-in; Sign in
// opens "the browser" ($BROWSER = follow-redirects.mjs, which follows the redirects to
// the studio's loopback listener); the panel shows the signed-in state, tests again
// (tools, the protocol era), and a blueprint then calls the server's `greet` tool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, importDoc, openStudio, runStatus, sel, shown, until, writeJson } from './harness.mjs';

const EXAMPLE = join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js');
const BROWSER = join(ROOT, 'tests/e2e/follow-redirects.mjs');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The SDK's example server with its demo authorization server, once both listen. */
async function startExample() {
  assert.ok(existsSync(EXAMPLE), `${EXAMPLE} is missing: run \`npm ci\` at the repository root`);
  const port = await freePort();
  const authPort = await freePort();
  const child = spawn(process.execPath, [EXAMPLE, '--oauth'], {
    env: { ...process.env, MCP_PORT: String(port), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await until(async () => out.includes(`listening on port ${port}`) || child.exitCode !== null, 'the example server to listen', 20_000);
  assert.equal(child.exitCode, null, `the example server exited:\n${out}`);
  return { url: `http://localhost:${port}/mcp`, output: () => out, stop: () => child.kill('SIGTERM') };
}

test('oauth: the Servers panel signs in to the SDK example server through the browser and shows the signed-in state', async () => {
  const server = await startExample();
  const logDir = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-oauth-browser-'));
  const browserLog = join(logDir, 'visited.log');
  const studio = await openStudio('oauth', { BROWSER, FOLLOW_REDIRECTS_LOG: browserLog });
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);
    await (await shown(browser, sel('servers-button'))).click();
    await shown(browser, sel('servers-panel'));
    writeJson(studio.dialogPath, { mcpServers: { greeter: { url: server.url } } });
    await (await shown(browser, sel('servers-import'))).click();
    const row = await shown(browser, sel('server-row-greeter'));
    assert.match(await row.getText(), /http/);

    // Test: the server answers 401; the row says it needs a sign-in, with the button.
    await (await shown(browser, sel('server-test-greeter'))).click();
    const line = await shown(browser, sel('server-auth-greeter'), 30_000);
    await until(async () => (await line.getAttribute('data-state')) === 'needed', 'the row to say it needs a sign-in');
    assert.doesNotMatch(await row.getText(), /mcpflow auth login/, 'no command line in the GUI');

    // Sign in: "the browser" follows the redirects to the loopback listener.
    await (await shown(browser, sel('server-signin-greeter'))).click();
    await until(
      async () => (await (await browser.$(sel('server-auth-greeter'))).getAttribute('data-state')) === 'signed-in',
      'the signed-in state',
      60_000,
    );
    const signed = await (await browser.$(sel('server-auth-greeter'))).getText();
    assert.match(signed, /^Signed in/);
    assert.match(signed, /expires in \d+ (min|h)/);
    const visited = readFileSync(browserLog, 'utf8');
    assert.match(visited, /\/authorize\?/, `the browser opened the authorization endpoint:\n${visited}`);
    assert.match(visited, /^http:\/\/127\.0\.0\.1:\d+\/.*code=/m, `the redirect reached the loopback listener:\n${visited}`);

    // The failed test ran again by itself: the tools and the era spoken.
    const result = await shown(browser, sel('server-test-result-greeter'), 30_000);
    await until(async () => /greet/.test(await result.getText()), 'the tools after signing in', 30_000);
    const era = await shown(browser, sel('server-era-greeter'));
    assert.match(await era.getAttribute('data-era'), /^20\d\d-\d\d-\d\d$/);
    await studio.shot('signed-in');

    // A run calls the server with the stored login (no browser this time).
    const visits = visited.split('\n').length;
    await (await shown(browser, '[data-testid="servers-panel"] .modal-close')).click();
    await importDoc(studio, {
      blueprint: 1,
      id: 'greets-with-oauth',
      steps: [{ id: 'hello', kind: 'tool', server: 'greeter', tool: 'greet', args: { name: 'Ada' } }],
      output: '{{ hello }}',
    });
    await (await shown(browser, sel('run-start'))).click();
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed', 60_000);
    assert.match(await (await shown(browser, sel('run-output'))).getText(), /Hello, Ada/);
    assert.equal(readFileSync(browserLog, 'utf8').split('\n').length, visits, 'the run did not open the browser');
    await studio.shot('run-with-login');

    // Sign out from the line's menu: the quiet Sign in is back.
    await (await shown(browser, sel('servers-button'))).click();
    await (await shown(browser, sel('server-auth-menu-greeter'))).click();
    await (await shown(browser, sel('server-signout-greeter'))).click();
    await until(async () => !(await (await browser.$(sel('server-auth-greeter'))).isExisting()), 'the signed-in line to go');
    await shown(browser, sel('server-signin-greeter'));
  } finally {
    await studio.close();
    server.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
});
