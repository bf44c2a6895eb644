// @vitest-environment jsdom
// Signing in from the studio against a fake backend (mockIPC): an HTTP server's auth
// line through its states (a quiet Sign in; "needs sign-in" after a test failed with
// AUTH_REQUIRED; "Waiting for the browser…" with Cancel; signed in as … with its expiry
// and Sign out in its menu; a failed sign-in saying what to do), the protocol era badge,
// and a run that failed with AUTH_REQUIRED offering "Sign in to NAME".

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { statusStore } from '../../backend';
import { commandError, deferred, mockBackend, type MockBackend } from '../../backend/mock-backend';
import { docStore } from '../../doc/store';
import type { Blueprint } from '../../doc/types';
import { runStore, type RunEvent } from '../../run';
import { Studio } from '../../Studio';
import { q, settling, tid } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { cancelAllAsks } from '../files';
import { closeRun, useSession } from '../run/session';
import { signedOut } from './auth';
import { authReason, authServer, expiryText } from './authtext';
import { initialServersState, openServersPanel, serversStore } from './store';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;
/** Lets promises and effects run: 6 turns, no timer waited for. */
const { settle, click } = settling(6, 0);

const URL = 'http://127.0.0.1:3000/mcp';
const web = { name: 'web', transport: 'http', command: null, url: URL, approved: true, config: { url: URL } };
const NEEDS = 'server `web` needs a sign-in: it answered 401 and no login is stored; run `mcpflow auth login web` or sign in from the Servers panel';
const login = (over: Record<string, unknown> = {}) => ({
  server: 'web',
  url: URL,
  signed_in: true,
  grant: 'authorization_code',
  account: 'ada@example.com',
  scopes: ['mcp:tools'],
  expires_at_ms: Date.now() + 54 * 60_000 + 30_000,
  refreshable: true,
  ...over,
});
const notSignedIn = () => ({ ...login(), signed_in: false, grant: null, account: null, scopes: [], expires_at_ms: null, refreshable: false });
const DOC: Blueprint = {
  blueprint: 1,
  id: 'greets',
  steps: [{ id: 'hello', kind: 'tool', server: 'web', tool: 'greet', args: { name: 'Ada' } }],
} as unknown as Blueprint;

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend({ list_servers: () => [web] });
  docStore.getState().load(DOC, { id: DOC.id, rev: 1 });
  useSession.setState({ active: null, starting: false, debugging: false, history: [], historyFor: null, error: null });
});

afterEach(async () => {
  cancelAllAsks();
  closeRun();
  runStore.getState().reset();
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  serversStore.setState(initialServersState());
  statusStore.setState({ message: null, interrupted: [] });
});

async function openPanel() {
  await act(async () => root.render(<Studio validate={false} />));
  await settle();
  await act(async () => openServersPanel());
  await settle();
  expect(tid('server-row-web')).not.toBeNull();
}

