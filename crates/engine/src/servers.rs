//! How the engine reaches MCP servers: the [`Servers`] trait. The engine never talks to
//! rmcp; the client pool (`crates/mcp`) implements this trait.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What to call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallTarget {
    /// `tools/call`. `server: None` routes by tool name (it must be unique).
    Tool { server: Option<String>, tool: String, args: Map<String, Value> },
    /// `resources/read`.
    Resource { server: String, uri: String },
    /// `prompts/get`; MCP prompt arguments are strings.
    Prompt { server: String, prompt: String, args: Map<String, Value> },
}

/// An MCP progress notification for a call in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Receives progress notifications of one call.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// A call a server runs as a task (MCP `io.modelcontextprotocol/tasks`): enough to ask
/// that server about it again, from another process after a crash. Holds no secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskHandle {
    /// The configured server's name.
    pub server: String,
    /// The server's id for the task.
    pub task_id: String,
    /// When the task was created (RFC 3339, UTC, as this side saw it).
    pub started_at: String,
}

/// Told that a call became a task; the future ends once the handle is durable (the run's
/// journal flushed), so a crash from then on finds it.
pub type TaskSink = Arc<dyn Fn(TaskHandle) -> BoxFuture<'static, ()> + Send + Sync>;

/// What the engine asks of a call about tasks.
#[derive(Clone, Default)]
pub struct TaskHooks {
    /// Told the task's handle when the server runs the call as a task.
    pub started: Option<TaskSink>,
    /// Resuming an interrupted run: the task this call started then. The pool asks the
    /// server about it (`tasks/get`) instead of calling the tool again, and fails with
    /// `TASK_LOST` when the server no longer knows it.
    pub resume: Option<TaskHandle>,
}

impl fmt::Debug for TaskHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskHooks").field("started", &self.started.is_some()).field("resume", &self.resume).finish()
    }
}

/// One call, with what the pool needs to run it well.
#[derive(Clone)]
pub struct CallRequest {
    pub target: CallTarget,
    /// Per-call timeout; the pool sends `notifications/cancelled` when it expires. For a
    /// call the server runs as a task it bounds each request (the call, each poll); the
    /// whole task is bounded by `cancel` (the step's `timeout_ms`).
    pub timeout: Option<Duration>,
    /// Cancelled when the step or the run is cancelled; the pool must then send
    /// `notifications/cancelled` to the server and return [`CallError::cancelled`].
    pub cancel: CancellationToken,
    pub progress: Option<ProgressSink>,
    /// The ids of the workflows this call is made for, outermost first. The pool sends
    /// them as `_meta["mcpflow/stack"]`, so an `mcpflow serve` that receives the call can
    /// refuse a workflow that reaches itself.
    pub stack: Vec<String>,
    /// Task mode: the handle's sink, and the task to resume.
    pub tasks: TaskHooks,
    /// Where the server's questions to a person (elicitation) go, and whether a call to a
    /// destructive tool is approved first; `None`: nobody answers (the pool declines the
    /// server's questions).
    pub ask: Option<CallAsk>,
    /// Where the server's requests for a model completion (sampling) go; `None`: nobody
    /// answers (the pool then refuses them).
    pub sample: Option<crate::sampling::SampleSink>,
    /// Where the call's client span goes and its parent (the step attempt's span); `None`:
    /// telemetry is off, and nothing is traced or sent in `_meta`.
    pub trace: Option<crate::telemetry::CallTrace>,
}

/// A call's way to a person.
#[derive(Clone)]
pub struct CallAsk {
    /// Asks a question on the call's step.
    pub sink: crate::people::AskSink,
    /// `confirm: "destructive"`: if the tool is annotated `destructiveHint: true` (and not
    /// `readOnlyHint`), a person approves the call, arguments shown, before it is sent;
    /// rejected, it fails `INPUT_REJECTED` and is not sent.
    pub confirm_destructive: bool,
}

impl fmt::Debug for CallAsk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallAsk").field("confirm_destructive", &self.confirm_destructive).finish_non_exhaustive()
    }
}

impl fmt::Debug for CallRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallRequest")
            .field("target", &self.target)
            .field("timeout", &self.timeout)
            .field("stack", &self.stack)
            .field("tasks", &self.tasks)
            .field("ask", &self.ask)
            .field("sample", &self.sample.is_some())
            .field("trace", &self.trace)
            .finish_non_exhaustive()
    }
}

/// Why a call failed. `code` is stable (`SERVER_NOT_APPROVED`, `CALL_TIMEOUT`, …).
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct CallError {
    pub code: String,
    pub message: String,
    /// Worth retrying (a crash, a timeout) as opposed to a configuration problem.
    pub transient: bool,
    /// The server's own text, when `message` puts it in other words.
    pub detail: Option<String>,
}

impl CallError {
    pub fn new(code: impl Into<String>, message: impl Into<String>, transient: bool) -> Self {
        CallError { code: code.into(), message: message.into(), transient, detail: None }
    }

    /// With the server's own text below the message.
    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn cancelled() -> Self {
        CallError::new("CANCELLED", "the call was cancelled", false)
    }

    pub fn timeout(after: Duration) -> Self {
        CallError::new("CALL_TIMEOUT", format!("no answer within {} ms", after.as_millis()), true)
    }
}

/// MCP servers as the engine sees them.
///
/// `call` returns the raw MCP result as JSON (`CallToolResult`, `ReadResourceResult`
/// or `GetPromptResult`, camelCase as on the wire); the engine turns it into a step
/// output (see [`crate::results`]). A tool result with `isError: true` is returned as
/// `Ok`: the engine decides that it fails the step.
pub trait Servers: Send + Sync {
    fn call(&self, request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>>;
}
