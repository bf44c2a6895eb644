//! A thin, typed wrapper over the generated Tauri commands (`../bindings`).
//!
//! Every call returns the command's data or throws a `BackendError` with the
//! command's stable `code`, its `message` and, for a blueprint that does not
//! validate, its `diagnostics`. Outside the desktop app (a plain `npm run ui:dev` in a
//! browser) there is no backend: `inTauri()` is false and every call throws
//! `NO_BACKEND`, so callers check `inTauri()` first to disable what needs it.

import {
  commands,
  type AnswerDto,
  type QuestionDto_Serialize,
  type AuthStatusDto_Serialize,
  type SignedOutDto_Serialize,
  type BlueprintInfo_Serialize,
  type CommandError_Serialize,
  type DiagnosticDto_Serialize,
  type EventBatch,
  type ExportedFiles,
  type PromptDto_Serialize,
  type ResourceDto_Serialize,
  type RunDetailDto_Serialize,
  type RunInfo_Serialize,
  type RunStarted as RunStartedDto,
  type SamplingProviderDto_Deserialize,
  type SamplingSettingsDto_Serialize,
  type ServerDto_Serialize,
  type ServerOffer_Serialize,
  type ServerTestDto_Serialize,
  type ServiceStatus_Serialize,
  type StudioInfo_Serialize,
  type TelemetryConfigDto_Deserialize,
  type TelemetrySettingsDto_Serialize,
  type TemplatePreviewDto_Serialize,
  type ToolDto_Serialize,
  type WaitingRunDto_Serialize,
  type SavedTestDto,
  type TestDto_Serialize,
  type TestListDto_Serialize,
} from '../bindings';
import type { Channel } from '@tauri-apps/api/core';
import type { Blueprint, Diagnostic, Json } from '../doc/types';

// What Rust returns (the `*_Serialize` shapes), under the studio's names.
export type StudioInfo = StudioInfo_Serialize;
export type BlueprintInfo = BlueprintInfo_Serialize;
export type ServerInfo = ServerDto_Serialize;
export type ServerOffer = ServerOffer_Serialize;
export type ToolInfo = ToolDto_Serialize;
/** What a connection test found: the protocol revision spoken and the tools. */
export type ServerTest = ServerTestDto_Serialize;
/** The login a configured HTTP server holds (never the token). */
export type AuthStatus = AuthStatusDto_Serialize;
/** What signing out told the server's authorization server (the login is gone here either way). */
export type SignedOut = SignedOutDto_Serialize;
export type ResourceInfo = ResourceDto_Serialize;
export type PromptInfo = PromptDto_Serialize;
export type RunInfo = RunInfo_Serialize;
/** A run saved as a test: its name, file and how many recorded calls its cassette holds. */
export type SavedTest = SavedTestDto;
/** One test of a blueprint; `passed`, `failure` and `status` once it ran. */
export type TestInfo = TestDto_Serialize;
/** A blueprint's tests and the folder holding them. */
export type TestList = TestListDto_Serialize;
/** What the data folder's `settings.json` says of the sampling provider (the model servers may ask). */
export type SamplingSettings = SamplingSettingsDto_Serialize;
/** The sampling provider as the form sends it: the key only as an environment variable's name. */
export type SamplingProvider = SamplingProviderDto_Deserialize;
/** What the data folder's `settings.json` says of telemetry (OpenTelemetry), and where spans go now. */
export type TelemetrySettings = TelemetrySettingsDto_Serialize;
/** The telemetry section as the form sends it: header values only as environment variables' names. */
export type TelemetryConfig = TelemetryConfigDto_Deserialize;
/** A re-run's origin: the past run, the step it re-ran, and how much after it. */
export type RerunOf = NonNullable<RunInfo['rerun_of']>;
export type RunDetail = RunDetailDto_Serialize;
export type TemplatePreview = TemplatePreviewDto_Serialize;
export type RunStarted = RunStartedDto;
export type RunAction = 'pause' | 'resume' | 'step' | 'cancel';
export type RerunMode = 'step' | 'from_here';
type EventChannel = Channel<EventBatch>;
/** An open question of a run (as its `StepWaiting` event has it), with the run's id. */
export type OpenQuestionInfo = QuestionDto_Serialize;
/** A person's answer: `accept` with the form's content, `decline`, `cancel`. */
export type AnswerInfo = AnswerDto;
/** A run waiting for a person (an earlier session's, or in flight here), with its open questions. */
export type WaitingRunInfo = WaitingRunDto_Serialize;
/** How the studio reaches its data folder: the `mcpflow service` (`connected`, its pid), `reconnecting`, or `in_process`. */
export type ServiceStatus = ServiceStatus_Serialize;

