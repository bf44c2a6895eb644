// Debugging that explains, end to end on the real app (issue 14, points 7 and 8): a
// blueprint with a transform then a switch (no server for those); Debug with breakpoints
// on both: paused before the transform the inspector shows the value it will produce,
// before the switch the case it will take (the engine evaluates them; nothing ran);
// continue: the switch highlights the case it took and dims the others, the timeline
// is labelled with step names and has a pause marker. Then a number argument of the
// `echo` fixture's `add` tool switched to an expression takes `{{ transform.said }}` with
// its dot (read back from the exported file); running it, the check before sending
// refuses the string (ARGS_INVALID) and the step's run section names the argument `/a`
// first (no "server said": nothing was sent).
//
// A second session: the inspector's switch cases laid out without overlaps at the
// default and the minimum inspector width; a tool step whose arguments break the `echo`
// fixture's `add` schema in two places (an object for the number `a`, no `b`) fails as
// ARGS_INVALID naming `/a` and `/b` first, both fields marked; a `"disabled": true`
// step shows "disabled" and the step after it succeeds; the body of a loop skipped after
// the failure is greyed as "not run" (not the queued look).
//
// A third session (issue 16): an `until` loop that can never be true fails at its
// `max_iterations` (LOOP_UNTIL_EXHAUSTED); its card is red and says so in one short line
// with the iterations and the condition's last value, legible at the default zoom, the
// full message on hover, and nothing moves when the pointer rests on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { approveAll, click, dragBy, importDoc, openStudio, runStatus, sel, shown, standsStill, until } from './harness.mjs';


/** Clicks in the page (small targets on a zoomed-out canvas). */
async function jsClick(browser, selector) {
  const el = await browser.$(selector);
  await el.waitForExist({ timeout: 15_000 });
  await browser.execute((e) => e.click(), el);
}

async function attr(browser, selector, name) {
  const el = await browser.$(selector);
  return (await el.isExisting()) ? el.getAttribute(name) : null;
}

async function untilStatus(browser, wanted, timeout = 60_000) {
  await until(async () => wanted.includes(await runStatus(browser)), `the run to be ${wanted.join(' or ')}`, timeout);
  return runStatus(browser);
}

/** Sets the breakpoint dot of a step (they outlive a session: set only when off). */
async function breakpoint(browser, step) {
  const dot = await shown(browser, sel(`bp-${step}`));
  if ((await dot.getAttribute('aria-pressed')) !== 'true') await browser.execute((el) => el.click(), dot);
  await until(async () => (await dot.getAttribute('aria-pressed')) === 'true', `the breakpoint on ${step}`);
}

/** Whether the node of `step` is wholly inside the canvas. */
function nodeInView(browser, step) {
  return browser.execute((id) => {
    const pane = document.querySelector('.react-flow').getBoundingClientRect();
    const node = document.querySelector(`[data-testid="step-${id}"]`)?.getBoundingClientRect();
    return !!node && node.left >= pane.left && node.right <= pane.right && node.top >= pane.top && node.bottom <= pane.bottom;
  }, step);
}

/** Pans the canvas with a real drag on its empty top-left corner. */
async function panBy(browser, dx, dy) {
  const at = await browser.execute(() => {
    const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
    return { x: Math.round(r.left + 12), y: Math.round(r.top + 12) };
  });
  await browser.performActions([
    {
      type: 'pointer',
      id: 'mouse',
      parameters: { pointerType: 'mouse' },
      actions: [
        { type: 'pointerMove', duration: 0, x: at.x, y: at.y },
        { type: 'pointerDown', button: 0 },
        { type: 'pointerMove', duration: 150, x: at.x + Math.round(dx / 2), y: at.y + Math.round(dy / 2) },
        { type: 'pointerMove', duration: 150, x: at.x + dx, y: at.y + dy },
        { type: 'pointerUp', button: 0 },
      ],
    },
  ]);
  await browser.releaseActions();
}

