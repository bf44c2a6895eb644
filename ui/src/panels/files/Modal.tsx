//! A small modal dialog (the Open dialog, the servers panel, confirmations, consent).
//! Escape or a click on the backdrop closes it; keys pressed inside it do not reach
//! the canvas shortcuts (Ctrl+Z in a dialog must not undo an edit behind it).

import { memo, useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from 'react';

export interface ModalProps {
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
  /** Buttons at the bottom. */
  footer?: ReactNode;
  testId?: string;
  className?: string;
  /** `alertdialog` for confirmations. */
  role?: 'dialog' | 'alertdialog';
}

export const Modal = memo(function Modal({ title, onClose, children, footer, testId, className, role = 'dialog' }: ModalProps) {
  const titleId = useId();
  const box = useRef<HTMLDivElement>(null);
  // Focus moves into the dialog (unless a field asked for it) and back where it was on close.
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const el = box.current;
    if (el && !el.contains(document.activeElement)) {
      const first =
        el.querySelector<HTMLElement>('[data-autofocus]') ??
        el.querySelector<HTMLElement>('input, textarea, select, .modal-body button:not(:disabled)');
      (first ?? el).focus();
    }
    return () => {
      if (before && document.contains(before)) before.focus();
    };
  }, []);
  // Escape closes it even when the focus was lost to the page (the button clicked went
  // away, as Approve does in the Servers panel): the topmost dialog only.
  const close = useRef(onClose);
  close.current = onClose;
  useEffect(() => {
    const onWindowKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      const focus = document.activeElement;
      if (focus && focus !== document.body && focus !== document.documentElement) return;
      const all = document.querySelectorAll('.modal');
      if (all[all.length - 1] !== box.current) return;
      e.preventDefault();
      close.current();
    };
    window.addEventListener('keydown', onWindowKey);
    return () => window.removeEventListener('keydown', onWindowKey);
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
    }
  };
  return (
    <div
      className="modal-backdrop"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onClose();
      }}
    >
      <div
        ref={box}
        className={`modal ${className ?? ''}`}
        role={role}
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid={testId}
        tabIndex={-1}
        onKeyDown={onKeyDown}
      >
        <header className="modal-head">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="modal-close" aria-label="Close" onClick={onClose}>
            ×
          </button>
        </header>
        <div className="modal-body">{children}</div>
        {footer ? <footer className="modal-foot">{footer}</footer> : null}
      </div>
    </div>
  );
});
