// End-to-end harness: the real studio binary (built with the embedded UI), driven by
// WebdriverIO through tauri-driver and WebKitWebDriver, inside Xvfb (scripts/e2e.sh
// starts the display). Every session gets a fresh data folder, so each test starts
// from a first start: the examples and demo servers seeded.
//
// Facts this relies on (TECH-NOTES): issue WebDriver commands one at a time; kill the
// whole process group of tauri-driver (killing it alone leaves WebKitWebDriver up).

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import net from 'node:net';
import { remote } from 'webdriverio';

/**
 * When scripts/e2e.sh runs test files side by side (MCPFLOW_E2E_OWN_DISPLAY=1), each file
 * (one node process) starts an X display of its own: screenshots are of the display, and
 * two windows must not share one. Xvfb writes the display number it took to fd 3.
 */
async function ownDisplay() {
  const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', '1600x1000x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
  });
  process.on('exit', () => xvfb.kill('SIGKILL'));
  const display = await new Promise((ok, fail) => {
    let said = '';
    xvfb.stdio[3].on('data', (chunk) => {
      said += chunk;
      if (said.includes('\n')) ok(said.trim());
    });
    xvfb.on('error', fail);
    xvfb.on('exit', (code) => fail(new Error(`Xvfb exited (${code}) before it said its display`)));
  });
  // The display outlives nothing: it must not keep this process from ending.
  xvfb.stdio[3].destroy();
  xvfb.unref();
  process.env.DISPLAY = `:${display}`;
}
if (process.env.MCPFLOW_E2E_OWN_DISPLAY === '1') await ownDisplay();

export const ROOT = resolve(import.meta.dirname, '../..');
export const APP = process.env.MCPFLOW_STUDIO_BIN ?? join(ROOT, 'target/debug/mcpflow-studio');
/** The CLI beside the studio: what the studio starts `mcpflow service` with. */
export const CLI = join(dirname(APP), 'mcpflow');
export const OUTPUT = join(ROOT, 'test-output/e2e');
mkdirSync(OUTPUT, { recursive: true });

