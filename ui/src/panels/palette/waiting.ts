//! Servers waiting for approval. Those never listed are gathered in the palette's one
//! grouped entry ("3 servers waiting for approval": not listed yet, approve to see their
//! tools); those listed before show their last listing in a section of their own, as any
//! server, marked as awaiting approval. Pure, for tests.

import type { ServerInfo, ServerOffer } from '../../backend';
import { matches } from './templates';

export interface Waiting {
  server: string;
  /** The exact command line (or URL and variable names) approval is for. */
  command: string;
}

/** Whether an offer could not be listed because its server is not approved. */
export const isWaiting = (offer: ServerOffer): boolean => offer.error?.code === 'SERVER_NOT_APPROVED';

/** Whether an offer is the server's last listing, remembered (the server was not started now). */
export const isRemembered = (offer: ServerOffer): boolean => typeof offer.listed_at === 'string';

/** Whether an offer goes to the grouped entry: waiting for approval and never listed. */
export const isUnlisted = (offer: ServerOffer): boolean => isWaiting(offer) && !isRemembered(offer);

/**
 * The servers whose offer is refused for want of approval and that were never listed
 * (those listed before show their last listing instead), in palette order, with the
 * command each would start (the servers list's, or the refusal's text). With a search,
 * only those whose name or command matches it.
 */
export function waitingServers(offers: readonly ServerOffer[], servers: readonly ServerInfo[], query = ''): Waiting[] {
  const byName = new Map(servers.map((s) => [s.name, s]));
  const out: Waiting[] = [];
  for (const offer of offers) {
    if (!isUnlisted(offer)) continue;
    const command = byName.get(offer.server)?.command ?? offer.error?.message ?? '';
    if (query && !matches(query, offer.server, command)) continue;
    out.push({ server: offer.server, command });
  }
  return out;
}

/**
 * A command line for one narrow line: each absolute path longer than its last three
 * segments becomes `…/a/b/file` (`/home/me/repo/target/debug/mcpflow-testkit echo` →
 * `…/target/debug/mcpflow-testkit echo`). The whole command stays in the tooltip.
 */
export function shortCommand(command: string): string {
  return command.replace(/(^|[\s'"=])(\/[^\s'"]+)/g, (_all, lead: string, path: string) => {
    const parts = path.split('/').filter(Boolean);
    return parts.length > 3 ? `${lead}…/${parts.slice(-3).join('/')}` : `${lead}${path}`;
  });
}

/** "1 server waiting for approval", "3 servers waiting for approval". */
export const waitingTitle = (n: number): string => `${n} server${n === 1 ? '' : 's'} waiting for approval`;
