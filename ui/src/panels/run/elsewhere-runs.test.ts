// @vitest-environment jsdom
// Runs something else started (an agent, the CLI, a schedule), against a fake backend
// (mockIPC) and the events of a real run (run/fixtures/loop-collect.ndjson): one on the
// blueprint on the canvas plays there live — what came before from `get_run`, the rest
// over `follow_run`'s channel — and History is read when it starts and when it ends; one
// that comes while the user's own run goes on does not take the canvas; one of another
// blueprint, or the studio's own, is left alone.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statusStore } from '../../backend';
import { mockBackend, type MockBackend } from '../../backend/mock-backend';
import { docStore } from '../../doc/store';
import { runStore } from '../../run';
import { fixture } from '../../run/fixtures/load';
import { channelSender, type ChannelLike } from '../../testing/dom';
import { closeRun, runStartedElsewhere, useSession } from './session';

const LOOP = fixture('loop-collect');
const HALF = Math.floor(LOOP.events.length / 2);

let be: MockBackend;
let channel: ChannelLike | null;

const wait = (ms = 60) => new Promise((r) => setTimeout(r, ms));

const started = (blueprint = LOOP.blueprint.id, trigger = 'mcp') => ({ run_id: 'agent-run', blueprint, trigger, client: 'claude-ai' });

beforeEach(() => {
  channel = null;
  be = mockBackend({
    follow_run: (a) => {
      channel = a.onEvents as ChannelLike;
      return null;
    },
    get_run: () => ({
      info: { id: 'agent-run', blueprint: LOOP.blueprint.id, status: 'running', trigger: 'mcp', client: 'claude-ai', started_at: '2026-11-28T10:00:00Z' },
      inputs: {},
      events: LOOP.events.slice(0, HALF),
      envelope: null,
    }),
  });
  docStore.getState().load(LOOP.blueprint, { id: LOOP.blueprint.id, rev: 1, saved_at: '2026-11-28T09:00:00Z' });
  useSession.setState({ active: null, starting: false, waitingRun: null, watching: null });
  runStore.getState().reset();
});

afterEach(() => {
  closeRun();
  be.stop();
});

describe('runs started elsewhere', () => {
  it('play live on the canvas when they run the blueprint on it, and History is read at the start and the end', async () => {
    await runStartedElsewhere(started());
    expect(be.calls('follow_run')).toEqual([{ runId: 'agent-run', onEvents: channel }]);
    expect(be.calls('list_runs')).toHaveLength(1);
    expect(useSession.getState().watching).toEqual({ runId: 'agent-run', by: 'claude-ai (MCP)' });
    const s = runStore.getState();
    expect(s.mode).toBe('live');
    expect(s.runId).toBe('agent-run');
    // What came before the channel was read from the store.
    expect(s.events.map((e) => e.seq)).toEqual(LOOP.events.slice(0, HALF).map((e) => e.seq));
    expect(statusStore.getState().message).toBe(`claude-ai (MCP) started a run of ${LOOP.blueprint.id}: it plays on the canvas`);

    channelSender(channel!)(LOOP.events.slice(HALF), true);
    await wait();
    expect(runStore.getState().events).toHaveLength(LOOP.events.length);
    expect(runStore.getState().live.status).toBe('succeeded');
    expect(be.calls('list_runs')).toHaveLength(2);
  });

  it('do not take the canvas from a run of the user’s own: History lists them, and a notice says where', async () => {
    useSession.setState({ active: 'mine' });
    runStore.getState().begin('mine', LOOP.stepIds, 'live', {});
    await runStartedElsewhere(started());
    expect(runStore.getState().runId).toBe('mine');
    expect(useSession.getState().watching).toBeNull();
    expect(statusStore.getState().message).toMatch(/claude-ai \(MCP\) started a run of .*: it is in History/);
    // Followed out of sight, so History shows its end.
    expect(be.calls('follow_run')).toHaveLength(1);
    channelSender(channel!)([], true);
    await wait();
    expect(be.calls('list_runs')).toHaveLength(2);
    expect(runStore.getState().runId).toBe('mine');
  });

  it('leave the canvas alone when they run another blueprint, and only list the studio’s own', async () => {
    await runStartedElsewhere(started('another-blueprint'));
    expect(be.log).not.toContain('follow_run');
    expect(be.log).not.toContain('list_runs');
    await runStartedElsewhere(started(LOOP.blueprint.id, 'studio'));
    expect(be.log).not.toContain('follow_run');
    expect(be.calls('list_runs')).toHaveLength(1);
    expect(runStore.getState().mode).toBe('idle');
  });

  it('that ended before they could be followed are shown from the store', async () => {
    be.on('follow_run', () => {
      throw { code: 'RUN_NOT_ACTIVE', message: 'run agent-run is not running', diagnostics: [] };
    });
    await runStartedElsewhere(started());
    expect(runStore.getState().mode).toBe('idle');
    expect(useSession.getState().watching).toBeNull();
    expect(statusStore.getState().level).not.toBe('error');
  });
});
