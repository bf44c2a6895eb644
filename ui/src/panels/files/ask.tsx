//! In-app confirmations (`await ask({...})` → true when confirmed) and three-way
//! questions (`await askChoice({...})` → `'save' | 'discard' | 'cancel'`, the unsaved
//! changes question). The webview's `window.confirm` is not dependable in every Tauri
//! webview, so the studio draws its own. One `<AskDialog />` is mounted by the studio;
//! questions queue up. Test hooks: `ask-dialog`, `ask-confirm` (the action, e.g.
//! Discard), `ask-save` (three-way only), `ask-cancel`.

import { memo } from 'react';
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { Modal } from './Modal';

export interface AskOptions {
  title: string;
  message: string;
  confirm: string;
  /** A destructive action (drawn as such). */
  danger?: boolean;
}

export type Choice = 'save' | 'discard' | 'cancel';

export interface ChoiceOptions {
  title: string;
  message: string;
  /** The Save button's label (default "Save"). */
  save?: string;
  /** The discard button's label (default "Discard"). */
  discard?: string;
}

type Pending =
  | (AskOptions & { kind: 'ask'; resolve: (ok: boolean) => void })
  | (ChoiceOptions & { kind: 'choice'; resolve: (c: Choice) => void });

const askStore = createStore<{ queue: Pending[] }>()(() => ({ queue: [] }));

export function ask(opts: AskOptions): Promise<boolean> {
  return new Promise((resolve) => askStore.setState((s) => ({ queue: [...s.queue, { ...opts, kind: 'ask', resolve }] })));
}

/** Save, Discard or Cancel. */
export function askChoice(opts: ChoiceOptions): Promise<Choice> {
  return new Promise((resolve) => askStore.setState((s) => ({ queue: [...s.queue, { ...opts, kind: 'choice', resolve }] })));
}

function answer(c: Choice) {
  const [first, ...rest] = askStore.getState().queue;
  if (!first) return;
  askStore.setState({ queue: rest });
  if (first.kind === 'ask') first.resolve(c === 'discard');
  else first.resolve(c);
}

/** Answers every pending question with "cancel" (tests, unmount). */
export function cancelAllAsks(): void {
  const queue = askStore.getState().queue;
  askStore.setState({ queue: [] });
  for (const p of queue) {
    if (p.kind === 'ask') p.resolve(false);
    else p.resolve('cancel');
  }
}

export const AskDialog = memo(function AskDialog() {
  const current = useStore(askStore, (s) => s.queue[0]);
  if (!current) return null;
  const choice = current.kind === 'choice';
  return (
    <Modal
      title={current.title}
      role="alertdialog"
      testId="ask-dialog"
      className="ask-dialog"
      onClose={() => answer('cancel')}
      footer={
        <>
          <button type="button" data-testid="ask-cancel" onClick={() => answer('cancel')}>
            Cancel
          </button>
          {choice ? (
            <>
              <button type="button" data-testid="ask-confirm" className="danger" onClick={() => answer('discard')}>
                {current.discard ?? 'Discard'}
              </button>
              <button type="button" data-testid="ask-save" data-autofocus className="primary" onClick={() => answer('save')}>
                {current.save ?? 'Save'}
              </button>
            </>
          ) : (
            <button
              type="button"
              data-testid="ask-confirm"
              data-autofocus
              className={current.danger ? 'danger' : 'primary'}
              onClick={() => answer('discard')}
            >
              {current.confirm}
            </button>
          )}
        </>
      }
    >
      <p className="ask-message">{current.message}</p>
    </Modal>
  );
});
