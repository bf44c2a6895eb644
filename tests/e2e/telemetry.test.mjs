// Telemetry, end to end on the real app: the Servers panel's Telemetry section says it is
// off, refuses an endpoint that is not an http(s) URL before anything is written, then
// saves a loopback OTLP receiver (`mcpflow-testkit otlp --port 0`) with tool payloads on
// — its warning shown — and says where traces go; settings.json keeps the section beside
// the rest. A run of the seeded demo then goes through the engine that uses it (the
// service, which applies the setting from the next run); when the engine makes spans,
// the Run tab's trace id is one the receiver got (with the run's root span). Screenshots of the section off, the
// form with the warning, and on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { approveAll, click, openStudio, ROOT, runStatus, sel, shown, standsStill, until } from './harness.mjs';

const TESTKIT = join(ROOT, 'target/debug/mcpflow-testkit');

/** Starts the loopback OTLP receiver; resolves to { url, spans(), stop() }. */
async function startReceiver() {
  const child = spawn(TESTKIT, ['otlp', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const spans = [];
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('the OTLP receiver printed no address within 10 s')), 10_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      const found = /listening on (http:\/\/\S+)/.exec(line);
      if (found) ok(found[1]);
      else fail(new Error(`the OTLP receiver said: ${line}`));
    });
    child.once('exit', (code) => fail(new Error(`the OTLP receiver exited (${code})`)));
  });
  lines.on('line', (line) => {
    try {
      spans.push(JSON.parse(line));
    } catch {
      // a line that is not a span
    }
  });
  return { url, spans: () => [...spans], stop: () => child.kill() };
}

/** Brings an element of the (scrolling) Servers panel into view. */
async function reveal(browser, selector) {
  await browser.execute((s) => document.querySelector(s)?.scrollIntoView({ block: 'center' }), selector);
  await standsStill(browser, selector);
}

/** Empties a React-controlled field (WebDriver's clear fires no `input` event). */
async function clearField(browser, selector) {
  await browser.execute((s) => {
    const el = document.querySelector(s);
    const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, '');
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, selector);
}

test('telemetry: the Servers panel sends the runs to a loopback collector, kept in settings.json', async () => {
  const receiver = await startReceiver();
  // Only what the test sets: the machine's own OTEL_* must not turn telemetry on.
  const clear = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('OTEL_')).map((k) => [k, '']));
  const studio = await openStudio('telemetry', clear);
  const { browser } = studio;
  const settingsFile = join(studio.home, 'settings.json');
  try {
    await shown(browser, sel('step-namespaces'), 30_000);
    await click(browser, sel('servers-button'));
    await shown(browser, sel('servers-panel'));
    await reveal(browser, sel('telemetry-settings'));
    const summary = await shown(browser, sel('telemetry-summary'));
    await until(async () => (await summary.getText()) !== 'Reading the settings…', 'the telemetry settings to be read');
    assert.equal(await summary.getAttribute('data-on'), 'false');
    assert.match(await summary.getText(), /nothing is sent anywhere/);
    await studio.shot('telemetry-off');

    await click(browser, sel('telemetry-edit'));
    await shown(browser, sel('telemetry-form'));
    await (await browser.$(sel('telemetry-endpoint'))).setValue('localhost:4318');
    await click(browser, sel('telemetry-save'));
    const problem = await shown(browser, `${sel('telemetry-error')}[data-field="endpoint"]`);
    assert.match(await problem.getText(), /http\(s\) URL/);
    const before = existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null;

    await (await browser.$(sel('telemetry-endpoint'))).setValue(receiver.url);
    await (await browser.$(sel('telemetry-headers'))).setValue('x-e2e-team=${env:E2E_TEAM_KEY_UNSET}');
    await click(browser, sel('telemetry-capture'));
    const warning = await shown(browser, sel('telemetry-capture-warning'));
    assert.match(await warning.getAttribute('class'), /inline-warning/);
    assert.match(await warning.getText(), /Arguments and results are then sent/);
    await reveal(browser, sel('telemetry-form'));
    await studio.shot('telemetry-form');
    assert.equal(existsSync(settingsFile) ? readFileSync(settingsFile, 'utf8') : null, before, 'nothing written for a refused endpoint');

    // The header's variable is not set for the engine: saved, but off, and it says why.
    await click(browser, sel('telemetry-save'));
    await shown(browser, sel('telemetry-vars-unset'));
    assert.match(await (await browser.$(sel('telemetry-start-problem'))).getText(), /E2E_TEAM_KEY_UNSET/);
    assert.equal(await summary.getAttribute('data-on'), 'false');
    await reveal(browser, sel('telemetry-settings'));
    await studio.shot('telemetry-variable-unset');

    await click(browser, sel('telemetry-edit'));
    await clearField(browser, sel('telemetry-headers'));
    await click(browser, sel('telemetry-save'));
    await until(async () => (await summary.getAttribute('data-on')) === 'true', 'telemetry to be on');
    assert.equal(await summary.getText(), `Traces go to ${receiver.url}/v1/traces · with arguments and results`);
    const settings = JSON.parse(readFileSync(settingsFile, 'utf8'));
    assert.deepEqual(settings.telemetry, { endpoint: receiver.url, capture_payloads: true });
    await reveal(browser, sel('telemetry-settings'));
    await studio.shot('telemetry-on');
    await (await shown(browser, `${sel('servers-panel')} .modal-close`)).click();

    // A run goes through the engine that now sends there.
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => ['succeeded', 'partial', 'failed', 'cancelled'].includes(await runStatus(browser)), 'the run to end', 60_000);
    // The Run tab shows the run's trace id, and the receiver has that trace.
    const trace = await shown(browser, sel('run-trace-id'));
    const id = await trace.getAttribute('data-trace-id');
    assert.match(id, /^[0-9a-f]{32}$/);
    const root = (s) => s.trace_id === id && s.name.startsWith('run ') && !s.parent_span_id;
    await until(() => receiver.spans().some(root), `the root span of trace ${id} at the receiver`, 20_000);
    await studio.shot('run-trace-id');
  } finally {
    await studio.close();
    receiver.stop();
  }
});
