//! The event stream of a run (DESIGN §3) and its result envelope, typed exactly as the
//! engine serializes them (`crates/engine/src/event.rs`, serde's JSON): one object per
//! event with `seq`, `at_ms` and a `type` tag; optional fields are absent, not null.

import type { Json } from '../doc/types';

export type { Json };

/** The iteration indexes of the loops around a step instance, outermost first; `[]` at the top level. */
export type IterationPath = number[];

export type StepStatus = 'succeeded' | 'failed' | 'skipped';
export type RunStatus = 'succeeded' | 'partial' | 'failed' | 'cancelled' | 'interrupted';
export type PauseReason = 'requested' | 'breakpoint' | 'stepped';
export type LogLevel = 'info' | 'warn' | 'error';

/** A step's error: a stable code and what happened. */
export interface StepError {
  code: string;
  message: string;
  /**
   * What the server itself said, when `message` says it in our words (a server that
   * refused the arguments: `ARGS_INVALID` with its own text here). Absent otherwise.
   */
  detail?: string;
  /** With `LOOP_UNTIL_EXHAUSTED`: the iterations run and what `until` last rendered. Absent otherwise. */
  exhausted?: UntilExhausted;
}

/** An `until` loop that reached `max_iterations` before its condition was true. */
export interface UntilExhausted {
  iterations: number;
  max_iterations: number;
  /** The condition's value after the last iteration: falsy (`false`, `null`, `""`, `[]`, `{}`). */
  last: Json;
}

/** One entry of the envelope's `errors`; `step` is empty for run-level errors (`RUN_TIMEOUT`). */
export interface ErrorEntry {
  step: string;
  /** Absent for top-level steps. */
  path?: IterationPath;
  code: string;
  message: string;
}

export interface Summary {
  /** Top-level steps (fallback steps not counted). */
  steps: number;
  succeeded: number;
  failed: number;
  skipped: number;
  /** Tool calls made, loop iterations and retries included. */
  tool_calls: number;
}

/** The result of a run (CLI `--json`, MCP `run_workflow`, `RunFinished`). */
export interface Envelope {
  run_id: string;
  blueprint: string;
  status: RunStatus;
  output: Json;
  summary: Summary;
  errors: ErrorEntry[];
  duration_ms: number;
  /** The run's trace (32 lower-case hex digits) when telemetry was on; absent otherwise. */
  trace_id?: string;
}

interface EventBase {
  /** Ordered within the run, from 1. */
  seq: number;
  /** Milliseconds since the run started. */
  at_ms: number;
}

export interface RunStartedEvent extends EventBase {
  type: 'RunStarted';
  run_id: string;
  blueprint: string;
  inputs: Json;
  /** The run's trace (32 lower-case hex digits) when telemetry is on; absent otherwise. */
  trace_id?: string;
}

export interface StepStartedEvent extends EventBase {
  type: 'StepStarted';
  step: string;
  path: IterationPath;
  attempt: number;
  /** The resolved arguments (tool/prompt/workflow args, resource uri, wait ms; `{items}` for a loop). */
  args?: Json;
}

export interface StepRetryingEvent extends EventBase {
  type: 'StepRetrying';
  step: string;
  path: IterationPath;
  /** The attempt that will run next. */
  attempt: number;
  delay_ms: number;
  error: StepError;
}

/** MCP progress of a call, or a loop's `done/total` iterations. */
export interface StepProgressEvent extends EventBase {
  type: 'StepProgress';
  step: string;
  path: IterationPath;
  progress: number;
  total?: number;
  message?: string;
}

export interface StepFinishedEvent extends EventBase {
  type: 'StepFinished';
  step: string;
  path: IterationPath;
  status: StepStatus;
  output?: Json;
  error?: StepError;
  attempts: number;
  duration_ms: number;
  /** The raw MCP result, for tool/resource/prompt steps. */
  raw?: Json;
  /** Set when the output came from this fallback step. */
  recovered_by?: string;
}

/** Why a step was skipped, when `StepSkipped` says (absent for the usual rules). */
export type SkipReason = 'disabled';

export interface StepSkippedEvent extends EventBase {
  type: 'StepSkipped';
  step: string;
  path: IterationPath;
  /**
   * `disabled`: the step has `"disabled": true` and was not run (output `null`; unlike
   * other skips, the steps after it still run). Absent for a switch routed away, every
   * dependency skipped, a step left out of a partial re-run, the run ending first.
   */
  reason?: SkipReason;
}

