// @vitest-environment jsdom
// A run an earlier session left waiting, in the studio shell against a fake backend
// (mockIPC) and the events of a real run (run/fixtures/people.ndjson, cut at its first
// question): the notice says a run waits for you; it opens the run live — the node waits,
// the form is in the inspector, History says what it waits for —; the answer goes to
// `answer_and_follow` with the document on the canvas (not `answer_question`), and the
// run that resumes it plays live, its finished steps pinned. A refused answer leaves the
// waiting run shown with the backend's reason.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunInfo, WaitingRunInfo } from '../../backend';
import { commandError, mockBackend, type MockBackend } from '../../backend/mock-backend';
import { docStore } from '../../doc/store';
import { runStore, type RunEvent } from '../../run';
import { fixture } from '../../run/fixtures/load';
import { Studio } from '../../Studio';
import { click, sender, settle, tid, type ChannelLike } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { initialServersState, serversStore } from '../servers';
import { useAnswers } from './answers';
import { closeRun, refreshWaiting, useSession } from './session';

beforeAll(installLayoutStubs);

const PEOPLE = fixture('people');
const RUN = 'run-waiting';
// Up to the first question (`who`), as a run killed while it waited left them.
const cut = PEOPLE.events.findIndex((e) => e.type === 'StepWaiting' && e.step === 'who');
const EVENTS: RunEvent[] = PEOPLE.events.slice(0, cut + 1);
const waitingEvent = EVENTS[cut] as Extract<RunEvent, { type: 'StepWaiting' }>;

const info = (id: string, status: string, extra: Partial<RunInfo> = {}): RunInfo => ({
  id,
  blueprint: PEOPLE.blueprint.id,
  status,
  trigger: 'studio',
  client: null,
  started_at: '2026-11-28T10:00:00.000Z',
  finished_at: null,
  duration_ms: null,
  blueprint_rev: null,
  rerun_of: null,
  resumed_from: null,
  debug: false,
  paused_ms: null,
  ...extra,
});

const WAITING: WaitingRunInfo = {
  run: info(RUN, 'waiting'),
  questions: [{ run_id: RUN, ...waitingEvent.question, server: null, schema: waitingEvent.question.schema ?? null, default: waitingEvent.question.default ?? null, url: null }] as WaitingRunInfo['questions'],
  in_flight: false,
};

let root: Root;
let host: HTMLElement;
let be: MockBackend;

beforeEach(async () => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend({
    waiting_runs: () => [WAITING],
    list_runs: () => [info(RUN, 'waiting')],
    get_run: () => ({ info: info(RUN, 'waiting'), inputs: {}, events: EVENTS, envelope: null }),
  });
  useSession.setState({ active: null, starting: false, debugging: false, history: [], historyFor: null, waitingRun: null, waiting: [], error: null });
  useAnswers.setState({ sending: {}, problems: {}, sent: {} });
  docStore.getState().load(PEOPLE.blueprint, { id: PEOPLE.blueprint.id, rev: 1 });
  await act(async () => root.render(<Studio validate={false} />));
  await settle();
  await act(async () => refreshWaiting());
  await settle();
});

afterEach(async () => {
  closeRun();
  useSession.setState({ active: null, waiting: [] });
  runStore.getState().reset();
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  serversStore.setState(initialServersState());
});

describe('a run an earlier session left waiting', () => {
  it('the notice opens it live: the node waits, the form is in the inspector, History says what for', async () => {
    const notice = tid('waiting-notice')!;
    expect(notice.dataset.count).toBe('1');
    expect(notice.textContent).toContain('1 run is waiting for you');
    expect(notice.textContent).toContain('Who is asking?');
    await click(tid('waiting-notice-run'));
    expect(runStore.getState()).toMatchObject({ mode: 'live', runId: RUN });
    expect(useSession.getState().waitingRun).toBe(RUN);
    expect(tid('run-who')!.dataset.state).toBe('waiting');
    expect(tid('run-state')!.dataset.waiting).toBe('true');
    expect(docStore.getState().selected).toEqual(['who']);
    expect(tid('question')!.dataset.asking).toBe('input');
    // The run shown has its own notification; the notice leaves it out.
    expect(tid('waiting-notice')).toBeNull();
    expect(tid('question-toast')!.dataset.step).toBe('who');
    expect(tid('history-row')!.dataset.status).toBe('waiting');
    expect(tid('history-waits')!.textContent).toContain('Who is asking?');
  });

  it('answered, it resumes as a new run on the document on the canvas, which plays live', async () => {
    let channel: ChannelLike | null = null;
    be.on('answer_and_follow', (a) => {
      channel = a.onEvents as ChannelLike;
      return { run_id: 'run-resumed', blueprint: PEOPLE.blueprint.id };
    });
    await click(tid('waiting-notice-run'));
    await click(tid('question-accept'));
    expect(be.calls('answer_question')).toHaveLength(0);
    const call = be.calls('answer_and_follow')[0]!;
    expect(call).toMatchObject({ runId: RUN, questionId: 'q1', answer: { action: 'accept', content: { value: 'Ada' } } });
    expect((call.doc as { id: string }).id).toBe(PEOPLE.blueprint.id);
    expect(runStore.getState().options.pinnedFrom).toBe(RUN);
    expect(useSession.getState()).toMatchObject({ active: 'run-resumed', waitingRun: null });
    const send = sender(channel!);
    await send([{ seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'run-resumed', blueprint: PEOPLE.blueprint.id, inputs: {} } as RunEvent]);
    await send(PEOPLE.events.slice(1, cut + 3).map((e, i) => ({ ...e, seq: i + 2 })));
    await settle();
    expect(runStore.getState().runId).toBe('run-resumed');
    expect(tid('run-who')!.dataset.state).toBe('succeeded');
    expect(tid('question-toast')).toBeNull();
  });

  it("a refused answer keeps the waiting run shown, with the backend's reason", async () => {
    be.on('answer_and_follow', () => {
      throw commandError('BAD_REQUEST', 'run `run-waiting` is a run of blueprint `people`, not of `other`; resume it on `people`');
    });
    await click(tid('waiting-notice-run'));
    await click(tid('question-accept'));
    expect(tid('question-problem')!.dataset.code).toBe('BAD_REQUEST');
    expect(runStore.getState()).toMatchObject({ mode: 'live', runId: RUN });
    expect(useSession.getState()).toMatchObject({ active: null, waitingRun: RUN, starting: false });
  });
});
