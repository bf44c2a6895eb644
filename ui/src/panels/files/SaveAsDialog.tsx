//! The first Save of a document never stored (new or imported) asks for its name and
//! id: the id is filled from the name until edited by hand, follows the blueprint id
//! rules (`[a-z0-9][a-z0-9_-]*`) and must not be taken by a stored blueprint — so two
//! blueprints never both end up "Untitled". `await askNameAndId(...)` → the pair, or
//! null when cancelled. Test hooks: `save-as-dialog`, `save-as-name`, `save-as-id`,
//! `save-as-error`, `save-as-confirm`, `save-as-cancel`.

import { memo, useState } from 'react';
import { useStore } from 'zustand';
import { createStore } from 'zustand/vanilla';
import { Modal } from './Modal';

export interface NameAndId {
  name: string;
  id: string;
}

interface Pending {
  name: string;
  id: string;
  /** Stored ids with their names (a taken id says whose it is). */
  taken: Map<string, string>;
  resolve: (v: NameAndId | null) => void;
}

const store = createStore<{ pending: Pending | null }>()(() => ({ pending: null }));

const ID = /^[a-z0-9][a-z0-9_-]*$/;

/** An id made from a name: lower case, runs of anything else become `-`. */
export function idFromName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '-')
    .replace(/^[-_]+|-+$/g, '')
    .slice(0, 64);
}

/** What is wrong with the pair, or null. */
export function checkNameAndId(v: NameAndId, taken: ReadonlyMap<string, string>): { field: 'name' | 'id'; message: string } | null {
  if (!v.name.trim()) return { field: 'name', message: 'Give the blueprint a name.' };
  if (!v.id) return { field: 'id', message: 'Give the blueprint an id (lower-case letters, digits, - and _).' };
  if (!ID.test(v.id)) {
    return {
      field: 'id',
      message: `“${v.id}” is not a blueprint id: start with a lower-case letter or digit, then use only lower-case letters, digits, - and _.`,
    };
  }
  const owner = taken.get(v.id);
  if (owner !== undefined) {
    return { field: 'id', message: `The id “${v.id}” is taken by the stored blueprint “${owner}”. Choose another id, or open that blueprint to change it.` };
  }
  return null;
}

/** Asks for the name and id of a document's first save. */
export function askNameAndId(initial: NameAndId, taken: ReadonlyMap<string, string>): Promise<NameAndId | null> {
  return new Promise((resolve) => store.setState({ pending: { ...initial, taken: new Map(taken), resolve } }));
}

export function cancelNameAndId(): void {
  const p = store.getState().pending;
  store.setState({ pending: null });
  p?.resolve(null);
}

export const SaveAsDialog = memo(function SaveAsDialog() {
  const pending = useStore(store, (s) => s.pending);
  return pending ? <SaveAsBody key={`${pending.id}`} pending={pending} /> : null;
});

function SaveAsBody({ pending }: { pending: Pending }) {
  const [name, setName] = useState(pending.name);
  const [id, setId] = useState(pending.id);
  // The id follows the name until the user types an id of their own.
  const [idByHand, setIdByHand] = useState(false);
  const [tried, setTried] = useState(false);
  const problem = checkNameAndId({ name, id }, pending.taken);
  const done = (v: NameAndId | null) => {
    store.setState({ pending: null });
    pending.resolve(v);
  };
  const submit = () => {
    setTried(true);
    if (!problem) done({ name: name.trim(), id });
  };
  // Shown once the user tried to save, or as soon as the id is wrong (not merely empty).
  const shown = problem && (tried || (problem.field === 'id' && id !== '')) ? problem : null;
  return (
    <Modal
      title="Save the blueprint"
      testId="save-as-dialog"
      className="save-as-dialog"
      onClose={() => done(null)}
      footer={
        <>
          <button type="button" data-testid="save-as-cancel" onClick={() => done(null)}>
            Cancel
          </button>
          <button type="button" data-testid="save-as-confirm" className="primary" disabled={Boolean(tried && problem)} onClick={submit}>
            Save
          </button>
        </>
      }
    >
      <form
        className="save-as-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <p className="muted">It is stored under its id; the name is what lists and the toolbar show.</p>
        <label className="field">
          <span>Name</span>
          <input
            data-testid="save-as-name"
            data-autofocus
            value={name}
            aria-invalid={shown?.field === 'name'}
            onChange={(e) => {
              setName(e.target.value);
              if (!idByHand) setId(idFromName(e.target.value));
            }}
          />
        </label>
        <label className="field">
          <span>Id</span>
          <input
            data-testid="save-as-id"
            className="mono"
            value={id}
            spellCheck={false}
            aria-invalid={shown?.field === 'id'}
            onChange={(e) => {
              setId(e.target.value);
              setIdByHand(true);
            }}
          />
        </label>
        {shown ? (
          <p className="inline-error" role="alert" data-testid="save-as-error">
            {shown.message}
          </p>
        ) : null}
        <button type="submit" hidden />
      </form>
    </Modal>
  );
}
