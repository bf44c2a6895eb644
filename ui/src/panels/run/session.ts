//! The run session: starts runs of the document on the canvas (Run, Debug, re-runs),
//! feeds their events into the run store through a per-frame batcher, controls them,
//! and opens past runs from the history.
//!
//! A run waiting for a person that this window did not start — one an earlier session
//! left waiting, after a restart — opens live (`waitingRun`): its node waits, its form
//! is in the inspector, and answering it (`answerWaiting`) resumes it as a new run that
//! plays live on the canvas, its finished steps pinned. The runs waiting are read at
//! start, with the history, and when a run ends (`waiting`).
//!
//! A run something else started — an agent through `mcpflow serve`, the CLI, a schedule —
//! shows in History as it starts (`runStartedElsewhere`); when it runs the blueprint on
//! the canvas, it plays there live (`followRun`, the same path as a run started here),
//! unless the canvas is busy with a run of its own or one being looked at: then a notice
//! says so, and its History row opens it live.
//!
//! Live events arrive over a Tauri `Channel` in batches (the backend sends at most one
//! a frame); the batcher hands them to the store at most once a frame as well, so
//! React sees ~60 updates a second however fast the run goes. When the window fell
//! behind and the backend dropped events (`lagged`), the run is read again from the
//! store and the live view rebuilt from it.

import { showCurrent, showPastDefinition } from './past-definition';
import { Channel } from '@tauri-apps/api/core';
import { create } from 'zustand';
import { backend, BackendError, errorMessage, report, type AnswerInfo, type RunInfo, type WaitingRunInfo } from '../../backend';
import { docStore } from '../../doc/store';
import type { Blueprint, Json } from '../../doc/types';
import { createBatcher, openQuestions, runShape, runStore, type Batcher, type RunEvent } from '../../run';
import { needsConsent, requestRunConsent } from '../servers';
import { breakpointsOf } from './breakpoints';
import { startedBy } from './started-by';
import { showTab } from './tabs';

export interface EventBatch {
  events: unknown;
  lagged: number;
  done: boolean;
}

export interface SessionState {
  /** The run in flight started from this window, if any. */
  active: string | null;
  /** A start is under way (the button waits for the backend). */
  starting: boolean;
  /** The run in flight was started with Debug (breakpoints apply). */
  debugging: boolean;
  /** Inputs typed in the run panel, per blueprint. */
  inputs: Record<string, Json>;
  /** Past runs of the blueprint on the canvas, newest first. */
  history: RunInfo[];
  historyFor: string | null;
  /**
   * The run shown live that waits for a person but is not in flight from this window (an
   * earlier session left it waiting): answering it resumes it (`answerWaiting`).
   */
  waitingRun: string | null;
  /** Every run waiting for a person (of any blueprint), as last read. */
  waiting: WaitingRunInfo[];
  /** The run shown live that something else started, and who ("claude-ai (MCP)"). */
  watching: { runId: string; by: string } | null;
  /** The last error starting or controlling a run. */
  error: string | null;
}

export const useSession = create<SessionState>()(() => ({
  active: null,
  starting: false,
  debugging: false,
  inputs: {},
  history: [],
  historyFor: null,
  waitingRun: null,
  waiting: [],
  watching: null,
  error: null,
}));

const set = (patch: Partial<SessionState>) => useSession.setState(patch);

let batcher: Batcher<RunEvent> | null = null;

function asEvents(value: unknown): RunEvent[] {
  return Array.isArray(value) ? (value as RunEvent[]) : [];
}

/** Shows the document's steps, all queued, for a run about to start (a re-run: pinned from `pinnedFrom`). */
function beginLive(doc: Blueprint, pinnedFrom: string | null = null): void {
  const { stepIds, parents } = runShape(doc);
  set({ waitingRun: null, watching: null });
  runStore.getState().begin(null, stepIds, 'live', { parents, pinnedFrom, wallStartMs: Date.now() });
}

function connect(): Channel<EventBatch> {
  const channel = new Channel<EventBatch>();
  channel.onmessage = follow();
  return channel;
}

