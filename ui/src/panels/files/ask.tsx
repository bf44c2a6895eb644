//! In-app confirmations (`await ask({...})` → true when confirmed). The webview's
//! `window.confirm` is not dependable in every Tauri webview, so the studio draws its
//! own. One `<AskDialog />` is mounted by the studio; asks queue up.

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

interface Pending extends AskOptions {
  resolve: (ok: boolean) => void;
}

const askStore = createStore<{ queue: Pending[] }>()(() => ({ queue: [] }));

export function ask(opts: AskOptions): Promise<boolean> {
  return new Promise((resolve) => askStore.setState((s) => ({ queue: [...s.queue, { ...opts, resolve }] })));
}

function answer(ok: boolean) {
  const [first, ...rest] = askStore.getState().queue;
  if (!first) return;
  askStore.setState({ queue: rest });
  first.resolve(ok);
}

/** Answers every pending question with "cancel" (tests, unmount). */
export function cancelAllAsks(): void {
  const queue = askStore.getState().queue;
  askStore.setState({ queue: [] });
  for (const p of queue) p.resolve(false);
}

export const AskDialog = memo(function AskDialog() {
  const current = useStore(askStore, (s) => s.queue[0]);
  if (!current) return null;
  return (
    <Modal
      title={current.title}
      role="alertdialog"
      testId="ask-dialog"
      className="ask-dialog"
      onClose={() => answer(false)}
      footer={
        <>
          <button type="button" data-testid="ask-cancel" onClick={() => answer(false)}>
            Cancel
          </button>
          <button
            type="button"
            data-testid="ask-confirm"
            data-autofocus
            className={current.danger ? 'danger' : 'primary'}
            onClick={() => answer(true)}
          >
            {current.confirm}
          </button>
        </>
      }
    >
      <p className="ask-message">{current.message}</p>
    </Modal>
  );
});
