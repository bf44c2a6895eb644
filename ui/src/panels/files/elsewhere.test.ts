// @vitest-environment jsdom
// The open document changed elsewhere, against a fake backend (mockIPC): a newer stored
// revision shows the notice with the diff; Reload takes theirs, Keep mine keeps the
// canvas unsaved against their revision; the studio's own save and an identical revision
// say nothing.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deferred, mockBackend, type MockBackend } from '../../backend/mock-backend';
import { docStore } from '../../doc/store';
import type { Blueprint } from '../../doc/types';
import { save } from './actions';
import { blueprintsChanged, checkOpenDocument, elsewhereStore, keepMine, reloadTheirs } from './elsewhere';

const mine: Blueprint = {
  blueprint: 1,
  id: 'live',
  name: 'Live',
  steps: [{ id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'hi' } }],
} as Blueprint;
const theirs: Blueprint = {
  ...mine,
  steps: [
    { id: 'wait', kind: 'tool', server: 'echo', tool: 'sleep', args: { ms: 10 } },
    { id: 'say', kind: 'tool', server: 'echo', tool: 'echo', args: { message: 'from the agent' }, after: ['wait'] },
  ],
} as Blueprint;

const info = (rev: number) => ({ id: 'live', rev, saved_at: `2026-01-0${rev}T00:00:00Z`, name: 'Live', description: null });

let be: MockBackend;
let stored: { rev: number; doc: Blueprint };

beforeEach(() => {
  stored = { rev: 1, doc: mine };
  be = mockBackend({
    list_blueprints: () => [info(stored.rev)],
    get_blueprint: () => ({ info: info(stored.rev), doc: stored.doc }),
    save_blueprint: (a) => {
      stored = { rev: stored.rev + 1, doc: a.doc as Blueprint };
      return { info: info(stored.rev), warnings: [] };
    },
  });
  docStore.getState().load(mine, { id: 'live', rev: 1, saved_at: info(1).saved_at });
  elsewhereStore.setState({ change: null });
});

afterEach(() => be.stop());

describe('the open document changed elsewhere', () => {
  it('says nothing while the store holds the revision the canvas loaded', async () => {
    await blueprintsChanged();
    expect(elsewhereStore.getState().change).toBeNull();
  });

  it('shows a newer revision with what it changes, and Reload takes it', async () => {
    stored = { rev: 2, doc: theirs };
    await blueprintsChanged();
    const change = elsewhereStore.getState().change;
    expect(change).toMatchObject({ id: 'live', rev: 2, mine: 1 });
    expect(change?.diff).toEqual({ added: ['wait'], removed: [], changed: [{ id: 'say', fields: ['after', 'args'] }], fields: [] });
    reloadTheirs();
    expect(elsewhereStore.getState().change).toBeNull();
    expect(docStore.getState().doc).toEqual(theirs);
    expect(docStore.getState().meta.rev).toBe(2);
    expect(docStore.getState().dirty).toBe(false);
  });

  it('Keep mine leaves the canvas as it is, unsaved against their revision, and does not ask again for it', async () => {
    stored = { rev: 2, doc: theirs };
    await checkOpenDocument();
    keepMine();
    expect(docStore.getState().doc).toBe(mine);
    expect(docStore.getState().dirty).toBe(true);
    expect(docStore.getState().meta.rev).toBe(2);
    await checkOpenDocument();
    expect(elsewhereStore.getState().change).toBeNull();
    expect(await save()).toBe(true);
    expect(stored).toEqual({ rev: 3, doc: mine });
  });

  it('takes a newer revision that is the document itself quietly', async () => {
    stored = { rev: 2, doc: JSON.parse(JSON.stringify(mine)) as Blueprint };
    await checkOpenDocument();
    expect(elsewhereStore.getState().change).toBeNull();
    expect(docStore.getState().meta.rev).toBe(2);
  });

  it('does not take the studio’s own save for a change made elsewhere', async () => {
    const gate = deferred<void>();
    be.on('save_blueprint', (a) => {
      stored = { rev: 2, doc: a.doc as Blueprint };
      return gate.promise.then(() => ({ info: info(2), warnings: [] }));
    });
    docStore.getState().setSettings({ name: 'Renamed here' });
    const saving = save();
    // Edited again while saving, and the backend says "blueprints changed" before the save answers.
    docStore.getState().setSettings({ description: 'typed meanwhile' });
    const check = blueprintsChanged();
    await new Promise((r) => setTimeout(r, 20));
    gate.resolve();
    await Promise.all([saving, check]);
    expect(elsewhereStore.getState().change).toBeNull();
    expect(docStore.getState().meta.rev).toBe(2);
    expect(docStore.getState().dirty).toBe(true);
  });
});
