//! The resizable, collapsible panels around the canvas: a side panel (left or right)
//! with a header and a collapse button, a thin rail with its name when collapsed, the
//! drag handles between the panels and the canvas (double-click resets the size;
//! arrow keys move it when focused), and the panel shortcuts (Ctrl+B, Ctrl+Alt+B,
//! Ctrl+J — quiet while typing).

import { useEffect, useRef, useState, type KeyboardEvent, type PointerEvent, type ReactNode } from 'react';
import { fitToWindow, useLayout, type PanelId } from '../shared/layout';
import { keyLabel, typing } from '../shared/shortcut-list';

/** The window's size, kept current. */
export function useWindowSize(): { w: number; h: number } {
  const get = () => ({ w: typeof window === 'undefined' ? 1400 : window.innerWidth, h: typeof window === 'undefined' ? 900 : window.innerHeight });
  const [size, setSize] = useState(get);
  useEffect(() => {
    const on = () => setSize(get());
    window.addEventListener('resize', on);
    return () => window.removeEventListener('resize', on);
  }, []);
  return size;
}

/** The drawn size of each panel (0: collapsed), fitted to the window. */
export function usePanelSizes(): Record<PanelId, number> {
  const { w, h } = useWindowSize();
  const left = useLayout((s) => s.left);
  const right = useLayout((s) => s.right);
  const bottom = useLayout((s) => s.bottom);
  return fitToWindow({ left, right, bottom }, w, h);
}

const STEP = 16;

/** A drag handle: dragging resizes `id` (from the size drawn now), double-click resets it. */
export function Handle({ id, drawn }: { id: PanelId; drawn: number }) {
  const start = useRef<{ at: number; size: number } | null>(null);
  const [active, setActive] = useState(false);
  const vertical = id !== 'bottom';
  // Moving the pointer right grows the left panel and shrinks the right one; up grows the bottom one.
  const sign = id === 'left' ? 1 : -1;
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture?.(e.pointerId);
    start.current = { at: vertical ? e.clientX : e.clientY, size: drawn };
    setActive(true);
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    const s = start.current;
    if (!s) return;
    const delta = (vertical ? e.clientX : e.clientY) - s.at;
    useLayout.getState().setSize(id, s.size + sign * delta);
  };
  const end = (e: PointerEvent<HTMLDivElement>) => {
    if (!start.current) return;
    start.current = null;
    setActive(false);
    e.currentTarget.releasePointerCapture?.(e.pointerId);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const grow = vertical ? (id === 'left' ? 'ArrowRight' : 'ArrowLeft') : 'ArrowUp';
    const shrink = vertical ? (id === 'left' ? 'ArrowLeft' : 'ArrowRight') : 'ArrowDown';
    if (e.key === grow || e.key === shrink) {
      e.preventDefault();
      useLayout.getState().setSize(id, drawn + (e.key === grow ? STEP : -STEP));
    }
  };
  return (
    <div
      className={`panel-handle panel-handle-${vertical ? 'v' : 'h'}${active ? ' is-active' : ''}`}
      data-testid={`${id}-handle`}
      role="separator"
      aria-orientation={vertical ? 'vertical' : 'horizontal'}
      aria-valuenow={drawn}
      aria-label={`Resize the ${NAMES[id].toLowerCase()} (double-click: default size)`}
      title="Drag to resize · double-click for the default size"
      tabIndex={0}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={end}
      onPointerCancel={end}
      onDoubleClick={() => useLayout.getState().resetSize(id)}
      onKeyDown={onKeyDown}
    />
  );
}

export const NAMES: Record<PanelId, string> = { left: 'Palette', right: 'Inspector', bottom: 'Bottom panel' };
export const SHORTCUT: Record<PanelId, string> = { left: 'Ctrl+B', right: 'Ctrl+Alt+B', bottom: 'Ctrl+J' };

/** A side panel: header with its name and a collapse button, or a rail when collapsed.
 * The content stays mounted while collapsed (its state survives). */
export function SidePanel({ id, width, children }: { id: 'left' | 'right'; width: number; children: ReactNode }) {
  const collapsed = width === 0;
  const toggle = () => useLayout.getState().toggle(id);
  const hint = `${collapsed ? 'Show' : 'Hide'} the ${NAMES[id].toLowerCase()} (${keyLabel(SHORTCUT[id])})`;
  const aside = (
    <aside
      className={`app-${id} side-panel`}
      data-testid={`${id}-panel`}
      style={{ width: collapsed ? 0 : width, display: collapsed ? 'none' : undefined }}
      aria-label={NAMES[id]}
    >
      <header className="side-panel-head">
        <span className="side-panel-title">{NAMES[id]}</span>
        <button type="button" className="panel-collapse" data-testid={`${id}-collapse`} onClick={toggle} title={hint} aria-label={hint}>
          {id === 'left' ? '«' : '»'}
        </button>
      </header>
      <div className="side-panel-body">{children}</div>
    </aside>
  );
  const rail = collapsed ? (
    <button type="button" className={`panel-rail panel-rail-${id}`} data-testid={`${id}-rail`} onClick={toggle} title={hint} aria-label={hint}>
      <span className="panel-rail-label">{NAMES[id]}</span>
    </button>
  ) : (
    <Handle id={id} drawn={width} />
  );
  return id === 'left' ? (
    <>
      {aside}
      {rail}
    </>
  ) : (
    <>
      {rail}
      {aside}
    </>
  );
}

/** Ctrl+B, Ctrl+Alt+B, Ctrl+J toggle the panels (not while typing in a field). */
export function usePanelShortcuts(): void {
  useEffect(() => {
    const onKeyDown = (e: globalThis.KeyboardEvent) => {
      if (e.defaultPrevented || typing(e.target)) return;
      if (!(e.ctrlKey || e.metaKey) || e.shiftKey) return;
      const key = e.key.toLowerCase();
      // Ctrl+Alt+B may arrive as another character on some layouts; the code is stable.
      const b = key === 'b' || e.code === 'KeyB';
      const j = key === 'j' || e.code === 'KeyJ';
      let id: PanelId | null = null;
      if (b) id = e.altKey ? 'right' : 'left';
      else if (j && !e.altKey) id = 'bottom';
      if (!id) return;
      e.preventDefault();
      useLayout.getState().toggle(id);
    };
    window.addEventListener('keydown', onKeyDown);
    return () => window.removeEventListener('keydown', onKeyDown);
  }, []);
}
