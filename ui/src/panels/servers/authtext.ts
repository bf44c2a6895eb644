//! What the sign-in UI says, as pure functions: the reason and server out of an
//! `AUTH_REQUIRED` message, "expires in 54 min", whether a login is usable.

import type { AuthStatus } from '../../backend';

export const AUTH_REQUIRED = 'AUTH_REQUIRED';

/**
 * The server's reason out of an `AUTH_REQUIRED` message ("server `x` needs a sign-in:
 * REASON; ADVICE"), without the advice (it names the command line, not the button).
 */
export function authReason(message: string): string {
  const m = /needs a sign-in(?: with scope `[^`]*`)?: (.*?)(?:; [^;]*)?$/s.exec(message);
  return (m?.[1] ?? '').trim();
}

/** The server an `AUTH_REQUIRED` message names (`server \`NAME\``), if any. */
export function authServer(message: string): string | null {
  return /server `([^`]+)` needs a sign-in/.exec(message)?.[1] ?? null;
}

/** "expires in 54 min" and the like, from an expiry in ms since the epoch. */
export function expiryText(expiresAtMs: number | null, refreshable: boolean, now: number): string | null {
  if (expiresAtMs === null) return null;
  const left = expiresAtMs - now;
  if (left <= 0) return refreshable ? 'renewed on next use' : 'expired';
  const min = Math.floor(left / 60_000);
  if (min < 1) return 'expires in under a minute';
  if (min < 60) return `expires in ${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `expires in ${h} h${min % 60 ? ` ${min % 60} min` : ''}`;
  return `expires in ${Math.floor(h / 24)} days`;
}

/** Signed in and usable: a login whose token is valid or can be refreshed. */
export const usable = (l: AuthStatus | undefined, now: number): boolean =>
  !!l && l.signed_in && (l.refreshable || l.expires_at_ms === null || l.expires_at_ms > now);
