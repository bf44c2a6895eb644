//! The desktop backend: typed commands (`backend`), errors (`BackendError`), whether
//! there is a backend at all (`inTauri`), how it reaches the data folder (`serviceStore`),
//! validation while editing, and the status line.

export {
  backend,
  BackendError,
  errorMessage,
  inTauri,
  NO_BACKEND,
  toBackendError,
  toDiagnostic,
  type AnswerInfo,
  type AuthStatus,
  type Backend,
  type BlueprintInfo,
  type ImportedBlueprint,
  type OpenedBlueprint,
  type OpenQuestionInfo,
  type PromptInfo,
  type RerunMode,
  type RerunOf,
  type ResourceInfo,
  type RunAction,
  type RunDetail,
  type RunInfo,
  type RunStarted,
  type SamplingProvider,
  type SamplingSettings,
  type SavedBlueprint,
  type ServerInfo,
  type ServerOffer,
  type ServerTest,
  type ServiceStatus,
  type SignedOut,
  type StudioInfo,
  type TelemetryConfig,
  type TelemetrySettings,
  type ToolInfo,
  type WaitingRunInfo,
} from './client';
export { reconnecting, serviceStore, useService, type ServiceConnection } from './service';
export { clearStatus, report, statusStore, useStatus, type StatusLevel, type StatusState } from './status';
export { startValidation, VALIDATE_DELAY_MS, type ValidationOptions } from './validation';