const DOC = {
  blueprint: 1,
  id: 'debug-switch',
  name: 'Transform then switch',
  steps: [
    { id: 'transform', kind: 'transform', value: { said: 'hello', n: 7 } },
    {
      id: 'pick',
      kind: 'switch',
      cases: [
        { when: '{{ transform.n > `10` }}', to: ['big'] },
        { when: '{{ transform.n > `5` }}', to: ['mid'] },
      ],
      default: ['small'],
    },
    { id: 'big', kind: 'transform', value: 'big' },
    { id: 'mid', kind: 'transform', value: 'mid' },
    { id: 'small', kind: 'transform', value: 'small' },
    { id: 'sum', kind: 'tool', after: ['pick'], server: 'echo', tool: 'add', args: { a: 1, b: 2 } },
  ],
};

test('debug: pause previews, the case taken, a labelled timeline; a number field takes a template with a dot; an argument error names its argument', async () => {
  const studio = await openStudio('debug');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node', 30_000);
    await importDoc(studio, DOC);
    await breakpoint(browser, 'transform');
    await breakpoint(browser, 'pick');
    // The switch out of view (the canvas panned away), so the pause has to bring it back.
    await panBy(browser, 700, 380);
    await until(async () => !(await nodeInView(browser, 'pick')), 'pick out of view', 5_000);

    // ---- Debug: paused before the transform, the value it will produce.
    await click(browser, sel('run-debug'));
    await approveAll(browser);
    await untilStatus(browser, ['paused']);
    await until(async () => (await attr(browser, sel('pause-info'), 'data-step')) === 'transform', 'the pause before transform');
    // The paused step is selected (and brought into view): its run section shows the preview.
    const valuePreview = await shown(browser, `${sel('step-run')} ${sel('pause-preview')}`);
    assert.equal(await valuePreview.getAttribute('data-kind'), 'value');
    const value = await valuePreview.getProperty('textContent');
    assert.match(value, /said/, value);
    assert.match(value, /hello/, value);
    assert.equal(await attr(browser, sel('run-transform'), 'data-state'), 'paused', 'nothing ran yet');
    await studio.shot('paused-before-transform');

    // ---- Continue: paused before the switch, the case it will take (7 > 5: case 1 → mid).
    await panBy(browser, 700, 380);
    await until(async () => !(await nodeInView(browser, 'pick')), 'pick out of view again', 5_000);
    await click(browser, sel('run-continue'));
    await until(async () => (await attr(browser, sel('pause-info'), 'data-step')) === 'pick', 'the pause before pick');
    const casePreview = await shown(browser, `${sel('step-run')} ${sel('pause-preview')}`);
    assert.equal(await casePreview.getAttribute('data-kind'), 'case');
    assert.equal(await casePreview.getAttribute('data-case'), '1');
    assert.match(await casePreview.getProperty('textContent'), /case 1.*transform\.n > `5`.*mid/s);
    assert.equal(await attr(browser, sel('case-pick-1'), 'data-case-state'), 'next');
    assert.equal(await attr(browser, sel('run-pick'), 'data-state'), 'paused');
    // The paused node is brought into view on the canvas, whole.
    await until(async () => nodeInView(browser, 'pick'), 'the paused node in view', 5_000);
    await studio.shot('paused-before-switch');

    // ---- Continue to the end: the case taken is highlighted, the others dimmed.
    await click(browser, sel('run-continue'));
    await untilStatus(browser, ['succeeded', 'failed', 'partial']);
    await until(async () => (await attr(browser, sel('case-pick-1'), 'data-case-state')) === 'taken', 'case 1 taken');
    assert.equal(await attr(browser, sel('case-pick-0'), 'data-case-state'), 'not-taken');
    assert.equal(await attr(browser, sel('case-pick-default'), 'data-case-state'), 'not-taken');
    assert.equal(await attr(browser, sel('run-big'), 'data-state'), 'skipped');
    assert.equal(await attr(browser, sel('run-mid'), 'data-state'), 'succeeded');
    // The active time leaves out the pauses.
    const result = await (await shown(browser, sel('run-active-time'))).getProperty('textContent');
    assert.match(result, /paused\)/, result);
    await studio.shot('switch-took-case');

    // ---- History: marked Debug; the timeline labelled with step names and a pause marker.
    await click(browser, sel('tab-history'));
    const row = await shown(browser, sel('history-row'));
    await until(async () => (await row.getAttribute('data-debug')) === 'true', 'the run marked Debug');
    assert.match(await (await browser.$(`${sel('history-row')} ${sel('history-duration')}`)).getProperty('textContent'), /paused/);
    const at = await (await shown(browser, sel('timeline-at'))).getProperty('textContent');
    assert.match(at, /^\+(\d+ ms|\d+\.\d\d s|\d+ min \d\d s) · run succeeded$/, at);
    const markers = await browser.$$(sel('timeline-marker'));
    assert.equal(markers.length, 2, 'two pauses marked');
    await browser.execute((el) => el.click(), markers[1]);
    await until(async () => /paused before pick/.test(await (await browser.$(sel('timeline-at'))).getProperty('textContent')), 'the marker seeks');
    await studio.shot('history-timeline');
    await click(browser, sel('tab-run'));

    // ---- A number argument switched to an expression keeps the dot of `{{ transform.said }}`.
    await click(browser, sel('run-close'));
    await jsClick(browser, sel('step-sum'));
    const toggle = await shown(browser, sel('template-toggle-root_a'), 30_000);
    assert.equal(await toggle.getAttribute('aria-pressed'), 'false');
    await toggle.click();
    await until(async () => (await toggle.getAttribute('aria-pressed')) === 'true', 'the expression mode');
    const a = await shown(browser, '#root_a');
    await a.click();
    await a.addValue('{{ transform.said }}');
    assert.equal(await a.getProperty('value'), '{{ transform.said }}', 'typed as is');
    await browser.keys(['Tab']);
    await studio.shot('number-field-expression');
    rmSync(studio.dialogPath, { force: true });
    await click(browser, sel('file-export'));
    await until(() => existsSync(studio.dialogPath), 'the exported file');
    const exported = JSON.parse(readFileSync(studio.dialogPath, 'utf8'));
    assert.deepEqual(exported.steps.find((s) => s.id === 'sum').args, { a: '{{ transform.said }}', b: 2 });

    // ---- Run: `add` gets the string "hello" for a number; the run section says `/a` first.
    await click(browser, sel('run-start'));
    await approveAll(browser);
    await untilStatus(browser, ['failed', 'partial']);
    await jsClick(browser, sel('step-sum'));
    const argError = await shown(browser, `${sel('step-run')} ${sel('step-run-arg-error')}`);
    assert.equal(await argError.getAttribute('data-pointer'), '/a');
    assert.match(await argError.getProperty('textContent'), /argument \/a: expected number, got string/);
    assert.equal(await attr(browser, sel('step-run-error'), 'data-code'), 'ARGS_INVALID');
    assert.match(await (await shown(browser, sel('step-run-error-why'))).getProperty('textContent'), /the call was not sent/);
    // Refused before sending: the server said nothing.
    assert.equal(await (await browser.$(sel('step-run-server-said'))).isExisting(), false, 'no "server said" for a call not sent');
    // The field is marked in the form.
    const marked = await browser.execute(() => document.querySelector('#root_a')?.closest('.rjsf-field')?.textContent ?? '');
    assert.match(marked, /last run: expected number, got string/, marked);
    // On the card too, the argument first (the full text on hover).
    assert.match(await (await browser.$(sel('run-sum'))).getProperty('textContent'), /✕ \/a: expected number, got string/);
    await studio.shot('argument-error');
    // "Show the field" brings the marked field into view.
    await click(browser, sel('step-run-arg-field'));
    await until(async () => browser.execute(() => document.activeElement?.id === 'root_a'), 'the field focused');
    await browser.keys(['Escape']); // the field's suggestions, opened by the focus
    const below = await browser.execute(() => document.querySelector('#root_a')?.closest('.rjsf-field')?.textContent ?? '');
    assert.match(below, /last run: expected number, got string/, below);
    await studio.shot('argument-error-field');

    // ---- Selecting another node brings its run section into view (the inspector is scrolled down now).
    const scrolled = () =>
      browser.execute(() => {
        let top = 0;
        for (let el = document.querySelector('[data-testid="inspector"]'); el && el !== document.body; el = el.parentElement) top = Math.max(top, el.scrollTop);
        return top;
      });
    assert.ok((await scrolled()) > 0, 'the inspector is scrolled down to the field');
    await jsClick(browser, sel('step-mid'));
    await until(async () => (await scrolled()) === 0, 'the inspector back at the top', 5_000);
    const runTop = await browser.execute(() => {
      const run = document.querySelector('[data-testid="step-run"]').getBoundingClientRect();
      const side = document.querySelector('[data-testid="inspector"]').parentElement.getBoundingClientRect();
      return run.top >= side.top && run.top < side.bottom;
    });
    assert.ok(runTop, 'the run section of the newly selected step is in view');
    await studio.shot('selected-run-section');

    // ---- The JSON editor's template suggestions open above the panels, not clipped.
    await jsClick(browser, sel('step-big'));
    const editor = await shown(browser, `${sel('inspector')} .cm-content`);
    await editor.click();
    await browser.keys(['Control', 'End']);
    await browser.keys(['ArrowLeft']); // inside the string "big"
    // One key at a time: WebKitWebDriver drops a repeated `{` sent in one go.
    for (const k of [' ', '{', '{', ' ', 't', 'r']) {
      const before = await editor.getProperty('textContent');
      await browser.keys([k]);
      await until(async () => (await editor.getProperty('textContent')) !== before, `the editor to take \`${k}\``, 5_000);
    }
    const tip = await shown(browser, '.cm-tooltip-autocomplete', 5_000);
    const box = await browser.execute((el) => {
      const r = el.getBoundingClientRect();
      return { inPanel: !!el.closest('[data-testid="inspector"]'), top: r.top, bottom: r.bottom, height: r.height, right: r.right, width: window.innerWidth, winHeight: window.innerHeight };
    }, tip);
    assert.equal(box.inPanel, false, 'the list is in a layer of its own');
    assert.ok(box.height > 14 && box.bottom <= box.winHeight && box.right <= box.width, JSON.stringify(box));
    assert.match(await tip.getProperty('textContent'), /transform/);
    await studio.shot('json-editor-suggestions');
    await browser.keys(['Escape']);
  } catch (e) {
    await studio.shot('failure').catch(() => undefined);
    throw e;
  } finally {
    await studio.close();
  }
});

