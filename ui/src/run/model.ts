//! The live state of a run, built from its event stream: pure functions, no React, no
//! store. `applyEvents` folds a batch of events into an immutable `RunView`, sharing
//! everything a batch does not touch (an untouched node keeps its identity, so memoized
//! canvas nodes do not re-render); `replay` rebuilds the view at any `seq`.
//!
//! A step outside loops has one instance (path `[]`), shown directly on its `NodeView`.
//! A step inside loops has one instance per iteration path; its `NodeView` aggregates
//! them (state, counts) and mirrors the latest instance to change. A loop's `NodeView`
//! also carries `loop`: `done/total` iterations and the state of each iteration.
//!
//! A server's requests for the model during a step's call (MCP sampling: `StepSampling`,
//! answered by `StepSampled`) show on the instance as `sampling` while one is open — the
//! step is still `running`, shown as "asking the model" — and in the view's `samples`, each
//! request with its answer, for the Run tab.
//!
//! Which loop a body step belongs to is not in the events: pass `parents` (from the
//! document, see `runShape`) to `startView` and it is exact. Without it, the loop is
//! guessed once per body step (the running step at the enclosing path that started
//! most recently, known loops first) and remembered.
//!
//! Cost: each event is O(1) amortized; an object (a node, its `instances`, a loop's
//! iteration record) is copied at most once per batch, however many events change it.

import type { Blueprint } from '../doc/types';
import { allStepIds, locateStep } from '../doc/query';
import type {
  AnswerAction,
  Envelope,
  IterationPath,
  Json,
  LogLevel,
  PausePreview,
  PauseReason,
  Question,
  RunEvent,
  RunStatus,
  SkipReason,
  StepError,
} from './events';

// ---------------------------------------------------------------------------------
// Types

/**
 * A step instance's state. `paused`: held at a breakpoint, not started yet. `waiting`:
 * started, and waiting for a person to answer its `question` (an `input` step, an
 * approval gate, a server's question during a call).
 */
export type NodeState = 'queued' | 'running' | 'retrying' | 'waiting' | 'paused' | 'succeeded' | 'failed' | 'skipped';

/** The last answer a step instance got (from `StepAnswered`). */
export interface AnswerView {
  action: AnswerAction;
  content: Json | undefined;
  atMs: number;
}

/** A server's request for the model that has no answer yet (from `StepSampling`). */
export interface SamplingView {
  server: string;
  /** `CreateMessageRequest.params` as recorded (`messages`, `systemPrompt`, …). */
  request: Json;
  atMs: number;
  /** Requests of this instance still open (a server may send several at once). */
  open: number;
}

/** One request for the model during a run, and its answer once it came. */
export interface SampleExchange {
  /** The seq of its `StepSampling`. */
  seq: number;
  step: string;
  path: IterationPath;
  server: string;
  request: Json;
  atMs: number;
  /** From `StepSampled`: the `CreateMessageResult`, or why there was none; `null` while open. */
  answer: { result: Json | undefined; error: StepError | null; atMs: number } | null;
}

/** `pending` until `RunStarted` arrives; `running`/`paused` while it runs; then the envelope's status. */
export type RunViewStatus = 'pending' | 'running' | 'paused' | RunStatus;

/** One iteration of a loop: failed once a body step instance in it failed without recovery. */
export type IterationState = 'running' | 'succeeded' | 'failed';

export interface ProgressView {
  progress: number;
  total: number | null;
  message: string | null;
}

/** The last `StepRetrying` of an instance: the failure and when the next attempt runs. */
export interface RetryView {
  /** The attempt that runs next. */
  attempt: number;
  delayMs: number;
  error: StepError;
  atMs: number;
}

export interface LoopView {
  /** Iterations done: the loop's latest `StepProgress`, else the iterations seen finishing. */
  done: number;
  /** Iterations in all (`for_each`), when known; `null` for `until` loops. */
  total: number | null;
  /**
   * By iteration key: the path key of the body instances of that iteration (the
   * loop's path plus the index, joined with '.'), so `"3"` for iteration 3 of a
   * top-level loop and `"1.3"` inside iteration 1 of an outer loop.
   */
  iterations: Record<string, IterationState>;
}

/** What a step instance shows. JSON fields are `undefined` when absent (`null` is a value). */
export interface StepFields {
  state: NodeState;
  /** The current attempt (from 1); 0 before the first start. */
  attempt: number;
  /** When the first attempt started (ms since the run started). */
  startedAtMs: number | null;
  finishedAtMs: number | null;
  /** From `StepFinished`: first start to finish, retries included. */
  durationMs: number | null;
  args: Json | undefined;
  output: Json | undefined;
  error: StepError | null;
  raw: Json | undefined;
  /** The fallback step whose output stands in for this one's. */
  recoveredBy: string | null;
  /** Why it was skipped, when `StepSkipped` said (`disabled`: switched off in the document). */
  skipReason: SkipReason | null;
  /** The latest `StepProgress` (MCP progress of a call, or a loop's iterations). */
  progress: ProgressView | null;
  retry: RetryView | null;
  /** The question it waits on (state `waiting`); `null` otherwise. */
  question: Question | null;
  /** The last answer it got, if it asked. */
  answer: AnswerView | null;
  /** A server's request for the model, open during its call (the step stays `running`). */
  sampling: SamplingView | null;
  /** For loop steps; `null` otherwise. */
  loop: LoopView | null;
  /** The seq of the last event that changed this instance (0: none yet). */
  seq: number;
}

export interface InstanceView extends StepFields {
  path: IterationPath;
}

