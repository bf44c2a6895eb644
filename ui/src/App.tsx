//! The studio's layout: a one-line toolbar on top, the canvas in the middle, the left
//! and right panels (resizable by their handles, collapsible to a rail) and the bottom
//! panel (the diagnostics list unless the shell passes another; collapsible to its tab
//! row). Over the canvas: the empty-canvas hint, the first-start guide and the status
//! toasts. Sizes live in the layout store (`app/layout.ts`). The shell and the panels
//! plug in through the props:
//!
//! ```tsx
//! <App files={<FilesToolbar />} toolbar={<RunToolbar />} left={<Palette />} right={<Inspector />} onSaveShortcut={save} />
//! ```
//!
//! Everything is inside one `ReactFlowProvider`, so panels can use React Flow's
//! hooks (`useReactFlow`, `useCanvasCommands`) too.

import { ReactFlowProvider } from '@xyflow/react';
import { useEffect, type ReactNode } from 'react';
import './app/layout.css';
import { usePanelsFollowDoc } from './app/auto';
import { EmptyHint } from './app/EmptyHint';
import { Guide } from './app/Help';
import { Handle, SidePanel, usePanelShortcuts, usePanelSizes } from './app/Panels';
import { TAB_BAR, useLayout } from './shared/layout';
import { Toolbar } from './app/Toolbar';
import { Canvas } from './canvas/Canvas';
import { DiagnosticsList } from './diagnostics/DiagnosticsList';
import { Toasts } from './panels/files/StatusLine';
import { PastDefinitionBanner } from './panels/run/PastDefinitionBanner';
import { applyTheme, usePrefs } from './prefs';

export interface AppProps {
  /** The toolbar's File group (new, open, save …), after the document's name. */
  files?: ReactNode;
  /** Toolbar items after the built-in Edit and View groups (the Run group). */
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

export function App({ files, toolbar, left, right, bottom, onSaveShortcut }: AppProps) {
  const theme = usePrefs((s) => s.theme);
  useEffect(() => applyTheme(theme), [theme]);
  usePanelShortcuts();
  usePanelsFollowDoc();
  const sizes = usePanelSizes();
  const bottomCollapsed = useLayout((s) => s.bottom.collapsed);
  const bottomPanel = bottom === undefined ? <DiagnosticsList /> : bottom;
  return (
    <ReactFlowProvider>
      <div className="app">
        <header className="app-toolbar" data-testid="toolbar">
          <Toolbar files={files} run={toolbar} />
        </header>
        <div className="app-middle">
          {left ? (
            <SidePanel id="left" width={sizes.left}>
              {left}
            </SidePanel>
          ) : null}
          <main className="app-canvas">
            <Canvas onSaveShortcut={onSaveShortcut} />
            <EmptyHint />
            <Guide />
            <PastDefinitionBanner />
            <Toasts />
          </main>
          {right ? (
            <SidePanel id="right" width={sizes.right}>
              {right}
            </SidePanel>
          ) : null}
        </div>
        {bottomPanel !== null ? (
          <>
            {bottomCollapsed ? null : <Handle id="bottom" drawn={sizes.bottom} />}
            <footer
              className={`app-bottom${bottomCollapsed ? ' is-collapsed' : ''}`}
              data-testid="bottom-panel"
              style={{ height: bottomCollapsed ? TAB_BAR : sizes.bottom }}
            >
              {bottomPanel}
            </footer>
          </>
        ) : null}
      </div>
    </ReactFlowProvider>
  );
}
