// @vitest-environment jsdom
// The studio's connection to the mcpflow service, against a fake backend (mockIPC, its
// `service_status` and `service-status` event): the indicator over the canvas in each
// state; a lost connection told once in the backend's words, Run and Debug waiting while
// it lasts; coming back told, with the blueprints and History read again; an event newer
// than the answer to the first question wins.

import { act, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceStore, statusStore, type ServiceStatus } from '../backend';
import { deferred, mockBackend, removeBackend, type MockBackend } from '../backend/mock-backend';
import { docStore } from '../doc/store';
import type { Blueprint } from '../doc/types';
import { Toasts } from '../panels/files/StatusLine';
import { initialServersState, serversStore } from '../panels/servers';
import { useSession } from '../panels/run/session';
import { Studio } from '../Studio';
import { settle, tid } from '../testing/dom';
import { example } from '../testing/examples';
import { installLayoutStubs } from '../testing/jsdom';
import { followService, serviceStatusChanged } from './service';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;
let stop: () => void = () => {};

const connected = (pid: number): ServiceStatus => ({ state: 'connected', pid, message: null, team: null });
const STOPPED = 'the mcpflow service (pid 4242) stopped; runs it had in flight are marked interrupted';
const lost = (message: string | null = STOPPED): ServiceStatus => ({ state: 'reconnecting', pid: null, message, team: null });

const DOC = JSON.parse(example('pipeline-prev')) as Blueprint;
const INFO = { id: DOC.id, rev: 1, saved_at: '2026-11-28T10:00:00Z', name: DOC.name ?? null, description: null };

const render = async (node: ReactNode) => {
  await act(async () => root.render(node));
  await settle();
};
const emit = async (status: ServiceStatus) => {
  await act(async () => be.emit('service-status', status));
  await settle();
};
/** Follows the connection as `main.tsx` does (stopped after the test). */
const follow = async () => {
  await act(async () => {
    stop = await followService();
  });
  await settle();
};
const indicator = () => tid('service-status')!;
const runButton = (id: 'run-start' | 'run-debug') => tid(id) as HTMLButtonElement;

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend({ list_blueprints: () => [INFO] });
  serviceStore.setState({ status: null, problem: null });
  statusStore.setState({ message: null, interrupted: [] });
});

afterEach(async () => {
  stop();
  stop = () => {};
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  serversStore.setState(initialServersState());
  useSession.setState({ active: null, starting: false, history: [], historyFor: null, waiting: [] });
  serviceStore.setState({ status: null, problem: null });
  statusStore.setState({ message: null, interrupted: [] });
});

describe('the service indicator', () => {
  it('shows each state in the same box: service with its pid, a team’s service with its address, reconnecting…, in this window, not known yet, no backend', async () => {
    await render(<Toasts />);
    const box = indicator();
    expect(box.dataset.state).toBe('unknown');
    expect(box.textContent).toBe('service');

    await act(async () => serviceStore.setState({ status: connected(1234) }));
    expect(box.dataset.state).toBe('connected');
    expect(box.textContent).toBe('service');
    expect(box.title).toBe('mcpflow service, pid 1234 — shared with your MCP hosts and the CLI');

    // A team's service (MCPFLOW_SERVICE): "team", its address on hover.
    await act(async () => serviceStore.setState({ status: { ...connected(99), team: '127.0.0.1:7070' } }));
    expect(box.dataset.state).toBe('connected');
    expect(box.textContent).toBe('team');
    expect(box.title).toBe("the team's mcpflow service at 127.0.0.1:7070, pid 99 — the team's store and workers");

    await act(async () => serviceStore.setState({ status: lost() }));
    expect(box.dataset.state).toBe('reconnecting');
    expect(box.className).toContain('service-reconnecting');
    expect(box.textContent).toBe('reconnecting…');
    expect(box.title).toContain(STOPPED);

    await act(async () => serviceStore.setState({ status: { state: 'in_process', pid: null, message: null, team: null } }));
    expect(box.dataset.state).toBe('in_process');
    expect(box.textContent).toBe('in this window');
    expect(box.title).toContain('this window holds the data folder itself');

    await act(async () => serviceStore.setState({ status: null, problem: 'the backend did not say how it reaches the data folder: no' }));
    expect(box.dataset.state).toBe('unknown');
    expect(box.title).toContain('did not say');
    // The same element all along: it changes in place, at the top of the toasts.
    expect(indicator()).toBe(box);
    expect(host.querySelector('.toasts')!.firstElementChild).toBe(box);

    removeBackend();
    await render(<Toasts key="browser" />);
    expect(indicator().dataset.state).toBe('none');
    expect(indicator().textContent).toBe('no backend');
  });
});

