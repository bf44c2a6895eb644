//! The files toolbar: New, Open…, Save, Import…, Export… and the servers button (the
//! status line and the interrupted-runs notice are toasts over the canvas, drawn by
//! `App`). Without a backend (a plain browser) only New works; the others say why
//! they are off.

import { memo } from 'react';
import { inTauri } from '../../backend';
import { useDoc } from '../../doc/store';
import { openServersPanel } from '../servers/store';
import { exportFile, importFile, newBlueprint, save, showOpenDialog, useFiles } from './actions';

const mod = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl+';
const OFF = 'Needs the mcpflow desktop app';

export const FilesToolbar = memo(function FilesToolbar() {
  const desktop = inTauri();
  const busy = useFiles((s) => s.busy);
  const dirty = useDoc((s) => s.dirty);
  return (
    <div className="files-toolbar">
      <span className="toolbar-group" role="group" aria-label="Files">
        <button type="button" data-testid="file-new" onClick={() => void newBlueprint()} title="A new, empty blueprint">
          New
        </button>
        <button
          type="button"
          data-testid="file-open"
          disabled={!desktop}
          onClick={() => showOpenDialog(true)}
          title={desktop ? 'Open a stored blueprint' : OFF}
        >
          Open…
        </button>
        <button
          type="button"
          data-testid="file-save"
          className={dirty ? 'primary' : undefined}
          disabled={!desktop || busy}
          onClick={() => void save()}
          title={desktop ? `Save a new revision (${mod}S)` : OFF}
        >
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button
          type="button"
          data-testid="file-import"
          className="tb-io"
          disabled={!desktop}
          onClick={() => void importFile()}
          title={desktop ? 'Open a blueprint JSON file (not saved until Save)' : OFF}
        >
          Import…
        </button>
        <button
          type="button"
          data-testid="file-export"
          className="tb-io"
          disabled={!desktop}
          onClick={() => void exportFile()}
          title={desktop ? 'Write the blueprint to run elsewhere: with the servers it uses and the blueprints it calls' : OFF}
        >
          Export…
        </button>
      </span>
      <button
        type="button"
        data-testid="servers-button"
        className="tb-servers"
        disabled={!desktop}
        onClick={openServersPanel}
        title={desktop ? 'Configure MCP servers: add, import, test, approve' : OFF}
      >
        Servers
      </button>
    </div>
  );
});
