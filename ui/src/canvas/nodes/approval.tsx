//! A step whose server awaits approval says so on its card with an Approve… button that
//! opens the consent prompt with the exact command (the Servers panel's): nothing starts
//! without that prompt's Approve. Unselected, the card says it in one quiet line;
//! selected, it shows the command it would start (the whole of it on hover) and Approve…. n8n asks for a node's credentials on the node; this
//! is the same place. Test hooks: `node-awaiting-<id>`, `node-server-approve-<id>`.

import { memo } from 'react';
import { needsConsent, requestConsent, useServers } from '../../panels/servers/store';
import { shortCommand } from '../../panels/palette/waiting';

export const ServerApproval = memo(function ServerApproval({ id, server, selected }: { id: string; server: string; selected: boolean }) {
  const info = useServers((s) => s.servers.find((x) => x.name === server));
  if (!needsConsent(info)) return null;
  const stop = (e: { stopPropagation(): void }) => e.stopPropagation();
  const what = (
    <span className="server-approval-text" title={`${server} starts: ${info.command}`}>
      <span className="server-approval-what">⚠ awaits approval</span>
      {selected ? <code className="server-approval-command">starts {shortCommand(info.command)}</code> : null}
    </span>
  );
  // Unselected, one quiet line (a blueprint of many steps on a server not approved yet,
  // as the demo opens, would otherwise be a wall of boxes); selected, the command and
  // Approve….
  if (!selected) {
    return (
      <div className="server-approval server-approval-quiet" data-testid={`node-awaiting-${id}`}>
        {what}
      </div>
    );
  }
  return (
    <div className="server-approval nodrag nopan" data-testid={`node-awaiting-${id}`} onDoubleClick={stop} onPointerDown={stop}>
      {what}
      <button
        type="button"
        data-testid={`node-server-approve-${id}`}
        title={`Review what ${server} starts, and approve it`}
        onClick={(e) => {
          e.stopPropagation();
          void requestConsent(server);
        }}
      >
        Approve…
      </button>
    </div>
  );
});