/** How many instances of a step inside loops are in each state (queued ones are not counted). */
export interface InstanceCounts {
  running: number;
  retrying: number;
  waiting: number;
  paused: number;
  succeeded: number;
  failed: number;
  skipped: number;
}

/**
 * A step on the canvas. Outside loops: its only instance. Inside loops: `state` is
 * the aggregate (paused, else running, else retrying while any instance is; once none
 * is active: failed if any failed, else succeeded if any did, else skipped), the other
 * fields mirror `instances[latest]`, and `loop` (for nested loops) sums their loops.
 */
export interface NodeView extends StepFields {
  id: string;
  /** Steps inside loops: by path key (`"0"`, `"2.1"`); `null` for top-level steps. */
  instances: Record<string, InstanceView> | null;
  counts: InstanceCounts | null;
  /** The key of the instance that changed last (steps inside loops). */
  latest: string | null;
}

export interface PauseView {
  reason: PauseReason;
  step: string | null;
  path: IterationPath | null;
  args: Json | undefined;
  /** What the held transform/switch would give (see `RunPausedEvent.preview`). */
  preview?: PausePreview;
}

export interface LogEntry {
  seq: number;
  atMs: number;
  level: LogLevel;
  message: string;
  step: string | null;
}

/** Bookkeeping for one iteration of one loop instance (not for display). */
export interface IterationTrack {
  /** Body instances running or waiting to retry. */
  active: number;
  /** Body instances that failed without recovery. */
  failed: number;
  /** Counted as done by the loop's progress (or the loop finished). */
  finished: boolean;
  /** The seq of the last body instance that settled in it (0: none yet). */
  settledSeq: number;
}

/** Bookkeeping for one loop instance, keyed `loopId@pathKey` (not for display). */
export interface LoopTrack {
  iterations: Record<string, IterationTrack>;
  /** Iterations with nothing active and something settled, not yet counted as done. */
  pending: string[];
  finishedCount: number;
  hasProgress: boolean;
}

export interface RunView {
  runId: string | null;
  blueprintId: string | null;
  /** Wall-clock start (RFC 3339), when the caller knows it (history records); events carry only `at_ms`. */
  startedAt: string | null;
  status: RunViewStatus;
  inputs: Json | undefined;
  /** The last event applied (0: none). */
  lastSeq: number;
  /** `at_ms` of the latest event. */
  atMs: number;
  pause: PauseView | null;
  envelope: Envelope | null;
  /** The run's OpenTelemetry trace id (from `RunStarted`, then the envelope); `null` when telemetry was off. */
  traceId: string | null;
  /** The last `LOG_LIMIT` log events. */
  logs: LogEntry[];
  /** The last `SAMPLE_LIMIT` requests for the model, oldest first, with their answers. */
  samples: SampleExchange[];
  nodes: Record<string, NodeView>;
  /** Body step id → its loop's id (given to `startView`, or learned from the events). */
  parents: Record<string, string>;
  /** Iteration bookkeeping per loop instance. */
  tracks: Record<string, LoopTrack>;
  /**
   * Top-level steps of a re-run that finished with their output from an earlier run
   * (a `StepFinished` with `attempts: 0` and no `StepStarted` before it).
   */
  pinned: Record<string, true>;
  /** The run pinned steps took their outputs from, when the caller knows it. */
  pinnedFrom: string | null;
  /** Time spent paused so far (from the `at_ms` of `RunPaused` → `RunResumed`/`RunFinished`). */
  pausedMs: number;
  /** `at_ms` of the pause in progress, if any. */
  pausedSinceMs: number | null;
}

export interface StartOptions {
  /** Body step id → the id of the loop whose body holds it (see `runShape`). */
  parents?: Record<string, string>;
  startedAt?: string | null;
  /** For a re-run: the run its pinned steps come from. */
  pinnedFrom?: string | null;
  /** When a live run began (epoch ms, this machine's clock): the timeline's clock (a history run uses `startedAt`). */
  wallStartMs?: number;
}

/** Logs kept in a view. */
export const LOG_LIMIT = 500;

/** Requests for the model kept in a view. */
export const SAMPLE_LIMIT = 200;

// ---------------------------------------------------------------------------------
// Building views

/** `[1, 2]` → `"1.2"`; `[]` → `""`. */
export function pathKey(path: readonly number[]): string {
  return path.join('.');
}

/** `"1.2"` → `[1, 2]`; `""` → `[]`. */
export function parsePathKey(key: string): IterationPath {
  return key === '' ? [] : key.split('.').map(Number);
}

/** The step ids and loop structure of a document, for `startView`. */
export function runShape(doc: Blueprint): { stepIds: string[]; parents: Record<string, string> } {
  const stepIds = allStepIds(doc);
  const parents: Record<string, string> = {};
  for (const id of stepIds) {
    const container = locateStep(doc, id)?.container;
    if (container) parents[id] = container;
  }
  return { stepIds, parents };
}

/** A run that has not started: every step queued. */
export function startView(stepIds: readonly string[], opts: StartOptions = {}): RunView {
  const parents = { ...(opts.parents ?? {}) };
  const loops = new Set(Object.values(parents));
  const nodes: Record<string, NodeView> = {};
  const ids = [...stepIds];
  for (const id of [...Object.keys(parents), ...loops]) if (!ids.includes(id)) ids.push(id);
  for (const id of ids) if (!(id in nodes)) nodes[id] = newNode(id, loops.has(id), id in parents);
  return {
    runId: null,
    blueprintId: null,
    startedAt: opts.startedAt ?? null,
    status: 'pending',
    inputs: undefined,
    lastSeq: 0,
    atMs: 0,
    pause: null,
    envelope: null,
    traceId: null,
    logs: [],
    samples: [],
    nodes,
    parents,
    tracks: {},
    pinned: {},
    pinnedFrom: opts.pinnedFrom ?? null,
    pausedMs: 0,
    pausedSinceMs: null,
  };
}