/** A loopback port nothing listens on now. */
export function freePort() {
  return new Promise((ok, fail) => {
    const server = net.createServer();
    server.on('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

async function waitForPort(port, ms, what) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const open = await new Promise((ok) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        ok(true);
      });
      socket.on('error', () => ok(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within ${ms} ms`);
}

/** Starts tauri-driver on free ports and a session through it; kills it when that fails. */
async function startSession(home, dialogPath, cwd, guide, env) {
  const port = await freePort();
  const nativePort = await freePort();
  const driver = spawn(
    process.env.TAURI_DRIVER ?? 'tauri-driver',
    ['--port', String(port), '--native-port', String(nativePort), '--native-driver', '/usr/bin/WebKitWebDriver'],
    {
      detached: true,
      cwd,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        ...process.env,
        MCPFLOW_HOME: home,
        MCPFLOW_TEST_DIALOG_PATH: dialogPath,
        MCPFLOW_DEMO_ROOT: ROOT,
        ...(guide ? {} : { MCPFLOW_TEST_NO_GUIDE: '1' }),
        ...env,
      },
    },
  );
  try {
    await waitForPort(port, 15_000, 'tauri-driver');
    // tauri-driver listens as soon as it has spawned WebKitWebDriver, which binds its own
    // port later: a session asked for before that fails ("tcp connect error").
    await waitForPort(nativePort, 15_000, 'WebKitWebDriver');
    const browser = await remote({
      hostname: '127.0.0.1',
      port,
      logLevel: 'warn',
      connectionRetryTimeout: 90_000,
      connectionRetryCount: 0,
      capabilities: {
        'wdio:enforceWebDriverClassic': true,
        'tauri:options': { application: APP },
      },
    });
    return { driver, browser };
  } catch (e) {
    try {
      process.kill(-driver.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    throw e;
  }
}

/**
 * Starts tauri-driver and a session on the studio with a fresh MCPFLOW_HOME.
 * Returns { browser, home, dialogPath, shot(name), close() }.
 * `env` is added to the studio's environment (through tauri-driver, which it inherits).
 * Options: `home` reuses a data folder (a restart), `keep` leaves the data folder in
 * place on `close()` (default: when `home` was given; the caller removes it),
 * `cwd` is the folder the studio starts in (default: this process's), `guide` lets the
 * first-start guide open (off by default, so it does not cover what tests click).
 */
export async function openStudio(name, env = {}, { home: reuse, cwd, keep = reuse !== undefined, guide = false } = {}) {
  const home = reuse ?? mkdtempSync(join(tmpdir(), `mcpflow-e2e-${name}-`));
  const dialogPath = join(home, 'dialog-pick.json');
  // tauri-driver 2.1 now and then never answers the session request: its accept loop
  // spins on an error, printing "accept new stream fail" (its server.rs). That driver is
  // killed and a new one tried, once.
  let driver;
  let browser;
  for (let attempt = 1; ; attempt++) {
    try {
      ({ driver, browser } = await startSession(home, dialogPath, cwd, guide, env));
      break;
    } catch (e) {
      if (attempt === 2) throw e;
      console.error(`# tauri-driver did not start a session (${e.message}); trying once more with a new driver`);
    }
  }
  const killDriver = () => {
    try {
      process.kill(-driver.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  let shots = 0;
  return {
    browser,
    home,
    dialogPath,
    async shot(label) {
      shots += 1;
      const file = join(OUTPUT, `${name}-${String(shots).padStart(2, '0')}-${label}.png`);
      // The X display's picture of the window (ImageMagick's `import`), not WebDriver's:
      // WebKitWebDriver's screenshot asks the web process for a snapshot, which now and
      // then never answers (seen while a run's spinners animate) and wedges the session.
      const x = process.env.DISPLAY ? spawnSync('import', ['-window', 'root', file], { timeout: 20_000 }) : null;
      if (!x || x.status !== 0) await browser.saveScreenshot(file);
      return file;
    },
    async close() {
      try {
        await browser.deleteSession();
      } catch {
        // the window may already be gone
      }
      killDriver();
      // The studio started (or joined) the data folder's service, which outlives the
      // window. The studio goes first: one still closing would start the service again.
      await stopStudio(home);
      await stopService(home);
      if (!keep) rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * Imports a blueprint through the Import button (the test dialog picks `studio.dialogPath`)
 * and waits until its first step is on the canvas.
 */
export async function importDoc(studio, doc) {
  writeJson(studio.dialogPath, doc);
  await (await shown(studio.browser, '[data-testid="file-import"]')).click();
  // An imported file not saved yet is "unsaved changes": the next import asks first.
  const ask = await studio.browser.$('[data-testid="ask-confirm"]');
  if (await ask.waitForDisplayed({ timeout: 2_000 }).then(() => true, () => false)) await ask.click();
  await shown(studio.browser, `[data-testid="step-${doc.steps[0].id}"]`);
}

/** Waits until `selector` is displayed and returns the element. */
export async function shown(browser, selector, timeout = 15_000) {
  const el = await browser.$(selector);
  await el.waitForDisplayed({ timeout, timeoutMsg: `${selector} was not displayed within ${timeout} ms` });
  return el;
}

/** Polls `check` (async, returns truthy when done) until it holds. */
export async function until(check, what, timeout = 15_000) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

/**
 * Resolves after `n` animation frames of the page: what the last input changed has been
 * rendered (to check that something did NOT happen, wait for this, not for time).
 */
export async function frames(browser, n = 3) {
  await browser.executeAsync((count, done) => {
    let left = count;
    const tick = () => (--left <= 0 ? done() : requestAnimationFrame(tick));
    requestAnimationFrame(tick);
  }, n);
}

/**
 * Waits until `selector` (default: the canvas's viewport) stands still: its transform and
 * its box the same over 10 animation frames (fit and zoom animate; a loaded machine can
 * repeat a frame, never ten).
 */
export async function standsStill(browser, selector = '.react-flow__viewport', timeout = 15_000) {
  await until(
    () =>
      browser.executeAsync((s, done) => {
        const look = () => {
          const el = document.querySelector(s);
          if (!el) return null;
          const r = el.getBoundingClientRect();
          return `${el.style.transform}|${r.x},${r.y},${r.width},${r.height}`;
        };
        const first = look();
        let left = 10;
        const tick = () => {
          if (look() !== first) return done(false);
          if (--left <= 0) return done(first !== null);
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
      }, selector),
    `${selector} to stand still`,
    timeout,
  );
}

export function writeJson(path, value) {
  writeFileSync(path, JSON.stringify(value, null, 2));
}

/**
 * HTML5 drag and drop from `source` onto the canvas at client point (x, y).
 * WebDriver pointer actions do not produce HTML5 drag events in WebKit, so the events
 * are dispatched in the page — through the app's own handlers: the palette's
 * `dragstart` fills the DataTransfer, the canvas's `drop` reads it.
 */
export async function dragToCanvas(browser, sourceSelector, x, y) {
  return browser.execute(
    (sel, cx, cy) => {
      const source = document.querySelector(sel);
      const pane = document.querySelector('.react-flow__pane') ?? document.querySelector('.react-flow');
      if (!source || !pane) return `missing ${!source ? sel : '.react-flow__pane'}`;
      const data = new DataTransfer();
      const at = { bubbles: true, cancelable: true, dataTransfer: data, clientX: cx, clientY: cy };
      source.dispatchEvent(new DragEvent('dragstart', { ...at, clientX: 0, clientY: 0 }));
      const target = document.elementFromPoint(cx, cy) ?? pane;
      target.dispatchEvent(new DragEvent('dragenter', at));
      target.dispatchEvent(new DragEvent('dragover', at));
      target.dispatchEvent(new DragEvent('drop', at));
      source.dispatchEvent(new DragEvent('dragend', at));
      return 'ok';
    },
    sourceSelector,
    x,
    y,
  );
}

/** Drags with real pointer input from the centre of one element to another's. */
export async function pointerDrag(browser, fromSelector, toSelector) {
  const from = await browser.$(fromSelector);
  const to = await browser.$(toSelector);
  await from.waitForDisplayed();
  await to.waitForDisplayed();
  const a = await from.getLocation();
  const as = await from.getSize();
  const b = await to.getLocation();
  const bs = await to.getSize();
  const start = { x: Math.round(a.x + as.width / 2), y: Math.round(a.y + as.height / 2) };
  const end = { x: Math.round(b.x + bs.width / 2), y: Math.round(b.y + bs.height / 2) };
  await browser.performActions([
    {
      type: 'pointer',
      id: 'mouse',
      parameters: { pointerType: 'mouse' },
      actions: [
        { type: 'pointerMove', duration: 0, x: start.x, y: start.y },
        { type: 'pointerDown', button: 0 },
        { type: 'pointerMove', duration: 150, x: Math.round((start.x + end.x) / 2), y: Math.round((start.y + end.y) / 2) },
        { type: 'pointerMove', duration: 150, x: end.x, y: end.y },
        { type: 'pointerUp', button: 0 },
      ],
    },
  ]);
  await browser.releaseActions();
}

/** Types into a form field and commits it (the inspector commits on blur: Tab leaves it). */
export async function fill(browser, selector, text) {
  const input = await shown(browser, selector);
  await input.click();
  // Select all and delete with keys: WebDriver's clear bypasses React's onChange.
  await browser.keys(['Control', 'a']);
  await browser.keys(['Backspace']);
  await input.addValue(text);
  await browser.keys(['Tab']);
}

/** The selector of a `data-testid`. */
export const sel = (id) => `[data-testid="${id}"]`;

/** Waits until `selector` is displayed, then clicks it. */
export async function click(browser, selector) {
  const el = await shown(browser, selector);
  await el.click();
}

/** The status of the run shown in the toolbar's chip (`null`: no run shown). */
export async function runStatus(browser) {
  const el = await browser.$(sel('run-state'));
  return (await el.isExisting()) ? el.getAttribute('data-status') : null;
}

/**
 * Approves every server the consent prompt asks for, one prompt at a time, until the
 * run starts; returns the commands approved (empty when the run started without asking).
 */
export async function approveAll(browser, timeout = 15_000) {
  const approved = [];
  const dialog = await browser.$(sel('consent-dialog'));
  // Either the prompt shows, or the run starts without asking (its chip shows).
  const chip = await browser.$(sel('run-state'));
  await until(async () => (await dialog.isDisplayed()) || (await chip.isExisting()), 'a consent prompt or the run', timeout);
  while (await dialog.isDisplayed()) {
    const command = await (await browser.$(sel('consent-command'))).getText();
    await click(browser, sel('consent-approve'));
    approved.push(command);
    // The prompt closes, or asks for the next server.
    await until(
      async () => !(await dialog.isDisplayed()) || (await (await browser.$(sel('consent-command'))).getText()) !== command,
      `the prompt for ${command} to close`,
      30_000,
    );
    await frames(browser);
  }
  return approved;
}

/** The canvas zoom, read from React Flow's viewport transform (`null`: no canvas). */
export async function viewportZoom(browser) {
  return browser.execute(() => {
    const t = document.querySelector('.react-flow__viewport')?.style.transform ?? '';
    const m = /scale\(([\d.]+)\)/.exec(t);
    return m ? Number(m[1]) : null;
  });
}

/** Drags the centre of `selector` by (dx, dy) with real pointer input (a resize handle, a card). */
export async function dragBy(browser, selector, dx, dy) {
  const el = await shown(browser, selector);
  const loc = await el.getLocation();
  const size = await el.getSize();
  const x = Math.round(loc.x + size.width / 2);
  const y = Math.round(loc.y + size.height / 2);
  await browser.performActions([
    {
      type: 'pointer',
      id: 'mouse',
      parameters: { pointerType: 'mouse' },
      actions: [
        { type: 'pointerMove', duration: 0, x, y },
        { type: 'pointerDown', button: 0 },
        { type: 'pointerMove', duration: 120, x: x + Math.round(dx / 2), y: y + Math.round(dy / 2) },
        { type: 'pointerMove', duration: 120, x: x + dx, y: y + dy },
        { type: 'pointerUp', button: 0 },
      ],
    },
  ]);
  await browser.releaseActions();
}

/** The run state of a node (`data-state` of its status line); `null` when it shows none. */
export async function nodeState(browser, id) {
  const el = await browser.$(sel(`run-${id}`));
  return (await el.isExisting()) ? el.getAttribute('data-state') : null;
}

/** Whether process `pid` exists and is not a zombie. */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Waits up to 5 s for the studio of data folder `home` to exit, then SIGKILLs it. */
async function stopStudio(home) {
  const until = Date.now() + 5_000;
  while (Date.now() < until) {
    if (studioPid(home) === null) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = studioPid(home);
  if (pid !== null) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

/** The pid of the `mcpflow service` holding data folder `home`, or null. */
export function servicePid(home) {
  return processOf(CLI, home, (argv) => argv.includes('service'));
}

/**
 * Stops the `mcpflow service` of data folder `home` (SIGTERM to its process group: its
 * runs are cancelled and its servers reaped), waiting up to 10 s, then SIGKILL.
 */
export async function stopService(home) {
  const pid = servicePid(home);
  if (pid === null) return;
  const signal = (name) => {
    try {
      process.kill(-pid, name);
    } catch {
      // gone already
    }
  };
  signal('SIGTERM');
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (!alive(pid)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  signal('SIGKILL');
}

function processOf(binary, home, argvFits = () => true) {
  let exe;
  try {
    exe = realpathSync(binary);
  } catch {
    return null;
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (realpathSync(`/proc/${entry}/exe`) !== exe) continue;
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (env.includes(`MCPFLOW_HOME=${home}`) && argvFits(argv)) return Number(entry);
    } catch {
      // gone, or not ours to read
    }
  }
  return null;
}

/** The pid of the studio whose environment has MCPFLOW_HOME=home (started by the driver). */
export function studioPid(home) {
  return processOf(APP, home);
}

/**
 * Saves the window's 1400×900 at the top left of the X display to `file` (ImageMagick's
 * `import`; WebDriver's screenshot when there is no display).
 */
export async function windowShot(browser, file) {
  const x = process.env.DISPLAY ? spawnSync('import', ['-window', 'root', '-crop', '1400x900+0+0', '+repage', file], { timeout: 20_000 }) : null;
  if (!x || x.status !== 0) await browser.saveScreenshot(file);
  return file;
}

/**
 * One call of the studio's API on the data folder's service (the `api` session of
 * `mcpflow.sock`, as the studio itself speaks it): resolves with the result, rejects with
 * the error's message. For a test's set-up that the window would take long to click.
 */
export function apiCall(home, method, params = {}) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(join(home, 'mcpflow.sock'));
    let buffer = '';
    let welcomed = false;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      socket.write(`${JSON.stringify({ mcpflow: 2, session: 'api', client: 'e2e', options: [] })}\n`);
    });
    socket.on('data', (chunk) => {
      buffer += chunk;
      let at;
      while ((at = buffer.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
        if (!welcomed) {
          welcomed = true;
          if (!line.ok) return reject(new Error(`the service refused: ${JSON.stringify(line.error)}`));
          socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })}\n`);
        } else if (line.id === 1) {
          socket.end();
          if (line.error) reject(new Error(`${method}: ${line.error.message} [${line.error.data?.code}]`));
          else resolve(line.result);
        }
      }
    });
    socket.on('error', reject);
  });
}
