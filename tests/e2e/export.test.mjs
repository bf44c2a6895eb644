// Blueprints that travel: the studio's Export of a blueprint that uses two configured
// servers — `echo` over stdio with a secret in its `env`, and server-everything over
// streamable HTTP with a secret header — and calls a stored sub-workflow writes the
// blueprint with both servers copied in as `${env:NAME}`, the sub-workflow beside it and
// a README naming the variables and the `mcpflow run` command. That command then runs
// under a fresh, empty home with only PATH and the listed variables set, and succeeds;
// no exported file holds a secret. Screenshot export-01 of the window after Export.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, OUTPUT, ROOT, apiCall, click, freePort, openStudio, sel, shown, until, windowShot } from './harness.mjs';

const STDIO_SECRET = 'stdio-secret-3f9a1c';
const HTTP_SECRET = 'http-secret-77b2d0';

const sub = {
  blueprint: 1,
  id: 'e2e-add',
  steps: [{ id: 'add', kind: 'tool', server: 'echo', tool: 'add', args: { a: '{{ inputs.n }}', b: 3 } }],
  output: '{{ add.sum }}',
};
const main = {
  blueprint: 1,
  id: 'e2e-travel',
  name: 'Travels',
  steps: [
    { id: 'say', kind: 'tool', server: 'web', tool: 'echo', args: { message: 'hello' } },
    { id: 'sum', kind: 'workflow', workflow: 'e2e-add', args: { n: 2 } },
  ],
  output: { said: '{{ say }}', sum: '{{ sum }}' },
};

test('export: a blueprint with a stdio and an HTTP server and a sub-workflow runs elsewhere with only its variables', async () => {
  const port = await freePort();
  const everything = spawn('node', [join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  const studio = await openStudio('export');
  const elsewhere = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-elsewhere-'));
  try {
    const { browser, home } = studio;
    await shown(browser, sel('step-namespaces'), 30_000);
    // The two servers as the Servers panel would store them, and the blueprints.
    const testkit = join(ROOT, 'target/debug/mcpflow-testkit');
    await apiCall(home, 'put_server', { name: 'echo', config: { command: testkit, args: ['echo'], env: { ECHO_TOKEN: STDIO_SECRET } } });
    await apiCall(home, 'put_server', {
      name: 'web',
      config: { url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: `Bearer ${HTTP_SECRET}` } },
    });
    await apiCall(home, 'save_blueprint', { doc: sub });
    await apiCall(home, 'save_blueprint', { doc: main });

    // Open it in the studio and Export (the dialog's pick is the test path).
    await click(browser, sel('file-open'));
    await click(browser, sel(`open-item-${main.id}`));
    await shown(browser, sel('step-say'));
    await click(browser, sel('file-export'));
    const status = async () => (await (await browser.$(sel('status'))).getText().catch(() => '')) ?? '';
    await until(async () => /exported to/.test(await status()), 'the export to be reported').catch(async (e) => {
      throw new Error(`${e.message}; the status line says: ${await status()}`);
    });
    await windowShot(browser, join(OUTPUT, 'export-01-exported.png'));

    // What was written: the blueprint, the sub-workflow beside it, the README.
    const exported = JSON.parse(readFileSync(studio.dialogPath, 'utf8'));
    // The blueprint declares the servers of its steps and of those it calls (their runs
    // reach servers through it); the called blueprint, its own.
    assert.deepEqual(Object.keys(exported.servers).sort(), ['echo', 'web']);
    assert.match(exported.servers.web.headers.Authorization, /^\$\{env:[A-Z_]+\}$/);
    const subFile = join(home, `${sub.id}.json`);
    const exportedSub = JSON.parse(readFileSync(subFile, 'utf8'));
    assert.deepEqual(Object.keys(exportedSub.servers), ['echo']);
    assert.equal(exportedSub.servers.echo.env.ECHO_TOKEN, '${env:ECHO_TOKEN}');
    const readmeFile = studio.dialogPath.replace(/\.json$/, '.README.md');
    const readme = readFileSync(readmeFile, 'utf8');
    for (const file of [studio.dialogPath, subFile, readmeFile]) {
      const text = readFileSync(file, 'utf8');
      assert.ok(!text.includes(STDIO_SECRET) && !text.includes(HTTP_SECRET), `a secret was exported in ${file}`);
    }
    const variables = [...readme.matchAll(/^export ([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    assert.equal(variables.length, 2, readme);
    const command = /^mcpflow run (.+)$/m.exec(readme)?.[1]?.split(' ');
    assert.ok(command, readme);

    // Elsewhere: the files alone, a fresh home, only PATH and the listed variables.
    const folder = join(elsewhere, 'travel');
    spawnSync('mkdir', ['-p', folder]);
    for (const file of [studio.dialogPath, subFile]) copyFileSync(file, join(folder, file.split('/').pop()));
    const env = { PATH: process.env.PATH, HOME: join(elsewhere, 'home'), MCPFLOW_HOME: join(elsewhere, 'home/mcpflow') };
    const value = (name) => (name === 'ECHO_TOKEN' ? 'another-stdio-value' : `Bearer ${HTTP_SECRET}`);
    for (const name of variables) env[name] = value(name);
    const run = spawnSync(CLI, ['run', ...command, '--json', '-q'], { cwd: folder, env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    const envelope = JSON.parse(run.stdout);
    assert.equal(envelope.status, 'succeeded', run.stdout);
    assert.match(JSON.stringify(envelope.output.said), /hello/);
    assert.equal(Number(envelope.output.sum), 5);
    assert.deepEqual(readdirSync(folder).sort(), [studio.dialogPath.split('/').pop(), `${sub.id}.json`].sort(), 'the run wrote nothing beside the files');
  } finally {
    everything.kill();
    rmSync(elsewhere, { recursive: true, force: true });
    await studio.close();
  }
});
