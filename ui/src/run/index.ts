//! The live run on the canvas: the engine's events (`events`), the view built from
//! them (`model`: pure functions), the store holding it (`store`) and the batcher
//! that hands live events over once per frame (`batcher`).
//!
//! ```ts
//! import { createBatcher, runShape, runStore } from '../run';
//! const { stepIds, parents } = runShape(doc);
//! runStore.getState().begin(runId, stepIds, 'live', { parents });
//! const batcher = createBatcher((events) => runStore.getState().receive(events));
//! channel.onmessage = (event) => batcher.push(event);   // close() when the run ends
//! ```
//!
//! Read with narrow selectors: `useRunStore((s) => s.view.nodes[id])` re-renders a node
//! only when that node changed (untouched nodes keep their identity across batches).

export {
  FINAL_STATUSES,
  type AnswerAction,
  type Asking,
  type Question,
  type StepAnsweredEvent,
  type StepSampledEvent,
  type StepSamplingEvent,
  type StepWaitingEvent,
  parseEventLines,
  type Envelope,
  type ErrorEntry,
  type IterationPath,
  type LogEvent,
  type LogLevel,
  type PausePreview as PausePreviewValue,
  type PauseReason,
  type RunEvent,
  type RunEventType,
  type RunFinishedEvent,
  type RunPausedEvent,
  type RunResumedEvent,
  type RunStartedEvent,
  type RunStatus,
  type SkipReason,
  type StepError,
  type StepFinishedEvent,
  type StepProgressEvent,
  type StepRetryingEvent,
  type StepSkippedEvent,
  type StepStartedEvent,
  type StepStatus,
  type Summary,
} from './events';
export {
  activeMs,
  applyEvents,
  compareKeys,
  failedIterations,
  instanceAt,
  isFinished,
  LOG_LIMIT,
  loopLabel,
  openQuestions,
  parsePathKey,
  SAMPLE_LIMIT,
  pathKey,
  replay,
  runShape,
  scopeAt,
  shownState,
  startView,
  STATE_LABELS,
  stepsInState,
  stepsRunning,
  type AnswerView,
  type InstanceCounts,
  type OpenQuestion,
  type InstanceView,
  type IterationState,
  type LogEntry,
  type LoopView,
  type NodeState,
  type NodeView,
  type PauseView,
  type ProgressView,
  type RetryView,
  type RunView,
  type RunViewStatus,
  type SampleExchange,
  type SamplingView,
  type ShownState,
  type ScopeRecord,
  type StartOptions,
  type StepFields,
} from './model';
export { clockTime, eventLabel, eventText, sinceStart, timelineMarkers, type StepNames, type TimelineMarker } from './timeline';
export { createRunStore, runStore, useRunStore, type RunMode, type RunState, type RunStore } from './store';
export { createBatcher, DEFAULT_INTERVAL, defaultSchedule, type Batcher, type BatcherOptions, type Schedule } from './batcher';
