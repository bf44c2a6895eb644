// @vitest-environment jsdom
// The run controls keep their places: the same buttons, in the same order, whether
// nothing runs, a run is running or paused (Continue takes Pause's place), or it has
// finished (✕ appears only inside the fixed status slot). Run and Debug wait while the
// connection to the mcpflow service is lost, and say why.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceStore } from '../../backend';
import { mockBackend, type MockBackend } from '../../backend/mock-backend';
import { runStore } from '../../run';
import { installLayoutStubs } from '../../testing/jsdom';
import { RunToolbar } from './RunToolbar';
import { useSession } from './session';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;

beforeEach(() => {
  be = mockBackend();
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  be.stop();
  useSession.setState({ active: null, starting: false });
  runStore.setState({ mode: 'idle' });
  serviceStore.setState({ status: null, problem: null });
});

/** The toolbar's buttons outside the status slot, in order, Continue counted as Pause's place. */
const places = () =>
  [...host.querySelectorAll('.run-toolbar > button')].map((b) => {
    const id = b.getAttribute('data-testid');
    return id === 'run-continue' ? 'run-pause' : id;
  });

describe('RunToolbar', () => {
  it('shows the same buttons in the same places idle, running, paused and finished', async () => {
    await act(async () => root.render(<RunToolbar />));
    const idle = places();
    expect(idle).toEqual(['run-start', 'run-debug', 'run-pause', 'run-step', 'run-cancel']);
    expect((host.querySelector('[data-testid="run-pause"]') as HTMLButtonElement).disabled).toBe(true);

    await act(async () => {
      runStore.getState().begin('r1', ['a'], 'live');
      runStore.setState((s) => ({ live: { ...s.live, status: 'running' } }));
      useSession.setState({ active: 'r1' });
    });
    expect(places()).toEqual(idle);
    expect((host.querySelector('[data-testid="run-start"]') as HTMLButtonElement).disabled).toBe(true);
    expect((host.querySelector('[data-testid="run-pause"]') as HTMLButtonElement).disabled).toBe(false);
    expect(host.querySelector('.run-chip-slot [data-testid="run-state"]')!.getAttribute('data-status')).toBe('running');

    await act(async () => runStore.setState((s) => ({ live: { ...s.live, status: 'paused' } })));
    expect(places()).toEqual(idle);
    expect(host.querySelector('[data-testid="run-continue"]')).not.toBeNull();
    expect((host.querySelector('[data-testid="run-step"]') as HTMLButtonElement).disabled).toBe(false);

    await act(async () => {
      runStore.setState((s) => ({ live: { ...s.live, status: 'succeeded' } }));
      useSession.setState({ active: null });
    });
    expect(places()).toEqual(idle);
    expect(host.querySelector('.run-chip-slot [data-testid="run-close"]')).not.toBeNull();
  });

  it('disables Run and Debug while the mcpflow service reconnects, saying why, and enables them when it is back', async () => {
    const button = (id: string) => host.querySelector(`[data-testid="${id}"]`) as HTMLButtonElement;
    await act(async () => root.render(<RunToolbar />));
    await act(async () => serviceStore.setState({ status: { state: 'reconnecting', pid: null, message: 'the service stopped', team: null } }));
    for (const id of ['run-start', 'run-debug']) {
      expect(button(id).disabled).toBe(true);
      expect(button(id).title).toBe('The mcpflow service is reconnecting: runs can start once it is back');
    }
    await act(async () => serviceStore.setState({ status: { state: 'connected', pid: 7, message: null, team: null } }));
    expect(button('run-start').disabled).toBe(false);
    expect(button('run-start').title).toBe('Run the blueprint on the canvas (saved or not)');
    expect(button('run-debug').disabled).toBe(false);
  });
});
