// A run left waiting survives the studio: the real app runs a saved blueprint whose
// `input` step waits after a first tool call (the echo fixture's `record`, which appends a
// line to a file per call); the studio is killed (SIGKILL: nothing is cleaned up) while
// the step waits. Started again on the same data folder, it says a run waits for you;
// the notice opens the blueprint and the run, live — the node waits, the form is in the
// inspector, History says `waiting` and what for. Answered, the run resumes as a new run
// that plays on the canvas and finishes with the answer in its output, and the first
// call was not made again (the file has one `first` line). Screenshots of the waiting
// run before the kill, the notice after the restart, the form, and the finished run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { OUTPUT, alive, click, importDoc, nodeState, openStudio, runStatus, sel, shown, studioPid, until, windowShot } from './harness.mjs';

/** Screenshots numbered across both sessions of the studio (the harness counts per session). */
let shots = 0;
async function shot(browser, label) {
  shots += 1;
  const file = join(OUTPUT, `waiting-restart-${String(shots).padStart(2, '0')}-${label}.png`);
  return windowShot(browser, file);
}

const lines = (file) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

test('waiting-restart: a run left waiting when the studio was killed is answered after a restart and resumes', async () => {
  const first = await openStudio('waiting-restart', {}, { keep: true });
  const { home } = first;
  const calls = join(home, 'calls.txt');
  const doc = {
    blueprint: 1,
    id: 'e2e-wait-restart',
    name: 'Record, ask, record',
    steps: [
      { id: 'first', name: 'Record before asking', kind: 'tool', server: 'echo', tool: 'record', args: { file: calls, line: 'first' } },
      { id: 'ask', name: 'Which colour?', kind: 'input', prompt: 'Which colour should the second call record?', schema: { type: 'string' }, after: ['first'] },
      { id: 'second', name: 'Record the answer', kind: 'tool', server: 'echo', tool: 'record', args: { file: calls, line: 'second {{ ask }}' } },
    ],
    output: { colour: '{{ ask }}', recorded: '{{ second.recorded }}' },
  };
  let pid = null;
  try {
    // ---- The first session: save the blueprint, run it until it waits, then kill the studio.
    const { browser } = first;
    await shown(browser, sel('step-namespaces'), 30_000);
    await importDoc(first, doc);
    await click(browser, sel('file-save'));
    await click(browser, sel('save-as-confirm'));
    await until(async () => /saved revision 1/.test(await (await browser.$(sel('status'))).getText()), '"saved revision 1"');
    await click(browser, sel('run-start'));
    await click(browser, sel('consent-approve'));
    await until(async () => (await nodeState(browser, 'ask')) === 'waiting', 'the input step to wait', 60_000);
    assert.deepEqual(lines(calls), ['first'], 'the first call was made once');
    await shot(browser, 'waiting-before-kill');
    pid = studioPid(home);
    assert.ok(pid, 'the studio process is found');
    process.kill(pid, 'SIGKILL');
    await until(async () => !alive(pid), 'the studio to be gone after SIGKILL', 15_000);
  } finally {
    if (pid && alive(pid)) process.kill(pid, 'SIGKILL');
    await first.close();
  }

  // ---- The second session on the same data folder.
  const second = await openStudio('waiting-restart', {}, { home });
  try {
    const { browser } = second;
    await shown(browser, sel('step-namespaces'), 30_000);
    const notice = await shown(browser, sel('waiting-notice'));
    await shot(browser, 'notice-after-restart');
    assert.equal(await notice.getAttribute('data-count'), '1');
    const text = await notice.getProperty('textContent');
    assert.match(text, /1 run is waiting for you/);
    assert.match(text, /e2e-wait-restart/);
    assert.match(text, /Which colour should the second call record\?/);

    // The notice opens the blueprint and the run: live, the node waits, the form is in the inspector.
    await click(browser, sel('waiting-notice-run'));
    await shown(browser, sel('step-ask'));
    await until(async () => (await nodeState(browser, 'ask')) === 'waiting', 'the reopened run to wait at `ask`');
    assert.equal(await (await browser.$(sel('run-state'))).getAttribute('data-waiting'), 'true', 'the toolbar says it waits for you');
    assert.equal(await nodeState(browser, 'first'), 'succeeded');
    const row = await shown(browser, `${sel('history-row')}[data-status="waiting"]`);
    assert.match(await row.getText(), /waiting/);
    const waits = await shown(browser, sel('history-waits'));
    assert.match(await waits.getProperty('textContent'), /waits at Which colour\?: Which colour should the second call record\?/);
    const form = await shown(browser, sel('question'));
    assert.equal(await form.getAttribute('data-asking'), 'input');
    assert.equal(await (await browser.$(sel('waiting-notice'))).isExisting(), false, 'the notice leaves the run shown to its own notification');
    await shown(browser, '#answer_value');
    await shot(browser, 'reopened-waiting-form');

    // Answered: the run resumes as a new run, live, and finishes.
    await (await browser.$('#answer_value')).setValue('teal');
    await click(browser, sel('question-accept'));
    await until(async () => ['succeeded', 'partial', 'failed', 'cancelled'].includes(await runStatus(browser)), 'the resumed run to finish', 60_000);
    assert.equal(await runStatus(browser), 'succeeded');
    const result = await shown(browser, sel('run-result'));
    assert.equal(await result.getAttribute('data-status'), 'succeeded');
    await browser.execute((s) => document.querySelector(s)?.click(), `${sel('run-output')} .json-mode`);
    const output = await shown(browser, `${sel('run-output')} .json-raw`);
    assert.match(await output.getText(), /"colour": "teal"/);
    assert.deepEqual(lines(calls), ['first', 'second teal'], 'the step before the input did not run again');
    assert.equal(await nodeState(browser, 'second'), 'succeeded');
    // The resumed run kept the first step's output from the waiting run.
    await (await browser.$(sel('title-first'))).click();
    await shown(browser, sel('step-run-pinned'));
    await shot(browser, 'resumed-finished');

    // History: the resuming run succeeded; the waiting run is settled, resumed by it.
    await click(browser, sel('tab-history'));
    await until(async () => (await browser.$$(sel('history-row'))).length === 2, 'two runs in History');
    await shown(browser, `${sel('history-row')}[data-status="succeeded"] ${sel('resumes')}`);
    await shown(browser, `${sel('history-row')}[data-status="interrupted"] ${sel('resumed-by')}`);
    assert.equal(await (await browser.$(sel('history-waits'))).isExisting(), false, 'nothing waits any more');
    assert.equal(await (await browser.$(sel('waiting-notice'))).isExisting(), false);
    await shot(browser, 'history-after-answer');
  } finally {
    await second.close();
    rmSync(home, { recursive: true, force: true });
  }
});
