// Sampling, end to end on the real app: a server asks the model during a call (MCP
// sampling: server-everything's `trigger-sampling-request`). In the Servers panel the
// test turns on the server's switch "May ask the model" and configures the model for
// sampling — a loopback OpenAI-compatible endpoint (crates/cli/tests/fixtures/
// openai_endpoint.py, run with the project's Python, answering after a delay so the
// waiting can be seen) — first trying a literal key, which the form refuses, then the
// name of an environment variable set for the studio. A run shows the node "asking the
// model…" while the endpoint thinks, then the request and the answer (model, text) in the
// Run tab and the step's run section; the endpoint got the key from the variable. With
// the switch off again, the request is refused (SAMPLING_NOT_ALLOWED) and the endpoint
// hears nothing. Screenshots of the switch and the form, the node asking, the answer,
// and the refusal (in the dark theme).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { approveAll, click, importDoc, openStudio, ROOT, runStatus, sel, shown, standsStill, until } from './harness.mjs';

const PYTHON = existsSync(join(ROOT, '.venv-test/bin/python')) ? join(ROOT, '.venv-test/bin/python') : 'python3';
const ENDPOINT = join(ROOT, 'crates/cli/tests/fixtures/openai_endpoint.py');
/** How long the loopback model takes to answer: long enough to see the node asking. */
const DELAY_MS = 6000;
const KEY_VAR = 'E2E_SAMPLING_KEY';
const KEY = 'e2e-key-not-a-secret';

