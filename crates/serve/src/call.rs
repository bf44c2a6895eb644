//! One incoming call of the mediator's tools, what it carries (the caller's trace, a
//! 2026-07-28 retry), and the shape of a failure. What each tool does is an `impl Call`
//! in the files above it (`tools.rs`, `waiting.rs`, `lifecycle.rs`, `testing.rs`).

use mcpflow_app::app::App;
use mcpflow_app::error::AppError;
use mcpflow_engine::Envelope;
use mcpflow_engine::people::Question;
use rmcp::RoleServer;
use rmcp::model::{InputRequiredResult, InputResponses};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};
use tokio::sync::broadcast;

/// The trace an incoming call continues (see `trace.rs`).
pub(super) struct CallerTrace {
    /// Where spans go; `None`: telemetry is off.
    pub(super) telemetry: Option<Arc<dyn mcpflow_engine::Telemetry>>,
    /// The call's SERVER span, else the caller's span: the parent of what it starts.
    pub(super) parent: Option<mcpflow_engine::TraceContext>,
}

impl CallerTrace {
    /// What a direct call to a server takes along (a client span under this call's).
    pub(super) fn call_trace(&self) -> Option<mcpflow_engine::CallTrace> {
        Some(mcpflow_engine::CallTrace { telemetry: self.telemetry.clone()?, parent: self.parent.clone()? })
    }
}

/// One incoming call.
pub(super) struct Call<'a> {
    pub(super) app: &'a App,
    pub(super) context: &'a RequestContext<RoleServer>,
    pub(super) stack: Vec<String>,
    pub(super) trace: CallerTrace,
    /// The runs whose questions wait for `answer_run`, announced by run id.
    pub(super) parked: &'a broadcast::Sender<String>,
    /// This call is a 2026-07-28 client's retry after `input_required`.
    pub(super) retry: Option<Retry>,
    /// The reply is this `input_required` result instead of the JSON answer (a
    /// 2026-07-28 client that can answer the run's questions).
    pub(super) input_required: OnceLock<InputRequiredResult>,
}

pub(super) fn failure(code: &str, message: impl Into<String>) -> Value {
    json!({ "error": { "code": code, "message": message.into() } })
}

pub(super) fn app_failure(e: &AppError) -> Value {
    let mut v = failure(e.code(), e.to_string());
    if let AppError::Invalid(diagnostics) = e {
        let diagnostics: Vec<_> = diagnostics.iter().cloned().map(super::format::in_band).collect();
        v["error"]["diagnostics"] = json!(diagnostics);
    }
    v
}

pub(super) fn string_arg(args: &Value, name: &str) -> Result<String, Value> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| failure("BAD_REQUEST", format!("`{name}` (a string) is required")))
}

/// Where a run stands.
pub(super) enum Settled {
    Finished(Box<Envelope>),
    /// Waiting on these open questions (in the application's registry).
    Waiting(Vec<Question>),
    /// Still going when the wait ended.
    Running,
}

/// A 2026-07-28 client's retry of a call that returned `input_required`.
#[derive(Debug, Clone)]
pub(super) struct Retry {
    pub run_id: String,
    pub responses: InputResponses,
}