/** Feeds a run's event batches into the run store, through a new per-frame batcher. */
function follow(): (batch: EventBatch) => void {
  batcher?.close();
  const mine = createBatcher<RunEvent>((events) => {
    const store = runStore.getState();
    store.receive(events);
    const started = events.find((e) => e.type === 'RunStarted');
    if (started && store.runId === null) runStore.setState({ runId: started.run_id });
    // A pause at a step brings it into view on the canvas and opens it in the inspector.
    const paused = events.findLast((e) => e.type === 'RunPaused');
    if (paused?.type === 'RunPaused' && paused.step && runStore.getState().view.status === 'paused') {
      docStore.getState().select([paused.step], { reveal: true });
    }
  });
  batcher = mine;
  return (batch) => {
    if (batcher !== mine) return;
    mine.push(asEvents(batch.events));
    if (batch.lagged > 0) void recover();
    if (batch.done) {
      mine.close();
      if (batcher === mine) batcher = null;
      finished();
    }
  };
}

/** The run ended: no run in flight, and the history has it. */
function finished(): void {
  set({ active: null });
  void refreshHistory();
}

/** Events were lost on the way: rebuild the live view from what the store recorded. */
async function recover(): Promise<void> {
  const runId = runStore.getState().runId ?? useSession.getState().active;
  if (!runId) return;
  try {
    const detail = await backend.getRun(runId);
    const s = runStore.getState();
    const keep = s.events;
    s.begin(runId, s.stepIds, 'live', s.options);
    s.receive(asEvents(detail.events));
    s.receive(keep);
  } catch (e) {
    report('error', `could not read the run again: ${errorMessage(e)}`);
  }
}

export interface StartOptions {
  debug: boolean;
  /** Re-run a step of a past run: `step` alone, or `from` it on; the others pinned. */
  rerun?: { runId: string; step: string; mode: 'step' | 'from_here' };
}

/**
 * Asks consent, one at a time, for the stdio servers the run would start that are not
 * approved yet (as the run starts them: the document's own `servers` over the
 * configured ones); true when all are approved (false: the user said no).
 */
async function consentFirst(doc: Blueprint): Promise<boolean> {
  const servers = await backend.runServers(doc);
  for (const server of servers) {
    if (!needsConsent(server)) continue;
    if (!(await requestRunConsent(doc, server.name, server.command))) return false;
  }
  return true;
}

/** Runs the document on the canvas (saved or not). */
export async function startRun({ debug, rerun }: StartOptions): Promise<void> {
  const s = useSession.getState();
  if (s.active || s.starting) return;
  // Runs run the current document, never a past run's definition on show.
  showCurrent();
  const doc = docStore.getState().doc;
  set({ starting: true, error: null });
  let consented = false;
  try {
    consented = await consentFirst(doc);
  } catch (e) {
    set({ starting: false });
    report('error', `the run did not start: ${errorMessage(e)}`);
    return;
  }
  if (!consented) {
    set({ starting: false });
    report('info', 'the run did not start: a server it needs is not approved');
    return;
  }
  const inputs = s.inputs[doc.id] ?? {};
  showTab('run');
  beginLive(doc, rerun?.runId ?? null);
  const channel = connect();
  try {
    // Run ignores breakpoints; Debug stops at them, or before the first step when
    // there are none (so there is something to step through).
    const breakpoints = debug ? [...breakpointsOf(doc.id)] : [];
    const paused = debug && breakpoints.length === 0;
    const started = rerun
      ? await backend.rerunStep(doc, rerun.runId, rerun.step, rerun.mode, paused, breakpoints, channel)
      : await backend.startRun(doc, inputs, paused, breakpoints, channel);
    if (runStore.getState().runId === null) runStore.setState({ runId: started.run_id });
    // The run may have ended before its start was answered.
    if (batcher !== null) set({ active: started.run_id, debugging: debug });
  } catch (e) {
    batcher?.close();
    batcher = null;
    runStore.getState().reset();
    const message = errorMessage(e);
    set({ error: message });
    const aboutDoc = e instanceof BackendError && e.diagnostics.some((d) => d.level === 'error');
    report('error', `the run did not start: ${message}`, aboutDoc ? 'document' : null);
  } finally {
    set({ starting: false });
  }
}

export type Action = 'pause' | 'resume' | 'step' | 'cancel';

export async function control(action: Action): Promise<void> {
  const runId = useSession.getState().active;
  if (!runId) return;
  try {
    await backend.controlRun(runId, action);
  } catch (e) {
    report('error', `${action}: ${errorMessage(e)}`);
  }
}

