//! `run_pipeline`: an ad-hoc list of tool calls run in sequence, with `{{ id.path }}`
//! templates between them — the `mcp_pipeline` meta-tool of the MCP Workflow Engine
//! paper. A pipeline is turned into a blueprint (one `tool` step per entry, each after
//! the one before) and run like any blueprint — same templates, strict paths, timeouts,
//! cancellation, and a recorded run that `get_run` can show.
//!
//! Rules: every template is checked before anything is dispatched (a bad one fails the
//! whole pipeline with `INTERPOLATION_FAILED`); a failed step stops the pipeline
//! (`aborted: true`, the later steps `skipped`) unless it says `continue_on_error`; a
//! step that calls this server's own run tools is refused (`PIPELINE_RECURSION`).

use mcpflow_blueprint::{Diagnostic, Options, check_value};
use mcpflow_engine::{Envelope, EventKind, RunEvent, RunStatus, StepStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The blueprint id a pipeline runs under; also its marker on the workflow stack.
pub const PIPELINE_ID: &str = "pipeline";

/// The tools of `mcpflow serve` that start runs: a pipeline may not call them.
pub const RUN_TOOLS: [&str; 2] = ["run_pipeline", "run_workflow"];

/// One entry of `run_pipeline { steps }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineStep {
    pub id: String,
    pub tool: String,
    #[serde(default)]
    pub server: Option<String>,
    #[serde(default)]
    pub args: Map<String, Value>,
    #[serde(default)]
    pub continue_on_error: bool,
}

/// What happened to one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepReport {
    pub id: String,
    /// `succeeded`, `failed` or `skipped`.
    pub status: &'static str,
    /// The step's output (see DESIGN §2 *Results*); `null` when it did not succeed.
    pub result: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<PipelineStepError>,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipelineStepError {
    pub code: String,
    pub message: String,
}

/// The answer of `run_pipeline`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipelineReport {
    pub steps: Vec<StepReport>,
    /// A step failed without `continue_on_error`, so the pipeline stopped there.
    pub aborted: bool,
    pub total_duration_ms: u64,
    /// `succeeded`, `partial`, `failed` or `cancelled`.
    pub status: &'static str,
}

/// Why a pipeline did not run at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PipelineError {
    /// The steps are not a list of `{ id, tool, server?, args?, continue_on_error? }`.
    #[error("{pointer}: {message}")]
    Invalid { pointer: String, message: String },
    /// A template is malformed or reads something that is not there before it.
    #[error("{}", .0.iter().map(|d| format!("{} at {}: {}", d.code, d.pointer, d.message)).collect::<Vec<_>>().join("; "))]
    Interpolation(Vec<Diagnostic>),
    #[error("step `{step}` calls `{tool}`, which starts another run of this server; pipelines may not nest")]
    Recursion { step: String, tool: String },
}

impl PipelineError {
    pub fn code(&self) -> &'static str {
        match self {
            PipelineError::Invalid { .. } => "PIPELINE_INVALID",
            PipelineError::Interpolation(_) => "INTERPOLATION_FAILED",
            PipelineError::Recursion { .. } => "PIPELINE_RECURSION",
        }
    }
}

/// Reads `steps` and turns them into a checked blueprint, before anything runs.
///
/// `downstream` names the servers this process calls: a run tool named on one of them
/// is a call to another server (nesting there is caught by the workflow stack).
pub fn prepare(steps: &Value, downstream: &[String]) -> Result<Prepared, PipelineError> {
    let list: Vec<PipelineStep> = serde_json::from_value(steps.clone()).map_err(|e| PipelineError::Invalid {
        pointer: "/steps".to_owned(),
        message: format!("expected a list of {{ id, tool, server?, args?, continue_on_error? }}: {e}"),
    })?;
    if list.is_empty() {
        return Err(PipelineError::Invalid {
            pointer: "/steps".to_owned(),
            message: "the pipeline has no steps".into(),
        });
    }
    for step in &list {
        let to_self = step.server.as_ref().is_none_or(|s| !downstream.contains(s));
        if to_self && RUN_TOOLS.contains(&step.tool.as_str()) {
            return Err(PipelineError::Recursion { step: step.id.clone(), tool: step.tool.clone() });
        }
    }
    let bp_steps: Vec<Value> = list
        .iter()
        .map(|s| {
            let mut step = json!({ "id": s.id, "kind": "tool", "tool": s.tool, "args": s.args });
            if let Some(server) = &s.server {
                step["server"] = json!(server);
            }
            if s.continue_on_error {
                step["on_error"] = json!("continue");
            }
            step
        })
        .collect();
    let doc = json!({ "blueprint": 1, "id": PIPELINE_ID, "name": "run_pipeline", "steps": bp_steps });
    let report = check_value(doc.clone(), &Options::default());
    let errors: Vec<Diagnostic> = report.diagnostics.into_iter().filter(Diagnostic::is_error).collect();
    if !errors.is_empty() {
        let (templates, shape): (Vec<_>, Vec<_>) =
            errors.into_iter().partition(|d| d.code.name().starts_with("TEMPLATE_"));
        if let Some(d) = shape.first() {
            return Err(PipelineError::Invalid { pointer: d.pointer.clone(), message: d.message.clone() });
        }
        return Err(PipelineError::Interpolation(templates));
    }
    Ok(Prepared { ids: list.into_iter().map(|s| s.id).collect(), blueprint: doc })
}

/// A pipeline ready to run: the blueprint it became and its step ids in order.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub ids: Vec<String>,
    pub blueprint: Value,
}

/// The report of a finished pipeline run, from its events and envelope.
pub fn report(ids: &[String], events: &[RunEvent], envelope: &Envelope) -> PipelineReport {
    let mut finished: HashMap<&str, StepReport> = HashMap::new();
    for e in events {
        match &e.kind {
            EventKind::StepFinished { step, path, status, output, error, duration_ms, .. } if path.is_empty() => {
                let status = match status {
                    StepStatus::Succeeded => "succeeded",
                    StepStatus::Failed => "failed",
                    StepStatus::Skipped => "skipped",
                };
                let error =
                    error.as_ref().map(|e| PipelineStepError { code: e.code.clone(), message: e.message.clone() });
                let result = if status == "succeeded" { output.clone().unwrap_or(Value::Null) } else { Value::Null };
                finished
                    .insert(step, StepReport { id: step.clone(), status, result, error, duration_ms: *duration_ms });
            }
            _ => {}
        }
    }
    let steps = ids.iter().map(|id| finished.remove(id.as_str()).unwrap_or_else(|| skipped(id))).collect();
    let aborted = !matches!(envelope.status, RunStatus::Succeeded | RunStatus::Partial);
    PipelineReport { steps, aborted, total_duration_ms: envelope.duration_ms, status: envelope.status.as_str() }
}

fn skipped(id: &str) -> StepReport {
    StepReport { id: id.to_owned(), status: "skipped", result: Value::Null, error: None, duration_ms: 0 }
}
