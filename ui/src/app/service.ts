//! The studio's connection to the `mcpflow service` that owns the data folder: asked once
//! at start (`service_status`), then followed through the backend's `service-status` event
//! (`events.serviceStatus`), into `serviceStore`.
//!
//! When the connection is lost (the service stopped, crashed or restarted), the status
//! line says what happened once, with the backend's words. When the studio speaks to a
//! service again — or to another one, or holds the store itself — it says so and reads
//! again what may have changed meanwhile, as for changes it missed (`onStoreChanged`
//! with `missed`: the blueprints, the open one against the store, servers, History).

import { events } from '../bindings';
import { backend, errorMessage, inTauri, report, serviceStore, type ServiceStatus } from '../backend';
import { onStoreChanged } from './live';

/** Counts the statuses taken, so an answer to the first question older than an event is dropped. */
let taken = 0;

const pidText = (s: ServiceStatus) => (s.pid === null ? '' : ` (pid ${s.pid})`);

/** What to say when the studio reaches the data folder again, another way or the same. */
function backText(before: ServiceStatus, now: ServiceStatus): string {
  if (now.state === 'in_process') return now.message ?? 'the studio holds the data folder itself now (no mcpflow service)';
  return `${before.state === 'in_process' ? 'connected' : 'reconnected'} to the mcpflow service${pidText(now)}`;
}

/** Takes a status the backend sent (or answered): the indicator follows, and the user is told of a change. */
export function serviceStatusChanged(now: ServiceStatus): void {
  taken++;
  const before = serviceStore.getState().status;
  serviceStore.setState({ status: now, problem: null });
  if (now.state === 'reconnecting') {
    // Once per loss: the backend may send more while it retries.
    if (before?.state !== 'reconnecting') report('warning', now.message ?? 'lost the connection to the mcpflow service: reconnecting…');
    return;
  }
  // The first status, or the same process as before: nothing happened meanwhile.
  if (before === null || (before.state === now.state && before.pid === now.pid)) return;
  report(now.state === 'connected' ? 'success' : 'info', backText(before, now));
  onStoreChanged({ what: 'missed' });
}

/**
 * Follows the connection for as long as the window lives (desktop only): listens first,
 * then asks, so no change falls between the two. Resolves to what stops listening.
 */
export async function followService(): Promise<() => void> {
  if (!inTauri()) return () => {};
  let stop = () => {};
  try {
    stop = await events.serviceStatus.listen((e) => serviceStatusChanged(e.payload));
  } catch (e) {
    report('warning', `the studio will not show when the mcpflow service stops or comes back: ${errorMessage(e)}`);
  }
  const before = taken;
  try {
    const status = await backend.serviceStatus();
    if (taken === before) serviceStatusChanged(status);
  } catch (e) {
    if (taken === before) serviceStore.setState({ problem: `the backend did not say how it reaches the data folder: ${errorMessage(e)}` });
  }
  return stop;
}
