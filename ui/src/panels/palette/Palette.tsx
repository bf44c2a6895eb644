//! The palette (left sidebar): the step kinds, then every tool, resource and prompt of
//! every configured server, filtered by the search box. Items are dragged onto the
//! canvas (`STEP_MIME` data: a step template), or added with a double-click or Enter.
//! A server that is not started now (not approved yet, or failing) shows its last listing,
//! remembered in the store, so its tools can be found and dropped like any other; one
//! awaiting approval says so with an Approve… button (the consent prompt with the exact
//! command: nothing starts without it). Servers nobody approved that were never listed are
//! gathered in one "N servers waiting for approval" entry (`WaitingGroup`: each with its
//! command and an Approve… button). A server whose listing failed with `AUTH_REQUIRED`
//! offers Sign in (`palette-signin-NAME`).
//!
//! Typing in the search box re-renders the palette only: it writes nothing to the
//! document store, so the canvas does not render again.

import { memo, useDeferredValue, useEffect, useMemo, useState, type DragEvent, type KeyboardEvent } from 'react';
import { inTauri, type PromptInfo, type ResourceInfo, type ServerOffer, type ToolInfo } from '../../backend';
import { STEP_MIME } from '../../shared/drag';
import { docStore } from '../../doc/store';
import type { StepTemplate } from '../../doc/types';
import { refreshAll, requestConsent, serversStore, useServers } from '../servers/store';
import { AUTH_REQUIRED } from '../servers/authtext';
import { RunSignIn } from '../servers/ServerAuth';
import { KIND_ITEMS, matches, promptTemplate, resourceTemplate, toolTemplate } from './templates';
import { WaitingGroup } from './WaitingGroup';
import { isUnlisted, isWaiting, waitingServers } from './waiting';

/** Adds a step from a template at the end of the blueprint and selects it (keyboard users). */
export function addFromTemplate(json: string): string | null {
  const s = docStore.getState();
  const id = s.addStep(JSON.parse(json) as StepTemplate);
  if (id) s.select([id], { reveal: true });
  return id;
}

interface ItemProps {
  testId: string;
  kind: string;
  label: string;
  detail?: string | null;
  hint?: string | null;
  /** The step template, as JSON text (stable for memo). */
  json: string;
  /** Its server awaits approval: the step can be added, and is approved on its node. */
  awaiting?: boolean;
}

const PaletteItem = memo(function PaletteItem({ testId, kind, label, detail, hint, json, awaiting }: ItemProps) {
  const onDragStart = (e: DragEvent) => {
    e.dataTransfer.setData(STEP_MIME, json);
    e.dataTransfer.setData('text/plain', json);
    e.dataTransfer.effectAllowed = 'copy';
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      addFromTemplate(json);
    }
  };
  return (
    <li>
      <div
        className={`palette-item kind-${kind}`}
        role="button"
        tabIndex={0}
        draggable
        data-testid={testId}
        data-template={json}
        data-awaiting={awaiting ? 'true' : undefined}
        title={`${hint ?? detail ?? label}\nDrag onto the canvas, or double-click / Enter to add${awaiting ? '\n(its server awaits approval: approve it on the step)' : ''}`}
        onDragStart={onDragStart}
        onDoubleClick={() => addFromTemplate(json)}
        onKeyDown={onKeyDown}
      >
        <span className="palette-name">{label}</span>
        {detail ? <span className="palette-detail">{detail}</span> : null}
      </div>
    </li>
  );
});

const KindSection = memo(function KindSection({ query }: { query: string }) {
  const items = KIND_ITEMS.filter((k) => matches(query, k.kind, k.label, k.description, 'step'));
  if (items.length === 0) return null;
  return (
    <section className="palette-section" aria-label="Steps">
      <h3 className="palette-heading">Steps</h3>
      <ul className="palette-list">
        {items.map((k) => (
          <PaletteItem
            key={k.key ?? k.kind}
            testId={`palette-item-kind-${k.key ?? k.kind}`}
            kind={k.kind}
            label={k.label}
            detail={k.description}
            json={JSON.stringify(k.template)}
          />
        ))}
      </ul>
    </section>
  );
});

interface Filtered {
  tools: ToolInfo[];
  resources: ResourceInfo[];
  prompts: PromptInfo[];
}

function filterOffer(offer: ServerOffer, query: string): Filtered {
  return {
    tools: offer.tools.filter((t) => matches(query, offer.server, t.name, t.description)),
    resources: offer.resources.filter((r) => matches(query, offer.server, r.name, r.uri, r.description)),
    prompts: offer.prompts.filter((p) => matches(query, offer.server, p.name, p.description)),
  };
}

