//! The servers panel (a dialog from the toolbar's Servers button): every configured
//! server with what it starts and whether that is approved; add, edit, remove, import
//! an `mcpServers` file, test a connection (listing the tools and showing the MCP
//! revision it spoke: `2026-07-28` or the handshake era), approve, and for an HTTP server
//! sign in with the browser (OAuth; `ServerAuth.tsx`). Each server has its switch "May
//! ask the model" (`"sampling": true` on its entry, saved at once), and the panel ends with
//! the model that answers them (`SamplingSettings.tsx`), then where runs' traces go
//! (OpenTelemetry, `TelemetrySettings.tsx`). A server the
//! open blueprint also declares under the same name says so: the configured one is used
//! (`SERVER_SHADOWED`).

import { memo, useEffect, useId, useMemo, useState } from 'react';
import { useStore } from 'zustand';
import { docStore } from '../../doc/store';
import type { ServerInfo } from '../../backend';
import { ask } from '../files/ask';
import { Modal } from '../files/Modal';
import { refreshLogins } from './auth';
import { AUTH_REQUIRED } from './authtext';
import { EraBadge, ServerAuthLine, SignInButton } from './ServerAuth';
import { ServerEditor } from './ServerEditor';
import { SamplingSettingsSection } from './SamplingSettings';
import { TelemetrySettingsSection } from './TelemetrySettings';
import { shadowedServers } from './shadowed';
import './servers.css';
import {
  closeServersPanel,
  deleteServer,
  importServersFile,
  refreshSampling,
  refreshTelemetry,
  refreshServers,
  requestConsent,
  setServerSampling,
  testOrAsk,
  useServers,
  type TestState,
} from './store';

export const ServersPanel = memo(function ServersPanel() {
  const open = useServers((s) => s.panelOpen);
  return open ? <ServersPanelBody /> : null;
});

type Editing = { mode: 'add' } | { mode: 'edit'; server: ServerInfo } | null;

function ServersPanelBody() {
  const servers = useServers((s) => s.servers);
  const loaded = useServers((s) => s.serversLoaded);
  const error = useServers((s) => s.serversError);
  const [editing, setEditing] = useState<Editing>(null);
  const diagnostics = useStore(docStore, (s) => s.diagnostics);
  const shadowed = useMemo(() => new Set(shadowedServers(diagnostics)), [diagnostics]);
  const loginsError = useServers((s) => s.loginsError);
  useEffect(() => {
    void refreshServers();
    void refreshLogins();
    void refreshSampling();
    void refreshTelemetry();
  }, []);

  return (
    <Modal
      title="Servers"
      onClose={closeServersPanel}
      testId="servers-panel"
      className="servers-panel"
      footer={
        <>
          <button type="button" data-testid="servers-import" onClick={() => void importServersFile()}>
            Import mcpServers file…
          </button>
          <button type="button" className="primary" data-testid="server-add" onClick={() => setEditing({ mode: 'add' })}>
            Add server
          </button>
        </>
      }
    >
      {editing ? (
        <ServerEditor
          key={editing.mode === 'edit' ? editing.server.name : '+'}
          server={editing.mode === 'edit' ? editing.server : undefined}
          onDone={() => setEditing(null)}
        />
      ) : null}
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
      {loginsError ? (
        <p className="inline-error" role="alert">
          {loginsError}
        </p>
      ) : null}
      {loaded && servers.length === 0 && !error ? (
        <p className="muted">No server is configured. Add one, or import a Claude Desktop / Cursor mcpServers file.</p>
      ) : null}
      <ul className="server-rows">
        {servers.map((s) => (
          <ServerRow key={s.name} server={s} onEdit={setEditing} shadowed={shadowed.has(s.name)} />
        ))}
      </ul>
      <SamplingSettingsSection />
      <TelemetrySettingsSection />
    </Modal>
  );
}

