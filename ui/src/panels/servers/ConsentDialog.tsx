//! The consent prompt: before a stdio server starts for the first time, the user sees
//! the exact command line it runs and approves it (or not). Cancel changes nothing.

import { memo } from 'react';
import { Modal } from '../files/Modal';
import { approveConsent, cancelConsent, useServers } from './store';

export const ConsentDialog = memo(function ConsentDialog() {
  const consent = useServers((s) => s.consent);
  if (!consent) return null;
  return (
    <Modal
      title={`Allow “${consent.server}” to run on this machine?`}
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
      <p>
        The MCP server <strong>{consent.server}</strong> is started by running this command on this computer, with your
        user’s permissions (files, network, credentials):
      </p>
      <pre className="consent-command" data-testid="consent-command">
        {consent.command}
      </pre>
      {consent.changed ? (
        <p className="inline-warning" role="alert" data-testid="consent-changed">
          The configured command changed since this prompt opened. This is the command now: check it again.
        </p>
      ) : null}
      <p className="muted">
        Approve only commands you trust. Approval is for this exact command line: if it changes, the studio asks again.
        The environment variables it gets are named in parentheses; their values are not shown.
      </p>
      {consent.error ? (
        <p className="inline-error" role="alert" data-testid="consent-error">
          {consent.error}
        </p>
      ) : null}
    </Modal>
  );
});