/**
 * The view after `events`. Events at or below `view.lastSeq` are ignored (duplicates
 * after a reconnect); the result shares every object the batch did not change, and is
 * `view` itself when nothing applied.
 */
export function applyEvents(view: RunView, events: readonly RunEvent[]): RunView {
  let draft: Draft | null = null;
  let last = view.lastSeq;
  for (const ev of events) {
    if (!(ev.seq > last)) continue;
    last = ev.seq;
    draft ??= new Draft(view);
    draft.apply(ev);
  }
  return draft ? draft.finish() : view;
}

/**
 * The view after every event with `seq <= uptoSeq` (all of them for `Infinity`), in
 * seq order: the same events give a deep-equal view however they were batched.
 */
export function replay(
  stepIds: readonly string[],
  events: readonly RunEvent[],
  uptoSeq: number = Infinity,
  opts: StartOptions = {},
): RunView {
  const upto = events.filter((e) => e.seq <= uptoSeq);
  if (!isSorted(upto)) upto.sort((a, b) => a.seq - b.seq);
  return applyEvents(startView(stepIds, opts), upto);
}

function isSorted(events: readonly RunEvent[]): boolean {
  for (let i = 1; i < events.length; i++) if (events[i - 1]!.seq > events[i]!.seq) return false;
  return true;
}

// ---------------------------------------------------------------------------------
// The fold

const FINAL_STEP: ReadonlySet<NodeState> = new Set(['succeeded', 'failed', 'skipped']);

/** Started and not settled: running, waiting to retry, or waiting for a person. */
function isActive(s: NodeState): boolean {
  return s === 'running' || s === 'retrying' || s === 'waiting';
}

function emptyLoop(): LoopView {
  return { done: 0, total: null, iterations: {} };
}

function emptyFields(isLoop: boolean): StepFields {
  return {
    state: 'queued',
    attempt: 0,
    startedAtMs: null,
    finishedAtMs: null,
    durationMs: null,
    args: undefined,
    output: undefined,
    error: null,
    raw: undefined,
    recoveredBy: null,
    skipReason: null,
    progress: null,
    retry: null,
    question: null,
    answer: null,
    sampling: null,
    loop: isLoop ? emptyLoop() : null,
    seq: 0,
  };
}

function newInstance(path: IterationPath, isLoop: boolean): InstanceView {
  // Written out rather than spread from `emptyFields`: loops create thousands of these.
  return {
    path: path.slice(),
    state: 'queued',
    attempt: 0,
    startedAtMs: null,
    finishedAtMs: null,
    durationMs: null,
    args: undefined,
    output: undefined,
    error: null,
    raw: undefined,
    recoveredBy: null,
    skipReason: null,
    progress: null,
    retry: null,
    question: null,
    answer: null,
    sampling: null,
    loop: isLoop ? emptyLoop() : null,
    seq: 0,
  };
}

function zeroCounts(): InstanceCounts {
  return { running: 0, retrying: 0, waiting: 0, paused: 0, succeeded: 0, failed: 0, skipped: 0 };
}

function newNode(id: string, isLoop: boolean, inLoop: boolean): NodeView {
  return {
    id,
    ...emptyFields(isLoop),
    instances: inLoop ? {} : null,
    counts: inLoop ? zeroCounts() : null,
    latest: null,
  };
}

/** The fields of `StepFields` a node inside loops copies from its latest instance. */
const MIRRORED = [
  'attempt',
  'finishedAtMs',
  'durationMs',
  'args',
  'output',
  'error',
  'raw',
  'recoveredBy',
  'skipReason',
  'progress',
  'retry',
  'question',
  'answer',
  'sampling',
  'seq',
] as const;

interface Target {
  node: NodeView;
  /** The node itself for a top-level instance. */
  inst: StepFields;
  /** The instance's path key, or null at the top level. */
  key: string | null;
  path: IterationPath;
}

/** The event of one kind. */
type EventOf<K extends RunEvent['type']> = Extract<RunEvent, { type: K }>;

/**
 * One batch: copies what it changes, once (objects it created or copied are in
 * `fresh` and are changed in place), and aggregates the nodes it touched at the end.
 */
class Draft {
  private readonly fresh = new Set<object>();
  private readonly v: RunView;
  private readonly newLogs: LogEntry[] = [];
  /** Nodes inside loops whose aggregate must be recomputed. */
  private readonly touched = new Set<string>();

  constructor(base: RunView) {
    this.v = { ...base };
  }

  private own<T extends object>(o: T): T {
    if (this.fresh.has(o)) return o;
    const copy = (Array.isArray(o) ? o.slice() : { ...o }) as T;
    this.fresh.add(copy);
    return copy;
  }

  private made<T extends object>(o: T): T {
    this.fresh.add(o);
    return o;
  }

  private nodes(): Record<string, NodeView> {
    this.v.nodes = this.own(this.v.nodes);
    return this.v.nodes;
  }

  private node(id: string, inLoop: boolean): NodeView {
    const nodes = this.nodes();
    const cur = nodes[id];
    const node = cur ? this.own(cur) : this.made(newNode(id, false, inLoop));
    nodes[id] = node;
    return node;
  }

