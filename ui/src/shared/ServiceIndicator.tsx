//! A quiet dot and a word at the top of the toasts over the canvas: how the studio
//! reaches its data folder (`serviceStore`). Green "service" when it speaks to the `mcpflow
//! service` (the pid on hover), green "team" when it is a team's service (`MCPFLOW_SERVICE`:
//! its address on hover), amber "reconnecting…" while the connection is lost, grey
//! "in this window" when the studio holds the store itself (no service). Its box has a fixed size, so
//! nothing moves when its text changes. Test hook: `service-status` (`data-state`).

import { memo } from 'react';
import { inTauri, useService, type ServiceStatus } from '../backend';

interface Shown {
  state: ServiceStatus['state'] | 'unknown' | 'none';
  text: string;
  title: string;
}

const SHARED = 'shared with your MCP hosts and the CLI';

/** What the indicator shows for a status (`null`: not known yet, `problem` says why when it is known). */
export function serviceShown(status: ServiceStatus | null, problem: string | null, desktop = inTauri()): Shown {
  if (!desktop) return { state: 'none', text: 'no backend', title: 'browser preview: no desktop backend, so no mcpflow service' };
  if (status === null) return { state: 'unknown', text: 'service', title: problem ?? 'asking the backend how it reaches the data folder…' };
  const said = status.message ? `\n${status.message}` : '';
  switch (status.state) {
    case 'connected':
      if (status.team)
        return {
          state: 'connected',
          text: 'team',
          title: `the team's mcpflow service at ${status.team}${status.pid === null ? '' : `, pid ${status.pid}`} — the team's store and workers${said}`,
        };
      return { state: 'connected', text: 'service', title: `mcpflow service${status.pid === null ? '' : `, pid ${status.pid}`} — ${SHARED}${said}` };
    case 'reconnecting':
      return {
        state: 'reconnecting',
        text: 'reconnecting…',
        title: `reconnecting to the ${status.team ? `team's mcpflow service at ${status.team}` : 'mcpflow service'}: runs can start once it is back${said}`,
      };
    case 'in_process':
      return {
        state: 'in_process',
        text: 'in this window',
        title: `no mcpflow service: this window holds the data folder itself and answers the CLI and your MCP hosts until it closes${said}`,
      };
  }
}

export const ServiceIndicator = memo(function ServiceIndicator() {
  const status = useService((s) => s.status);
  const problem = useService((s) => s.problem);
  const shown = serviceShown(status, problem);
  return (
    <div className={`service-status service-${shown.state}`} data-testid="service-status" data-state={shown.state} title={shown.title}>
      <span className="service-dot" aria-hidden="true" />
      <span className="service-text">{shown.text}</span>
    </div>
  );
});
