//! mcpflow execution. The scheduler is a pure state machine (`apply(event) -> actions`);
//! a tokio driver performs the actions. Servers are reached through the [`Servers`]
//! trait, never through rmcp directly.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod people;
pub mod results;
pub mod run_trace;
pub mod sampling;
pub mod servers;
pub mod source;
pub mod telemetry;

pub use servers::{
    CallAsk, CallError, CallRequest, CallTarget, Progress, ProgressSink, Servers, TaskHandle, TaskHooks, TaskSink,
};
pub mod driver;
pub mod event;
pub mod scheduler;

pub use driver::{Engine, EventSink, Journal, RunRequest, StartError};
pub use event::{
    Envelope, ErrorEntry, EventKind, RunEvent, RunStatus, SkipReason, StepError, StepStatus, Summary, UntilExhausted,
};
pub use people::{Answer, AskSink, Asking, NoOne, People, Question};
pub use run_trace::RunTrace;
pub use sampling::{NoModel, SampleRequest, SampleSink, Sampler};
pub use scheduler::{Action, Control, Input, Invocation, RunConfig, Scheduler};
pub use source::{BlueprintSource, FileSaved, FolderSource, SavedValues};
pub use telemetry::{
    Attr, CallTrace, InvalidTraceparent, Measure, OpenSpan, Recorder, RunOrigin, SpanKind, SpanName, SpanStart,
    SpanStatus, Telemetry, TraceContext,
};
