//! The Open dialog: the stored blueprints (name, id, revision, when saved), searchable;
//! Enter in the search box opens the first match. Opening over unsaved changes asks first.
//! A blueprint saved elsewhere while the dialog is open (an agent, the CLI) is listed at
//! once (`listGeneration`).

import { memo, useDeferredValue, useEffect, useMemo, useState } from 'react';
import { backend, errorMessage, type BlueprintInfo } from '../../backend';
import { useDoc } from '../../doc/store';
import { confirmDiscard, openStored, showOpenDialog, useFiles } from './actions';
import { useElsewhere } from './elsewhere';
import { Modal } from './Modal';

export function formatSavedAt(iso: string): string {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

export function matchesBlueprint(b: BlueprintInfo, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = `${b.name ?? ''} ${b.id} ${b.description ?? ''}`.toLowerCase();
  return words.every((w) => text.includes(w));
}

export const OpenDialog = memo(function OpenDialog() {
  const open = useFiles((s) => s.openDialog);
  return open ? <OpenDialogBody /> : null;
});

type Listing = { state: 'loading' } | { state: 'error'; message: string } | { state: 'ready'; list: BlueprintInfo[] };

function OpenDialogBody() {
  const [listing, setListing] = useState<Listing>({ state: 'loading' });
  const [query, setQuery] = useState('');
  const deferred = useDeferredValue(query);
  const currentId = useDoc((s) => (typeof s.meta.id === 'string' ? s.meta.id : null));
  const generation = useElsewhere((s) => s.listGeneration);
  const close = () => showOpenDialog(false);

  useEffect(() => {
    let live = true;
    backend.listBlueprints().then(
      (list) => live && setListing({ state: 'ready', list }),
      (e: unknown) => live && setListing({ state: 'error', message: errorMessage(e) }),
    );
    return () => {
      live = false;
    };
  }, [generation]);

  const shown = useMemo(
    () => (listing.state === 'ready' ? listing.list.filter((b) => matchesBlueprint(b, deferred)) : []),
    [listing, deferred],
  );

  const choose = async (id: string) => {
    if (!(await confirmDiscard('Opening another blueprint'))) return;
    close();
    await openStored(id);
  };

  return (
    <Modal title="Open a blueprint" onClose={close} testId="open-dialog" className="open-dialog">
      <input
        type="search"
        className="dialog-search"
        placeholder="Search by name, id or description"
        aria-label="Search blueprints"
        data-testid="open-search"
        data-autofocus
        value={query}
        onChange={(e) => setQuery(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && shown[0]) void choose(shown[0].id);
        }}
      />
      {listing.state === 'loading' ? <p className="muted">Loading…</p> : null}
      {listing.state === 'error' ? (
        <p className="inline-error" role="alert">
          {listing.message}
        </p>
      ) : null}
      {listing.state === 'ready' && shown.length === 0 ? (
        <p className="muted">{listing.list.length ? 'No blueprint matches.' : 'No blueprint is stored yet.'}</p>
      ) : null}
      <ul className="open-list">
        {shown.map((b) => (
          <li key={b.id}>
            <button
              type="button"
              className={`open-item${b.id === currentId ? ' is-current' : ''}`}
              data-testid={`open-item-${b.id}`}
              title={b.description ?? undefined}
              onClick={() => void choose(b.id)}
            >
              <span className="open-name">{b.name || b.id}</span>
              <code className="open-id">{b.id}</code>
              <span className="open-rev">rev {b.rev}</span>
              <time className="open-time" dateTime={b.saved_at}>
                {formatSavedAt(b.saved_at)}
              </time>
              {b.id === currentId ? <span className="open-current">open</span> : null}
            </button>
          </li>
        ))}
      </ul>
    </Modal>
  );
}
