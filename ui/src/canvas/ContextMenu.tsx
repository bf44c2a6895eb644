//! A context menu: a list of items at a point, kept inside the window. Keyboard:
//! arrows move, Enter/Space choose, Escape closes (before anything else hears it);
//! a click outside, a scroll or a zoom closes it. One at a time (the canvas holds at
//! most one). Test hooks: `context-menu`, `menu-<item id>`.

import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type RefObject } from 'react';
import type { MenuItem } from './menu-actions';
import './canvas.css';

export interface ContextMenuProps {
  /** Client coordinates of the pointer (or of the node, from the keyboard). */
  x: number;
  y: number;
  items: MenuItem[];
  label: string;
  onClose(): void;
  /** Open upwards from (x, y) (a menu from a button at the bottom). */
  above?: boolean;
  /** A press on this element does not count as outside (the button that toggles the menu). */
  anchor?: RefObject<HTMLElement | null>;
}

const EDGE = 4;

export function ContextMenu({ x, y, items, label, onClose, above = false, anchor }: ContextMenuProps) {
  const ref = useRef<HTMLDivElement>(null);
  const [at, setAt] = useState({ left: x, top: y });
  const enabled = items.map((it, i) => (it.disabled ? -1 : i)).filter((i) => i >= 0);
  const [active, setActive] = useState(enabled[0] ?? -1);
  // Focus goes back where it was (a node, for keyboard users) when the menu closes —
  // before anything an item opens takes it (a layout effect: the rename input focuses after).
  const opener = useRef<Element | null>(document.activeElement);
  useLayoutEffect(() => {
    const menu = ref.current;
    return () => {
      const now = document.activeElement;
      const back = opener.current;
      if (back instanceof HTMLElement && back.isConnected && (now === null || now === document.body || menu?.contains(now))) {
        back.focus({ preventScroll: true });
      }
    };
  }, []);

  // Inside the window: flip left/up when it would overflow.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const { width, height } = el.getBoundingClientRect();
    const left = x + width > window.innerWidth - EDGE ? Math.max(EDGE, x - width) : x;
    const want = above ? y - height : y;
    const top = want + height > window.innerHeight - EDGE ? Math.max(EDGE, window.innerHeight - EDGE - height) : Math.max(EDGE, want);
    setAt({ left, top });
  }, [x, y, above]);

  useEffect(() => {
    const el = ref.current?.querySelector<HTMLElement>(`[data-index="${active}"]`);
    el?.focus();
  }, [active]);

  useEffect(() => {
    const outside = (e: Event) => {
      if (e.target instanceof Node && (ref.current?.contains(e.target) || anchor?.current?.contains(e.target))) return;
      onClose();
    };
    const close = () => onClose();
    window.addEventListener('pointerdown', outside, true);
    window.addEventListener('wheel', close, true);
    window.addEventListener('resize', close);
    window.addEventListener('blur', close);
    return () => {
      window.removeEventListener('pointerdown', outside, true);
      window.removeEventListener('wheel', close, true);
      window.removeEventListener('resize', close);
      window.removeEventListener('blur', close);
    };
  }, [onClose, anchor]);

  const choose = (i: number) => {
    const item = items[i];
    if (!item || item.disabled) return;
    onClose();
    item.run();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    // Nothing behind the menu hears its keys (Delete, Escape clearing the selection…).
    e.stopPropagation();
    const pos = enabled.indexOf(active);
    if (e.key === 'ArrowDown' || (e.key === 'Tab' && !e.shiftKey)) {
      e.preventDefault();
      if (enabled.length) setActive(enabled[(pos + 1) % enabled.length]!);
    } else if (e.key === 'ArrowUp' || (e.key === 'Tab' && e.shiftKey)) {
      e.preventDefault();
      if (enabled.length) setActive(enabled[(pos - 1 + enabled.length) % enabled.length]!);
    } else if (e.key === 'Home') {
      e.preventDefault();
      if (enabled.length) setActive(enabled[0]!);
    } else if (e.key === 'End') {
      e.preventDefault();
      if (enabled.length) setActive(enabled[enabled.length - 1]!);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      choose(active);
    } else if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
    }
  };

  return (
    <div
      ref={ref}
      className="context-menu"
      role="menu"
      aria-label={label}
      data-testid="context-menu"
      style={{ left: at.left, top: at.top }}
      onKeyDown={onKeyDown}
      onContextMenu={(e) => e.preventDefault()}
    >
      {items.map((it, i) => (
        <button
          key={it.id}
          type="button"
          role="menuitem"
          data-index={i}
          data-testid={`menu-${it.id}`}
          className={`context-item${it.separated ? ' is-separated' : ''}${it.disabled ? ' is-disabled' : ''}`}
          // Not `disabled`: a disabled button shows no tooltip, and the tooltip says why.
          aria-disabled={it.disabled ? true : undefined}
          title={it.title}
          tabIndex={i === active ? 0 : -1}
          onMouseEnter={() => !it.disabled && setActive(i)}
          onClick={() => choose(i)}
        >
          <span className="context-label">{it.label}</span>
          {it.hint ? <span className="context-hint">{it.hint}</span> : null}
        </button>
      ))}
    </div>
  );
}