  /** The instance `(id, path)`, writable; created (queued) when new. */
  private target(id: string, path: IterationPath): Target {
    const node = this.node(id, path.length > 0);
    if (path.length === 0) return { node, inst: node, key: null, path };
    node.instances = node.instances ? this.own(node.instances) : this.made({});
    node.counts = node.counts ? this.own(node.counts) : this.made(zeroCounts());
    const key = pathKey(path);
    const cur = node.instances[key];
    const inst = cur ? this.own(cur) : this.made(newInstance(path, node.loop != null));
    node.instances[key] = inst;
    node.latest = key;
    this.touched.add(id);
    return { node, inst, key, path };
  }

  /** Instance `(id, path)` if it exists (read-only). */
  private peek(id: string, path: IterationPath): StepFields | undefined {
    const node = this.v.nodes[id];
    if (!node || path.length === 0) return node;
    return node.instances?.[pathKey(path)];
  }

  private setState(t: Target, state: NodeState): void {
    const old = t.inst.state;
    if (old === state) return;
    t.inst.state = state;
    const c = t.key !== null ? t.node.counts : null;
    if (c) {
      if (old !== 'queued') c[old]--;
      if (state !== 'queued') c[state]++;
    }
  }

  /** Folds one event into the view (one method per event kind below). */
  apply(ev: RunEvent): void {
    this.v.lastSeq = ev.seq;
    this.v.atMs = Math.max(this.v.atMs, ev.at_ms);
    switch (ev.type) {
      case 'RunStarted':
        return this.runStarted(ev);
      case 'StepStarted':
        return this.stepStarted(ev);
      case 'StepRetrying':
        return this.stepRetrying(ev);
      case 'StepProgress':
        return this.stepProgress(ev);
      case 'StepFinished':
        return this.stepFinished(ev);
      case 'StepSkipped':
        return this.stepSkipped(ev);
      case 'StepWaiting':
        return this.stepWaiting(ev);
      case 'StepAnswered':
        return this.stepAnswered(ev);
      case 'StepSampling':
        return this.stepSampling(ev);
      case 'StepSampled':
        return this.stepSampled(ev);
      case 'RunPaused':
        return this.runPaused(ev);
      case 'RunResumed':
        return this.runResumed(ev);
      case 'Log':
        return this.logLine(ev);
      case 'RunFinished':
        return this.runFinished(ev);
    }
  }

  /** The run has its id, inputs and trace; it is running. */
  private runStarted(ev: EventOf<'RunStarted'>): void {
    this.v.runId = ev.run_id;
    this.v.blueprintId = ev.blueprint;
    this.v.inputs = ev.inputs;
    this.v.traceId = ev.trace_id ?? null;
    if (this.v.status === 'pending') this.v.status = 'running';
  }

  /** An instance started (an attempt): running, with its arguments; a loop learns its item count. */
  private stepStarted(ev: EventOf<'StepStarted'>): void {
    const t = this.target(ev.step, ev.path);
    const before = t.inst.state;
    this.setState(t, 'running');
    t.inst.attempt = ev.attempt;
    t.inst.startedAtMs ??= ev.at_ms;
    if (t.key !== null) t.node.startedAtMs ??= ev.at_ms;
    t.inst.args = ev.args;
    t.inst.seq = ev.seq;
    if (t.inst.loop && isItemsArgs(ev.args) && t.inst.loop.total === null) {
      this.setLoopCounts(t, t.inst.loop.done, ev.args.items);
    }
    this.trackIteration(t, before, false, ev.seq);
  }

  /** An instance failed an attempt and waits to retry. */
  private stepRetrying(ev: EventOf<'StepRetrying'>): void {
    const t = this.target(ev.step, ev.path);
    const before = t.inst.state;
    this.setState(t, 'retrying');
    t.inst.retry = { attempt: ev.attempt, delayMs: ev.delay_ms, error: ev.error, atMs: ev.at_ms };
    t.inst.sampling = null;
    t.inst.seq = ev.seq;
    this.trackIteration(t, before, false, ev.seq);
  }

  /** A progress notification; for a loop, how many iterations are done. */
  private stepProgress(ev: EventOf<'StepProgress'>): void {
    const t = this.target(ev.step, ev.path);
    t.inst.progress = { progress: ev.progress, total: ev.total ?? null, message: ev.message ?? null };
    t.inst.seq = ev.seq;
    if (t.inst.loop) this.loopProgress(t, ev.progress, ev.total ?? null);
  }

  /** An instance settled: its output or error, duration and attempts. Finished without a start or attempt: its output was pinned. */
  private stepFinished(ev: EventOf<'StepFinished'>): void {
    const t = this.target(ev.step, ev.path);
    const before = t.inst.state;
    if (t.key === null && ev.attempts === 0 && ev.status === 'succeeded' && t.inst.startedAtMs === null && before === 'queued') {
      this.v.pinned = { ...this.v.pinned, [ev.step]: true };
    }
    this.setState(t, ev.status);
    t.inst.attempt = ev.attempts;
    t.inst.durationMs = ev.duration_ms;
    t.inst.finishedAtMs = ev.at_ms;
    t.inst.startedAtMs ??= Math.max(0, ev.at_ms - ev.duration_ms);
    if (t.key !== null) t.node.startedAtMs ??= t.inst.startedAtMs;
    t.inst.output = ev.output;
    t.inst.error = ev.error ?? null;
    t.inst.raw = ev.raw;
    t.inst.recoveredBy = ev.recovered_by ?? null;
    t.inst.skipReason = null;
    t.inst.question = null;
    t.inst.sampling = null;
    t.inst.seq = ev.seq;
    this.trackIteration(t, before, ev.status === 'failed' && !ev.recovered_by, ev.seq);
    if (t.inst.loop) this.loopFinished(t);
  }

