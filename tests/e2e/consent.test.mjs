// A blueprint's own HTTP server that would be sent an environment variable asks for
// consent in the real studio before anything is sent: the prompt shows the URL and the
// variable's name, never its value; Cancel leaves the run unstarted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { importDoc, openStudio, shown, until } from './harness.mjs';

const sel = (id) => `[data-testid="${id}"]`;
const SECRET = 'e2e-secret-value-never-shown';

test('consent: a blueprint HTTP server sending a variable shows its URL and the variable name, not the value', async () => {
  const studio = await openStudio('consent', { MCPFLOW_E2E_SECRET: SECRET });
  const { browser } = studio;
  try {
    await shown(browser, sel('step-namespaces'), 30_000);
    const doc = {
      blueprint: 1,
      id: 'sends-a-secret',
      servers: {
        sink: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${env:MCPFLOW_E2E_SECRET}' } },
      },
      steps: [{ id: 'call_sink', kind: 'tool', server: 'sink', tool: 'anything', args: {} }],
    };
    await importDoc(studio, doc);

    await (await shown(browser, sel('run-start'))).click();
    const dialog = await shown(browser, sel('consent-dialog'));
    const command = await (await shown(browser, sel('consent-command'))).getText();
    assert.equal(command, 'URL http://127.0.0.1:9/mcp (sends: MCPFLOW_E2E_SECRET)');
    const whole = await dialog.getText();
    assert.match(whole, /reach “sink”/);
    assert.ok(!whole.includes(SECRET), 'the value is never shown');
    await studio.shot('http-consent');

    await (await shown(browser, sel('consent-cancel'))).click();
    await until(async () => !(await dialog.isDisplayed()), 'the prompt to close');
    const chip = await browser.$(sel('run-state'));
    assert.ok(!(await chip.isExisting()) || (await chip.getAttribute('data-status')) !== 'succeeded', 'nothing ran');
  } finally {
    await studio.close();
  }
});