const ServerRow = memo(function ServerRow({
  server,
  onEdit,
  shadowed,
}: {
  server: ServerInfo;
  onEdit: (e: Editing) => void;
  shadowed: boolean;
}) {
  const test = useServers((s) => s.tests[server.name]);
  const offered = useServers((s) => s.offers.find((o) => o.server === server.name)?.protocol_version);
  const protocol = test?.state === 'ok' ? test.protocol : test?.state === 'error' ? null : offered;
  const http = server.transport === 'http';
  const editable = server.transport !== 'in-process' && server.config !== null;
  const remove = async () => {
    const ok = await ask({
      title: `Remove ${server.name}?`,
      message: `Steps that use “${server.name}” stop working until a server with that name is configured again.`,
      confirm: 'Remove',
      danger: true,
    });
    if (ok) await deleteServer(server.name);
  };
  return (
    <li className="server-row" data-testid={`server-row-${server.name}`}>
      <div className="server-line">
        <strong className="server-name">{server.name}</strong>
        <span className="badge">{server.transport}</span>
        <EraBadge server={server.name} protocol={protocol} />
        {server.approved ? (
          <span className="badge badge-ok" data-testid={`server-approved-${server.name}`}>
            {server.command ? 'approved' : 'no approval needed'}
          </span>
        ) : (
          <span className="badge badge-warn" data-testid={`server-unapproved-${server.name}`}>
            needs approval
          </span>
        )}
        <span className="server-actions">
          <button type="button" data-testid={`server-test-${server.name}`} onClick={() => void testOrAsk(server.name)} disabled={test?.state === 'running'}>
            {test?.state === 'running' ? 'Testing…' : 'Test'}
          </button>
          {http ? <SignInButton server={server.name} config={server.config} /> : null}
          {!server.approved && server.command ? (
            <button type="button" data-testid={`server-approve-${server.name}`} onClick={() => void requestConsent(server.name)}>
              Approve…
            </button>
          ) : null}
          {editable ? (
            <button type="button" data-testid={`server-edit-${server.name}`} onClick={() => onEdit({ mode: 'edit', server })}>
              Edit
            </button>
          ) : null}
          <button type="button" className="danger-text" data-testid={`server-remove-${server.name}`} onClick={() => void remove()}>
            Remove
          </button>
        </span>
      </div>
      <code className="server-target">{server.command ?? server.url ?? '(built in)'}</code>
      {editable ? <SamplingSwitch server={server} /> : null}
      {shadowed ? (
        <p className="server-shadowed" data-testid={`server-shadowed-${server.name}`}>
          The open blueprint declares its own “{server.name}”. This configured one is used; its steps show why.
        </p>
      ) : null}
      {http ? <ServerAuthLine server={server.name} /> : null}
      {test ? <TestResult name={server.name} test={test} /> : null}
    </li>
  );
});

/**
 * The server's switch "May ask the model" (`"sampling": true` on its entry), saved as
 * soon as it is flipped. Off by default: a request of a server without it is refused.
 */
function SamplingSwitch({ server }: { server: ServerInfo }) {
  const busy = useServers((s) => !!s.switchBusy[server.name]);
  const error = useServers((s) => s.switchErrors[server.name]);
  const hint = useId();
  return (
    <>
      <div className="server-sampling">
        <label className="switch-label">
          <input
            type="checkbox"
            role="switch"
            className="switch"
            checked={server.sampling}
            disabled={busy}
            aria-describedby={hint}
            data-testid={`server-sampling-${server.name}`}
            onChange={(e) => void setServerSampling(server.name, e.target.checked)}
          />
          <span className="switch-name">May ask the model</span>
        </label>
        <span id={hint} className="muted switch-hint">
          lets this server ask your configured model (or you) for completions during runs
        </span>
      </div>
      {error ? (
        <p className="inline-error" role="alert" data-testid={`server-sampling-error-${server.name}`}>
          {error}
        </p>
      ) : null}
    </>
  );
}

function TestResult({ name, test }: { name: string; test: TestState }) {
  if (test.state === 'running') return <p className="muted">Connecting…</p>;
  if (test.state === 'error') {
    // The auth line above says it, with the button (the message names the command line).
    if (test.code === AUTH_REQUIRED) return null;
    return (
      <p className="inline-error" role="alert" data-testid={`server-test-result-${name}`}>
        {test.message}
      </p>
    );
  }
  return (
    <div className="test-result" data-testid={`server-test-result-${name}`}>
      <span className="inline-ok">connected: {test.tools.length} tool{test.tools.length === 1 ? '' : 's'}</span>
      <ul className="test-tools">
        {test.tools.map((t) => (
          <li key={t.name} title={t.description ?? undefined}>
            <code>{t.name}</code>
            {t.description ? <span className="muted"> — {t.description}</span> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}
