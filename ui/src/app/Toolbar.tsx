//! The built-in toolbar: the document's name and dirty mark, undo/redo, auto-layout,
//! fit view and the theme toggle. The shell adds its own buttons (save, open, run)
//! through `App`'s `toolbar` slot.

import { memo } from 'react';
import { useCanvasCommands } from '../canvas/commands';
import { docStore, useDoc } from '../doc/store';
import { usePrefs } from '../prefs';

const mod = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl+';

export const Toolbar = memo(function Toolbar() {
  const name = useDoc((s) => s.doc.name || s.doc.id);
  const dirty = useDoc((s) => s.dirty);
  const undo = useDoc((s) => s.past[s.past.length - 1]?.label);
  const redo = useDoc((s) => s.future[s.future.length - 1]?.label);
  const theme = usePrefs((s) => s.theme);
  const cycleTheme = usePrefs((s) => s.cycleTheme);
  const commands = useCanvasCommands();
  return (
    <div className="toolbar-builtin">
      <span className="brand">mcpflow</span>
      <span className="doc-name" data-testid="doc-name" title={dirty ? 'unsaved changes' : 'saved'}>
        {name}
        {dirty ? <span className="dirty-mark" data-testid="dirty-mark"> ●</span> : null}
      </span>
      <span className="toolbar-group">
        <button type="button" data-testid="undo" disabled={!undo} onClick={() => docStore.getState().undo()} title={`Undo ${undo ?? ''} (${mod}Z)`}>
          Undo
        </button>
        <button type="button" data-testid="redo" disabled={!redo} onClick={() => docStore.getState().redo()} title={`Redo ${redo ?? ''} (${mod}Shift+Z)`}>
          Redo
        </button>
      </span>
      <span className="toolbar-group">
        <button type="button" data-testid="auto-layout" onClick={() => void commands.autoLayout()} title="Auto-layout (Shift+L)">
          Auto-layout
        </button>
        <button type="button" data-testid="fit-view" onClick={() => commands.fitView()} title="Fit the blueprint into view">
          Fit
        </button>
      </span>
      <button type="button" className="theme-toggle" data-testid="theme-toggle" onClick={cycleTheme} title="Theme: system, light or dark">
        {theme === 'system' ? 'Theme: system' : theme === 'light' ? 'Theme: light' : 'Theme: dark'}
      </button>
    </div>
  );
});
