// A blueprint's tests in the studio, end to end on the real app: a template reading a
// field the tool's output schema does not have is a problem before anything runs (on
// the reading step, the producing step named and marked); a run is saved as a test; the
// Tests tab replays it with no server and it passes; a broken expectation fails there,
// saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approveAll, click, importDoc, openStudio, runStatus, sel, shown, until } from './harness.mjs';

/** echo's `add` declares an output schema `{sum}`; `say` reads `field` of it. */
function sums(field) {
  return {
    blueprint: 1,
    id: 'sums',
    name: 'Sums',
    steps: [
      { id: 'sum', kind: 'tool', server: 'echo', tool: 'add', args: { a: 20, b: 22 } },
      { id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: `sum={{ sum.${field} }}` } },
    ],
  };
}

/** Shows bottom tab `id` (a click on the tab shown would collapse the panel instead). */
async function openTab(browser, id) {
  const tab = await shown(browser, sel(`tab-${id}`));
  if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
  await until(async () => (await tab.getAttribute('aria-selected')) === 'true', `the ${id} tab to show`);
}

/** `[data-testid=test-row]` as `{ name, result, failure }`. */
async function testRows(browser) {
  return browser.execute(() =>
    [...document.querySelectorAll('[data-testid="test-row"]')].map((row) => ({
      name: row.getAttribute('data-name'),
      result: row.getAttribute('data-result'),
      failure: row.querySelector('[data-testid="test-failure"]')?.textContent ?? null,
    })),
  );
}

test('tests: a typo in an output path is a problem before running; a run saved as a test passes, a broken one fails', async () => {
  const studio = await openStudio('tests-list');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node', 30_000);
    // The echo fixture must be listed for its output schemas to be known: approve it.
    await click(browser, sel('palette-approve-echo'));
    await click(browser, sel('consent-approve'));
    await until(async () => !(await browser.$(sel('palette-awaiting-echo')).isExisting()), 'echo approved and listed', 30_000);
    await shown(browser, sel('palette-item-echo-add'), 30_000);

    // ---- 1. `sum.summ`: TEMPLATE_PATH_UNKNOWN before any run, on `say`, naming `sum`.
    await importDoc(studio, sums('summ'));
    const problem = await until(
      () =>
        browser.execute(() => {
          const row = document.querySelector('[data-testid="diagnostic"][data-code="TEMPLATE_PATH_UNKNOWN"]');
          return row ? { step: row.getAttribute('data-step'), producer: row.getAttribute('data-producer'), text: row.textContent } : null;
        }),
      'the TEMPLATE_PATH_UNKNOWN problem',
      30_000,
    );
    assert.deepEqual([problem.step, problem.producer], ['say', 'sum'], JSON.stringify(problem));
    assert.match(problem.text, /summ/);
    assert.match(problem.text, /did you mean `sum`\?/);
    // Both cards carry the warning: the step that reads and the step whose output it reads.
    await shown(browser, sel('diag-say'));
    await shown(browser, sel('diag-sum'));
    assert.equal(await runStatus(browser), null, 'nothing ran');
    await openTab(browser, 'problems');
    await studio.shot('output-path-problem');

    // ---- 2. Fixed, run, saved as a test.
    await importDoc(studio, sums('sum'));
    await until(
      async () => !(await browser.$('[data-testid="diagnostic"][data-code="TEMPLATE_PATH_UNKNOWN"]').isExisting()),
      'the problem to go',
    );
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await until(async () => (await runStatus(browser)) === 'succeeded', 'the run to succeed', 60_000);
    await openTab(browser, 'run');
    await click(browser, sel('save-as-test'));
    await shown(browser, sel('tests-panel'), 30_000);
    const saved = await until(async () => (await testRows(browser)).find((r) => r.name), 'the saved test in the list');
    assert.equal(saved.result, 'not-run');
    const folder = join(studio.home, 'tests', 'sums');
    const files = readdirSync(folder).sort();
    assert.deepEqual(files, [`${saved.name}.cassette.json`, `${saved.name}.test.json`, 'sums.blueprint.json']);

    // ---- 3. Run all: it passes, with no server started for it.
    await click(browser, sel('tests-run-all'));
    await until(async () => (await testRows(browser))[0]?.result === 'passed', 'the test to pass');
    await studio.shot('test-passed');

    // ---- 4. A broken expectation fails, naming why.
    const file = join(folder, `${saved.name}.test.json`);
    const testFile = JSON.parse(readFileSync(file, 'utf8'));
    const was = testFile.expect.output;
    assert.match(was, /^sum=42/, 'the run\'s output is expected');
    testFile.expect.output = 'sum=41';
    writeFileSync(file, JSON.stringify(testFile, null, 2));
    await click(browser, sel('tests-run-all'));
    const failed = await until(async () => (await testRows(browser)).find((r) => r.result === 'failed'), 'the test to fail');
    assert.equal(failed.failure, `output: expected "sum=41", got ${JSON.stringify(was)}`);
    await studio.shot('test-failed');
  } finally {
    await studio.close();
  }
});
