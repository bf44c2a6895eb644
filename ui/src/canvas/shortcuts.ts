//! Keyboard shortcuts of the canvas, and copy/paste through the system clipboard.
//!
//! Ctrl/Cmd+Z undo · Ctrl/Cmd+Shift+Z and Ctrl+Y redo · Ctrl/Cmd+C/X/V copy, cut,
//! paste · Ctrl/Cmd+D duplicate · Ctrl/Cmd+A select all · Shift+L auto-layout ·
//! Ctrl/Cmd+S calls `onSave` (the shell saves) · `+`/`=` and Ctrl/Cmd+`=`/`+` zoom in ·
//! `-` and Ctrl/Cmd+`-` zoom out · Ctrl/Cmd+0 zoom to 100% · Shift+1 fit · Tab opens the
//! quick-add (n8n's node panel) · Escape closes an open menu, else clears the selection
//! · F2 renames the selected step · Delete/Backspace delete the selected steps (every
//! press: React Flow's own handler, which also deletes a selected edge, missed some when
//! its key state went stale; see `Canvas`). Nothing fires while typing in a field.
//!
//! Copy writes the clipboard JSON to the system clipboard through the `copy` event;
//! paste reads the `paste` event's text when it is mcpflow JSON (or a step), else the
//! internal clipboard. Where a webview fires no `paste` event outside text fields,
//! Ctrl/Cmd+V falls back to the internal clipboard.

import { useEffect, useRef } from 'react';
import { parseClipboard } from '../doc/clipboard';
import { docStore } from '../doc/store';
import type { XY } from '../doc/types';
import type { CanvasCommands } from './commands';
import { useRename } from './rename';