describe('the Servers panel signs in', () => {
  it('offers Sign in after AUTH_REQUIRED, waits for the browser, shows who and until when, tests again, signs out', async () => {
    be.on('auth_status', () => [notSignedIn()]);
    let tests = 0;
    be.on('test_server', () => {
      tests++;
      if (tests === 1) throw commandError('AUTH_REQUIRED', NEEDS);
      return { protocol_version: '2026-07-28', tools: [{ server: 'web', name: 'greet', description: 'Says hello', input_schema: {} }] };
    });
    const answer = deferred<unknown>();
    be.on('auth_login', () => answer.promise);
    await openPanel();

    // Nothing says it needs a login yet: a quiet Sign in among the actions, no auth line.
    expect(tid('server-signin-web')!.closest('.server-actions')).not.toBeNull();
    expect(tid('server-auth-web')).toBeNull();

    await click(tid('server-test-web'));
    const line = tid('server-auth-web')!;
    expect(line.dataset.state).toBe('needed');
    expect(line.textContent).toContain('needs sign-in');
    expect(line.textContent).toContain('it answered 401 and no login is stored');
    // The command-line advice is not shown in the GUI, and the test's raw error is folded into the line.
    expect(tid('server-row-web')!.textContent).not.toContain('mcpflow auth login');
    expect(tid('server-signin-web')!.closest('.server-auth')).not.toBeNull();

    await click(tid('server-signin-web'));
    expect(be.calls('auth_login')).toEqual([{ server: 'web', doc: null }]);
    expect(tid('server-auth-web')!.dataset.state).toBe('waiting');
    expect(tid('server-auth-web')!.textContent).toContain('Waiting for the browser…');
    expect(tid('server-signin-cancel-web')).not.toBeNull();

    be.on('auth_status', () => [login()]);
    await act(async () => answer.resolve(login()));
    await settle();
    const signed = tid('server-auth-web')!;
    expect(signed.dataset.state).toBe('signed-in');
    expect(signed.textContent).toContain('Signed in as ada@example.com');
    expect(signed.textContent).toContain('expires in 54 min');
    expect(tid('status')!.textContent).toContain('signed in to web as ada@example.com');
    // The failed test ran again by itself: its tools and the era it spoke.
    expect(tests).toBe(2);
    expect(tid('server-test-result-web')!.textContent).toContain('greet');
    expect(tid('server-era-web')!.dataset.era).toBe('2026-07-28');
    expect(tid('server-era-web')!.title).toContain('no session');
    expect(tid('server-signin-web')).toBeNull();

    // Escape closes the ⋯ menu, not the panel it sits in.
    await click(tid('server-auth-menu-web'));
    expect(tid('server-auth-menu-web-list')).not.toBeNull();
    await act(async () => {
      tid('server-auth-menu-web')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    await settle();
    expect(tid('server-auth-menu-web-list')).toBeNull();
    expect(tid('servers-panel')).not.toBeNull();
    await click(tid('server-auth-menu-web'));
    be.on('auth_status', () => [notSignedIn()]);
    await click(tid('server-signout-web'));
    expect(be.calls('auth_logout')).toEqual([{ server: 'web' }]);
    expect(statusStore.getState().message).toMatch(/removed from this machine and the server revoked its tokens/);
    expect(tid('server-auth-web')).toBeNull();
    expect(tid('server-test-result-web')).toBeNull();
    expect(tid('server-signin-web')).not.toBeNull();
  });

  it('Cancel stops waiting at once and asks the backend to stop; a late answer changes nothing', async () => {
    be.on('auth_status', () => [notSignedIn()]);
    const answer = deferred<unknown>();
    be.on('auth_login', () => answer.promise);
    be.on('auth_cancel', () => true);
    await openPanel();
    await click(tid('server-signin-web'));
    expect(tid('server-auth-web')!.dataset.state).toBe('waiting');
    await click(tid('server-signin-cancel-web'));
    expect(be.calls('auth_cancel')).toEqual([{ server: 'web' }]);
    expect(tid('server-auth-web')).toBeNull();
    expect(tid('server-signin-web')).not.toBeNull();
    await act(async () => answer.resolve(login()));
    await settle();
    expect(tid('server-auth-web')).toBeNull();
    expect(serversStore.getState().logins.web?.signed_in).toBe(false);
  });

  it('a sign-in that timed out says what to do without a command-line flag, and Sign in tries again', async () => {
    be.on('auth_status', () => [notSignedIn()]);
    be.on('auth_login', () => {
      throw commandError(
        'AUTH_TIMEOUT',
        'signing in to server `web` was not completed within 300 s (no answer reached the loopback redirect); run the sign-in again and finish it in the browser, or allow more time with `--timeout`',
      );
    });
    await openPanel();
    await click(tid('server-signin-web'));
    const line = tid('server-auth-web')!;
    expect(line.dataset.state).toBe('error');
    expect(line.dataset.code).toBe('AUTH_TIMEOUT');
    expect(line.textContent).toContain('not finished in the browser within 5 minutes');
    expect(line.textContent).toContain('Press Sign in to try again');
    expect(line.textContent).not.toContain('--timeout');
    be.on('auth_login', () => login({ account: null, expires_at_ms: Date.now() + 125 * 60_000 }));
    await click(tid('server-signin-web'));
    expect(be.calls('auth_login')).toHaveLength(2);
    expect(tid('server-auth-web')!.dataset.state).toBe('signed-in');
    expect(tid('server-auth-web')!.textContent).toMatch(/^Signed in · expires in 2 h 5 min/);
  });

  it('shows the era each listed server spoke: the handshake era from the palette listing', async () => {
    be.on('server_offers', () => [{ server: 'web', protocol_version: '2025-11-25', tools: [], resources: [], prompts: [], error: null }]);
    await openPanel();
    await settle();
    const era = tid('server-era-web')!;
    expect(era.textContent).toBe('MCP 2025-11-25');
    expect(era.title).toContain('initialize handshake');
  });

  it('no quiet Sign in for a server that sends its own Authorization header', async () => {
    const headers = { ...web, name: 'keyed', config: { url: URL, headers: { authorization: 'Bearer ${env:KEY}' } } };
    be.on('list_servers', () => [web, headers]);
    await openPanel();
    expect(tid('server-signin-web')).not.toBeNull();
    expect(tid('server-row-keyed')).not.toBeNull();
    expect(tid('server-signin-keyed')).toBeNull();
  });

  it('a login that expired and cannot be refreshed asks to sign in again', async () => {
    be.on('auth_status', () => [login({ expires_at_ms: Date.now() - 1000, refreshable: false })]);
    await openPanel();
    expect(tid('server-auth-web')!.dataset.state).toBe('needed');
    expect(tid('server-auth-web')!.textContent).toContain('the sign-in expired');
  });
});

describe('the palette', () => {
  it('a server whose listing needs a login offers Sign in, and lists its tools once signed in', async () => {
    let signedIn = false;
    be.on('server_offers', () => [
      signedIn
        ? { server: 'web', protocol_version: '2026-07-28', tools: [{ server: 'web', name: 'greet', description: null, input_schema: { type: 'object' } }], resources: [], prompts: [], error: null }
        : { server: 'web', protocol_version: null, tools: [], resources: [], prompts: [], error: commandError('AUTH_REQUIRED', NEEDS) },
    ]);
    be.on('auth_login', () => {
      signedIn = true;
      return login();
    });
    await act(async () => root.render(<Studio validate={false} />));
    await settle();
    expect(tid('palette-error-web')!.textContent).toContain('Needs a sign-in');
    expect(tid('palette-error-web')!.textContent).not.toContain('mcpflow auth login');
    await click(tid('palette-signin-web'));
    expect(be.calls('auth_login')).toEqual([{ server: 'web', doc: null }]);
    expect(be.calls('server_offers')).toHaveLength(2);
    expect(tid('palette-error-web')).toBeNull();
    expect(tid('palette-item-web-greet')).not.toBeNull();
  });
});

describe('a run that needs a login', () => {
  it('shows "Sign in to web" under the AUTH_REQUIRED error, which signs in like the panel', async () => {
    const error = { code: 'AUTH_REQUIRED', message: NEEDS };
    const events = [
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r1', blueprint: 'greets', inputs: {} },
      { seq: 2, at_ms: 0, type: 'StepStarted', step: 'hello', path: [], attempt: 1, args: { name: 'Ada' } },
      { seq: 3, at_ms: 3, type: 'StepFinished', step: 'hello', path: [], status: 'failed', error, attempts: 1, duration_ms: 3 },
      {
        seq: 4,
        at_ms: 3,
        type: 'RunFinished',
        envelope: {
          run_id: 'r1',
          blueprint: 'greets',
          status: 'failed',
          output: null,
          summary: { steps: 1, succeeded: 0, failed: 1, skipped: 0, tool_calls: 0 },
          errors: [{ step: 'hello', path: [], ...error }],
          duration_ms: 3,
        },
      },
    ] as unknown as RunEvent[];
    const info = { id: 'r1', blueprint: 'greets', status: 'failed', trigger: 'studio', started_at: '2026-11-25T04:00:00Z', finished_at: null, duration_ms: 3, blueprint_rev: null, rerun_of: null };
    be.on('list_runs', () => [info]);
    be.on('get_run', () => ({ info, inputs: {}, events, envelope: null }));
    const answer = deferred<unknown>();
    be.on('auth_login', () => answer.promise);
    await act(async () => root.render(<Studio validate={false} />));
    await settle();
    await click(tid('tab-history'));
    await click(tid('history-row'));
    await click(tid('tab-run'));

    expect(tid('run-result')!.textContent).toContain('AUTH_REQUIRED');
    expect(tid('run-signin-state-web')!.dataset.state).toBe('needed');
    expect(tid('run-signin-web')!.textContent).toBe('Sign in to web');
    await click(tid('run-signin-web'));
    // The document goes along: a server it declares itself is found by the sign-in.
    expect(be.calls('auth_login')).toEqual([{ server: 'web', doc: expect.objectContaining({ id: 'greets' }) }]);
    expect(tid('run-signin-state-web')!.dataset.state).toBe('waiting');
    expect(tid('run-signin-state-web')!.textContent).toContain('Waiting for the browser…');
    await act(async () => answer.resolve(login()));
    await settle();
    expect(tid('run-signin-state-web')!.dataset.state).toBe('signed-in');
    expect(tid('run-signin-state-web')!.textContent).toContain('Signed in to web.');

    // The step's own error in the inspector offers the same.
    await act(async () => docStore.getState().select(['hello']));
    await settle();
    expect(q('[data-testid="step-run-error"] [data-testid="run-signin-state-web"]')?.dataset.state).toBe('signed-in');
    // Run again starts the blueprint (the login is the backend's; nothing to pass).
    await click(tid('run-again'));
    expect(be.calls('start_run')).toHaveLength(1);
  });
});

describe('what the sign-in says', () => {
  it('reads the reason and the server out of AUTH_REQUIRED, without the advice', () => {
    expect(authReason(NEEDS)).toBe('it answered 401 and no login is stored');
    expect(authServer(NEEDS)).toBe('web');
    expect(authReason('server `x` needs a sign-in with scope `repo`: the token lacks it; sign in again')).toBe('the token lacks it');
    expect(authServer('something else')).toBeNull();
  });

  it('says how long a login lasts', () => {
    const now = 1_000_000;
    expect(expiryText(null, true, now)).toBeNull();
    expect(expiryText(now + 30_000, false, now)).toBe('expires in under a minute');
    expect(expiryText(now + 54 * 60_000, false, now)).toBe('expires in 54 min');
    expect(expiryText(now + 120 * 60_000, false, now)).toBe('expires in 2 h');
    expect(expiryText(now + 72 * 3_600_000, false, now)).toBe('expires in 3 days');
    expect(expiryText(now - 1, true, now)).toBe('renewed on next use');
    expect(expiryText(now - 1, false, now)).toBe('expired');
  });
});

describe('signing out says whether the server was told', () => {
  it('words each answer of the authorization server', () => {
    expect(signedOut('web', { revocation: 'revoked', reason: null })).toMatch(/server revoked its tokens/);
    expect(signedOut('web', { revocation: 'not_offered', reason: null })).toMatch(/offers no way to revoke tokens, so they stay valid there until they expire/);
    const failed = signedOut('web', { revocation: 'failed', reason: 'cannot reach http://as/revoke' });
    expect(failed).toMatch(/removed from this machine, but the server could not be told \(cannot reach http:\/\/as\/revoke\)/);
    expect(failed).toMatch(/remove mcpflow's access in your account settings/);
    expect(signedOut('web', { revocation: 'no_login', reason: null })).toMatch(/held no sign-in/);
  });
});