/** Tells the run in flight of the editor's breakpoints (after a toggle), if it is a Debug run. */
export async function syncBreakpoints(blueprint: string): Promise<void> {
  const { active: runId, debugging } = useSession.getState();
  if (!runId || !debugging || docStore.getState().doc.id !== blueprint) return;
  try {
    await backend.setBreakpoints(runId, [...breakpointsOf(blueprint)]);
  } catch {
    // The run may just have ended; the next run gets them.
  }
}

/** Reads the past runs of the blueprint on the canvas (and the runs waiting for a person). */
export async function refreshHistory(): Promise<void> {
  const id = docStore.getState().doc.id;
  void refreshWaiting();
  try {
    const history = await backend.listRuns(id, 100);
    if (docStore.getState().doc.id === id) set({ history, historyFor: id });
  } catch (e) {
    report('error', `could not list the runs: ${errorMessage(e)}`);
  }
}

/** Reads the runs waiting for a person (every blueprint's). */
export async function refreshWaiting(): Promise<void> {
  try {
    set({ waiting: await backend.waitingRuns() });
  } catch (e) {
    report('error', `could not list the runs waiting for you: ${errorMessage(e)}`);
  }
}

/**
 * Opens a recorded run on the canvas: its events replay; the timeline moves through
 * them. A run that waits for a person opens live, its question ready to answer (the
 * step that asks is selected and brought into view).
 */
export async function openRun(runId: string): Promise<void> {
  if (useSession.getState().active) return;
  try {
    const detail = await backend.getRun(runId);
    // Still going (started elsewhere): it plays live.
    if (detail.info.status === 'running' && (await followRun(runId, startedBy(detail.info)))) return;
    const waits = detail.info.status === 'waiting';
    // A finished run is drawn over the definition it ran (read-only when that is not the current one).
    if (!waits) showPastDefinition(runId, detail.definition);
    const { stepIds, parents } = runShape(docStore.getState().doc);
    const store = runStore.getState();
    store.begin(runId, stepIds, waits ? 'live' : 'history', {
      parents,
      startedAt: detail.info.started_at,
      pinnedFrom: detail.info.rerun_of?.run ?? detail.info.resumed_from ?? null,
    });
    store.receive(asEvents(detail.events));
    set({ waitingRun: waits ? runId : null, watching: null });
    const first = waits ? openQuestions(runStore.getState().view)[0] : undefined;
    if (first) docStore.getState().select([first.step], { reveal: true });
  } catch (e) {
    report('error', `could not open the run: ${errorMessage(e)}`);
  }
}

/**
 * Answers a question of the waiting run shown (`waitingRun`), which this window did not
 * start, and follows the run that goes on: a run an earlier session left waiting resumes
 * as a new run on the document on the canvas (asking consent for its servers first, as
 * Run does), shown live with its finished steps pinned; one in flight here goes on in the
 * same view. Throws what the backend refused (the view stays as it was).
 */
export async function answerWaiting(runId: string, questionId: string, answer: AnswerInfo): Promise<void> {
  const s = useSession.getState();
  if (s.active || s.starting) throw new BackendError('BUSY', 'a run is in flight: answer once it ends');
  const doc = docStore.getState().doc;
  set({ starting: true, error: null });
  try {
    if (!(await consentFirst(doc))) {
      throw new BackendError('NOT_APPROVED', 'not answered: a server the run needs to go on is not approved');
    }
    // Events may come before the answer returns: held until it is known which view they feed.
    const held: EventBatch[] = [];
    let deliver: ((batch: EventBatch) => void) | null = null;
    const channel = new Channel<EventBatch>();
    channel.onmessage = (batch) => (deliver ? deliver(batch) : held.push(batch));
    const started = await backend.answerAndFollow(doc, runId, questionId, answer, channel);
    const resumed = started.run_id !== runId;
    if (resumed) {
      showTab('run');
      beginLive(doc, runId);
    }
    const feed = follow();
    deliver = feed;
    for (const batch of held.splice(0)) feed(batch);
    if (runStore.getState().runId === null) runStore.setState({ runId: started.run_id });
    set({ waitingRun: null });
    // The run may have ended already (its last batch was among those held).
    if (batcher !== null) set({ active: started.run_id });
    // The same run, followed from the answer on: what came between is read from the store.
    if (!resumed) void recover();
  } finally {
    set({ starting: false });
    void refreshWaiting();
  }
}

