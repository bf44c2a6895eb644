//! The sign-in parts of the Servers panel and of a run's error: an HTTP server's auth
//! line ("Signed in as … · expires in 54 min" with Sign out in its ⋯ menu, "Waiting for
//! the browser…" with Cancel, "Needs a sign-in" with Sign in, a failed sign-in with what
//! to do), the protocol era badge, and "Sign in to NAME" for a run that failed with
//! `AUTH_REQUIRED`.
//!
//! Test hooks: `server-auth-NAME` (`data-state`: `signed-in`, `waiting`, `needed`,
//! `error`), `server-signin-NAME`, `server-signin-cancel-NAME`, `server-auth-menu-NAME`,
//! `server-signout-NAME`, `server-era-NAME` (`data-era`), `run-signin-NAME`,
//! `run-signin-state-NAME` (`data-state`), `run-signin-cancel-NAME`; the palette's the
//! same with `palette-signin`.

import { useEffect, useState, type ReactNode } from 'react';
import { Menu } from '../../shared/Menu';
import type { AuthStatus } from '../../backend';
import type { Blueprint } from '../../doc/types';
import { cancelSignIn, signIn, signOut } from './auth';
import { expiryText, usable } from './authtext';
import { noteAuthNeeded, serversStore, useServers, type SignIn } from './store';
import './auth.css';

/** The clock, ticking every 30 s while shown (for "expires in …"). */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(t);
  }, []);
  return now;
}

/** "2026-07-28": the stateless revision; anything else was an `initialize` handshake. */
export const STATELESS_ERA = '2026-07-28';

export function EraBadge({ server, protocol }: { server: string; protocol: string | null | undefined }) {
  if (!protocol) return null;
  const stateless = protocol >= STATELESS_ERA;
  return (
    <span
      className={`badge era-badge ${stateless ? 'era-new' : 'era-old'}`}
      data-testid={`server-era-${server}`}
      data-era={protocol}
      title={
        stateless
          ? `Spoke MCP ${protocol}: server/discover, no session, per-request metadata`
          : `Spoke MCP ${protocol}: the initialize handshake and a session (the server does not offer 2026-07-28)`
      }
    >
      MCP {protocol}
    </span>
  );
}

/** Who and until when: "Signed in as ada@example.com · expires in 54 min". */
function signedInText(login: AuthStatus, now: number): { who: string; when: string | null } {
  const who = login.account ? `Signed in as ${login.account}` : login.grant === 'client_credentials' ? 'Signed in (client credentials)' : 'Signed in';
  return { who, when: expiryText(login.expires_at_ms, login.refreshable, now) };
}

/** The auth line of an HTTP server in the Servers panel, or null when there is nothing to say. */
export function ServerAuthLine({ server }: { server: string }) {
  const login = useServers((s) => s.logins[server]);
  const signing = useServers((s) => s.signIns[server]);
  const needed = useServers((s) => s.authNeeded[server]);
  const now = useNow();
  const signedIn = usable(login, now) && needed === undefined;
  if (signing?.state === 'waiting') return <Waiting server={server} testId={`server-signin-cancel-${server}`} />;
  if (signing?.state === 'error') return <Failed server={server} signing={signing} />;
  if (signedIn && login) {
    const { who, when } = signedInText(login, now);
    return (
      <div className="server-auth is-signed-in" data-testid={`server-auth-${server}`} data-state="signed-in">
        <span className="server-auth-text" title={login.scopes.length ? `scopes: ${login.scopes.join(' ')}` : undefined}>
          <span className="auth-dot" aria-hidden="true" />
          {who}
          {when ? <span className="muted"> · {when}</span> : null}
        </span>
        <Menu
          label="⋯"
          title={`Sign-in options for ${server}`}
          testId={`server-auth-menu-${server}`}
          className="server-auth-menu"
          items={[
            { label: 'Sign in again…', testId: `server-signin-again-${server}`, onSelect: () => void signIn(server) },
            { label: 'Sign out', testId: `server-signout-${server}`, onSelect: () => void signOut(server) },
          ]}
        />
      </div>
    );
  }
  if (needed !== undefined || (login?.signed_in && !signedIn)) {
    const why = needed || (login?.signed_in ? 'the sign-in expired and cannot be renewed' : '');
    return (
      <div className="server-auth is-needed" data-testid={`server-auth-${server}`} data-state="needed">
        <span className="server-auth-text">
          <span className="badge badge-warn">needs sign-in</span> This server asks you to sign in{why ? ` (${why})` : ''}. Your browser opens its sign-in page.
        </span>
        <button type="button" className="primary" data-testid={`server-signin-${server}`} onClick={() => void signIn(server)}>
          Sign in
        </button>
      </div>
    );
  }
  return null;
}

