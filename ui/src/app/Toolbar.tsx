//! The toolbar: one line whose height and button positions never change. From the
//! left: the document's name (a fixed width, cut with an ellipsis, the whole name on
//! hover) and dirty mark; the shell's File group (`files`); Edit (undo, redo); View
//! (auto-layout, fit); the shell's Run group (`run`, fixed width); then Help and the
//! overflow menu "⋯", which holds every action (the groups that do not fit a narrow
//! window are hidden from the bar by width, never by what a status says). Statuses are
//! toasts over the canvas, not toolbar items.

import { memo, type ReactNode } from 'react';
import { useCanvasCommands } from '../canvas/commands';
import { docStore, useDoc } from '../doc/store';
import { exportFile, importFile, newBlueprint, save, showOpenDialog } from '../panels/files/actions';
import { openSamplingSettings, openServersPanel, openTelemetrySettings } from '../panels/servers/store';
import { usePrefs } from '../prefs';
import { inTauri } from '../backend';
import { HelpMenu } from './Help';
import { Menu, type MenuItem } from '../shared/Menu';

const mod = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl+';

export interface ToolbarProps {
  /** The File group (new, open, save …). */
  files?: ReactNode;
  /** The Run group and anything after it. */
  run?: ReactNode;
}

export const Toolbar = memo(function Toolbar({ files, run }: ToolbarProps) {
  const name = useDoc((s) => s.doc.name || s.doc.id);
  const dirty = useDoc((s) => s.dirty);
  const undo = useDoc((s) => s.past[s.past.length - 1]?.label);
  const redo = useDoc((s) => s.future[s.future.length - 1]?.label);
  const commands = useCanvasCommands();
  return (
    <div className="toolbar-builtin">
      <span className="brand">mcpflow</span>
      <span className="doc-name" data-testid="doc-name" title={`${name}${dirty ? ' — unsaved changes' : ''}`}>
        <span className="doc-name-text">{name}</span>
        {dirty ? (
          <span className="dirty-mark" data-testid="dirty-mark" aria-label="unsaved changes">
            {' '}●
          </span>
        ) : null}
      </span>
      {files ? <div className="tb-slot tb-files">{files}</div> : null}
      <span className="toolbar-group tb-edit" role="group" aria-label="Edit">
        <button type="button" className="icon" data-testid="undo" disabled={!undo} onClick={() => docStore.getState().undo()} title={`Undo ${undo ?? ''} (${mod}Z)`} aria-label="Undo">
          ↶
        </button>
        <button type="button" className="icon" data-testid="redo" disabled={!redo} onClick={() => docStore.getState().redo()} title={`Redo ${redo ?? ''} (${mod}Shift+Z)`} aria-label="Redo">
          ↷
        </button>
      </span>
      <span className="toolbar-group tb-view" role="group" aria-label="View">
        <button type="button" data-testid="auto-layout" onClick={() => void commands.autoLayout()} title="Auto-layout (Shift+L)">
          Auto-layout
        </button>
        <button type="button" data-testid="fit-view" onClick={() => commands.fitView()} title="Fit the blueprint into view (Shift+1)">
          Fit
        </button>
      </span>
      {run ? <div className="tb-slot tb-run">{run}</div> : null}
      <span className="tb-spacer" />
      <ThemeToggle />
      <HelpMenu />
      <OverflowMenu />
    </div>
  );
});

function ThemeToggle() {
  const theme = usePrefs((s) => s.theme);
  const cycleTheme = usePrefs((s) => s.cycleTheme);
  return (
    <button type="button" className="icon theme-toggle" data-testid="theme-toggle" onClick={cycleTheme} title={`Theme: ${theme} (system, light or dark)`} aria-label={`Theme: ${theme}`}>
      {theme === 'system' ? '◐' : theme === 'light' ? '☀' : '☾'}
    </button>
  );
}

/** "⋯": every toolbar action, for windows too narrow to show them all, and the theme. */
function OverflowMenu() {
  const commands = useCanvasCommands();
  const theme = usePrefs((s) => s.theme);
  const desktop = inTauri();
  const s = docStore.getState;
  const items: (MenuItem | string)[] = [
    'File',
    { label: 'New', testId: 'more-new', onSelect: () => void newBlueprint() },
    { label: 'Open…', testId: 'more-open', disabled: !desktop, onSelect: () => showOpenDialog(true) },
    { label: `Save (${mod}S)`, testId: 'more-save', disabled: !desktop, onSelect: () => void save() },
    { label: 'Import…', testId: 'more-import', disabled: !desktop, onSelect: () => void importFile() },
    { label: 'Export…', testId: 'more-export', disabled: !desktop, onSelect: () => void exportFile() },
    { label: 'Servers…', testId: 'more-servers', disabled: !desktop, onSelect: openServersPanel },
    { label: 'Model for sampling…', testId: 'more-sampling', disabled: !desktop, onSelect: openSamplingSettings },
    { label: 'Telemetry (OpenTelemetry)…', testId: 'more-telemetry', disabled: !desktop, onSelect: openTelemetrySettings },
    'Edit',
    { label: `Undo (${mod}Z)`, testId: 'more-undo', onSelect: () => s().undo() },
    { label: `Redo (${mod}Shift+Z)`, testId: 'more-redo', onSelect: () => s().redo() },
    'View',
    { label: 'Auto-layout (Shift+L)', testId: 'more-auto-layout', onSelect: () => void commands.autoLayout() },
    { label: 'Fit (Shift+1)', testId: 'more-fit', onSelect: () => commands.fitView() },
    {
      label: `Theme: ${theme} (next: ${theme === 'system' ? 'light' : theme === 'light' ? 'dark' : 'system'})`,
      testId: 'more-theme',
      onSelect: () => usePrefs.getState().cycleTheme(),
    },
  ];
  return <Menu label="⋯" title="More: every action, and the theme" testId="toolbar-more" items={items} />;
}
