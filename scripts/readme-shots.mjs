// Retakes the README's screenshots of the studio from a fresh start (a new data folder,
// started in a temporary folder, not the repository): docs/first-start.png is what a new
// user sees first; docs/studio.png is the demo after a Run, one step selected, its run
// output and form in the inspector.
//
// Needs the studio built with the UI embedded (as scripts/e2e.sh builds it), tauri-driver,
// Xvfb and ImageMagick:
//   xvfb-run -a -s "-screen 0 1600x1000x24" node scripts/readme-shots.mjs
// The window is 1400×900 at the top left of the screen; the pictures are cropped to it.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approveAll, openStudio, ROOT, sel, shown, until } from '../tests/e2e/harness.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Closes the status toast (it would cover cards in a picture meant to show them). */
async function dismissToast(browser) {
  const close = await browser.$(sel('status-dismiss'));
  if (await close.isExisting()) await close.click().catch(() => {});
}

function crop(from, to) {
  const r = spawnSync('convert', [from, '-crop', '1400x900+0+0', '+repage', to], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`convert ${from} → ${to} failed`);
  console.log(`wrote ${to}`);
}

const cwd = mkdtempSync(join(tmpdir(), 'mcpflow-shots-cwd-'));
const studio = await openStudio('readme', {}, { cwd, guide: true });
const { browser } = studio;
try {
  await shown(browser, sel('step-namespaces'), 30_000);
  await sleep(1500); // the open view and the first paint settle
  await dismissToast(browser);
  crop(await studio.shot('first-start'), join(ROOT, 'docs/first-start.png'));

  const gotIt = await browser.$(sel('guide-dismiss'));
  if (await gotIt.isExisting()) await gotIt.click();
  await (await shown(browser, sel('run-start'))).click();
  await approveAll(browser, 30_000);
  await until(async () => {
    const el = await browser.$(sel('run-state'));
    return (await el.isExisting()) && ['succeeded', 'partial', 'failed'].includes(await el.getAttribute('data-status'));
  }, 'the demo run to end', 180_000);
  await (await shown(browser, sel('step-namespaces'))).click();
  await sleep(1200);
  await dismissToast(browser);
  await sleep(300);
  crop(await studio.shot('after-run'), join(ROOT, 'docs/studio.png'));
} finally {
  await studio.close();
  rmSync(cwd, { recursive: true, force: true });
}
