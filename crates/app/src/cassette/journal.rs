//! A cassette made from a recorded run's events (its journal in the store), for the
//! studio's "Save this run as a test": the journal holds what a recording would — each
//! call's resolved arguments (`StepStarted`), its progress (`StepProgress`), its raw
//! result (`StepFinished.raw`) or error (`StepRetrying`, `StepFinished`, the `Log` that
//! hands a failed step to its fallback) — so a run need not be recorded as it runs.
//!
//! Each attempt of a tool, resource or prompt step is one exchange, in the order the
//! attempts started (the order a recorder sees the requests in). The server and the tool,
//! prompt or URI come from the step in `plan`: the blueprint that ran.

use super::{CASSETTE_VERSION, Cassette, Exchange, Outcome};
use mcpflow_blueprint::{Plan, StepKind};
use mcpflow_engine::{CallError, CallTarget, EventKind, Progress, RunEvent, StepError};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The exchanges of the run whose events are `events`, made by `plan`'s blueprint. An
/// attempt that never ended (the run was cancelled or interrupted meanwhile) is left out.
pub fn cassette(plan: &Plan, events: &[RunEvent]) -> Cassette {
    // One slot per attempt, in the order they started; the outcome once it ended.
    let mut slots: Vec<(CallTarget, Vec<Progress>, Option<Outcome>)> = Vec::new();
    let mut open: HashMap<(String, Vec<u32>), usize> = HashMap::new();
    for event in events {
        match &event.kind {
            EventKind::StepStarted { step, path, args, .. } => {
                if let Some(target) = target(plan, step, args.as_ref()) {
                    open.insert((step.clone(), path.clone()), slots.len());
                    slots.push((target, Vec::new(), None));
                }
            }
            EventKind::StepProgress { step, path, progress, total, message } => {
                if let Some(&i) = open.get(&(step.clone(), path.clone())) {
                    slots[i].1.push(Progress { progress: *progress, total: *total, message: message.clone() });
                }
            }
            EventKind::StepRetrying { step, path, error, .. } => {
                if let Some(i) = open.remove(&(step.clone(), path.clone())) {
                    slots[i].2 = Some(Outcome::Error(call_error(error, true)));
                }
            }
            EventKind::StepFinished { step, path, raw, error, .. } => {
                if let Some(i) = open.remove(&(step.clone(), path.clone())) {
                    slots[i].2 = match (raw, error) {
                        (Some(raw), _) => Some(Outcome::Result(raw.clone())),
                        (None, Some(error)) => Some(Outcome::Error(call_error(error, false))),
                        // Neither: no answer to give (left out).
                        (None, None) => None,
                    };
                }
            }
            EventKind::Log { step: Some(step), message, .. } => {
                // The log names the step, not the iteration: the first attempt still open.
                if let Some(error) = handed_to_fallback(plan, step, message)
                    && let Some(key) = open.keys().filter(|(s, _)| s == step).min_by_key(|k| open[*k]).cloned()
                    && let Some(i) = open.remove(&key)
                {
                    slots[i].2 = Some(Outcome::Error(error));
                }
            }
            _ => {}
        }
    }
    let exchanges = slots
        .into_iter()
        .filter_map(|(target, progress, outcome)| {
            Some(Exchange { target, progress, asked: Vec::new(), sampled: Vec::new(), outcome: outcome? })
        })
        .collect();
    Cassette { version: CASSETTE_VERSION, exchanges }
}

/// The pool's error a step's error came from. `transient`: it was retried.
fn call_error(error: &StepError, transient: bool) -> CallError {
    CallError { code: error.code.clone(), message: error.message.clone(), transient, detail: error.detail.clone() }
}

/// The request a step's attempt made, from the step in `plan` and the attempt's resolved
/// arguments; `None` for a step that calls no server, or whose arguments could not make
/// a request (the engine failed it before calling).
fn target(plan: &Plan, step: &str, args: Option<&Value>) -> Option<CallTarget> {
    let planned = &plan.steps[*plan.by_id.get(step)?];
    match &planned.step.kind {
        StepKind::Tool(t) => {
            let args = match args {
                Some(Value::Object(m)) => m.clone(),
                Some(Value::Null) | None => Map::new(),
                Some(_) => return None,
            };
            Some(CallTarget::Tool { server: t.server.clone(), tool: t.tool.clone(), args })
        }
        StepKind::Resource(r) => {
            let uri = args.and_then(Value::as_str).unwrap_or_default().to_owned();
            Some(CallTarget::Resource { server: r.server.clone(), uri })
        }
        StepKind::Prompt(p) => {
            // As the engine sends them: MCP prompt arguments are strings.
            let args = match args {
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => (k.clone(), Value::String(s.clone())),
                        other => (k.clone(), Value::String(other.to_string())),
                    })
                    .collect(),
                _ => Map::new(),
            };
            Some(CallTarget::Prompt { server: p.server.clone(), prompt: p.prompt.clone(), args })
        }
        _ => None,
    }
}

/// The error of a step handed to its fallback, from the engine's `Log` line
/// "`STEP` failed (CODE: MESSAGE); running its fallback `FALLBACK`"
/// (`engine/src/scheduler/outcome.rs`); `None` for any other line.
fn handed_to_fallback(plan: &Plan, step: &str, message: &str) -> Option<CallError> {
    let planned = &plan.steps[*plan.by_id.get(step)?];
    let fallback = plan.steps.get(planned.fallback?)?.step.id();
    let inner = message
        .strip_prefix(&format!("`{step}` failed ("))?
        .strip_suffix(&format!("); running its fallback `{fallback}`"))?;
    let (code, text) = inner.split_once(": ")?;
    Some(CallError::new(code, text, false))
}