/** A command's error: a stable code, a message that says what to do, and diagnostics. */
export class BackendError extends Error {
  readonly code: string;
  readonly diagnostics: Diagnostic[];
  constructor(code: string, message: string, diagnostics: Diagnostic[] = []) {
    super(message);
    this.name = 'BackendError';
    this.code = code;
    this.diagnostics = diagnostics;
  }
}

/** The code of calls made outside the desktop app. */
export const NO_BACKEND = 'NO_BACKEND';

/** True inside the desktop app (Tauri's IPC is there; `mockIPC` in tests provides it too). */
export function inTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** A diagnostic as the document store holds it (`level` narrowed to error/warning). */
export function toDiagnostic(d: DiagnosticDto_Serialize): Diagnostic {
  return {
    level: d.level === 'error' ? 'error' : 'warning',
    code: d.code,
    message: d.message,
    pointer: typeof d.pointer === 'string' ? d.pointer : '',
    step: d.step ?? null,
    hint: d.hint ?? null,
    producer: d.producer ?? null,
  };
}

const toDiagnostics = (list: readonly DiagnosticDto_Serialize[] | null | undefined): Diagnostic[] =>
  Array.isArray(list) ? list.map(toDiagnostic) : [];

/** Any rejection or error answer as a `BackendError`. */
export function toBackendError(e: unknown): BackendError {
  if (e instanceof BackendError) return e;
  if (e && typeof e === 'object' && typeof (e as CommandError_Serialize).code === 'string') {
    const c = e as CommandError_Serialize;
    return new BackendError(c.code, String(c.message ?? c.code), toDiagnostics(c.diagnostics));
  }
  // Tauri rejects with a plain string when it cannot even call the command (bad arguments, …).
  if (typeof e === 'string') return new BackendError('IPC_ERROR', e);
  if (e instanceof Error) return new BackendError('IPC_ERROR', e.message);
  return new BackendError('IPC_ERROR', 'the desktop backend did not answer');
}

type Answer<T> = { status: 'ok'; data: T } | { status: 'error'; error: CommandError_Serialize };

async function call<T>(run: () => Promise<Answer<T>>): Promise<T> {
  if (!inTauri()) throw new BackendError(NO_BACKEND, 'this needs the mcpflow desktop app (no backend in a plain browser)');
  let answer: Answer<T>;
  try {
    answer = await run();
  } catch (e) {
    throw toBackendError(e);
  }
  if (answer.status === 'ok') return answer.data;
  throw toBackendError(answer.error);
}

export interface OpenedBlueprint {
  info: BlueprintInfo;
  /** The stored JSON as written (not checked to be a blueprint: see `asBlueprint`). */
  doc: unknown;
}

export interface SavedBlueprint {
  info: BlueprintInfo;
  warnings: Diagnostic[];
}

export interface ImportedBlueprint {
  path: string;
  doc: unknown;
  diagnostics: Diagnostic[];
}

