//! The event stream of a run (DESIGN §3) and the result envelope. The store, the canvas,
//! the CLI progress display and MCP progress notifications all read these.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event, ordered by `seq` within its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEvent {
    pub seq: u64,
    /// Milliseconds since the run started (from the injected clock).
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Where a step instance is: the iteration indexes of the loops around it (outermost
/// first); empty at the top level.
pub type IterationPath = Vec<u32>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum EventKind {
    RunStarted {
        run_id: String,
        blueprint: String,
        inputs: Value,
        /// The run's trace id when telemetry is on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_id: Option<String>,
    },
    StepStarted {
        step: String,
        path: IterationPath,
        attempt: u32,
        /// The resolved arguments (tool/prompt/workflow args, resource uri, wait ms).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<Value>,
    },
    StepRetrying {
        step: String,
        path: IterationPath,
        /// The attempt that will run next.
        attempt: u32,
        delay_ms: u64,
        error: StepError,
    },
    StepProgress {
        step: String,
        path: IterationPath,
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The server runs the step's call as a task (MCP tasks): its handle, recorded so an
    /// interrupted run can resume by polling the same task.
    StepTaskStarted {
        step: String,
        path: IterationPath,
        server: String,
        task_id: String,
        /// RFC 3339, UTC.
        started_at: String,
    },
    /// The step waits for a person: an `input` step, or a server's elicitation during the
    /// step's call. The run costs nothing while it waits.
    StepWaiting {
        step: String,
        path: IterationPath,
        question: crate::people::Question,
    },
    /// The person answered (or the question was withdrawn: `cancel`).
    StepAnswered {
        step: String,
        path: IterationPath,
        #[serde(flatten)]
        answer: crate::people::Answer,
    },
    /// A server asked the model (MCP sampling) during the step's call: what it asked
    /// (`CreateMessageRequest.params`, long text and binary data cut: see
    /// `sampling::bounded`).
    StepSampling {
        step: String,
        path: IterationPath,
        server: String,
        request: Value,
    },
    /// The model's answer (`CreateMessageResult`, cut the same way), or why there was none
    /// (`SAMPLING_NOT_ALLOWED`, `SAMPLING_UNAVAILABLE`, `SAMPLING_FAILED`).
    StepSampled {
        step: String,
        path: IterationPath,
        server: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<StepError>,
    },
    StepFinished {
        step: String,
        path: IterationPath,
        status: StepStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<StepError>,
        attempts: u32,
        duration_ms: u64,
        /// The raw MCP result, for tool/resource/prompt steps.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw: Option<Value>,
        /// Set when the output came from this fallback step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        recovered_by: Option<String>,
    },
    StepSkipped {
        step: String,
        path: IterationPath,
        /// Why, when it is not the usual rule (a switch routed away, every dependency
        /// skipped, left out of a partial re-run, the run ended first).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<SkipReason>,
    },
    RunPaused {
        reason: PauseReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<IterationPath>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<Value>,
        /// Paused at a breakpoint before a `transform` or `switch`: what it would give,
        /// evaluated against the run's scope with nothing run — `{"value": …}` for a
        /// transform, `{"case": <index> | "default"}` for a switch, or `{"error": {code,
        /// message}}` (a template error, or a value over `limits.max_value_bytes`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        preview: Option<Value>,
    },
    RunResumed {},
    Log {
        level: LogLevel,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
    },
    RunFinished {
        envelope: Envelope,
    },
}

/// Why a step was skipped, when `StepSkipped` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The step has `"disabled": true`: the user switched it off. Its output is `null`
    /// and, unlike other skips, the steps after it still run.
    Disabled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseReason {
    /// `pause` was requested.
    Requested,
    /// A breakpoint is set on the step about to start.
    Breakpoint,
    /// `step` ran one step.
    Stepped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Info,
    Warn,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Succeeded,
    Failed,
    Skipped,
}

impl StepStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Succeeded => "succeeded",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Succeeded,
    /// Finished, but steps with `on_error: continue` failed.
    Partial,
    Failed,
    Cancelled,
    /// The process died during the run (set by the store on the next start).
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// A step's error: a stable code, what happened, and (for fallbacks) which step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepError {
    pub code: String,
    pub message: String,
    /// What the server itself said, when our message says it in other words (a server
    /// that refused the arguments: its own text, shown below the message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// With `LOOP_UNTIL_EXHAUSTED`: the iterations and the condition's last value, for a
    /// front door to show without reading `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exhausted: Option<Box<UntilExhausted>>,
}

/// An `until` loop that reached `max_iterations` before its condition was true.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UntilExhausted {
    /// Iterations run (`max_iterations`, the loop's or the default).
    pub iterations: u32,
    pub max_iterations: u32,
    /// What `until` rendered after the last iteration: a falsy value (`false`, `null`,
    /// `""`, `[]` or `{}`), so always short.
    pub last: Value,
}

/// One entry of the envelope's `errors`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEntry {
    /// The step (empty for run-level errors such as `RUN_TIMEOUT`).
    pub step: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: IterationPath,
    pub code: String,
    pub message: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Top-level steps.
    pub steps: u32,
    pub succeeded: u32,
    pub failed: u32,
    pub skipped: u32,
    /// Tool calls made, loop iterations and retries included.
    pub tool_calls: u64,
}

/// The result of a run (CLI `--json`, MCP `run_workflow`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub run_id: String,
    pub blueprint: String,
    pub status: RunStatus,
    pub output: Value,
    pub summary: Summary,
    pub errors: Vec<ErrorEntry>,
    pub duration_ms: u64,
    /// The run's trace id (32 lower-case hex digits) when telemetry is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

impl Envelope {
    /// The envelope of a run whose driver went away without finishing it (its task was
    /// aborted, or the process is shutting down).
    pub fn lost(run_id: String, blueprint: String) -> Self {
        Envelope {
            run_id,
            blueprint,
            status: RunStatus::Interrupted,
            output: Value::Null,
            summary: Summary::default(),
            errors: vec![ErrorEntry {
                step: String::new(),
                path: Vec::new(),
                code: "RUN_INTERRUPTED".to_owned(),
                message: "the run ended without finishing (its task stopped)".to_owned(),
            }],
            duration_ms: 0,
            trace_id: None,
        }
    }
}
