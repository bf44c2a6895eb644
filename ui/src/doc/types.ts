//! The blueprint document as the studio holds it: TypeScript types for the fields
//! of format v1 (DESIGN §2). Documents are plain JSON objects; fields the types do
//! not name are kept as they are, so export stays lossless.

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json | undefined;
}

/** A position on the canvas, in flow coordinates. */
export interface XY {
  x: number;
  y: number;
}

/**
 * One `layout` entry. Top-level steps are placed in canvas coordinates; steps of a
 * loop body are placed relative to the top-left corner of their loop's container.
 * Loops may carry the container's `width` and `height`.
 */
export interface LayoutEntry extends XY {
  width?: number | null;
  height?: number | null;
}
export type Layout = Record<string, LayoutEntry>;

export interface Retry {
  attempts?: number;
  delay_ms?: number;
  backoff?: 'fixed' | 'exponential' | (string & {});
  max_delay_ms?: number;
}

export type OnError = 'abort' | 'continue';

/** Fields every step kind has (DESIGN §2 "Common fields"). */
export interface StepBase {
  id: string;
  name?: string;
  after?: string[];
  timeout_ms?: number;
  retry?: Retry;
  on_error?: OnError;
  fallback?: string;
  save?: string;
  note?: string;
  /**
   * `true`: the step is switched off. A run does not run it: it finishes skipped
   * (reason `disabled`) with output `null`, and the steps after it still run.
   */
  disabled?: boolean;
}

export interface ToolStep extends StepBase {
  kind: 'tool';
  server?: string;
  tool: string;
  args?: Json;
  /** `destructive`: a call to a tool annotated `destructiveHint: true` waits for a person's approval first. */
  confirm?: 'destructive' | (string & {});
}
export interface ResourceStep extends StepBase {
  kind: 'resource';
  server?: string;
  uri: string;
}
export interface PromptStep extends StepBase {
  kind: 'prompt';
  server?: string;
  prompt: string;
  args?: Json;
}
export interface TransformStep extends StepBase {
  kind: 'transform';
  value?: Json;
}
export interface SwitchCase {
  when: string;
  to: string[];
}
export interface SwitchStep extends StepBase {
  kind: 'switch';
  cases: SwitchCase[];
  default?: string[];
}
export interface LoopStep extends StepBase {
  kind: 'loop';
  for_each?: string | Json[];
  until?: string;
  as?: string;
  concurrency?: number;
  max_iterations?: number;
  delay_ms?: number;
  steps: Step[];
  collect?: Json;
}
export interface WorkflowStep extends StepBase {
  kind: 'workflow';
  workflow: string;
  args?: Json;
}
export interface WaitStep extends StepBase {
  kind: 'wait';
  ms: number;
}

/** What an `input` step's `timeout_ms` passing without an answer does. */
export type OnTimeout = 'fail' | 'default';

/**
 * Asks a person for a value described by `schema` (a primitive or a flat object; default
 * a string), or, with `approve: true`, for Approve / Reject (an approval gate).
 */
export interface InputStep extends StepBase {
  kind: 'input';
  /** What to ask; may hold templates. */
  prompt: string;
  schema?: Json;
  /** The answer offered (pre-filled), and taken on timeout with `on_timeout: "default"`. */
  default?: Json;
  on_timeout?: OnTimeout;
  approve?: boolean;
}

/** A step. Documents may hold kinds the studio does not know; those are shown as `unknown`. */
export type Step =
  | ToolStep
  | ResourceStep
  | PromptStep
  | TransformStep
  | SwitchStep
  | LoopStep
  | WorkflowStep
  | WaitStep
  | InputStep;
export type StepKind = Step['kind'];
export const STEP_KINDS: readonly StepKind[] = [
  'tool',
  'resource',
  'prompt',
  'transform',
  'switch',
  'loop',
  'workflow',
  'wait',
  'input',
];

/** Every field any kind has, all optional: the shape of `patchStep`. */
export type StepFields = Partial<
  Omit<ToolStep, 'kind'> &
    Omit<ResourceStep, 'kind'> &
    Omit<PromptStep, 'kind'> &
    Omit<TransformStep, 'kind'> &
    Omit<SwitchStep, 'kind'> &
    Omit<LoopStep, 'kind'> &
    Omit<WorkflowStep, 'kind'> &
    Omit<WaitStep, 'kind'> &
    Omit<InputStep, 'kind' | 'default'>
> & { kind?: string };

/** A patch: keys set to `undefined` are removed; other keys are replaced or added. */
export type StepPatch = { [K in keyof StepFields]?: StepFields[K] | undefined } & Record<string, unknown>;

/** A step to insert: like a step, the id optional (one is generated from the tool or kind). */
export type StepTemplate = { kind: string; id?: string } & Record<string, unknown>;

export interface ServerConfig {
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  url?: string;
  headers?: Record<string, string>;
  [key: string]: Json | undefined;
}

export interface Limits {
  max_step_runs?: number;
  timeout_ms?: number;
  concurrency?: number;
}

export type Schedule =
  | { cron: string; timezone?: string; inputs?: JsonObject }
  | { every: string; inputs?: JsonObject }
  | { at: string; inputs?: JsonObject };

/** A blueprint document (format v1). */
export interface Blueprint {
  $schema?: string;
  blueprint: number;
  id: string;
  name?: string;
  description?: string;
  inputs?: JsonObject;
  servers?: Record<string, ServerConfig>;
  on_error?: OnError;
  retry?: Retry;
  limits?: Limits;
  schedule?: Schedule;
  expose?: boolean;
  steps: Step[];
  output?: Json;
  layout?: Layout;
}

/** The top-level fields `setSettings` may change. */
export const SETTINGS_KEYS = [
  'id',
  'name',
  'description',
  'inputs',
  'servers',
  'on_error',
  'retry',
  'limits',
  'schedule',
  'expose',
  'output',
] as const;
export type SettingsKey = (typeof SETTINGS_KEYS)[number];
export type SettingsPatch = { [K in SettingsKey]?: Blueprint[K] | undefined };

/** A validation finding, as the engine reports it (DESIGN §2 "Validation"). */
export interface Diagnostic {
  level: 'error' | 'warning';
  code: string;
  message: string;
  /** JSON Pointer into the blueprint, e.g. `/steps/3/steps/0/args/message`. */
  pointer: string;
  step?: string | null;
  hint?: string | null;
  /**
   * The step whose output it is about, when not `step`: a template of `step` reads a
   * field the producing step's tool does not give (`TEMPLATE_PATH_UNKNOWN`).
   */
  producer?: string | null;
}

/** The outcome of an edit that can be refused (bad id, invalid connection, …). */
export type EditResult = { ok: true } | { ok: false; reason: string };