  /** An instance was skipped (a disabled step shows `null` as its output). */
  private stepSkipped(ev: EventOf<'StepSkipped'>): void {
    const t = this.target(ev.step, ev.path);
    const before = t.inst.state;
    this.setState(t, 'skipped');
    t.inst.finishedAtMs = ev.at_ms;
    t.inst.skipReason = ev.reason ?? null;
    // A disabled step's output is `null` (what the steps after it see); other skips have none.
    if (ev.reason === 'disabled') t.inst.output = null;
    t.inst.seq = ev.seq;
    this.trackIteration(t, before, false, ev.seq);
  }

  /** An instance asks a person a question. */
  private stepWaiting(ev: EventOf<'StepWaiting'>): void {
    const t = this.target(ev.step, ev.path);
    const before = t.inst.state;
    this.setState(t, 'waiting');
    t.inst.question = ev.question;
    // Asked before any start was seen (a history cut short): it started then.
    t.inst.startedAtMs ??= ev.at_ms;
    if (t.key !== null) t.node.startedAtMs ??= ev.at_ms;
    t.inst.seq = ev.seq;
    this.trackIteration(t, before, false, ev.seq);
  }

  /** A question was answered. */
  private stepAnswered(ev: EventOf<'StepAnswered'>): void {
    const t = this.target(ev.step, ev.path);
    const before = t.inst.state;
    // Back to work (the call goes on, or the step settles with the answer next).
    if (before === 'waiting') this.setState(t, 'running');
    t.inst.question = null;
    t.inst.answer = { action: ev.action, content: ev.content, atMs: ev.at_ms };
    t.inst.seq = ev.seq;
    this.trackIteration(t, before, false, ev.seq);
  }

  /** An instance asked a model (sampling). */
  private stepSampling(ev: EventOf<'StepSampling'>): void {
    const t = this.target(ev.step, ev.path);
    const open = t.inst.sampling?.open ?? 0;
    t.inst.sampling = { server: ev.server, request: ev.request, atMs: ev.at_ms, open: open + 1 };
    t.inst.startedAtMs ??= ev.at_ms;
    if (t.key !== null) t.node.startedAtMs ??= ev.at_ms;
    t.inst.seq = ev.seq;
    this.pushSample({ seq: ev.seq, step: ev.step, path: ev.path, server: ev.server, request: ev.request, atMs: ev.at_ms, answer: null });
  }

  /** The model answered an instance's request. */
  private stepSampled(ev: EventOf<'StepSampled'>): void {
    const t = this.target(ev.step, ev.path);
    const s = t.inst.sampling;
    t.inst.sampling = s && s.open > 1 ? { ...s, open: s.open - 1 } : null;
    t.inst.seq = ev.seq;
    this.answerSample(ev.step, ev.path, ev.server, { result: ev.result, error: ev.error ?? null, atMs: ev.at_ms });
  }

  /** The run paused (a breakpoint, a step, a request). */
  private runPaused(ev: EventOf<'RunPaused'>): void {
    this.v.status = 'paused';
    this.v.pausedSinceMs ??= ev.at_ms;
    this.v.pause = { reason: ev.reason, step: ev.step ?? null, path: ev.path ?? null, args: ev.args };
    if (ev.preview !== undefined) this.v.pause.preview = ev.preview;
    // Breakpoints pause before the step starts: it shows as paused, with its
    // arguments, until it starts. (`stepped` names the step that just started,
    // which keeps its state: only instances that have not started are marked.)
    if (ev.step !== undefined && ev.reason !== 'requested') {
      const path = ev.path ?? [];
      const cur = this.peek(ev.step, path);
      if (!cur || cur.state === 'queued') {
        const t = this.target(ev.step, path);
        this.setState(t, 'paused');
        t.inst.args = ev.args;
        t.inst.seq = ev.seq;
      }
    }
  }

  /** The run goes on after a pause. */
  private runResumed(ev: EventOf<'RunResumed'>): void {
    if (this.v.status === 'paused') this.v.status = 'running';
    this.v.pause = null;
    this.endPause(ev.at_ms);
  }

  /** A log line. */
  private logLine(ev: EventOf<'Log'>): void {
    this.newLogs.push({ seq: ev.seq, atMs: ev.at_ms, level: ev.level, message: ev.message, step: ev.step ?? null });
  }

  /** The run ended with its envelope; instances it names as failed and still active are failed. */
  private runFinished(ev: EventOf<'RunFinished'>): void {
    this.v.envelope = ev.envelope;
    this.v.traceId = ev.envelope.trace_id ?? this.v.traceId;
    this.v.status = ev.envelope.status;
    this.v.pause = null;
    this.endPause(ev.at_ms);
    this.settleLeftovers(ev.envelope, ev.seq, ev.at_ms);
  }

  private endPause(atMs: number): void {
    if (this.v.pausedSinceMs === null) return;
    this.v.pausedMs += Math.max(0, atMs - this.v.pausedSinceMs);
    this.v.pausedSinceMs = null;
  }

  /**
   * The engine sends no `StepFinished` for a step whose fallback failed; the envelope
   * names it in `errors`. Instances still active at the end that it names are failed.
   */
  private settleLeftovers(envelope: Envelope, seq: number, atMs: number): void {
    for (const e of envelope.errors) {
      if (!e.step) continue;
      const path = e.path ?? [];
      const cur = this.peek(e.step, path);
      if (!cur || !isActive(cur.state)) continue;
      const t = this.target(e.step, path);
      const before = t.inst.state;
      this.setState(t, 'failed');
      t.inst.error = { code: e.code, message: e.message };
      t.inst.sampling = null;
      t.inst.finishedAtMs = atMs;
      t.inst.seq = seq;
      this.trackIteration(t, before, true, seq);
    }
  }

  // ----- requests for the model ----------------------------------------------------

