// @vitest-environment jsdom
// The run UI in the studio shell against a fake backend (mockIPC): Run asks consent for
// an unapproved server before anything starts; recorded events (a real run of
// workflows/loop-collect) streamed over the run's Tauri Channel in batches put every
// node in its final state on the canvas, with the loop's done/total; a breakpoint pause
// shows the step's resolved arguments; Debug sends the editor's breakpoints; the
// history opens a past run and the timeline moves back to a running node; a step whose
// server asks the model shows it on its card and in the Run tab, then the answer.

import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockBackend, type MockBackend } from '../../backend/mock-backend';
import { docStore } from '../../doc/store';
import { runStore, sinceStart, type RunEvent } from '../../run';
import { expectedInstances } from '../../run/fixtures/oracle';
import { extraFixture, fixture } from '../../run/fixtures/load';
import { Studio } from '../../Studio';
import { click, q, sender, settle, tid, type ChannelLike } from '../../testing/dom';
import { installLayoutStubs } from '../../testing/jsdom';
import { initialServersState, serversStore } from '../servers';
import { useBreakpoints } from './breakpoints';
import { closeRun, useSession } from './session';

beforeAll(installLayoutStubs);

let root: Root;
let host: HTMLElement;
let be: MockBackend;

const LOOP = fixture('loop-collect');

beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
  be = mockBackend();
  useSession.setState({ active: null, starting: false, debugging: false, history: [], historyFor: null, error: null });
  useBreakpoints.setState({ byBlueprint: {} });
});

afterEach(async () => {
  closeRun();
  useSession.setState({ active: null });
  runStore.getState().reset();
  await act(async () => root.unmount());
  host.remove();
  be.stop();
  serversStore.setState(initialServersState());
});

async function mountWith(doc = LOOP.blueprint) {
  docStore.getState().load(doc, { id: doc.id, rev: 1 });
  await act(async () => root.render(<Studio validate={false} />));
  await settle();
}