export function isEditable(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

function hasTextSelection(): boolean {
  const sel = globalThis.getSelection?.();
  return !!sel && !sel.isCollapsed && sel.toString().length > 0;
}

export interface ShortcutOptions {
  commands: CanvasCommands;
  onSave?: () => void;
  /** Where a paste goes: the pointer's place on the canvas, if it is over it. */
  pasteTarget(): { container: string | null; position: XY } | null;
  /** Escape: closes what the canvas has open (a menu); true when it did (the selection stays). */
  onEscape?(): boolean;
  /** Tab: opens the quick-add (at the pointer when it is over the canvas). */
  onQuickAdd?(): void;
}

/** Whether a key press comes from inside a dialog (its keys are its own). */
function inDialog(target: EventTarget | null): boolean {
  return target instanceof Element && target.closest('[role="dialog"], [role="alertdialog"], dialog') !== null;
}

/** Whether a key press is on the canvas's side of the page (not a toolbar button, a panel, a dialog). */
function onCanvasSide(target: EventTarget | null): boolean {
  if (!(target instanceof Element)) return true;
  if (target === document.body || target === document.documentElement) return true;
  // Not from a card or an edge: there Tab moves the focus, as it should from the keyboard.
  return target.closest('.react-flow') !== null && target.closest('.react-flow__node, .react-flow__edge') === null;
}

export function useShortcuts(opts: ShortcutOptions): void {
  const ref = useRef(opts);
  ref.current = opts;

  useEffect(() => {
    let pendingPaste: ReturnType<typeof setTimeout> | null = null;
    // The text the last Ctrl/Cmd+C or X put on the internal clipboard, for the copy/cut event after it.
    let justCopied: string | null = null;

    const paste = (text?: string) => {
      const target = ref.current.pasteTarget();
      const s = docStore.getState();
      return s.paste(target?.position, { text, container: target?.container ?? null });
    };
    const copySelection = () => {
      const s = docStore.getState();
      return s.selected.length ? s.copy(s.selected, ref.current.commands.positions()) : null;
    };

    const onKeyDown = (e: KeyboardEvent) => {
      if (e.defaultPrevented || isEditable(e.target)) return;
      const mod = e.ctrlKey || e.metaKey;
      const key = e.key.toLowerCase();
      const s = docStore.getState();
      if (mod && key === 'z' && !e.shiftKey) {
        e.preventDefault();
        s.undo();
      } else if ((mod && key === 'z' && e.shiftKey) || (e.ctrlKey && key === 'y')) {
        e.preventDefault();
        s.redo();
      } else if (mod && key === 's') {
        e.preventDefault();
        ref.current.onSave?.();
      } else if (mod && key === 'a') {
        e.preventDefault();
        s.selectAll();
      } else if (mod && key === 'd') {
        e.preventDefault();
        if (s.selected.length) s.duplicate(s.selected, ref.current.commands.positions());
      } else if (mod && (key === 'c' || key === 'x') && !hasTextSelection()) {
        // The `copy`/`cut` event that follows also puts the text on the system clipboard.
        justCopied = copySelection();
        if (key === 'x' && s.selected.length) s.removeSteps(s.selected);
        setTimeout(() => (justCopied = null), 0);
      } else if (mod && key === 'v') {
        if (pendingPaste) clearTimeout(pendingPaste);
        pendingPaste = setTimeout(() => {
          pendingPaste = null;
          paste();
        }, 0);
      } else if (!mod && !e.altKey && e.shiftKey && key === 'l') {
        e.preventDefault();
        void ref.current.commands.autoLayout();
      } else if (!e.altKey && (e.key === '+' || e.key === '=' || (mod && e.code === 'Equal'))) {
        e.preventDefault();
        ref.current.commands.zoomBy(1);
      } else if (!e.altKey && (e.key === '-' || e.key === '_' || (mod && e.code === 'Minus'))) {
        e.preventDefault();
        ref.current.commands.zoomBy(-1);
      } else if (mod && !e.altKey && (e.key === '0' || e.code === 'Digit0' || e.code === 'Numpad0')) {
        e.preventDefault();
        ref.current.commands.zoomTo(1);
      } else if (!mod && !e.altKey && e.shiftKey && (e.code === 'Digit1' || e.key === '!')) {
        e.preventDefault();
        ref.current.commands.fitView();
      } else if (e.key === 'Tab' && !mod && !e.altKey && !e.shiftKey && ref.current.onQuickAdd && onCanvasSide(e.target)) {
        e.preventDefault();
        ref.current.onQuickAdd();
      } else if (e.key === 'Escape') {
        if (ref.current.onEscape?.()) return;
        if (s.selected.length) s.select([]);
      } else if ((e.key === 'Delete' || e.key === 'Backspace') && !mod && !e.altKey && s.selected.length && !inDialog(e.target)) {
        e.preventDefault();
        if (!e.repeat) s.batch('Delete', () => s.removeSteps(s.selected));
      } else if (e.key === 'F2' && s.selected.length === 1) {
        e.preventDefault();
        useRename.getState().start(s.selected[0]!);
      }
    };

    const onCopy = (e: ClipboardEvent) => {
      if (isEditable(e.target) || hasTextSelection()) return;
      const text = justCopied ?? copySelection();
      justCopied = null;
      if (!text || !e.clipboardData) return;
      e.clipboardData.setData('text/plain', text);
      e.preventDefault();
    };

    const onPaste = (e: ClipboardEvent) => {
      if (isEditable(e.target)) return;
      if (pendingPaste) {
        clearTimeout(pendingPaste);
        pendingPaste = null;
      }
      const text = e.clipboardData?.getData('text/plain') ?? '';
      const ids = text && parseClipboard(text) ? paste(text) : paste();
      if (ids.length) e.preventDefault();
    };

    window.addEventListener('keydown', onKeyDown);
    document.addEventListener('copy', onCopy);
    document.addEventListener('cut', onCopy);
    document.addEventListener('paste', onPaste);
    return () => {
      if (pendingPaste) clearTimeout(pendingPaste);
      window.removeEventListener('keydown', onKeyDown);
      document.removeEventListener('copy', onCopy);
      document.removeEventListener('cut', onCopy);
      document.removeEventListener('paste', onPaste);
    };
  }, []);
}