  private pushSample(x: SampleExchange): void {
    const list = this.own(this.v.samples);
    list.push(x);
    if (list.length > SAMPLE_LIMIT) list.splice(0, list.length - SAMPLE_LIMIT);
    this.v.samples = list;
  }

  /** Answers the latest open request of that instance and server. */
  private answerSample(step: string, path: IterationPath, server: string, answer: NonNullable<SampleExchange['answer']>): void {
    const key = pathKey(path);
    const list = this.v.samples;
    for (let i = list.length - 1; i >= 0; i--) {
      const x = list[i]!;
      if (x.answer !== null || x.step !== step || x.server !== server || pathKey(x.path) !== key) continue;
      const owned = this.own(list);
      owned[i] = { ...x, answer };
      this.v.samples = owned;
      return;
    }
  }

  // ----- loops ---------------------------------------------------------------------

  /** The loop holding body step `id` (known, learned, or guessed now and remembered). */
  private parentOf(id: string, path: IterationPath): string | null {
    const known = this.v.parents[id];
    if (known) return known;
    const at = path.slice(0, -1);
    let best: { id: string; rank: number; seq: number } | null = null;
    for (const node of Object.values(this.v.nodes)) {
      if (node.id === id) continue;
      const inst = at.length === 0 ? node : node.instances?.[pathKey(at)];
      if (!inst || !isActive(inst.state)) continue;
      const rank = loopLikeness(node, inst);
      if (!best || rank > best.rank || (rank === best.rank && inst.seq > best.seq)) {
        best = { id: node.id, rank, seq: inst.seq };
      }
    }
    if (!best) return null;
    this.v.parents = this.own(this.v.parents);
    this.v.parents[id] = best.id;
    if (this.v.nodes[best.id]?.loop == null) {
      // Learned that it is a loop: it (and its instances) get a loop view.
      const node = this.node(best.id, at.length > 0);
      node.loop = this.made(emptyLoop());
      if (node.instances) {
        node.instances = this.own(node.instances);
        for (const [k, inst] of Object.entries(node.instances)) {
          node.instances[k] = this.made({ ...inst, loop: emptyLoop() });
        }
      }
    }
    return best.id;
  }

  private track(loopKey: string): LoopTrack {
    this.v.tracks = this.own(this.v.tracks);
    const cur = this.v.tracks[loopKey];
    const track = cur
      ? this.own(cur)
      : this.made<LoopTrack>({ iterations: {}, pending: [], finishedCount: 0, hasProgress: false });
    this.v.tracks[loopKey] = track;
    return track;
  }

  /** Updates the iteration around a body instance after it went from `before` to its state. */
  private trackIteration(t: Target, before: NodeState, failedNow: boolean, seq: number): void {
    if (t.key === null) return;
    const loopId = this.parentOf(t.node.id, t.path);
    if (!loopId) return;
    const loopPath = t.path.slice(0, -1);
    const track = this.track(`${loopId}@${pathKey(loopPath)}`);
    track.iterations = this.own(track.iterations);
    const cur = track.iterations[t.key];
    const it = cur ? this.own(cur) : this.made<IterationTrack>({ active: 0, failed: 0, finished: false, settledSeq: 0 });
    track.iterations[t.key] = it;
    const after = t.inst.state;
    it.active += Number(isActive(after)) - Number(isActive(before));
    if (failedNow) it.failed++;
    if (FINAL_STEP.has(after)) it.settledSeq = seq;
    if (it.active > 0 && it.finished) {
      it.finished = false;
      track.finishedCount--;
    }
    const isPending = it.active === 0 && it.settledSeq > 0 && !it.finished;
    const at = track.pending.indexOf(t.key);
    if (isPending !== at >= 0) {
      track.pending = this.own(track.pending);
      if (isPending) track.pending.push(t.key);
      else track.pending.splice(at, 1);
    }
    this.showIteration(loopId, loopPath, t.key, it, track);
  }

  private showIteration(loopId: string, loopPath: IterationPath, key: string, it: IterationTrack, track: LoopTrack): void {
    const state: IterationState = it.failed > 0 ? 'failed' : it.active > 0 || !it.finished ? 'running' : 'succeeded';
    // Leave the loop's node alone (its identity too) when nothing it shows changes.
    const shown = this.peek(loopId, loopPath)?.loop;
    const sum = loopPath.length > 0 ? this.v.nodes[loopId]?.loop : shown;
    const countsChange = !track.hasProgress && shown?.done !== track.finishedCount;
    if (shown?.iterations[key] === state && sum?.iterations[key] === state && !countsChange) return;
    const lt = this.target(loopId, loopPath);
    const views = lt.key === null ? [lt.inst] : [lt.inst, lt.node];
    for (const holder of views) {
      const loop = holder.loop ?? emptyLoop();
      if (loop.iterations[key] === state) continue;
      holder.loop = this.own(loop);
      holder.loop.iterations = this.own(holder.loop.iterations);
      holder.loop.iterations[key] = state;
    }
    if (!track.hasProgress) this.setLoopCounts(lt, track.finishedCount, lt.inst.loop?.total ?? null);
  }

  /** Marks up to `done` iterations of the loop instance finished: those settled most recently first. */
  private finishIterations(t: Target, track: LoopTrack, done: number): void {
    const need = done - track.finishedCount;
    if (need <= 0 || track.pending.length === 0) return;
    if (track.pending.length <= need) {
      this.markFinished(t, track, track.pending.slice());
      return;
    }
    const keys = track.pending
      .slice()
      .sort((a, b) => (track.iterations[b]?.settledSeq ?? 0) - (track.iterations[a]?.settledSeq ?? 0))
      .slice(0, need);
    this.markFinished(t, track, keys);
  }

