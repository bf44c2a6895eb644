//! Which configured servers the open blueprint also declares under the same name: the
//! backend's `SERVER_SHADOWED` warnings (the configured server is the one used), turned
//! into a notice per server for the Servers panel. Pure, for tests.

import type { Diagnostic } from '../../doc/types';

export const SHADOWED = 'SERVER_SHADOWED';

/** The server each `SERVER_SHADOWED` warning is about, once each, in order. */
export function shadowedServers(diagnostics: readonly Diagnostic[]): string[] {
  const names: string[] = [];
  for (const d of diagnostics) {
    if (d.code !== SHADOWED) continue;
    const name = serverOf(d);
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

/** `/servers/NAME` (no step uses it) or the name in "calls server `NAME`". */
function serverOf(d: Diagnostic): string | null {
  const m = /^\/servers\/([^/]+)$/.exec(d.pointer);
  if (m?.[1]) return m[1].replace(/~1/g, '/').replace(/~0/g, '~');
  return /server `([^`]+)`/.exec(d.message)?.[1] ?? null;
}