/**
 * The inspector's switch cases, each checked for overlaps: the head (label and its
 * buttons), the "when" input and the "to" row stacked without touching, every part
 * inside the case's box and the inspector. Returns a list of problems (empty: none).
 */
function caseOverlaps(browser) {
  return browser.execute(() => {
    const box = (el) => {
      const r = el.getBoundingClientRect();
      return { l: r.left, r: r.right, t: r.top, b: r.bottom, w: r.width, h: r.height };
    };
    const meet = (a, b) => a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5;
    const inside = (a, o) => a.l >= o.l - 0.5 && a.r <= o.r + 0.5;
    const problems = [];
    const panel = box(document.querySelector('[data-testid="inspector"]'));
    const cases = [...document.querySelectorAll('[data-testid^="switch-case-"]')];
    if (!cases.length) problems.push('no cases drawn');
    for (const c of cases) {
      const name = c.dataset.testid;
      const own = box(c);
      // Found by what they are (the rows' pointers), not by this layout's classes.
      const whenRow = c.querySelector('[data-pointer$="/when"]');
      const toRow = c.querySelector('[data-pointer$="/to"]');
      // The case's own buttons (its head); a field's buttons (the template editor's ⤢ in
      // the `when` row) belong to its field and are checked to stay inside the case.
      const buttons = [...c.querySelectorAll('button')].filter((b) => !toRow.contains(b) && !whenRow.contains(b)).map(box);
      for (const b of whenRow.querySelectorAll('button')) {
        if (!inside(box(b), own)) problems.push(`${name}: the when field's button outside its case`);
      }
      const label = box(c.querySelector('.insp-sublabel'));
      const when = box(whenRow.querySelector('input, textarea'));
      const whenLabel = box(whenRow.querySelector('.insp-label'));
      const to = box(toRow.querySelector('.insp-control'));
      const toLabel = box(toRow.querySelector('.insp-label'));
      const parts = { label, when, whenLabel, to, toLabel, ...Object.fromEntries(buttons.map((b, i) => [`button${i}`, b])) };
      const names = Object.keys(parts);
      for (let i = 0; i < names.length; i++) {
        const p = parts[names[i]];
        if (p.w <= 0 || p.h <= 0) problems.push(`${name}: ${names[i]} not drawn`);
        if (!inside(p, own) || !inside(p, panel)) problems.push(`${name}: ${names[i]} outside its case (${JSON.stringify(p)} in ${JSON.stringify(own)})`);
        for (let j = i + 1; j < names.length; j++) if (meet(p, parts[names[j]])) problems.push(`${name}: ${names[i]} overlaps ${names[j]}`);
      }
      if (!(when.t >= Math.max(label.b, ...buttons.map((b) => b.b)) - 0.5)) problems.push(`${name}: "when" not below the head`);
      if (!(to.t >= when.b - 0.5)) problems.push(`${name}: "to" not below "when"`);
      // "when" takes the case's width (a row of its own), the buttons are at the right end.
      if (when.w < own.w * 0.8) problems.push(`${name}: "when" is ${when.w} px of ${own.w}`);
      if (buttons.length && own.r - buttons[buttons.length - 1].r > 12) problems.push(`${name}: the buttons are not at the right`);
    }
    return problems;
  });
}

