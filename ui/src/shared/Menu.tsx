//! A small drop-down menu for the toolbar (Help, the overflow "⋯"): a button that opens
//! a list; Escape, a click outside or choosing an item closes it.

import { useEffect, useRef, useState, type ReactNode } from 'react';

export interface MenuItem {
  label: string;
  testId: string;
  onSelect(): void;
  disabled?: boolean;
  title?: string;
  /** Hidden from the menu at widths where the toolbar shows it (a CSS class). */
  className?: string;
}

export interface MenuProps {
  label: ReactNode;
  title: string;
  testId: string;
  /** Items, or headings (strings) between groups. */
  items: (MenuItem | string)[];
  align?: 'left' | 'right';
  className?: string;
}

export function Menu({ label, title, testId, items, align = 'right', className }: MenuProps) {
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (box.current && !box.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setOpen(false);
    };
    document.addEventListener('mousedown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('mousedown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
  return (
    <div
      className={`menu ${className ?? ''}`}
      ref={box}
      onKeyDown={(e) => {
        // Escape closes the open menu only, not the dialog the menu sits in.
        if (open && e.key === 'Escape') {
          e.stopPropagation();
          setOpen(false);
        }
      }}
    >
      <button type="button" className="menu-button" data-testid={testId} aria-haspopup="menu" aria-expanded={open} title={title} onClick={() => setOpen((o) => !o)}>
        {label}
      </button>
      {open ? (
        <div className={`menu-list menu-${align}`} role="menu" data-testid={`${testId}-list`}>
          {items.map((item, i) =>
            typeof item === 'string' ? (
              <div key={`h${i}`} className="menu-heading" role="presentation">
                {item}
              </div>
            ) : (
              <button
                key={item.testId}
                type="button"
                role="menuitem"
                className={`menu-item ${item.className ?? ''}`}
                data-testid={item.testId}
                disabled={item.disabled}
                title={item.title}
                onClick={() => {
                  setOpen(false);
                  item.onSelect();
                }}
              >
                {item.label}
              </button>
            ),
          )}
        </div>
      ) : null}
    </div>
  );
}