  private markFinished(t: Target, track: LoopTrack, keys: readonly string[]): void {
    if (keys.length === 0) return;
    track.iterations = this.own(track.iterations);
    track.pending = track.pending.filter((k) => !keys.includes(k));
    this.fresh.add(track.pending);
    for (const key of keys) {
      const cur = track.iterations[key];
      if (!cur) continue;
      const it = this.own(cur);
      it.finished = true;
      track.iterations[key] = it;
      track.finishedCount++;
    }
    for (const key of keys) {
      const it = track.iterations[key];
      if (it) this.showIteration(t.node.id, t.path, key, it, track);
    }
  }

  private loopProgress(t: Target, done: number, total: number | null): void {
    const track = this.track(`${t.node.id}@${pathKey(t.path)}`);
    track.hasProgress = true;
    this.finishIterations(t, track, done);
    this.setLoopCounts(t, done, total ?? t.inst.loop?.total ?? null);
  }

  /** A loop instance finished: its iterations with nothing left running are done. */
  private loopFinished(t: Target): void {
    const key = `${t.node.id}@${pathKey(t.path)}`;
    if (!this.v.tracks[key]?.pending.length) return;
    const track = this.track(key);
    this.markFinished(t, track, track.pending.slice());
  }

  /** Sets a loop instance's done/total (and, for nested loops, the node's sums). */
  private setLoopCounts(t: Target, done: number, total: number | null): void {
    const loop = t.inst.loop ?? emptyLoop();
    if (loop.done === done && loop.total === total) return;
    const [oldDone, oldTotal] = [loop.done, loop.total];
    t.inst.loop = this.own(loop);
    t.inst.loop.done = done;
    t.inst.loop.total = total;
    if (t.key !== null) {
      const sum = this.own(t.node.loop ?? emptyLoop());
      t.node.loop = sum;
      sum.done += done - oldDone;
      if (total !== null || oldTotal !== null) sum.total = (sum.total ?? 0) + (total ?? 0) - (oldTotal ?? 0);
    }
  }

  // ----- the end of the batch ------------------------------------------------------

  finish(): RunView {
    for (const id of this.touched) {
      const node = this.v.nodes[id];
      if (!node?.counts || !node.instances || node.latest === null) continue;
      const latest = node.instances[node.latest];
      if (latest) for (const f of MIRRORED) (node as unknown as Record<string, unknown>)[f] = latest[f];
      node.state = aggregateState(node.counts);
    }
    if (this.newLogs.length) {
      const all = this.v.logs.concat(this.newLogs);
      this.v.logs = all.length > LOG_LIMIT ? all.slice(all.length - LOG_LIMIT) : all;
    }
    return this.v;
  }
}

/**
 * How likely a running step is the loop around a body step whose loop is not known:
 * a known loop; else a step started with `{items}` (how a `for_each` loop shows its
 * arguments) or with no arguments (an `until` loop; transforms and switches finish
 * at once); else anything running.
 */
function loopLikeness(node: NodeView, inst: StepFields): number {
  if (node.loop != null) return 2;
  return inst.args === undefined || isItemsArgs(inst.args) ? 1 : 0;
}

function isItemsArgs(args: Json | undefined): args is { items: number } {
  return (
    !!args &&
    typeof args === 'object' &&
    !Array.isArray(args) &&
    typeof args.items === 'number' &&
    Object.keys(args).length === 1
  );
}

function aggregateState(c: InstanceCounts): NodeState {
  if (c.paused) return 'paused';
  if (c.waiting) return 'waiting';
  if (c.running) return 'running';
  if (c.retrying) return 'retrying';
  if (c.failed) return 'failed';
  if (c.succeeded) return 'succeeded';
  if (c.skipped) return 'skipped';
  return 'queued';
}

// ---------------------------------------------------------------------------------
// Selectors (memoized per view, so the same view gives the same array)

const runningCache = new WeakMap<RunView, string[]>();

/** Step ids with an instance running or retrying (the canvas animates edges into them; not into a step waiting for a person). */
export function stepsRunning(view: RunView): string[] {
  let out = runningCache.get(view);
  if (!out) {
    out = Object.values(view.nodes)
      .filter((n) => n.state === 'running' || n.state === 'retrying' || (n.counts !== null && n.counts.running + n.counts.retrying > 0))
      .map((n) => n.id);
    runningCache.set(view, out);
  }
  return out;
}

/** Step ids whose (aggregate) state is `state`, in node order. */
export function stepsInState(view: RunView, state: NodeState): string[] {
  return Object.values(view.nodes)
    .filter((n) => n.state === state)
    .map((n) => n.id);
}

/** The instance of a step at `path` (the node itself at the top level). */
export function instanceAt(view: RunView, step: string, path: readonly number[] = []): StepFields | undefined {
  const node = view.nodes[step];
  if (!node || path.length === 0) return node;
  return node.instances?.[pathKey(path)];
}

/** The keys of a loop's failed iterations (numeric order for top-level loops). */
export function failedIterations(node: NodeView): string[] {
  if (!node.loop) return [];
  return Object.entries(node.loop.iterations)
    .filter(([, s]) => s === 'failed')
    .map(([k]) => k)
    .sort(compareKeys);
}

/** `"37/120"` (or `"37"` when the total is unknown) for a loop; `null` for other steps. */
export function loopLabel(node: NodeView): string | null {
  if (!node.loop) return null;
  return node.loop.total === null ? `${node.loop.done}` : `${node.loop.done}/${node.loop.total}`;
}

/** One open question of the run: the step instance that waits, and what it asks. */
export interface OpenQuestion {
  step: string;
  path: IterationPath;
  question: Question;
}