/** Scrolls the inspector so the cases' heading and the first case show whole. */
function showCases(browser) {
  return browser.execute(() => document.querySelector('[data-testid="switch-add-case"]').scrollIntoView({ block: 'start' }));
}

const ARGS_DOC = {
  blueprint: 1,
  id: 'debug-args',
  name: 'Arguments that break a schema, a disabled step',
  steps: [
    { id: 'first', kind: 'transform', value: { x: 1 } },
    { id: 'off', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'never' }, disabled: true },
    { id: 'said', kind: 'tool', server: 'echo', tool: 'echo', args: { message: "{{ off || 'ran' }}" } },
    // An expression, not a plain path: validation claims nothing of its type
    // (`{{ first }}` alone is TEMPLATE_TYPE_MISMATCH before the run); the run finds it.
    { id: 'sum', kind: 'tool', server: 'echo', tool: 'add', args: { a: '{{ first || `0` }}' } },
    // Skipped after the failure: its body never starts ("not run" once the run is over).
    { id: 'each', kind: 'loop', for_each: "{{ ['a', 'b'] }}", steps: [{ id: 'inner', kind: 'transform', value: '{{ item }}' }] },
  ],
};

test('debug: switch cases laid out without overlaps; ARGS_INVALID names each argument first and marks its field; a disabled step shows "disabled" and the next one runs', async () => {
  const studio = await openStudio('debug-args');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node', 30_000);

    // ---- The switch's cases in the inspector, at its default width then its minimum.
    await importDoc(studio, DOC);
    await jsClick(browser, sel('step-pick'));
    await shown(browser, sel('switch-case-1'));
    const width = () => browser.execute(() => Math.round(document.querySelector('[data-testid="right-panel"]').getBoundingClientRect().width));
    const wide = await width();
    assert.deepEqual(await caseOverlaps(browser), [], `at ${wide} px`);
    await showCases(browser);
    await studio.shot('switch-cases-default-width');
    await dragBy(browser, sel('right-handle'), 250, 0);
    await until(async () => (await width()) < wide, 'the inspector narrower');
    const narrow = await width();
    assert.ok(narrow <= 245, `the inspector at its minimum: ${narrow} px`);
    assert.deepEqual(await caseOverlaps(browser), [], `at ${narrow} px`);
    await showCases(browser);
    await studio.shot('switch-cases-min-width');
    // Back to the default width (double-click on the handle), the pointer moved off it (its tooltip).
    await (await shown(browser, sel('right-handle'))).doubleClick();
    await until(async () => (await width()) === wide, 'the default width again');
    const corner = await browser.execute(() => {
      const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
      return { x: Math.round(r.left + 12), y: Math.round(r.top + 12) };
    });
    await browser.performActions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [{ type: 'pointerMove', duration: 0, ...corner }] }]);
    await browser.releaseActions();

    // ---- A run: `off` is disabled, `said` runs after it; `sum` breaks `add`'s schema twice.
    await importDoc(studio, ARGS_DOC);
    await click(browser, sel('run-start'));
    await approveAll(browser);
    assert.equal(await untilStatus(browser, ['failed', 'partial', 'succeeded']), 'failed');
    await until(async () => (await attr(browser, sel('run-off'), 'data-shown')) === 'disabled', 'off shown disabled');
    assert.equal(await (await browser.$(sel('run-off'))).getProperty('textContent'), 'disabled · not run');
    assert.match(await attr(browser, sel('step-off'), 'class'), /\brun-disabled\b/);
    assert.equal(await attr(browser, sel('run-said'), 'data-state'), 'succeeded', 'the step after the disabled one ran');
    assert.match(await (await shown(browser, sel('run-result'))).getProperty('textContent'), /2 skipped \(1 disabled\)/);
    // A step that never started is greyed as "not run", not drawn as queued.
    assert.equal(await attr(browser, sel('run-inner'), 'data-shown'), 'not-run');
    const innerClass = await attr(browser, sel('step-inner'), 'class');
    assert.match(innerClass, /\brun-not-run\b/);
    assert.doesNotMatch(innerClass, /\brun-queued\b/);
    assert.equal(await browser.execute(() => getComputedStyle(document.querySelector('[data-testid="step-inner"]')).filter), 'grayscale(1)');
    // The status toast out of the way of the cards, the whole graph in view.
    const dismiss = await browser.$(sel('status-dismiss'));
    if (await dismiss.isExisting()) await browser.execute((el) => el.click(), dismiss);
    await click(browser, sel('zoom-fit-button'));
    await standsStill(browser);
    await studio.shot('not-run-and-disabled');
    await jsClick(browser, sel('step-said'));
    const output = await shown(browser, `${sel('step-run')} ${sel('step-run-output')}`);
    assert.match(await output.getProperty('textContent'), /ran/, 'it read null from the disabled step');
    await jsClick(browser, sel('step-off'));
    await shown(browser, sel('step-run-disabled'));
    assert.equal(await attr(browser, sel('step-run'), 'data-shown'), 'disabled');
    await studio.shot('disabled-step');

    // ---- `sum`: ARGS_INVALID, the pointers first (one line each), our sentence after them, both fields marked.
    await jsClick(browser, sel('step-sum'));
    await shown(browser, `${sel('step-run')} ${sel('step-run-arg-error')}`);
    assert.equal(await attr(browser, sel('step-run-error'), 'data-code'), 'ARGS_INVALID');
    const layout = await browser.execute(() => {
      const box = document.querySelector('[data-testid="step-run-error"]');
      const named = [...box.querySelectorAll('[data-testid="step-run-arg-error"]')];
      const why = box.querySelector('[data-testid="step-run-error-why"]');
      return {
        named: named.map((el) => [el.dataset.pointer, el.textContent]),
        // Document order: every named argument comes before our sentence.
        pointersFirst: named.every((el) => el.compareDocumentPosition(why) & Node.DOCUMENT_POSITION_FOLLOWING),
        why: why.textContent,
        said: !!box.querySelector('[data-testid="step-run-server-said"]'),
      };
    });
    assert.deepEqual(layout.named, [
      ['/a', 'argument /a: expected number, got object'],
      ['/b', 'argument /b: required, missing'],
    ]);
    assert.ok(layout.pointersFirst, 'the arguments are named before our sentence');
    assert.match(layout.why, /do not fit its input schema; the call was not sent/);
    assert.equal(layout.said, false, 'nothing was sent: no "server said"');
    const fieldText = (id) => browser.execute((i) => document.querySelector(`#${i}`)?.closest('.rjsf-field')?.textContent ?? '', id);
    await until(async () => /last run: expected number, got object/.test(await fieldText('root_a')), 'the field a marked');
    assert.match(await fieldText('root_b'), /last run: required, missing/, 'the field b marked');
    assert.match(await (await browser.$(sel('run-sum'))).getProperty('textContent'), /✕ \/a: expected number, got object \(\+1 more\)/);
    await studio.shot('args-invalid');
    // The marked fields, in view.
    await click(browser, sel('step-run-arg-field'));
    await until(async () => browser.execute(() => document.activeElement?.id === 'root_a'), 'the field focused');
    await browser.keys(['Escape']);
    await studio.shot('args-invalid-fields');
  } catch (e) {
    await studio.shot('failure').catch(() => undefined);
    throw e;
  } finally {
    await studio.close();
  }
});