describe('runs in the studio', () => {
  it('asks consent for an unapproved server before the run starts', async () => {
    be.on('run_servers', () => [
      { name: 'everything', transport: 'stdio', command: 'node server-everything', url: null, approved: false, config: {} },
    ]);
    await mountWith();
    await click(tid('run-start'));
    expect(tid('consent-dialog')).not.toBeNull();
    expect(be.calls('start_run')).toHaveLength(0);
    expect(tid('consent-command')?.textContent).toContain('node server-everything');
    // Declining leaves everything as it was.
    await click(tid('consent-cancel'));
    expect(be.calls('start_run')).toHaveLength(0);
    expect(useSession.getState().starting).toBe(false);
    // Approving starts the run, with the document the server was approved for.
    await click(tid('run-start'));
    await click(tid('consent-approve'));
    expect(be.calls('approve_run_server')).toEqual([{ doc: LOOP.blueprint, name: 'everything' }]);
    expect(be.calls('start_run')).toHaveLength(1);
  });

  it("asks consent for a blueprint's HTTP server that would be sent a variable, naming it but not its value", async () => {
    const shown = 'URL http://192.0.2.1/mcp (sends: AWS_SECRET_ACCESS_KEY)';
    be.on('run_servers', () => [
      { name: 'remote', transport: 'http', command: shown, url: 'http://192.0.2.1/mcp', approved: false, config: {} },
    ]);
    await mountWith();
    await click(tid('run-start'));
    expect(tid('consent-dialog')?.textContent).toContain('reach “remote”');
    expect(tid('consent-command')?.textContent).toBe(shown);
    await click(tid('consent-approve'));
    expect(be.calls('approve_run_server')).toEqual([{ doc: LOOP.blueprint, name: 'remote' }]);
    expect(be.calls('start_run')).toHaveLength(1);
  });

  it('streams a recorded run onto the canvas: every node in its final state, the loop done/total, the result', async () => {
    let channel: ChannelLike | null = null;
    be.on('start_run', (a) => {
      channel = a.onEvents as ChannelLike;
      return { run_id: 'r1', blueprint: LOOP.blueprint.id };
    });
    await mountWith();
    await click(tid('run-start'));
    expect(be.calls('start_run')).toHaveLength(1);
    expect(be.calls('start_run')[0]!.breakpoints).toEqual([]);
    expect(tid('run-pause')).not.toBeNull();
    const send = sender(channel!);
    // Before any event every node is queued.
    expect(tid(`run-${LOOP.stepIds[0]}`)?.dataset.state).toBe('queued');
    const events = LOOP.events;
    const half = Math.floor(events.length / 2);
    await send(events.slice(0, half));
    await send(events.slice(half), true);
    await settle();
    const expected = expectedInstances(events, Infinity);
    for (const id of LOOP.stepIds) {
      if (LOOP.parents[id]) continue; // body steps show an aggregate
      const want = expected.get(`${id}|`)?.state ?? 'queued';
      expect(tid(`run-${id}`)?.dataset.state, id).toBe(want);
    }
    const loops = [...new Set(Object.values(LOOP.parents))];
    for (const loop of loops) {
      expect(tid(`loop-count-${loop}`)?.textContent).toMatch(/^(\d+)\/\1$/);
    }
    expect(tid('run-result')?.dataset.status).toBe('succeeded');
    // The run is over: Run is back, and the history was asked for.
    expect(tid('run-start')).not.toBeNull();
    expect(be.calls('list_runs').length).toBeGreaterThan(0);
  });

  it('a step whose server asks the model shows it on its card and in the Run tab, then the answer', async () => {
    const doc = {
      blueprint: 1,
      id: 'asks',
      steps: [{ id: 'haiku', kind: 'tool', server: 'everything', tool: 'trigger-sampling-request', args: { prompt: 'a haiku' } }],
    } as unknown as typeof LOOP.blueprint;
    let channel: ChannelLike | null = null;
    be.on('start_run', (a) => {
      channel = a.onEvents as ChannelLike;
      return { run_id: 'r-s', blueprint: 'asks' };
    });
    await mountWith(doc);
    await click(tid('run-start'));
    const send = sender(channel!);
    const request = { messages: [{ role: 'user', content: { type: 'text', text: 'Write a haiku about sled.' } }], systemPrompt: 'You are a poet.' };
    const ev = (seq: number, e: Record<string, unknown>) => ({ seq, at_ms: seq * 100, ...e }) as unknown as RunEvent;
    await send([
      ev(1, { type: 'RunStarted', run_id: 'r-s', blueprint: 'asks', inputs: {} }),
      ev(2, { type: 'StepStarted', step: 'haiku', path: [], attempt: 1 }),
      ev(3, { type: 'StepSampling', step: 'haiku', path: [], server: 'everything', request }),
    ]);
    await settle();
    const status = tid('run-haiku')!;
    expect(status.dataset.state).toBe('running');
    expect(status.dataset.shown).toBe('sampling');
    expect(status.textContent).toContain('asking the model…');
    expect(status.querySelector('.run-sampling')?.getAttribute('title')).toContain('everything asks the model: “Write a haiku about sled.”');
    expect(tid('step-haiku')!.className).toMatch(/\brun-sampling\b/);
    const open = q('[data-testid="run-samples"] [data-testid="run-sample"]')!;
    expect(open.dataset.state).toBe('open');
    expect(open.querySelector('[data-testid="sample-request"]')!.textContent).toContain('You are a poet.');
    expect(open.querySelector('[data-testid="sample-answer"]')!.textContent).toContain('asking the model…');

    const result = { role: 'assistant', content: { type: 'text', text: 'Sled glides on' }, model: 'llama3.2', stopReason: 'endTurn' };
    await send(
      [
        ev(4, { type: 'StepSampled', step: 'haiku', path: [], server: 'everything', result }),
        ev(5, { type: 'StepFinished', step: 'haiku', path: [], status: 'succeeded', output: 'Sled glides on', attempts: 1, duration_ms: 300 }),
        ev(6, {
          type: 'RunFinished',
          envelope: { run_id: 'r-s', blueprint: 'asks', status: 'succeeded', output: null, summary: { steps: 1, succeeded: 1, failed: 0, skipped: 0, tool_calls: 1 }, errors: [], duration_ms: 600 },
        }),
      ],
      true,
    );
    await settle();
    expect(tid('run-haiku')!.dataset.shown).toBe('succeeded');
    const answered = q('[data-testid="run-samples"] [data-testid="run-sample"]')!;
    expect(answered.dataset.state).toBe('answered');
    expect(answered.querySelector('[data-testid="sample-model"]')!.textContent).toBe('llama3.2');
    expect(answered.querySelector('[data-testid="sample-answer"]')!.textContent).toContain('Sled glides on');
    expect(answered.querySelector('[data-testid="sample-answer"]')!.textContent).toContain('answered in 100 ms');
  });

  it('Debug sends the breakpoints; a pause shows the resolved arguments; Step and Continue control the run', async () => {
    let channel: ChannelLike | null = null;
    be.on('start_run', (a) => {
      channel = a.onEvents as ChannelLike;
      return { run_id: 'r2', blueprint: 'bp' };
    });
    await mountWith();
    const target = LOOP.stepIds.find((id) => !LOOP.parents[id])!;
    await click(tid(`bp-${target}`));
    expect(tid(`bp-${target}`)?.getAttribute('aria-pressed')).toBe('true');
    await click(tid('run-debug'));
    const call = be.calls('start_run')[0]!;
    expect(call.breakpoints).toEqual([target]);
    expect(call.paused).toBe(false);
    const send = sender(channel!);
    await send([
      { seq: 1, at_ms: 0, type: 'RunStarted', run_id: 'r2', blueprint: 'bp', inputs: {} },
      { seq: 2, at_ms: 1, type: 'RunPaused', reason: 'breakpoint', step: target, path: [], args: { message: 'resolved-value-42' } },
    ]);
    await settle();
    expect(tid('run-state')?.dataset.status).toBe('paused');
    expect(tid(`run-${target}`)?.dataset.state).toBe('paused');
    expect(tid('pause-info')?.dataset.step).toBe(target);
    expect(tid('pause-args')?.textContent).toContain('resolved-value-42');
    await click(tid('run-step'));
    await click(tid('run-continue'));
    expect(be.calls('control_run').map((c) => c.action)).toEqual(['step', 'resume']);
    await click(tid('run-cancel'));
    expect(be.calls('control_run').map((c) => c.action)).toEqual(['step', 'resume', 'cancel']);
    await send([], true);
  });

  it('opens a past run from the history; the timeline goes back to a point where a node was running', async () => {
    be.on('list_runs', () => [
      {
        id: 'past',
        blueprint: LOOP.blueprint.id,
        status: 'succeeded',
        trigger: 'studio',
        started_at: '2026-11-20T10:00:00Z',
        finished_at: '2026-11-20T10:00:01Z',
        duration_ms: 1000,
        blueprint_rev: 1,
      },
    ]);
    be.on('get_run', () => ({
      info: { id: 'past', blueprint: LOOP.blueprint.id, status: 'succeeded', trigger: 'studio', started_at: '2026-11-20T10:00:00Z', finished_at: null, duration_ms: 1000, blueprint_rev: 1 },
      inputs: {},
      events: LOOP.events,
      envelope: null,
    }));
    await mountWith();
    await click(tid('tab-history'));
    await click(tid('history-row'));
    expect(tid('run-state')?.dataset.status).toBe('succeeded');
    const timeline = tid('timeline') as HTMLInputElement;
    expect(Number(timeline.max)).toBe(LOOP.events.length - 1);
    // The first StepStarted of a top-level step: that step is running right after it.
    const i = LOOP.events.findIndex((e) => e.type === 'StepStarted' && e.path.length === 0);
    const started = LOOP.events[i] as Extract<RunEvent, { type: 'StepStarted' }>;
    await act(async () => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(timeline, String(i));
      timeline.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await settle();
    expect(tid(`run-${started.step}`)?.dataset.state).toBe('running');
    // Labelled with the time since the run started and the step's name.
    expect(tid('timeline-at')?.textContent).toBe(`${sinceStart(started.at_ms)} · ${started.step} started`);
    expect(tid('timeline-at')?.title).toBe(`event ${i + 1} of ${LOOP.events.length}`);
  });

  it('a re-run in the history names the step it re-ran and opens the run it came from', async () => {
    const info = (id: string, started: string) => ({
      id,
      blueprint: LOOP.blueprint.id,
      status: 'succeeded',
      trigger: 'studio',
      started_at: started,
      finished_at: null,
      duration_ms: 10,
      blueprint_rev: null,
      rerun_of: null,
    });
    be.on('list_runs', () => [
      { ...info('again', '2026-11-20T11:00:00Z'), rerun_of: { run: 'past', step: 'fetch', mode: 'from_here' } },
      info('past', '2026-11-20T10:00:00Z'),
    ]);
    be.on('get_run', (args) => ({
      info: info(String(args.runId), '2026-11-20T10:00:00Z'),
      inputs: {},
      events: LOOP.events,
      envelope: null,
    }));
    await mountWith();
    await click(tid('tab-history'));
    const rows = document.querySelectorAll<HTMLElement>('[data-testid="history-row"]');
    expect(rows).toHaveLength(2);
    expect(rows[0]!.querySelector('[data-testid="rerun-of"]')?.textContent).toContain('re-ran from fetch of');
    expect(rows[1]!.querySelector('[data-testid="rerun-of"]')).toBeNull();
    await click(rows[0]!.querySelector<HTMLElement>('[data-testid="rerun-source"]'));
    // The link opens the past run, not the re-run whose row holds it.
    expect(be.calls('get_run').map((c) => c.runId)).toEqual(['past']);
    expect(tid('run-state')?.dataset.status).toBe('succeeded');
  });

  it('a re-run opened from the history shows pinned steps with their run, and steps that never started as "not run"; Debug runs are marked with their active time', async () => {
    const first = extraFixture('faulty-rerun');
    const again = extraFixture('faulty-rerun-pinned');
    const firstId = (first.events[0] as Extract<RunEvent, { type: 'RunStarted' }>).run_id;
    const info = {
      id: 'again',
      blueprint: again.blueprint.id,
      status: 'failed',
      trigger: 'studio',
      started_at: '2026-11-20T11:00:00Z',
      finished_at: null,
      duration_ms: 65_000,
      blueprint_rev: null,
      rerun_of: { run: firstId, step: 'boom', mode: 'from_here' },
      debug: true,
      paused_ms: 60_000,
    };
    be.on('list_runs', () => [info]);
    be.on('get_run', () => ({ info, inputs: {}, events: again.events, envelope: null }));
    await mountWith(again.blueprint);
    await click(tid('tab-history'));
    const row = tid('history-row')!;
    expect(row.dataset.debug).toBe('true');
    expect(row.querySelector('.history-debug')?.textContent).toBe('debug');
    // Active time apart from the time paused: 65 s in all, 60 s of it paused.
    expect(row.querySelector('[data-testid="history-duration"]')?.textContent).toBe('5.00 s +1 min 0 s paused');
    await click(row);
    expect(tid('run-first')?.dataset.shown).toBe('pinned');
    expect(tid('run-first')?.textContent).toContain(`pinned · from run ${firstId.slice(0, 8)}`);
    expect(tid('run-first')?.textContent).not.toContain('0 ms');
    expect(tid('run-call')?.dataset.shown).toBe('not-run');
    expect(tid('run-call')?.textContent).toBe('not run');
    // The card itself is greyed as "not run", not drawn as queued.
    expect(tid('step-call')?.className).toContain('run-not-run');
    expect(tid('step-call')?.className).not.toContain('run-queued');
    expect(tid('run-boom')?.dataset.shown).toBe('failed');
  });

  it('a disabled step shows "disabled" and the one after it ran; argument errors name each argument, the server’s words folded below', async () => {
    const f = extraFixture('args-disabled');
    const info = {
      id: 'args',
      blueprint: f.blueprint.id,
      status: 'partial',
      trigger: 'studio',
      started_at: '2026-11-20T11:00:00Z',
      finished_at: null,
      duration_ms: 33,
      blueprint_rev: null,
      rerun_of: null,
    };
    be.on('list_runs', () => [info]);
    be.on('get_run', () => ({ info, inputs: {}, events: f.events, envelope: null }));
    await mountWith(f.blueprint);
    await click(tid('tab-history'));
    await click(tid('history-row'));

    // The disabled step: "disabled" on its card (not "skipped"), the step after it succeeded.
    expect(tid('run-off')?.dataset.shown).toBe('disabled');
    expect(tid('run-off')?.textContent).toBe('disabled · not run');
    expect(tid('step-off')?.className).toContain('run-disabled');
    expect(tid('step-off')?.className).not.toContain('run-skipped');
    expect(tid('run-said')?.dataset.state).toBe('succeeded');
    await click(tid('tab-run'));
    expect(tid('run-result')?.textContent).toContain('2 ok, 2 failed, 1 skipped (1 disabled)');
    await act(async () => docStore.getState().select(['off']));
    await settle();
    expect(tid('step-run')?.dataset.shown).toBe('disabled');
    expect(q('[data-testid="step-run"] .run-chip')?.textContent).toBe('disabled');
    expect(tid('step-run-disabled')?.textContent).toContain('not run');

    // Our check before sending: each argument named first, in order; our sentence below; no "server said" (nothing was sent).
    await act(async () => docStore.getState().select(['sum']));
    await settle();
    expect(tid('step-run-error')?.dataset.code).toBe('ARGS_INVALID');
    const named = [...document.querySelectorAll<HTMLElement>('[data-testid="step-run"] [data-testid="step-run-arg-error"]')];
    expect(named.map((el) => [el.dataset.pointer, el.textContent])).toEqual([
      ['/a', 'argument /a: expected number, got object'],
      ['/b', 'argument /b: required, missing'],
    ]);
    expect(tid('step-run-error-why')?.textContent).toBe(
      'The arguments of tool `add` on server `echo` do not fit its input schema; the call was not sent.',
    );
    expect(tid('step-run-server-said')).toBeNull();
    // The card's line: the first argument, the count of the rest; the full error on hover.
    expect(tid('run-sum')?.textContent).toBe('✕ /a: expected number, got object (+1 more)');
    expect(q('[data-testid="run-sum"] .run-label')?.title).toContain('ARGS_INVALID: /a: expected number, got object; /b: required, missing (');

    // A server's refusal: our sentence, and what the server said from the detail, folded.
    await act(async () => docStore.getState().select(['refused']));
    await settle();
    expect(tid('step-run-error')?.dataset.code).toBe('ARGS_INVALID');
    expect(tid('step-run-error')?.textContent).toContain('tool `is_error` refused its arguments');
    const said = tid('step-run-server-said') as HTMLDetailsElement;
    expect(said.open).toBe(false);
    expect(said.querySelector('pre')?.textContent).toBe('failed to deserialize parameters: invalid type: map, expected f64');
    expect(q('[data-testid="run-refused"] .run-label')?.title).toContain('server said: failed to deserialize parameters');
  });

  it('an until loop that reached max_iterations is red with the iterations and the condition’s last value on its card, the full error on hover', async () => {
    const f = extraFixture('until-exhausted');
    const info = { id: 'ux', blueprint: f.blueprint.id, status: 'failed', trigger: 'studio', started_at: '2026-11-20T11:00:00Z', finished_at: null, duration_ms: 5, blueprint_rev: null, rerun_of: null };
    be.on('list_runs', () => [info]);
    be.on('get_run', () => ({ info, inputs: {}, events: f.events, envelope: null }));
    await mountWith(f.blueprint);
    await click(tid('tab-history'));
    await click(tid('history-row'));
    expect(tid('run-wait_ready')?.dataset.state).toBe('failed');
    expect(tid('step-wait_ready')?.className).toContain('run-failed');
    // The short line, and the last value in a part of its own that is never cut off.
    expect(q('[data-testid="run-wait_ready"] .run-label')?.textContent).toBe('✕ until never true · 3/3');
    expect(tid('run-last-wait_ready')?.textContent).toBe('· last: false');
    expect(tid('run-wait_ready')?.textContent).toBe('✕ until never true · 3/3· last: false');
    const title = q('[data-testid="run-wait_ready"] .run-label')?.title ?? '';
    expect(title).toMatch(/^LOOP_UNTIL_EXHAUSTED: loop `wait_ready` ran 3 iterations \(max_iterations 3\)/);
    expect(title).toContain('its last value was false');
    expect(tid('run-last-wait_ready')?.title).toBe(title);
    expect(tid('loop-count-wait_ready')?.textContent).toBe('3');
    expect(tid('run-report')?.dataset.state).toBe('skipped');
  });

  it('a retry whose error keeps the server’s words apart shows them folded in the run section and on the card’s hover', async () => {
    const f = extraFixture('args-disabled');
    // The recorded run up to `said` starting, then a retry of it (as the engine writes a retry: the error that caused it).
    const upTo = f.events.findIndex((e) => e.type === 'StepStarted' && e.step === 'said');
    const events: RunEvent[] = [
      ...f.events.slice(0, upTo + 1),
      {
        seq: f.events[upTo]!.seq + 1,
        at_ms: 30,
        type: 'StepRetrying',
        step: 'said',
        path: [],
        attempt: 2,
        delay_ms: 60_000,
        error: { code: 'SERVER_ERROR', message: 'server `echo` returned error -32000', detail: 'upstream busy, try later' },
      },
    ];
    const info = { id: 'r', blueprint: f.blueprint.id, status: 'running', trigger: 'studio', started_at: '2026-11-20T11:00:00Z', finished_at: null, duration_ms: 30, blueprint_rev: null, rerun_of: null };
    be.on('list_runs', () => [info]);
    be.on('get_run', () => ({ info, inputs: {}, events, envelope: null }));
    await mountWith(f.blueprint);
    await click(tid('tab-history'));
    await click(tid('history-row'));
    expect(tid('run-said')?.dataset.state).toBe('retrying');
    expect(q('[data-testid="run-said"] .run-label')?.title).toBe('SERVER_ERROR: server `echo` returned error -32000\n\nserver said: upstream busy, try later');
    await act(async () => docStore.getState().select(['said']));
    await settle();
    expect(q('.step-run-retry [data-testid="step-run-server-said"] pre')?.textContent).toBe('upstream busy, try later');
  });
});