/** Leaves the run view: the canvas shows the document alone. */
export function closeRun(): void {
  if (useSession.getState().active) return;
  batcher?.close();
  batcher = null;
  set({ waitingRun: null, watching: null });
  runStore.getState().reset();
  showCurrent();
}

export function setInputs(blueprint: string, inputs: Json): void {
  set({ inputs: { ...useSession.getState().inputs, [blueprint]: inputs } });
}

/** The statuses of a run that goes on. */
const GOING = new Set(['pending', 'running', 'paused']);

/**
 * The canvas is busy: a run of this window starts or goes on, a waiting run is shown to
 * be answered, a run followed live goes on, or a past run is being scrubbed through.
 */
function canvasBusy(): boolean {
  const s = useSession.getState();
  const r = runStore.getState();
  return (
    s.active !== null ||
    s.starting ||
    s.waitingRun !== null ||
    (r.mode === 'live' && GOING.has(r.live.status)) ||
    (r.mode === 'history' && r.cursor !== null)
  );
}

/**
 * Plays a run in flight that this window did not start on the canvas, live: its events
 * from now on over a channel (`follow_run`), what came before read from the store. False
 * when it could not be followed — it has ended already: the caller shows it from the store.
 */
export async function followRun(runId: string, by: string): Promise<boolean> {
  const doc = docStore.getState().doc;
  const { stepIds, parents } = runShape(doc);
  runStore.getState().begin(runId, stepIds, 'live', { parents, wallStartMs: Date.now() });
  set({ waitingRun: null, watching: { runId, by } });
  const channel = connect();
  try {
    await backend.followRun(runId, channel);
  } catch (e) {
    batcher?.close();
    batcher = null;
    set({ watching: null });
    runStore.getState().reset();
    if (!(e instanceof BackendError && e.code === 'RUN_NOT_ACTIVE')) report('error', `could not follow the run ${runId}: ${errorMessage(e)}`);
    return false;
  }
  // Events from before the channel was there are in the store.
  await recover();
  return true;
}

/** Follows a run that is not shown until it ends, to show its end in History. */
async function watchQuietly(runId: string): Promise<void> {
  const channel = new Channel<EventBatch>();
  channel.onmessage = (batch) => {
    if (batch.done) void refreshHistory();
  };
  try {
    await backend.followRun(runId, channel);
  } catch {
    // Ended already: the refresh below shows it.
    void refreshHistory();
  }
}

export interface RunStartedChange {
  run_id: string;
  blueprint: string;
  trigger: string;
  client?: string | null;
}

/**
 * A run started somewhere (this window's own included): History lists it now. One that
 * something else started on the blueprint on the canvas plays there live, unless the
 * canvas is busy (`canvasBusy`): then a notice points to History, where it opens live.
 */
export async function runStartedElsewhere(change: RunStartedChange): Promise<void> {
  if (change.blueprint !== docStore.getState().doc.id) return;
  void refreshHistory();
  if (change.trigger === 'studio') return;
  const by = startedBy(change);
  if (canvasBusy()) {
    report('info', `${by} started a run of ${change.blueprint}: it is in History (open it there to watch it)`);
    void watchQuietly(change.run_id);
    return;
  }
  if (await followRun(change.run_id, by)) {
    report('info', `${by} started a run of ${change.blueprint}: it plays on the canvas`);
  } else {
    void refreshHistory();
  }
}

// A different blueprint on the canvas (New, Open, Import of another id): the run shown
// belongs to the one before, so the canvas and the Run tab leave it (a live run stays
// until it ends: `closeRun` keeps it). The same blueprint loaded again (a reload of a
// revision saved elsewhere) keeps the run shown, drawn on the new steps.
docStore.subscribe((now, before) => {
  if (now.generation === before.generation) return;
  if (now.doc.id !== before.doc.id) {
    closeRun();
    return;
  }
  const r = runStore.getState();
  if (r.mode === 'idle') return;
  const { stepIds, parents } = runShape(now.doc);
  const events = r.events;
  r.begin(r.runId, stepIds, r.mode, { ...r.options, parents });
  runStore.getState().receive(events);
});