/**
 * At a breakpoint before a `transform` or `switch`: what it would give, evaluated by the
 * engine against the run's scope (nothing run).
 */
export type PausePreview = { value: Json } | { case: number | 'default' } | { error: StepError };

export interface RunPausedEvent extends EventBase {
  type: 'RunPaused';
  reason: PauseReason;
  step?: string;
  path?: IterationPath;
  args?: Json;
  preview?: PausePreview;
}

export interface RunResumedEvent extends EventBase {
  type: 'RunResumed';
}

export interface LogEvent extends EventBase {
  type: 'Log';
  level: LogLevel;
  message: string;
  step?: string;
}

/** Who asks a person, and so how the question is shown (`crates/engine/src/people.rs`). */
export type Asking = 'input' | 'approval' | 'elicitation' | 'elicitation_url';

/** One question to a person. */
export interface Question {
  /** Unique in the run (`q1`, …): what an answer names. */
  id: string;
  /** The step that asks (a server's elicitation: the step whose call it came from). */
  step: string;
  path: IterationPath;
  asking: Asking;
  /** The server that asks, for an elicitation. */
  server?: string;
  /** What the person is asked (the step's prompt, the server's message). */
  message: string;
  /** The form: an object schema of flat fields. Absent in URL mode. */
  schema?: Json;
  /** The form's content offered (pre-filled). */
  default?: Json;
  /** URL mode: the page to visit (opened only when the person clicks). */
  url?: string;
}

/** How a person answered (`accept` with the form's content, `decline`, `cancel`; `cancel` too when the question was withdrawn). */
export type AnswerAction = 'accept' | 'decline' | 'cancel';

/** A step waits for a person: an `input` step, an approval gate, or a server's question during a call. */
export interface StepWaitingEvent extends EventBase {
  type: 'StepWaiting';
  step: string;
  path: IterationPath;
  question: Question;
}

/** The person answered (or the question was withdrawn: `cancel`). */
export interface StepAnsweredEvent extends EventBase {
  type: 'StepAnswered';
  step: string;
  path: IterationPath;
  action: AnswerAction;
  content?: Json;
}

/**
 * A server asked the model (MCP sampling) during the step's call: its
 * `CreateMessageRequest.params` (`messages`, `systemPrompt`, `maxTokens`, …), long text
 * and binary data cut by the engine.
 */
export interface StepSamplingEvent extends EventBase {
  type: 'StepSampling';
  step: string;
  path: IterationPath;
  server: string;
  request: Json;
}

/**
 * The model's answer (`CreateMessageResult`: `{role, content, model, stopReason}`, cut
 * the same way), or why there was none (`SAMPLING_NOT_ALLOWED`, `SAMPLING_UNAVAILABLE`,
 * `SAMPLING_FAILED`, `SAMPLING_DECLINED`).
 */
export interface StepSampledEvent extends EventBase {
  type: 'StepSampled';
  step: string;
  path: IterationPath;
  server: string;
  result?: Json;
  error?: StepError;
}

export interface RunFinishedEvent extends EventBase {
  type: 'RunFinished';
  envelope: Envelope;
}

export type RunEvent =
  | RunStartedEvent
  | StepStartedEvent
  | StepRetryingEvent
  | StepProgressEvent
  | StepFinishedEvent
  | StepSkippedEvent
  | StepWaitingEvent
  | StepAnsweredEvent
  | StepSamplingEvent
  | StepSampledEvent
  | RunPausedEvent
  | RunResumedEvent
  | LogEvent
  | RunFinishedEvent;

export type RunEventType = RunEvent['type'];

export const FINAL_STATUSES: readonly RunStatus[] = ['succeeded', 'partial', 'failed', 'cancelled', 'interrupted'];

/**
 * The events of an NDJSON text (`mcpflow run --events FILE`): one JSON object per
 * non-blank line. Throws on a line that is not a JSON object with a numeric `seq`
 * and a string `type`, naming the line.
 */
export function parseEventLines(text: string): RunEvent[] {
  const out: RunEvent[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new Error(`line ${i + 1}: not JSON (${(e as Error).message})`);
    }
    if (!isEventLike(value)) throw new Error(`line ${i + 1}: not a run event (needs a numeric seq and a type)`);
    out.push(value);
  });
  return out;
}

function isEventLike(v: unknown): v is RunEvent {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.seq === 'number' && typeof o.type === 'string';
}
