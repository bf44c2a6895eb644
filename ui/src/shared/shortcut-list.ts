//! Every keyboard shortcut of the studio, in one list: the Help menu shows it and
//! docs/studio.md copies it. `mod` is Ctrl (⌘ on a Mac). None fires while typing in a
//! field.

export interface Shortcut {
  keys: string[];
  what: string;
}

export interface ShortcutGroup {
  title: string;
  items: Shortcut[];
}

export const SHORTCUTS: ShortcutGroup[] = [
  {
    title: 'Panels',
    items: [
      { keys: ['Ctrl+B'], what: 'Show or hide the palette (left panel)' },
      { keys: ['Ctrl+Alt+B'], what: 'Show or hide the inspector (right panel)' },
      { keys: ['Ctrl+J'], what: 'Show or hide the bottom panel (problems, run, history)' },
    ],
  },
  {
    title: 'Canvas',
    items: [
      { keys: ['+', 'Ctrl+='], what: 'Zoom in' },
      { keys: ['-', 'Ctrl+-'], what: 'Zoom out' },
      { keys: ['Ctrl+0'], what: 'Zoom to 100%' },
      { keys: ['Shift+1'], what: 'Fit the blueprint into view' },
      { keys: ['Shift+L'], what: 'Auto-layout' },
      { keys: ['Escape'], what: 'Close an open menu, else clear the selection' },
      { keys: ['Ctrl+A'], what: 'Select every step' },
      { keys: ['F2', 'double-click'], what: 'Rename the selected step' },
      { keys: ['Shift+F10'], what: 'Context menu of the focused step (Tab focuses steps)' },
      { keys: ['Delete', 'Backspace'], what: 'Delete the selection' },
      { keys: ['Ctrl+C', 'Ctrl+X', 'Ctrl+V'], what: 'Copy, cut, paste (at the pointer)' },
      { keys: ['Ctrl+D'], what: 'Duplicate the selection' },
      { keys: ['Tab', 'double-click the canvas'], what: 'Add a step there (the quick-add, at the pointer)' },
    ],
  },
  {
    title: 'Edit',
    items: [
      { keys: ['Ctrl+Z'], what: 'Undo' },
      { keys: ['Ctrl+Shift+Z', 'Ctrl+Y'], what: 'Redo' },
      { keys: ['Ctrl+S'], what: 'Save' },
    ],
  },
];

const MAC = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/** A key as shown on this platform (Ctrl → ⌘ on a Mac). */
export const keyLabel = (k: string): string => (MAC ? k.replace(/^Ctrl\+/, '⌘').replace(/Alt\+/, '⌥') : k);

/** True when a key event comes from a field being typed in (shortcuts stay quiet). */
export function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  if (!el || typeof el.closest !== 'function') return false;
  return Boolean(el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"], .cm-editor'));
}
