// Signing in to an OAuth server from the real studio: the TypeScript SDK's example server
// (`simpleStreamableHttp --oauth`, its demo authorization server approving at once) is
// configured through the Servers panel's import; Test says it needs a sign-in; Sign in
// opens "the browser" ($BROWSER = follow-redirects.mjs, which follows the redirects to
// the studio's loopback listener); the panel shows the signed-in state, tests again
// (tools, the protocol era). Signed out, a sign-in left waiting is cancelled (its
// loopback listener closes); a run then fails with AUTH_REQUIRED and its "Sign in to
// greeter" signs in, after which Run again calls the server's `greet` tool. A document
// that declares the OAuth server itself (in its own `servers`, configured nowhere) gets
// the same: its run's "Sign in to NAME" finds the server through the document.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, freePort, importDoc, openStudio, runStatus, sel, shown, until, writeJson } from './harness.mjs';

const EXAMPLE = join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js');
const BROWSER = join(ROOT, 'tests/e2e/follow-redirects.mjs');

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
  const hold = join(logDir, 'hold');
  const studio = await openStudio('oauth', { BROWSER, FOLLOW_REDIRECTS_LOG: browserLog, FOLLOW_REDIRECTS_HOLD: hold });
  const { browser } = studio;
  const visits = () => (existsSync(browserLog) ? readFileSync(browserLog, 'utf8') : '');
  const authState = async () => {
    const line = await browser.$(sel('server-auth-greeter'));
    return (await line.isExisting()) ? line.getAttribute('data-state') : null;
  };
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
    await until(async () => (await authState()) === 'needed', 'the row to say it needs a sign-in', 30_000);
    assert.doesNotMatch(await row.getText(), /mcpflow auth login/, 'no command line in the GUI');

    // Sign in: "the browser" follows the redirects to the loopback listener.
    await (await shown(browser, sel('server-signin-greeter'))).click();
    await until(async () => (await authState()) === 'signed-in', 'the signed-in state', 60_000);
    const signed = await (await browser.$(sel('server-auth-greeter'))).getText();
    assert.match(signed, /^Signed in/);
    assert.match(signed, /expires in \d+ (min|h)/);
    assert.match(visits(), /\/authorize\?/, `the browser opened the authorization endpoint:\n${visits()}`);
    assert.match(visits(), /^http:\/\/127\.0\.0\.1:\d+\/.*code=/m, `the redirect reached the loopback listener:\n${visits()}`);

    // The failed test ran again by itself: the tools and the era spoken.
    const result = await shown(browser, sel('server-test-result-greeter'), 30_000);
    await until(async () => /greet/.test(await result.getText()), 'the tools after signing in', 30_000);
    const era = await shown(browser, sel('server-era-greeter'));
    assert.match(await era.getAttribute('data-era'), /^20\d\d-\d\d-\d\d$/);
    await studio.shot('signed-in');

    // Sign out from the line's menu: the quiet Sign in is back.
    await (await shown(browser, sel('server-auth-menu-greeter'))).click();
    const signOut = await shown(browser, sel('server-signout-greeter'));
    await studio.shot('sign-out-menu');
    await signOut.click();
    await until(async () => (await authState()) === null, 'the signed-in line to go');
    // The SDK's demo authorization server publishes no revocation endpoint: said so.
    assert.match(await (await shown(browser, sel('status'))).getText(), /removed from this machine\. The server offers no way to revoke/);

    // A sign-in nobody finishes: "Waiting for the browser…", and Cancel closes the
    // loopback listener the browser would have come back to.
    writeFileSync(hold, '');
    await (await shown(browser, sel('server-signin-greeter'))).click();
    await until(async () => (await authState()) === 'waiting', 'Waiting for the browser…');
    await until(async () => /^held: /m.test(visits()), 'the browser to be opened');
    const held = /^held: (.*)$/m.exec(visits())[1];
    const redirect = new URL(new URL(held).searchParams.get('redirect_uri'));
    assert.equal(redirect.hostname, '127.0.0.1');
    await studio.shot('waiting-for-the-browser');
    await (await shown(browser, sel('server-signin-cancel-greeter'))).click();
    await until(async () => (await authState()) === null, 'the waiting line to go');
    // Probed on another path: the listener answers those with a 404 and keeps waiting
    // (the callback's own path would end the wait whatever Cancel did).
    const probe = new URL('/probe', redirect);
    await until(
      async () => fetch(probe, { signal: AbortSignal.timeout(2_000) }).then(() => false, () => true),
      'the loopback listener to close',
    );
    unlinkSync(hold);

    // A run without a login fails with AUTH_REQUIRED and offers the sign-in.
    await (await shown(browser, '[data-testid="servers-panel"] .modal-close')).click();
    await importDoc(studio, {
      blueprint: 1,
      id: 'greets-with-oauth',
      steps: [{ id: 'hello', kind: 'tool', server: 'greeter', tool: 'greet', args: { name: 'Ada' } }],
      output: '{{ hello }}',
    });
    await (await shown(browser, sel('run-start'))).click();
    await until(async () => (await runStatus(browser)) === 'failed', 'the run to fail for want of a login', 60_000);
    const offer = await shown(browser, sel('run-signin-greeter'));
    assert.match(await (await shown(browser, sel('run-result'))).getText(), /AUTH_REQUIRED/);
    await studio.shot('run-needs-sign-in');
    await offer.click();
    const state = await shown(browser, sel('run-signin-state-greeter'));
    await until(async () => (await state.getAttribute('data-state')) === 'signed-in', 'the run error to say signed in', 60_000);

    // Run again: the stored login is used, the browser is not opened again.
    const opened = visits().split('\n').length;
    await (await shown(browser, sel('run-again'))).click();
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed', 60_000);
    assert.match(await (await shown(browser, sel('run-output'))).getText(), /Hello, Ada/);
    assert.equal(visits().split('\n').length, opened, 'the run did not open the browser');
    await studio.shot('run-with-login');
  } finally {
    await studio.close();
    server.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
});

