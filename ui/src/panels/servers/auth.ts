//! Signing in to OAuth servers: the login each HTTP server holds, the browser sign-in
//! (Sign in → "Waiting for the browser…" → signed in, or an error saying what to do),
//! Cancel, Sign out, and which servers are known to need a sign-in (a test, the
//! palette's listing or a run failed with `AUTH_REQUIRED`). Shared by the Servers panel
//! and the run's error ("Sign in to NAME").

import { backend, BackendError, errorMessage, inTauri, report, toBackendError, type SignedOut } from '../../backend';
import type { Blueprint } from '../../doc/types';
import { AUTH_REQUIRED } from './authtext';
import { refreshOffers, serversStore, testServer, type AuthSlice } from './store';

const AUTH_CANCELLED = 'AUTH_CANCELLED';

// Only the latest of each is applied: a slow answer must not overwrite a newer one, and
// a sign-in cancelled in the UI is forgotten even if the backend answers later.
let statusSeq = 0;
const loginSeq: Record<string, number> = {};

const patchRecord = <K extends 'logins' | 'signIns' | 'authNeeded'>(key: K, name: string, value: AuthSlice[K][string] | undefined) =>
  serversStore.setState((s) => {
    const next = { ...s[key] } as Record<string, unknown>;
    if (value === undefined) delete next[name];
    else next[name] = value;
    return { [key]: next } as Partial<AuthSlice>;
  });

/** Reloads every HTTP server's login. */
export async function refreshLogins(): Promise<void> {
  if (!inTauri()) return;
  const mine = ++statusSeq;
  try {
    const list = await backend.authStatus();
    if (mine !== statusSeq) return;
    serversStore.setState({ logins: Object.fromEntries(list.map((l) => [l.server, l])), loginsError: null });
  } catch (e) {
    if (mine === statusSeq) serversStore.setState({ loginsError: `could not read the sign-ins: ${errorMessage(e)}` });
  }
}

/**
 * Signs in through the system browser: shows "Waiting for the browser…" until the
 * redirect comes back, then the login (and tests the server again when a test had
 * failed for want of it). True when signed in. `doc`: the document whose run needs the
 * sign-in, so a server it declares itself is found too.
 */
export async function signIn(name: string, doc?: Blueprint): Promise<boolean> {
  if (!inTauri()) return false;
  const mine = (loginSeq[name] = (loginSeq[name] ?? 0) + 1);
  patchRecord('signIns', name, { state: 'waiting' });
  try {
    const login = await backend.authLogin(name, doc);
    if (loginSeq[name] !== mine) return false;
    patchRecord('logins', name, login);
    patchRecord('signIns', name, undefined);
    patchRecord('authNeeded', name, undefined);
    report('success', `signed in to ${name}${login.account ? ` as ${login.account}` : ''}`);
    const test = serversStore.getState().tests[name];
    if (test?.state === 'error' && test.code === AUTH_REQUIRED) void testServer(name);
    // The palette lists what the server offers now that it lets us in.
    if (serversStore.getState().offers.some((o) => o.server === name && o.error?.code === AUTH_REQUIRED)) void refreshOffers();
    return true;
  } catch (e) {
    if (loginSeq[name] !== mine) return false;
    const err = toBackendError(e);
    patchRecord('signIns', name, err.code === AUTH_CANCELLED ? undefined : { state: 'error', code: err.code, message: signInError(name, err) });
    return false;
  }
}

/** Stops waiting for the browser (the backend closes its redirect listener). */
export async function cancelSignIn(name: string): Promise<void> {
  loginSeq[name] = (loginSeq[name] ?? 0) + 1;
  patchRecord('signIns', name, undefined);
  try {
    await backend.authCancel(name);
  } catch {
    // Nothing was waiting any more: the UI has stopped waiting either way.
  }
}

export async function signOut(name: string): Promise<void> {
  try {
    const out = await backend.authLogout(name);
    report(out.revocation === 'failed' ? 'warning' : 'info', signedOut(name, out));
    // What the last test found was reached with the login: no longer true.
    serversStore.setState((s) => {
      const tests = { ...s.tests };
      delete tests[name];
      return { tests };
    });
  } catch (e) {
    report('error', `could not sign out of ${name}: ${errorMessage(e)}`);
  }
  await refreshLogins();
}

/** What Sign out did: removed here, and whether the authorization server was told. */
export function signedOut(name: string, out: SignedOut): string {
  switch (out.revocation) {
    case 'revoked':
      return `Signed out of ${name}: the login is removed from this machine and the server revoked its tokens.`;
    case 'not_offered':
      return `Signed out of ${name}: the login is removed from this machine. The server offers no way to revoke tokens, so they stay valid there until they expire.`;
    case 'failed':
      return `Signed out of ${name}: the login is removed from this machine, but the server could not be told (${out.reason ?? 'no answer'}), so its tokens stay valid there until they expire. To end them now, remove mcpflow's access in your account settings at the provider.`;
    default:
      return `${name} held no sign-in on this machine.`;
  }
}

/** What a failed sign-in says in the panel: what went wrong and what to do, no flags. */
function signInError(name: string, e: BackendError): string {
  switch (e.code) {
    case 'AUTH_TIMEOUT':
      return `The sign-in to ${name} was not finished in the browser within 5 minutes. Press Sign in to try again and complete it in the browser window that opens.`;
    case 'AUTH_VAULT':
      return `The sign-in worked but could not be stored: ${e.message}. Check that the data folder is writable, then sign in again.`;
    case 'AUTH_FAILED':
      return `${capital(e.message)}. Check the server's URL (Edit) and press Sign in to try again.`;
    default:
      return `${capital(e.message)}${/[.!?]$/.test(e.message) ? '' : '.'}`;
  }
}

const capital = (t: string) => (t ? `${t[0]!.toUpperCase()}${t.slice(1)}` : t);