/** Starts the loopback endpoint; resolves to { port, requests(), stop() }. */
async function startEndpoint() {
  const dir = mkdtempSync(join(tmpdir(), 'mcpflow-e2e-endpoint-'));
  const record = join(dir, 'requests.jsonl');
  const child = spawn(PYTHON, [ENDPOINT, record], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, DELAY_MS: String(DELAY_MS) } });
  const port = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`${ENDPOINT} printed no port within 10 s`)), 10_000);
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      ok(Number(line.trim()));
    });
    child.once('exit', (code) => fail(new Error(`${ENDPOINT} exited (${code}) before printing its port`)));
  });
  return {
    port,
    requests: () =>
      existsSync(record)
        ? readFileSync(record, 'utf8')
            .split('\n')
            .filter((l) => l.trim())
            .map((l) => JSON.parse(l))
        : [],
    stop() {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function untilStatus(browser, wanted, timeout = 60_000) {
  await until(async () => wanted.includes(await runStatus(browser)), `the run to be ${wanted.join(' or ')}`, timeout);
  return runStatus(browser);
}

/** `data-shown` of a node's status line: what it shows (`sampling` while it asks the model). */
async function nodeShown(browser, id) {
  const el = await browser.$(sel(`run-${id}`));
  return (await el.isExisting()) ? el.getAttribute('data-shown') : null;
}

async function box(browser, selector) {
  return browser.execute((s) => {
    const r = document.querySelector(s)?.getBoundingClientRect();
    return r ? { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) } : null;
  }, selector);
}

/** Brings an element of the (scrolling) Servers panel into view. */
async function reveal(browser, selector) {
  await browser.execute((s) => document.querySelector(s)?.scrollIntoView({ block: 'center' }), selector);
  await standsStill(browser, selector);
}

async function setSwitch(browser, name, on) {
  const toggle = await shown(browser, sel(`server-sampling-${name}`));
  await reveal(browser, sel(`server-sampling-${name}`));
  if ((await toggle.isSelected()) !== on) await toggle.click();
  await until(async () => (await toggle.isSelected()) === on && (await toggle.isEnabled()), `the switch of ${name} to be ${on ? 'on' : 'off'}`);
}

const closePanel = async (browser) => (await shown(browser, `${sel('servers-panel')} .modal-close`)).click();

test('sampling: the switch and the model set in the Servers panel; a run shows the node asking the model and the answer', async () => {
  const endpoint = await startEndpoint();
  const studio = await openStudio('sampling', { [KEY_VAR]: KEY });
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);

    // ---- The switch: off by default, on with one click, written on the server's entry.
    await click(browser, sel('servers-button'));
    await shown(browser, sel('servers-panel'));
    const toggle = await shown(browser, sel('server-sampling-everything'));
    assert.equal(await toggle.isSelected(), false, 'a server may not ask the model until its switch is on');
    assert.equal(await toggle.getAttribute('role'), 'switch');
    const row = await (await browser.$(sel('server-row-everything'))).getText();
    assert.match(row, /May ask the model/);
    assert.match(row, /lets this server ask your configured model \(or you\) for completions during runs/);
    const switchAt = await box(browser, sel('server-sampling-everything'));
    await setSwitch(browser, 'everything', true);
    assert.deepEqual(await box(browser, sel('server-sampling-everything')), switchAt, 'the switch did not move when flipped');
    // Approved here, so the run starts at once (the node's wait for the model is watched from its start).
    await click(browser, sel('server-approve-everything'));
    await click(browser, sel('consent-approve'));
    await shown(browser, sel('server-approved-everything'));

    // ---- The model for sampling: nothing yet (a person would answer).
    await reveal(browser, sel('sampling-settings'));
    const summary = await shown(browser, sel('sampling-summary'));
    assert.equal(await summary.getAttribute('data-configured'), 'false');
    assert.match(await summary.getText(), /shown to you as a question/);
    await click(browser, sel('sampling-edit'));
    await shown(browser, sel('sampling-form'));
    assert.match(await (await browser.$(sel('sampling-key-note'))).getText(), /never the key itself/);
    await (await browser.$(sel('sampling-base-url'))).setValue(`http://127.0.0.1:${endpoint.port}/v1`);
    await (await browser.$(sel('sampling-model'))).setValue('loopback-model');
    // A key typed where its variable's name goes is refused before anything is written.
    await (await browser.$(sel('sampling-key-var'))).setValue('sk-proj-abc123def456ghi789');
    await (await browser.$(sel('sampling-timeout-ms'))).setValue('20000');
    await reveal(browser, sel('sampling-save'));
    const saveAt = await box(browser, sel('sampling-save'));
    await click(browser, sel('sampling-save'));
    const problem = await shown(browser, `${sel('sampling-error')}[data-field="keyVar"]`);
    assert.match(await problem.getText(), /looks like a key itself/);
    assert.deepEqual(await box(browser, sel('sampling-save')), saveAt, 'Save stays where it was when the problem shows');
    assert.equal(existsSync(join(studio.home, 'settings.json')), false, 'nothing was written');
    await reveal(browser, sel('sampling-form'));
    await studio.shot('switch-on-key-refused');

    await (await browser.$(sel('sampling-key-var'))).setValue(KEY_VAR);
    await click(browser, sel('sampling-save'));
    await until(async () => (await summary.getAttribute('data-configured')) === 'true', 'the model to be configured');
    assert.equal(await summary.getText(), `loopback-model at http://127.0.0.1:${endpoint.port}/v1 · key from $${KEY_VAR}`, 'the key variable is set in the studio');
    const settings = JSON.parse(readFileSync(join(studio.home, 'settings.json'), 'utf8'));
    assert.deepEqual(settings.sampling, {
      base_url: `http://127.0.0.1:${endpoint.port}/v1`,
      model: 'loopback-model',
      api_key: `\${env:${KEY_VAR}}`,
      timeout_ms: 20000,
    });
    assert.ok(!JSON.stringify(settings).includes(KEY), 'no key in the settings file');
    await reveal(browser, sel('server-row-everything'));
    await studio.shot('servers-switch-and-model');
    await closePanel(browser);

    // ---- A run: the node asks the model, then has its answer.
    const blueprint = {
      blueprint: 1,
      id: 'e2e-sampling',
      name: 'A server asks the model',
      steps: [{ id: 'haiku', kind: 'tool', server: 'everything', tool: 'trigger-sampling-request', args: { prompt: 'a haiku about sled', maxTokens: 40 } }],
    };
    await importDoc(studio, blueprint);
    await click(browser, sel('run-start'));
    await approveAll(browser);
    // Until the node asks the model; a run that ends first fails at once, saying what the node showed.
    const askedAt = Date.now();
    for (;;) {
      const now = await nodeShown(browser, 'haiku');
      if (now === 'sampling') break;
      const run = await runStatus(browser);
      if (['succeeded', 'partial', 'failed', 'cancelled'].includes(run) || Date.now() - askedAt > 60_000) {
        const line = await (await browser.$(sel('run-haiku'))).getProperty('textContent').catch(() => null);
        await studio.shot('failed-waiting-for-sampling');
        assert.fail(`the node never showed it asks the model: it shows ${now} (${line}), the run is ${run}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const status = await browser.$(sel('run-haiku'));
    assert.equal(await status.getAttribute('data-state'), 'running', 'it is still running underneath');
    assert.match(await status.getProperty('textContent'), /asking the model…/);
    assert.match(await (await browser.$(sel('step-haiku'))).getAttribute('class'), /\brun-sampling\b/);
    const askingCard = await box(browser, sel('step-haiku'));
    const open = await shown(browser, `${sel('run-samples')} ${sel('run-sample')}`);
    assert.equal(await open.getAttribute('data-state'), 'open');
    assert.match(await (await browser.$(sel('sample-request'))).getText(), /a haiku about sled/);
    assert.match(await (await browser.$(sel('sample-answer'))).getText(), /asking the model…/);
    await studio.shot('node-asking-the-model');

    assert.equal(await untilStatus(browser, ['succeeded', 'partial', 'failed', 'cancelled']), 'succeeded');
    assert.equal(await nodeShown(browser, 'haiku'), 'succeeded');
    assert.deepEqual([(await box(browser, sel('step-haiku'))).w, (await box(browser, sel('step-haiku'))).h], [askingCard.w, askingCard.h], 'the card kept its size');
    const answered = await shown(browser, `${sel('run-samples')} ${sel('run-sample')}`);
    assert.equal(await answered.getAttribute('data-state'), 'answered');
    assert.equal(await (await browser.$(`${sel('run-samples')} ${sel('sample-model')}`)).getText(), 'loopback-model');
    assert.match(await (await browser.$(`${sel('run-samples')} ${sel('sample-answer')}`)).getText(), /loopback says: Resource trigger-sampling-request context: a haiku about sled/);
    // The endpoint was asked once, with the key from the variable and the server's conversation.
    const asked = endpoint.requests();
    assert.equal(asked.length, 1, JSON.stringify(asked));
    assert.equal(asked[0].authorization, `Bearer ${KEY}`);
    assert.equal(asked[0].body.model, 'loopback-model');
    assert.deepEqual(asked[0].body.messages[0], { role: 'system', content: 'You are a helpful test server.' });
    // The step's run section in the inspector lists its request too.
    await (await browser.$(sel('title-haiku'))).click();
    await shown(browser, `${sel('step-run-samples')} ${sel('run-sample')}`);
    await studio.shot('answered-run-tab-and-inspector');

    // ---- The switch off again: the server is refused, the endpoint hears nothing.
    // In the dark theme, to see the switches there too. Set on the page only: the theme
    // button would remember it in the webview's storage, which every studio here shares.
    await click(browser, sel('run-close'));
    await browser.execute(() => {
      document.documentElement.dataset.theme = 'dark';
    });
    await click(browser, sel('servers-button'));
    await shown(browser, sel('servers-panel'));
    await setSwitch(browser, 'everything', false);
    await reveal(browser, sel('server-row-everything'));
    await studio.shot('dark-servers-switch-off');
    await closePanel(browser);
    await click(browser, sel('run-start'));
    await approveAll(browser);
    const end = await untilStatus(browser, ['succeeded', 'partial', 'failed', 'cancelled']);
    const refused = await shown(browser, `${sel('run-samples')} ${sel('run-sample')}`);
    assert.equal(await refused.getAttribute('data-state'), 'failed', `the request was refused (run ${end})`);
    assert.match(await refused.getText(), /SAMPLING_NOT_ALLOWED/);
    assert.equal(endpoint.requests().length, 1, 'no second request reached the model');
    await studio.shot('switch-off-refused');
  } finally {
    await studio.close();
    endpoint.stop();
  }
});