test('oauth: a run of a document declaring the OAuth server itself signs in to it from the run error', async () => {
  const server = await startExample();
  const logDir = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-oauth-doc-'));
  const browserLog = join(logDir, 'visited.log');
  const studio = await openStudio('oauth-doc', { BROWSER, FOLLOW_REDIRECTS_LOG: browserLog });
  const { browser } = studio;
  const visits = () => (existsSync(browserLog) ? readFileSync(browserLog, 'utf8') : '');
  try {
    await shown(browser, sel('step-namespaces'), 30_000);
    // Configured nowhere: only the document names `docgreeter` and where it is.
    await importDoc(studio, {
      blueprint: 1,
      id: 'declares-its-oauth-server',
      servers: { docgreeter: { url: server.url } },
      steps: [{ id: 'hello', kind: 'tool', server: 'docgreeter', tool: 'greet', args: { name: 'Grace' } }],
      output: '{{ hello }}',
    });
    await (await shown(browser, sel('run-start'))).click();
    await until(async () => (await runStatus(browser)) === 'failed', 'the run to fail for want of a login', 60_000);
    assert.match(await (await shown(browser, sel('run-result'))).getText(), /AUTH_REQUIRED/);
    const offer = await shown(browser, sel('run-signin-docgreeter'));
    await offer.click();
    const state = await shown(browser, sel('run-signin-state-docgreeter'));
    await until(
      async () => ['signed-in', 'error'].includes(await state.getAttribute('data-state')),
      'the sign-in to end',
      60_000,
    );
    assert.equal(await state.getAttribute('data-state'), 'signed-in', `the sign-in failed: ${await state.getText()}`);
    assert.match(visits(), /\/authorize\?/, `the browser opened the authorization endpoint:\n${visits()}`);
    await studio.shot('document-server-signed-in');

    const opened = visits().split('\n').length;
    await (await shown(browser, sel('run-again'))).click();
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed', 60_000);
    assert.match(await (await shown(browser, sel('run-output'))).getText(), /Hello, Grace/);
    assert.equal(visits().split('\n').length, opened, 'the run did not open the browser');
    await studio.shot('document-server-run-with-login');
  } finally {
    await studio.close();
    server.stop();
    rmSync(logDir, { recursive: true, force: true });
  }
});