const ServerSection = memo(function ServerSection({
  offer,
  query,
}: {
  offer: ServerOffer;
  query: string;
}) {
  const found = useMemo(() => filterOffer(offer, query), [offer, query]);
  const count = found.tools.length + found.resources.length + found.prompts.length;
  if (query && count === 0 && !(offer.error && matches(query, offer.server))) return null;
  const awaiting = isWaiting(offer);
  const remembered = typeof offer.listed_at === 'string';
  return (
    <section
      className="palette-section"
      aria-label={`Server ${offer.server}`}
      data-testid={`palette-server-${offer.server}`}
      data-awaiting={awaiting ? 'true' : undefined}
    >
      <h3 className="palette-heading">
        {offer.server}
        {!offer.error || remembered ? <span className="palette-count">{count}</span> : null}
      </h3>
      {awaiting ? (
        <div className="palette-awaiting" data-testid={`palette-awaiting-${offer.server}`}>
          <span title={offer.listed_at ? `As listed ${offer.listed_at}` : undefined}>Awaits approval · tools as last listed</span>
          <button
            type="button"
            data-testid={`palette-approve-${offer.server}`}
            onClick={() => void requestConsent(offer.server)}
            title={`Review what ${offer.server} starts, and approve it`}
          >
            Approve…
          </button>
        </div>
      ) : offer.error?.code === AUTH_REQUIRED ? (
        <div data-testid={`palette-error-${offer.server}`} data-code={AUTH_REQUIRED}>
          <p className="inline-warning">Needs a sign-in before its tools can be listed.</p>
          <RunSignIn server={offer.server} message={offer.error.message} testPrefix="palette-signin" />
        </div>
      ) : offer.error ? (
        <p className="inline-error" data-testid={`palette-error-${offer.server}`}>
          {offer.error.message}
          {remembered ? ' (its tools as last listed)' : ''}
        </p>
      ) : count === 0 ? (
        <p className="muted">offers nothing</p>
      ) : null}
      {found.tools.length ? (
        <ul className="palette-list" aria-label="Tools">
          {found.tools.map((t) => (
            <PaletteItem
              key={t.name}
              testId={`palette-item-${offer.server}-${t.name}`}
              kind="tool"
              label={t.name}
              detail={t.description}
              awaiting={awaiting}
              json={JSON.stringify(toolTemplate({ ...t, server: offer.server }))}
            />
          ))}
        </ul>
      ) : null}
      {found.resources.length ? (
        <>
          <h4 className="palette-subheading">Resources</h4>
          <ul className="palette-list" aria-label="Resources">
            {found.resources.map((r) => (
              <PaletteItem
                key={r.uri}
                testId={`palette-resource-${offer.server}-${r.name}`}
                kind="resource"
                label={r.name}
                detail={r.description ?? r.uri}
                hint={r.uri}
                awaiting={awaiting}
                json={JSON.stringify(resourceTemplate({ ...r, server: offer.server }))}
              />
            ))}
          </ul>
        </>
      ) : null}
      {found.prompts.length ? (
        <>
          <h4 className="palette-subheading">Prompts</h4>
          <ul className="palette-list" aria-label="Prompts">
            {found.prompts.map((p) => (
              <PaletteItem
                key={p.name}
                testId={`palette-prompt-${offer.server}-${p.name}`}
                kind="prompt"
                label={p.name}
                detail={p.description}
                awaiting={awaiting}
                json={JSON.stringify(promptTemplate({ ...p, server: offer.server }))}
              />
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
});

export const Palette = memo(function Palette() {
  const desktop = inTauri();
  const [query, setQuery] = useState('');
  const deferred = useDeferredValue(query.trim());
  const offers = useServers((s) => s.offers);
  const servers = useServers((s) => s.servers);
  const loading = useServers((s) => s.offersLoading);
  const loaded = useServers((s) => s.offersLoaded);
  const error = useServers((s) => s.offersError);
  useEffect(() => {
    // (StrictMode runs this twice: the first call has already set offersLoading.)
    if (desktop && !loaded && !serversStore.getState().offersLoading) void refreshAll();
  }, [desktop, loaded]);
  const waiting = useMemo(() => waitingServers(offers, servers, deferred), [offers, servers, deferred]);

  return (
    <div className="palette" data-testid="palette">
      <div className="palette-top">
        <input
          type="search"
          className="palette-search"
          data-testid="palette-search"
          placeholder="Search steps, tools, resources, prompts"
          aria-label="Search the palette"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        {desktop ? (
          <button
            type="button"
            className="palette-refresh"
            data-testid="palette-refresh"
            onClick={() => void refreshAll()}
            disabled={loading}
            title="List the servers' tools again"
            aria-label="Refresh"
          >
            {loading ? '…' : '↻'}
          </button>
        ) : null}
      </div>
      <KindSection query={deferred} />
      {!desktop ? <p className="muted palette-note">Server tools appear here in the desktop app.</p> : null}
      {desktop && loading && !loaded ? <p className="muted palette-note">Listing the servers’ tools…</p> : null}
      {error ? (
        <p className="inline-error palette-note" role="alert">
          {error}
        </p>
      ) : null}
      {desktop && loaded && offers.length === 0 && !error ? (
        <p className="muted palette-note">No server is configured: add one with the Servers button.</p>
      ) : null}
      <WaitingGroup waiting={waiting} />
      {offers
        .filter((o) => !isUnlisted(o))
        .map((o) => (
          <ServerSection key={o.server} offer={o} query={deferred} />
        ))}
    </div>
  );
});
