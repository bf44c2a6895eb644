//! The consent prompt: before a stdio server starts for the first time, the user sees
//! the exact command line it runs and approves it (or not); before a blueprint's HTTP
//! server that needs consent is reached, its URL and the names of the variables it
//! would be sent. Cancel changes nothing.

import { memo } from 'react';
import { Modal } from '../files/Modal';
import { approveConsent, cancelConsent, useServers } from './store';

export const ConsentDialog = memo(function ConsentDialog() {
  const consent = useServers((s) => s.consent);
  if (!consent) return null;
  // An HTTP server a blueprint declares: the backend describes it as `URL … (sends: NAME, …)`.
  const endpoint = consent.command.startsWith('URL ');
  const sends = endpoint && consent.command.includes('(sends: ');
  return (
    <Modal
      title={endpoint ? `Allow this blueprint to reach “${consent.server}”?` : `Allow “${consent.server}” to run on this machine?`}
      role="alertdialog"
      testId="consent-dialog"
      className="consent-dialog"
      onClose={cancelConsent}
      footer={
        <>
          <button type="button" data-testid="consent-cancel" onClick={cancelConsent}>
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            data-testid="consent-approve"
            disabled={consent.busy}
            onClick={() => void approveConsent()}
          >
            {consent.busy ? 'Approving…' : consent.then === 'test' ? 'Approve and test' : 'Approve'}
          </button>
        </>
      }
    >
      {endpoint ? (
        <p>
          The blueprint declares the MCP server <strong>{consent.server}</strong> at this address.{' '}
          {sends
            ? 'mcpflow would connect to it and send it the values of the environment variables named after “sends”:'
            : 'It is not on this computer: mcpflow would connect to it and send it what the blueprint’s steps pass on:'}
        </p>
      ) : (
        <p>
          The MCP server <strong>{consent.server}</strong> is started by running this command on this computer, with your
          user’s permissions (files, network, credentials):
        </p>
      )}
      <pre className="consent-command" data-testid="consent-command">
        {consent.command}
      </pre>
      {consent.changed ? (
        <p className="inline-warning" role="alert" data-testid="consent-changed">
          The configured command changed since this prompt opened. This is the command now: check it again.
        </p>
      ) : null}
      <p className="muted">
        {endpoint
          ? 'Approve only addresses you trust with those values. Approval is for this URL, its header names and these variables: if they change, the studio asks again. The values are not shown.'
          : 'Approve only commands you trust. Approval is for this exact command line: if it changes, the studio asks again. The environment variables it gets are named in parentheses; their values are not shown.'}
      </p>
      {consent.error ? (
        <p className="inline-error" role="alert" data-testid="consent-error">
          {consent.error}
        </p>
      ) : null}
    </Modal>
  );
});