const questionsCache = new WeakMap<RunView, OpenQuestion[]>();

/** Every question the run waits on, oldest first (the same array for the same view). */
export function openQuestions(view: RunView): OpenQuestion[] {
  let out = questionsCache.get(view);
  if (!out) {
    const found: { q: OpenQuestion; seq: number }[] = [];
    for (const node of Object.values(view.nodes)) {
      if (node.instances === null) {
        if (node.question) found.push({ q: { step: node.id, path: [], question: node.question }, seq: node.seq });
        continue;
      }
      if (!node.counts?.waiting) continue;
      for (const inst of Object.values(node.instances)) {
        if (inst.question) found.push({ q: { step: node.id, path: inst.path, question: inst.question }, seq: inst.seq });
      }
    }
    out = found.sort((a, b) => a.seq - b.seq).map((f) => f.q);
    questionsCache.set(view, out);
  }
  return out;
}

export function isFinished(view: RunView): boolean {
  return view.envelope !== null;
}

/**
 * What a step instance shows: its state, except `not-run` for one still queued when
 * the run is over (it never started: a failure upstream, a cancel, a loop cut short),
 * `pinned` for a top-level step of a re-run that kept its earlier output,
 * `disabled` for one skipped because the document switched it off, and `sampling` for
 * one running while a server's request for the model is open during its call.
 */
export type ShownState = NodeState | 'not-run' | 'pinned' | 'disabled' | 'sampling';

export function shownState(view: RunView, step: string, f: StepFields | undefined): ShownState {
  if (!f) return 'queued';
  if (f.state === 'queued' && isFinished(view)) return 'not-run';
  if (f.state === 'skipped' && f.skipReason === 'disabled') return 'disabled';
  if (f.state === 'succeeded' && view.pinned[step] && f === view.nodes[step]) return 'pinned';
  if (f.state === 'running' && f.sampling) return 'sampling';
  return f.state;
}

/** The labels of the states shown to people (the CSS classes use the states themselves). */
export const STATE_LABELS: Record<ShownState, string> = {
  queued: 'queued',
  running: 'running',
  retrying: 'retrying',
  waiting: 'waiting for input',
  paused: 'paused',
  succeeded: 'succeeded',
  failed: 'failed',
  skipped: 'skipped',
  'not-run': 'not run',
  pinned: 'pinned',
  disabled: 'disabled',
  sampling: 'asking the model',
};

/**
 * The time a run worked: its duration (the envelope's, else the latest event) less the
 * time it sat paused (measured from the events' `at_ms`, a pause in progress included).
 */
export function activeMs(view: RunView): { totalMs: number; pausedMs: number; activeMs: number } {
  const totalMs = view.envelope ? view.envelope.duration_ms : view.atMs;
  const pausedMs = view.pausedMs + (view.pausedSinceMs !== null ? Math.max(0, view.atMs - view.pausedSinceMs) : 0);
  return { totalMs, pausedMs, activeMs: Math.max(0, totalMs - pausedMs) };
}

/** Orders path keys by their indexes: `"2" < "10"`, `"1.9" < "1.10"`. */
export function compareKeys(a: string, b: string): number {
  const pa = parsePathKey(a);
  const pb = parsePathKey(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  }
  return pa.length - pb.length;
}

// ---------------------------------------------------------------------------------
// The template scope (DESIGN §2 "Templates")

export interface ScopeRecord {
  output: Json;
  status: 'succeeded' | 'failed' | 'skipped';
  error: StepError | null;
  attempts: number;
  duration_ms: number | null;
}

const scopeCache = new WeakMap<RunView, Record<string, Json | Record<string, ScopeRecord>>>();

/**
 * The names templates see at this point of the run: `inputs`, `run` ({id, blueprint,
 * started_at when known}), each finished top-level step's output under its id and
 * its record under `steps.<id>`. When the run is paused inside a loop, the finished
 * body steps of that iteration (and of the enclosing iterations) are added, and
 * `index` (the last index of the paused path).
 *
 * Not here, because the events do not carry them: the loop variable (`item`, or its
 * `as` name), `prev` (needs the dependency graph), `error` in a fallback, `saved`.
 */
export function scopeAt(view: RunView): Record<string, Json | Record<string, ScopeRecord>> {
  const cached = scopeCache.get(view);
  if (cached) return cached;
  const steps: Record<string, ScopeRecord> = {};
  const scope: Record<string, Json | Record<string, ScopeRecord>> = {};
  scope.inputs = view.inputs ?? null;
  const run: Record<string, Json> = { id: view.runId, blueprint: view.blueprintId };
  if (view.startedAt) run.started_at = view.startedAt;
  scope.run = run;
  const add = (id: string, f: StepFields) => {
    if (!FINAL_STEP.has(f.state)) return;
    const output = f.state === 'succeeded' ? (f.output ?? null) : null;
    scope[id] = output;
    steps[id] = {
      output,
      status: f.state as ScopeRecord['status'],
      error: f.error,
      attempts: f.attempt,
      duration_ms: f.durationMs,
    };
  };
  const at = view.pause?.path ?? [];
  for (const node of Object.values(view.nodes)) {
    if (!node.instances) {
      add(node.id, node);
      continue;
    }
    // Inside the paused iteration: the body's finished steps, innermost first.
    for (let depth = at.length; depth > 0; depth--) {
      const inst = node.instances[pathKey(at.slice(0, depth))];
      if (inst) {
        add(node.id, inst);
        break;
      }
    }
  }
  if (at.length > 0) scope.index = at[at.length - 1]!;
  scope.steps = steps;
  scopeCache.set(view, scope);
  return scope;
}