/** The backend's commands, each resolving to its data or throwing a `BackendError`. */
export const backend = {
  studioInfo: (): Promise<StudioInfo> => call(() => commands.studioInfo()),
  /** How the studio reaches the data folder now (changes come as `events.serviceStatus`). */
  serviceStatus: (): Promise<ServiceStatus> => call(() => commands.serviceStatus()),
  listBlueprints: (): Promise<BlueprintInfo[]> => call(() => commands.listBlueprints()),
  getBlueprint: (id: string): Promise<OpenedBlueprint> => call(() => commands.getBlueprint(id)),
  validateBlueprint: async (doc: Blueprint): Promise<Diagnostic[]> =>
    toDiagnostics(await call(() => commands.validateBlueprint(doc))),
  saveBlueprint: async (doc: Blueprint): Promise<SavedBlueprint> => {
    const r = await call(() => commands.saveBlueprint(doc));
    return { info: r.info, warnings: toDiagnostics(r.warnings) };
  },
  deleteBlueprint: (id: string): Promise<null> => call(() => commands.deleteBlueprint(id)),
  listServers: (): Promise<ServerInfo[]> => call(() => commands.listServers()),
  putServer: (name: string, config: unknown): Promise<ServerInfo[]> => call(() => commands.putServer(name, config)),
  deleteServer: (name: string): Promise<ServerInfo[]> => call(() => commands.deleteServer(name)),
  /** Turns a server's switch "may ask the model" on or off; resolves to the new list. */
  setServerSampling: (name: string, on: boolean): Promise<ServerInfo[]> => call(() => commands.setServerSampling(name, on)),
  /** The sampling provider of the data folder's `settings.json`. */
  samplingSettings: (): Promise<SamplingSettings> => call(() => commands.samplingSettings()),
  /** Saves the sampling provider (`null` removes it); `BAD_REQUEST` names the field. */
  setSamplingProvider: (provider: SamplingProvider | null): Promise<SamplingSettings> => call(() => commands.setSamplingProvider(provider)),
  /** The telemetry section of the data folder's `settings.json`, and where spans go now. */
  telemetrySettings: (): Promise<TelemetrySettings> => call(() => commands.telemetrySettings()),
  /** Saves the telemetry section (`null` removes it); `BAD_REQUEST` names the field. */
  setTelemetrySettings: (config: TelemetryConfig | null): Promise<TelemetrySettings> => call(() => commands.setTelemetrySettings(config)),
  /** Resolves to the command line that was approved. */
  approveServer: (name: string): Promise<string> => call(() => commands.approveServer(name)),
  testServer: (name: string): Promise<ServerTest> => call(() => commands.testServer(name)),
  /** The login of every configured HTTP server. */
  authStatus: (): Promise<AuthStatus[]> => call(() => commands.authStatus()),
  /** Opens the system browser and resolves once the sign-in came back (or throws: AUTH_CANCELLED, AUTH_TIMEOUT…). */
  /**
   * With `doc` (the document a run failed for), the server is found as that run found it:
   * the document's own `servers` count too.
   */
  authLogin: (server: string, doc?: Blueprint): Promise<AuthStatus> => call(() => commands.authLogin(server, doc ?? null)),
  /** Stops a sign-in waiting on the browser; true when one was. */
  authCancel: (server: string): Promise<boolean> => call(() => commands.authCancel(server)),
  /** Deletes the login here, then asks the authorization server to revoke it (best effort). */
  authLogout: (server: string): Promise<SignedOut> => call(() => commands.authLogout(server)),
  serverOffers: (): Promise<ServerOffer[]> => call(() => commands.serverOffers()),
  /** The names imported, or null when the user cancelled the file dialog. */
  importServers: (): Promise<string[] | null> => call(() => commands.importServers()),
  /** The file read, or null when the user cancelled the file dialog. */
  importBlueprint: async (): Promise<ImportedBlueprint | null> => {
    const r = await call(() => commands.importBlueprint());
    return r ? { path: r.path, doc: r.doc, diagnostics: toDiagnostics(r.diagnostics) } : null;
  },
  /** The path written, or null when the user cancelled the file dialog. */
  exportBlueprint: (doc: Blueprint): Promise<ExportedFiles | null> => call(() => commands.exportBlueprint(doc)),
  /** Runs the document (saved or not); its events arrive on `events` in batches. */
  startRun: (doc: Blueprint, inputs: Json, paused: boolean, breakpoints: string[], events: EventChannel): Promise<RunStarted> =>
    call(() => commands.startRun(doc, inputs, paused, breakpoints, events)),
  /** Runs `step` of the document again (or from it on), upstream outputs pinned from a past run. */
  rerunStep: (
    doc: Blueprint,
    runId: string,
    step: string,
    mode: RerunMode,
    paused: boolean,
    breakpoints: string[],
    events: EventChannel,
  ): Promise<RunStarted> => call(() => commands.rerunStep(doc, runId, step, mode, paused, breakpoints, events)),
  /** The servers a run of `doc` calls, as it would start them, with whether each may start. */
  runServers: (doc: Blueprint): Promise<ServerInfo[]> => call(() => commands.runServers(doc)),
  approveRunServer: (doc: Blueprint, name: string): Promise<string> => call(() => commands.approveRunServer(doc, name)),
  controlRun: (runId: string, action: RunAction): Promise<null> => call(() => commands.controlRun(runId, action)),
  setBreakpoints: (runId: string, steps: string[]): Promise<null> => call(() => commands.setBreakpoints(runId, steps)),
  /** Follows a run in flight that this window did not start: its events from now on (RUN_NOT_ACTIVE: it ended). */
  followRun: (runId: string, events: EventChannel): Promise<null> => call(() => commands.followRun(runId, events)),
  listRuns: (blueprint: string, limit: number): Promise<RunInfo[]> => call(() => commands.listRuns(blueprint, limit)),
  getRun: (runId: string): Promise<RunDetail> => call(() => commands.getRun(runId)),
  /** Saves finished run `runId` of `doc` as a test (replayed first; kept only when it passes). */
  saveRunAsTest: (doc: Blueprint, runId: string): Promise<SavedTest> => call(() => commands.saveRunAsTest(doc, runId)),
  /** The tests of blueprint `id`, not run. */
  blueprintTests: (id: string): Promise<TestList> => call(() => commands.blueprintTests(id)),
  /** Runs every test of `doc`'s blueprint over its cassette (no server starts), `doc` as the blueprint under test. */
  runBlueprintTests: (doc: Blueprint): Promise<TestInfo[]> => call(() => commands.runBlueprintTests(doc)),
  /** Files the runs of a document never stored (`from`) under the id it was first saved as. */
  moveRuns: (from: string, to: string): Promise<number> => call(() => commands.moveRuns(from, to)),
  /** A template's value against a scope (the last run's), or only its syntax checked (`null`). */
  previewTemplate: (template: Json, scope: Json | null): Promise<TemplatePreview> => call(() => commands.previewTemplate(template, scope)),
  /** The questions a run waits on (all runs' with `null`). */
  questions: (runId: string | null): Promise<OpenQuestionInfo[]> => call(() => commands.questions(runId)),
  /** Answers an open question; `QUESTION_NOT_OPEN`, or `BAD_REQUEST` field by field. */
  answerQuestion: (runId: string, questionId: string, answer: AnswerInfo): Promise<null> =>
    call(() => commands.answerQuestion(runId, questionId, answer)),
  /** The runs waiting for a person: in flight here, and those an earlier session left waiting. */
  waitingRuns: (): Promise<WaitingRunInfo[]> => call(() => commands.waitingRuns()),
  /**
   * Answers an open question and streams the run that goes on to `events`: the same run
   * (in flight here), or the new run that resumes one an earlier session left waiting, on
   * `doc` (its finished steps pinned).
   */
  answerAndFollow: (doc: Blueprint, runId: string, questionId: string, answer: AnswerInfo, events: EventChannel): Promise<RunStarted> =>
    call(() => commands.answerAndFollow(doc, runId, questionId, answer, events)),
  /** Opens the page of an open URL-mode question in the system browser (the URL is the server's, read in Rust). */
  openQuestionUrl: (runId: string, questionId: string): Promise<null> => call(() => commands.openQuestionUrl(runId, questionId)),
};

export type Backend = typeof backend;

/** A short message for any error (a `BackendError`'s message, or the error's text). */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  return toBackendError(e).message;
}