/** Whether an `mcpServers` entry sends its own `Authorization` header (which wins over a sign-in). */
export function sendsAuthorization(config: unknown): boolean {
  const headers = (config as { headers?: unknown } | null)?.headers;
  return !!headers && typeof headers === 'object' && Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
}

/**
 * The quiet "Sign in" among an HTTP server's actions when nothing says it needs one yet
 * (not for a server that sends its own `Authorization` header: that one is its login).
 */
export function SignInButton({ server, config }: { server: string; config: unknown }) {
  const login = useServers((s) => s.logins[server]);
  const signing = useServers((s) => s.signIns[server]);
  const needed = useServers((s) => s.authNeeded[server]);
  if (signing || needed !== undefined || login?.signed_in || sendsAuthorization(config)) return null;
  return (
    <button
      type="button"
      data-testid={`server-signin-${server}`}
      title="Sign in with your browser (OAuth), for a server that asks for a login"
      onClick={() => void signIn(server)}
    >
      Sign in
    </button>
  );
}

function Waiting({ server, testId }: { server: string; testId: string }) {
  return (
    <div className="server-auth is-waiting" data-testid={`server-auth-${server}`} data-state="waiting" role="status">
      <span className="server-auth-text">
        <span className="auth-spinner" aria-hidden="true" />
        Waiting for the browser… finish signing in to {server} in the window that opened.
      </span>
      <button type="button" data-testid={testId} onClick={() => void cancelSignIn(server)}>
        Cancel
      </button>
    </div>
  );
}

function Failed({ server, signing }: { server: string; signing: Extract<SignIn, { state: 'error' }> }) {
  return (
    <div className="server-auth is-error" data-testid={`server-auth-${server}`} data-state="error" data-code={signing.code}>
      <p className="inline-error server-auth-text" role="alert">
        <code>{signing.code}</code> {signing.message}
      </p>
      <button type="button" data-testid={`server-signin-${server}`} onClick={() => void signIn(server)}>
        Sign in
      </button>
    </div>
  );
}

/**
 * Under a run error `AUTH_REQUIRED` for `server`: "Sign in to NAME" (the Servers panel's
 * Sign in), then "Waiting for the browser…", then "Signed in: run again".
 */
export function RunSignIn({
  server,
  message,
  testPrefix = 'run-signin',
  after,
  doc,
}: {
  server: string;
  message: string;
  /** The document whose run needs the sign-in: a server it declares itself is found too. */
  doc?: Blueprint;
  /** `run-signin` (a run's error) or `palette-signin` (the palette's listing). */
  testPrefix?: string;
  /** Shown beside "Signed in" (the run's Run again). */
  after?: ReactNode;
}) {
  const login = useServers((s) => s.logins[server]);
  const signing = useServers((s) => s.signIns[server]);
  const needed = useServers((s) => s.authNeeded[server]);
  const now = useNow();
  useEffect(() => {
    // A run failed for want of a login: unless one was made since, the server needs it.
    if (!usable(serversStore.getState().logins[server], Date.now())) noteAuthNeeded(server, message);
  }, [server, message]);
  const state = signing?.state ?? (usable(login, now) && needed === undefined ? 'signed-in' : 'needed');
  return (
    <div className="run-signin" data-testid={`${testPrefix}-state-${server}`} data-state={state}>
      {signing?.state === 'waiting' ? (
        <>
          <span className="auth-spinner" aria-hidden="true" /> Waiting for the browser…{' '}
          <button type="button" data-testid={`${testPrefix}-cancel-${server}`} onClick={() => void cancelSignIn(server)}>
            Cancel
          </button>
        </>
      ) : state === 'signed-in' ? (
        <>
          <span className="inline-ok">Signed in to {server}{after ? '.' : ': run again.'}</span>
          {after}
        </>
      ) : (
        <>
          {signing?.state === 'error' ? (
            <span className="inline-error">
              <code>{signing.code}</code> {signing.message}{' '}
            </span>
          ) : null}
          <button type="button" className="primary" data-testid={`${testPrefix}-${server}`} onClick={() => void signIn(server, doc)}>
            Sign in to {server}
          </button>
        </>
      )}
    </div>
  );
}
