//! The zoom control (bottom left of the canvas, fixed width so nothing moves): − and
//! + buttons around the zoom percentage; the percentage opens a menu of 50/100/150%,
//! Fit and the minimap toggle. Test hooks: `zoom-out`, `zoom-level` (its text is the
//! percentage), `zoom-in`, `zoom-menu`, `zoom-<50|100|150>`, `zoom-fit`, `minimap-toggle`.

import { Panel, useViewport } from '@xyflow/react';
import { useCallback, useRef, useState } from 'react';
import type { CanvasCommands } from './commands';
import { ContextMenu } from './ContextMenu';
import type { MenuItem } from './menu-actions';
import { ZOOM_PRESETS, zoomLabel } from './view';
import { useViewPrefs } from './view-prefs';
import './canvas.css';

export function ZoomControl({ commands }: { commands: CanvasCommands }) {
  const { zoom } = useViewport();
  const minimap = useViewPrefs((s) => s.minimap);
  const [menu, setMenu] = useState<{ x: number; y: number } | null>(null);
  const level = useRef<HTMLButtonElement>(null);
  const close = useCallback(() => {
    setMenu(null);
    level.current?.focus();
  }, []);

  const items: MenuItem[] = [
    ...ZOOM_PRESETS.map((z) => ({ id: `zoom-${Math.round(z * 100)}`, label: zoomLabel(z), hint: z === 1 ? 'Ctrl+0' : undefined, run: () => commands.zoomTo(z) })),
    { id: 'zoom-fit', label: 'Fit to view', hint: 'Shift+1', separated: true, run: () => commands.fitView() },
    {
      id: 'minimap-menu',
      label: minimap ? 'Hide minimap' : 'Show minimap',
      run: () => useViewPrefs.getState().setMinimap(!minimap),
    },
  ];

  return (
    <Panel position="bottom-left" className="zoom-control" data-testid="zoom-control">
      <button type="button" className="zoom-button" data-testid="zoom-out" title="Zoom out (−)" aria-label="Zoom out" onClick={() => commands.zoomBy(-1)}>
        −
      </button>
      <button
        ref={level}
        type="button"
        className="zoom-level"
        data-testid="zoom-level"
        title="Zoom: choose 50%, 100%, 150% or fit"
        aria-haspopup="menu"
        aria-expanded={menu !== null}
        onClick={(e) => {
          const r = e.currentTarget.getBoundingClientRect();
          setMenu(menu ? null : { x: r.left, y: r.top - 4 });
        }}
      >
        {zoomLabel(zoom)}
      </button>
      <button type="button" className="zoom-button" data-testid="zoom-in" title="Zoom in (+)" aria-label="Zoom in" onClick={() => commands.zoomBy(1)}>
        +
      </button>
      <button type="button" className="zoom-button" data-testid="zoom-fit-button" title="Fit to view (Shift+1)" aria-label="Fit to view" onClick={() => commands.fitView()}>
        ⤢
      </button>
      <button
        type="button"
        className={`zoom-button minimap-toggle${minimap ? ' is-on' : ''}`}
        data-testid="minimap-toggle"
        aria-pressed={minimap}
        title={minimap ? 'Hide the minimap' : 'Show the minimap'}
        aria-label="Minimap"
        onClick={() => useViewPrefs.getState().setMinimap(!minimap)}
      >
        ▦
      </button>
      {menu && (
        <div data-testid="zoom-menu">
          <ContextMenu x={menu.x} y={menu.y} items={items} label="Zoom" onClose={close} above anchor={level} />
        </div>
      )}
    </Panel>
  );
}