describe('the connection to the service', () => {
  it('is asked at start and says nothing while it holds', async () => {
    await render(<Toasts />);
    await follow();
    expect(be.calls('service_status')).toHaveLength(1);
    expect(indicator().dataset.state).toBe('connected');
    expect(indicator().title).toContain('pid 4242');
    expect(statusStore.getState().message).toBeNull();
  });

  it('lost then back: told once in the backend’s words, Run waits, then told again and the blueprints and History are read again', async () => {
    docStore.getState().load(DOC, { id: INFO.id, rev: INFO.rev, saved_at: INFO.saved_at });
    await render(<Studio validate={false} />);
    await follow();
    expect(runButton('run-start').disabled).toBe(false);
    const lists = be.calls('list_blueprints').length;
    const histories = be.calls('list_runs').length;

    await emit(lost());
    expect(indicator().dataset.state).toBe('reconnecting');
    expect(statusStore.getState()).toMatchObject({ level: 'warning', message: STOPPED });
    expect(tid('status')!.textContent).toContain(STOPPED);
    for (const id of ['run-start', 'run-debug'] as const) {
      expect(runButton(id).disabled).toBe(true);
      expect(runButton(id).title).toBe('The mcpflow service is reconnecting: runs can start once it is back');
    }
    // Once per loss: the backend saying it again while it retries is not a new message.
    await act(async () => statusStore.setState({ message: null }));
    await emit(lost('still trying'));
    expect(statusStore.getState().message).toBeNull();
    expect(be.calls('list_blueprints')).toHaveLength(lists);

    await emit(connected(5151));
    expect(indicator().dataset.state).toBe('connected');
    expect(indicator().title).toContain('pid 5151');
    expect(statusStore.getState()).toMatchObject({ level: 'success', message: 'reconnected to the mcpflow service (pid 5151)' });
    expect(be.calls('list_blueprints').length).toBeGreaterThan(lists);
    expect(be.calls('list_runs').length).toBeGreaterThan(histories);
    expect(be.calls('list_runs').at(-1)).toEqual({ blueprint: DOC.id, limit: 100 });
    expect(runButton('run-start').disabled).toBe(false);
    expect(runButton('run-debug').disabled).toBe(false);
  });

  it('lost at start: told, and the indicator says so', async () => {
    be.on('service_status', () => lost('starting the mcpflow service'));
    await render(<Toasts />);
    await follow();
    expect(indicator().dataset.state).toBe('reconnecting');
    expect(statusStore.getState()).toMatchObject({ level: 'warning', message: 'starting the mcpflow service' });
  });

  it('takes an event sent while the first question was under way over its answer', async () => {
    const answer = deferred<ServiceStatus>();
    be.on('service_status', () => answer.promise);
    await render(<Toasts />);
    let following!: Promise<() => void>;
    await act(async () => {
      following = followService();
    });
    await emit(lost());
    await act(async () => {
      answer.resolve(connected(4242));
      stop = await following;
    });
    await settle();
    expect(indicator().dataset.state).toBe('reconnecting');
  });

  it('says which way it reaches the folder when that changes without a loss between', async () => {
    serviceStatusChanged(connected(1));
    expect(statusStore.getState().message).toBeNull();
    serviceStatusChanged(connected(2));
    expect(statusStore.getState()).toMatchObject({ level: 'success', message: 'reconnected to the mcpflow service (pid 2)' });
    serviceStatusChanged({ state: 'in_process', pid: null, message: null, team: null });
    expect(statusStore.getState()).toMatchObject({ level: 'info', message: 'the studio holds the data folder itself now (no mcpflow service)' });
    serviceStatusChanged(connected(3));
    expect(statusStore.getState().message).toBe('connected to the mcpflow service (pid 3)');
    // Each change read History again.
    await settle();
    expect(be.calls('list_runs')).toHaveLength(3);
  });
});