// An `until` loop whose condition can never be true (no server: a transform body).
const EXHAUSTED_DOC = {
  blueprint: 1,
  id: 'until-never',
  name: 'An until loop that is never true',
  steps: [
    {
      id: 'wait_ready',
      name: 'Wait until ready',
      kind: 'loop',
      until: '{{ `false` }}',
      max_iterations: 3,
      steps: [{ id: 'tick', kind: 'transform', value: '{{ index }}' }],
    },
    { id: 'report', kind: 'transform', value: '{{ wait_ready }}' },
  ],
};

test('debug: an until loop that reaches max_iterations is red, its card saying so with the condition’s last value, legible and still under the mouse', async () => {
  const studio = await openStudio('debug-exhausted');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node', 30_000);
    await importDoc(studio, EXHAUSTED_DOC);
    await click(browser, sel('run-start'));
    assert.equal(await untilStatus(browser, ['failed', 'partial', 'succeeded']), 'failed');
    await until(async () => (await attr(browser, sel('run-wait_ready'), 'data-state')) === 'failed', 'the loop failed');
    const dismiss = await browser.$(sel('status-dismiss'));
    if (await dismiss.isExisting()) await browser.execute((el) => el.click(), dismiss);

    // Red like any failed card: the border in the failed colour.
    assert.match(await attr(browser, sel('step-wait_ready'), 'class'), /\brun-failed\b/);
    const card = () =>
      browser.execute(() => {
        const loop = document.querySelector('[data-testid="step-wait_ready"]');
        const status = document.querySelector('[data-testid="run-wait_ready"]');
        const label = status.querySelector('.run-label');
        const last = document.querySelector('[data-testid="run-last-wait_ready"]');
        const t = document.querySelector('.react-flow__viewport')?.style.transform ?? '';
        const zoom = Number(/scale\(([\d.]+)\)/.exec(t)?.[1] ?? 'NaN');
        const box = (el) => {
          const r = el.getBoundingClientRect();
          return { x: Math.round(r.left), y: Math.round(r.top), w: Math.round(r.width), h: Math.round(r.height) };
        };
        return {
          border: getComputedStyle(loop).borderTopColor,
          label: label.textContent,
          title: label.title,
          last: last.textContent,
          lastColor: getComputedStyle(last).color,
          // Seen whole: not cut by the status line, not wider than its own text.
          lastWhole: last.getBoundingClientRect().right <= status.getBoundingClientRect().right + 0.5 && last.scrollWidth <= last.clientWidth + 1,
          px: parseFloat(getComputedStyle(last).fontSize) * zoom,
          zoom,
          boxes: { loop: box(loop), status: box(status), last: box(last) },
        };
      });
    const seen = await card();
    assert.equal(seen.border, 'rgb(217, 45, 32)', `the loop's border is the failed red: ${JSON.stringify(seen)}`);
    assert.equal(seen.label, '✕ until never true · 3/3');
    assert.equal(seen.last, '· last: false');
    assert.equal(seen.lastColor, 'rgb(217, 45, 32)');
    assert.ok(seen.lastWhole, `the last value is shown whole: ${JSON.stringify(seen)}`);
    assert.ok(seen.px >= 9, `legible at the default zoom: ${seen.px.toFixed(1)} px at zoom ${seen.zoom}`);
    assert.match(seen.title, /^LOOP_UNTIL_EXHAUSTED: loop `wait_ready` ran 3 iterations \(max_iterations 3\)/);
    assert.match(seen.title, /its last value was false/);
    assert.equal(await attr(browser, sel('run-report'), 'data-state'), 'skipped');

    // The pointer on the error line (its tooltip): nothing moves.
    const at = { x: seen.boxes.status.x + 20, y: seen.boxes.status.y + Math.round(seen.boxes.status.h / 2) };
    await browser.performActions([{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [{ type: 'pointerMove', duration: 0, ...at }] }]);
    await browser.releaseActions();
    await standsStill(browser, sel('run-wait_ready'));
    assert.deepEqual((await card()).boxes, seen.boxes, 'nothing moved under the mouse');
    await studio.shot('until-exhausted');
  } catch (e) {
    await studio.shot('failure').catch(() => undefined);
    throw e;
  } finally {
    await studio.close();
  }
});
