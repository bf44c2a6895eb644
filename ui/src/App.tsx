//! The studio's layout: a toolbar on top, the canvas in the middle, optional left
//! and right sidebars, and a bottom panel (the diagnostics list unless the shell
//! passes another). The shell and the panels plug in through the props:
//!
//! ```tsx
//! <App toolbar={<SaveButton />} left={<Palette />} right={<Inspector />} onSaveShortcut={save} />
//! ```
//!
//! Everything is inside one `ReactFlowProvider`, so panels can use React Flow's
//! hooks (`useReactFlow`, `useCanvasCommands`) too.

import { ReactFlowProvider } from '@xyflow/react';
import { useEffect, type ReactNode } from 'react';
import { Toolbar } from './app/Toolbar';
import { Canvas } from './canvas/Canvas';
import { DiagnosticsList } from './diagnostics/DiagnosticsList';
import { applyTheme, usePrefs } from './prefs';

export interface AppProps {
  /** Extra toolbar items, after the built-in ones (save, open, run …). */
  toolbar?: ReactNode;
  /** Left sidebar (palette, files). Omitted: no sidebar. */
  left?: ReactNode;
  /** Right sidebar (inspector, settings). Omitted: no sidebar. */
  right?: ReactNode;
  /** Bottom panel; default: the diagnostics list. `null` hides it. */
  bottom?: ReactNode;
  /** Ctrl/Cmd+S. */
  onSaveShortcut?: () => void;
}

export function App({ toolbar, left, right, bottom, onSaveShortcut }: AppProps) {
  const theme = usePrefs((s) => s.theme);
  useEffect(() => applyTheme(theme), [theme]);
  const bottomPanel = bottom === undefined ? <DiagnosticsList /> : bottom;
  return (
    <ReactFlowProvider>
      <div className="app">
        <header className="app-toolbar" data-testid="toolbar">
          <Toolbar />
          {toolbar ? <div className="toolbar-slot">{toolbar}</div> : null}
        </header>
        <div className="app-middle">
          {left ? (
            <aside className="app-left" data-testid="left-panel">
              {left}
            </aside>
          ) : null}
          <main className="app-canvas">
            <Canvas onSaveShortcut={onSaveShortcut} />
          </main>
          {right ? (
            <aside className="app-right" data-testid="right-panel">
              {right}
            </aside>
          ) : null}
        </div>
        {bottomPanel !== null ? <footer className="app-bottom">{bottomPanel}</footer> : null}
      </div>
    </ReactFlowProvider>
  );
}
