// The editor, end to end on the real app: open an example; approve a server through
// the consent prompt; drag a tool from the palette onto the canvas; connect it; fill a
// required argument through the generated form; see a validation error appear on the
// node and disappear when fixed; save; reopen and find the change; export to a file
// that `mcpflow validate` accepts; import it back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { click, dragToCanvas, fill, openStudio, pointerDrag, ROOT, sel, shown, standsStill, until } from './harness.mjs';


async function statusText(browser) {
  const el = await browser.$(sel('status'));
  // textContent: the status line may be scrolled out of a narrow toolbar.
  return (await el.isExisting()) ? el.getProperty('textContent') : '';
}


test('design a blueprint: palette, connect, form, diagnostics (a tool typo too), save, reopen, export, import', async () => {
  const studio = await openStudio('editor');
  const { browser } = studio;
  try {
    await shown(browser, '.react-flow__node');

    // Open a small example from the store.
    await click(browser, sel('file-open'));
    await click(browser, sel('open-item-pipeline-prev'));
    await shown(browser, sel('step-greet'));
    await studio.shot('opened');

    // The echo fixture server asks for consent, showing the exact command.
    await click(browser, sel('palette-approve-echo')); // its section: tools as shipped, awaiting approval
    const command = await (await shown(browser, sel('consent-command'))).getText();
    assert.match(command, /mcpflow-testkit echo/, `the consent prompt shows the command, got: ${command}`);
    await studio.shot('consent');
    await click(browser, sel('consent-approve'));
    await until(async () => !(await browser.$(sel('palette-awaiting-echo')).isExisting()), 'echo approved and listed', 30_000);
    await shown(browser, sel('palette-item-echo-echo'), 30_000);

    // Drag the echo tool onto an empty part of the canvas.
    const pane = await browser.execute(() => {
      const r = document.querySelector('.react-flow__pane').getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width, h: r.height };
    });
    const dropped = await dragToCanvas(
      browser,
      sel('palette-item-echo-echo'),
      Math.round(pane.x + pane.w * 0.45),
      Math.round(pane.y + pane.h * 0.85),
    );
    assert.equal(dropped, 'ok');
    await shown(browser, sel('step-echo'));
    await shown(browser, sel('dirty-mark'));
    // Fit, so that both ends are in view whatever the drop did to the placement.
    await click(browser, sel('fit-view'));
    await standsStill(browser);

    // Connect greet → echo with the pointer (an explicit `after`). The example opens at
    // its start, legible; Fit brings both ends into view.
    await click(browser, sel('fit-view'));
    await standsStill(browser);
    await pointerDrag(browser, sel('handle-greet-out'), sel('handle-echo-in'));
    await until(
      async () => (await browser.$('[data-testid="rf__edge-after:greet->echo"]').isExisting()),
      'the edge greet → echo',
    );
    await studio.shot('dropped-and-connected');

    // Select the new step; fill its required `message` through the generated form.
    await click(browser, sel('step-echo'));
    await shown(browser, sel('args-form'));
    // A template that reads a step that does not exist: an error on the node.
    await fill(browser, '#root_message', '{{ nosuch.value }}');
    await shown(browser, sel('diag-echo'), 10_000);
    await studio.shot('diagnostic-on-node');
    await fill(browser, '#root_message', 'hello from {{ greet }}');
    await until(async () => !(await browser.$(sel('diag-echo')).isExisting()), 'the diagnostic to clear');
    await studio.shot('fixed');

    // The echo server was started for the palette, so its tools are known: a misspelled
    // tool is a warning on the node (validation itself never starts a server).
    const badgeTitle = async () => {
      const badge = await browser.$(sel('diag-echo'));
      return (await badge.isExisting()) ? ((await badge.getAttribute('title')) ?? '') : '';
    };
    await fill(browser, sel('step-tool'), 'ecco');
    await until(async () => /TOOL_UNKNOWN: server `echo` has no tool `ecco`/.test(await badgeTitle()), 'the TOOL_UNKNOWN warning on the node');
    await studio.shot('tool-typo-warning');
    await fill(browser, sel('step-tool'), 'echo');
    await until(async () => !(await browser.$(sel('diag-echo')).isExisting()), 'the warning to clear');

    // Save a revision.
    await click(browser, sel('file-save'));
    await until(async () => /saved revision/.test(await statusText(browser)), '"saved revision" in the status');
    assert.equal(await browser.$(sel('dirty-mark')).isExisting(), false, 'saved: no unsaved marker');

    // Reopen: a new document, then the saved blueprint from the store.
    await click(browser, sel('file-new'));
    await until(async () => !(await browser.$(sel('step-echo')).isExisting()), 'a new empty document');
    await click(browser, sel('file-open'));
    await click(browser, sel('open-item-pipeline-prev'));
    await shown(browser, sel('step-echo'));
    await shown(browser, '[data-testid="rf__edge-after:greet->echo"]');
    await studio.shot('reopened');

    // Export to a file (the dialog's pick is the test path) and validate it with the CLI.
    await click(browser, sel('file-export'));
    await until(() => existsSync(studio.dialogPath), 'the exported file');
    const exported = JSON.parse(readFileSync(studio.dialogPath, 'utf8'));
    const echo = exported.steps.find((s) => s.id === 'echo');
    assert.ok(echo, 'the exported blueprint has the new step');
    assert.equal(echo.args.message, 'hello from {{ greet }}');
    assert.ok(echo.after.includes('greet'), `echo runs after greet: ${JSON.stringify(echo.after)}`);
    assert.ok(exported.layout?.echo, 'the new node position is saved in layout');
    // Portable: the servers its steps use are copied in, and a README says how to run it.
    for (const step of exported.steps.filter((s) => s.server)) {
      assert.ok(exported.servers?.[step.server], `server ${step.server} travels with it: ${JSON.stringify(exported.servers)}`);
    }
    const readme = readFileSync(studio.dialogPath.replace(/\.json$/, '.README.md'), 'utf8');
    assert.match(readme, /mcpflow run dialog-pick\.json/);
    const cli = join(ROOT, 'target/debug/mcpflow');
    const out = execFileSync(cli, ['validate', studio.dialogPath], { encoding: 'utf8' });
    assert.doesNotMatch(out, /error\[/, `mcpflow validate accepts the export: ${out}`);

    // Import it back into a new document.
    await click(browser, sel('file-new'));
    await until(async () => !(await browser.$(sel('step-echo')).isExisting()), 'a new empty document');
    await click(browser, sel('file-import'));
    await shown(browser, sel('step-echo'));
    await shown(browser, sel('dirty-mark'));
    await studio.shot('imported');
  } catch (e) {
    await studio.shot('failure').catch(() => {});
    throw e;
  } finally {
    await studio.close();
  }
});
