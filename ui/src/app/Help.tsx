//! The Help menu (the first-start guide again, the keyboard shortcuts), the shortcuts
//! dialog (from `shortcut-list.ts`) and the first-start guide: a short, non-modal card
//! over the canvas saying what the palette, canvas, inspector and Run are.

import { useState } from 'react';
import { Modal } from '../panels/files/Modal';
import { useLayout } from '../shared/layout';
import { Menu } from '../shared/Menu';
import { keyLabel, SHORTCUTS } from '../shared/shortcut-list';

export function HelpMenu() {
  const [shortcuts, setShortcuts] = useState(false);
  return (
    <>
      <Menu
        label="Help"
        title="The guide and the keyboard shortcuts"
        testId="help-menu"
        items={[
          { label: 'Show the guide', testId: 'help-guide', onSelect: () => useLayout.getState().showGuide(true) },
          { label: 'Keyboard shortcuts', testId: 'help-shortcuts', onSelect: () => setShortcuts(true) },
        ]}
      />
      {shortcuts ? <ShortcutsDialog onClose={() => setShortcuts(false)} /> : null}
    </>
  );
}

export function ShortcutsDialog({ onClose }: { onClose(): void }) {
  return (
    <Modal title="Keyboard shortcuts" onClose={onClose} testId="shortcuts-dialog" className="shortcuts-dialog">
      <p className="muted">They do nothing while you type in a field.</p>
      {SHORTCUTS.map((g) => (
        <section key={g.title} className="shortcut-group">
          <h3>{g.title}</h3>
          <dl>
            {g.items.map((s) => (
              <div key={s.what} className="shortcut-row">
                <dt>
                  {s.keys.map((k, i) => (
                    <span key={k}>
                      {i ? ' or ' : ''}
                      <kbd>{keyLabel(k)}</kbd>
                    </span>
                  ))}
                </dt>
                <dd>{s.what}</dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </Modal>
  );
}

const ITEMS: [string, string][] = [
  ['Palette (left)', 'the tools of your MCP servers. Drag one onto the canvas to add a step.'],
  ['Canvas', 'the steps of the blueprint. Drag from a card’s right handle to another card to run them in order; double-click empty canvas to add a step.'],
  ['Inspector (right)', 'opens when you select a step: its tool, arguments and last run.'],
  ['Run', '▶ Run in the toolbar runs the blueprint; ▷ Debug stops at breakpoints. Results show on the cards and in the bottom panel.'],
];

export function Guide() {
  const open = useLayout((s) => s.guideOpen);
  if (!open) return null;
  const close = () => useLayout.getState().showGuide(false);
  return (
    <section className="guide-card" data-testid="guide" aria-label="Getting started">
      <header className="guide-head">
        <h2>Getting started</h2>
        <button type="button" className="modal-close" aria-label="Close the guide" onClick={close}>
          ×
        </button>
      </header>
      <ol className="guide-items">
        {ITEMS.map(([title, text]) => (
          <li key={title}>
            <strong>{title}</strong>: {text}
          </li>
        ))}
      </ol>
      <footer className="guide-foot">
        <span className="muted">Reopen it from Help.</span>
        <button type="button" className="primary" data-testid="guide-dismiss" onClick={close}>
          Got it
        </button>
      </footer>
    </section>
  );
}
