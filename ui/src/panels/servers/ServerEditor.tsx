//! Adds or edits a server: its name and its `mcpServers` entry as JSON text. The
//! backend checks the entry (`put_server`); its message is shown inline.

import { memo, useState } from 'react';
import { errorMessage, type ServerInfo } from '../../backend';
import { ask } from '../files/ask';
import { putServer, serversStore } from './store';

export const NEW_SERVER_CONFIG = '{\n  "command": "node",\n  "args": ["path/to/server.js"]\n}';

export interface ServerEditorProps {
  /** The server being edited; omitted to add one. */
  server?: ServerInfo;
  onDone: () => void;
}

/** The entry's JSON as an object, or the problem with it. */
export function parseServerConfig(text: string): { config: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { problem: `not valid JSON: ${errorMessage(e)}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: 'an mcpServers entry is a JSON object, e.g. {"command": "node", "args": ["server.js"]} or {"url": "http://…/mcp"}' };
  }
  return { config: value as Record<string, unknown> };
}

export const ServerEditor = memo(function ServerEditor({ server, onDone }: ServerEditorProps) {
  const [name, setName] = useState(server?.name ?? '');
  const [text, setText] = useState(() => (server ? JSON.stringify(server.config, null, 2) : NEW_SERVER_CONFIG));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    const trimmed = name.trim();
    if (!trimmed) return setError('give the server a name (what steps write in "server")');
    const parsed = parseServerConfig(text);
    if ('problem' in parsed) return setError(parsed.problem);
    if (trimmed !== server?.name && serversStore.getState().servers.some((s) => s.name === trimmed)) {
      const ok = await ask({
        title: 'Replace a server?',
        message: `A server named “${trimmed}” is already configured. Saving replaces its entry.`,
        confirm: 'Replace',
        danger: true,
      });
      if (!ok) return;
    }
    setBusy(true);
    setError(null);
    try {
      await putServer(trimmed, parsed.config, server?.name);
      onDone();
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  };

  return (
    <form
      className="server-editor"
      data-testid="server-editor"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label>
        <span>Name</span>
        <input
          data-testid="server-name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          placeholder="e.g. filesystem"
          spellCheck={false}
          autoComplete="off"
        />
      </label>
      <label>
        <span>
          Entry (as in <code>mcpServers</code>: <code>command</code>/<code>args</code>/<code>env</code>, or <code>url</code>/
          <code>headers</code>; write secrets as <code>{'${env:NAME}'}</code>)
        </span>
        <textarea
          data-testid="server-config"
          value={text}
          onChange={(e) => setText(e.target.value)}
          rows={8}
          spellCheck={false}
          className="mono"
        />
      </label>
      {server?.command ? <p className="muted">A changed command line needs approval again before it starts.</p> : null}
      {error ? (
        <p className="inline-error" role="alert" data-testid="server-error">
          {error}
        </p>
      ) : null}
      <div className="form-buttons">
        <button type="button" onClick={onDone} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="primary" data-testid="server-save" disabled={busy}>
          {busy ? 'Saving…' : server ? 'Save server' : 'Add server'}
        </button>
      </div>
    </form>
  );
});
