//! Blueprints with `"expose": true` as tools of their own: the tool (name = id,
//! `inputSchema` = the blueprint's `inputs`, `outputSchema` = its `output_schema` or one
//! derived from an object `output`) and its answer. With an output schema the answer is
//! the blueprint's output as `structuredContent` (checked against the schema first), the
//! run's id, status and summary under `_meta["mcpflow/run"]`; without one, the run's
//! envelope, as `run_workflow` answers.

use mcpflow_app::blueprints::Exposed;
use rmcp::model::{CallToolResult, MetaObject, Tool};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Where an exposed tool's answer keeps its run: id, status, duration, summary, errors.
pub(super) const RUN_META: &str = "mcpflow/run";

pub(super) fn tool(e: Exposed) -> Tool {
    let schema = match e.input_schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let tool = Tool::new(e.id, e.description, Arc::new(schema));
    match e.output_schema {
        Some(Value::Object(output)) => tool.with_raw_output_schema(Arc::new(output)),
        _ => tool,
    }
}

/// The answer of an exposed tool with output schema `schema` whose run ended well
/// (`envelope`): its output, when it matches the schema; else an error naming where
/// it does not.
pub(super) fn answer(schema: &Value, envelope: Value) -> CallToolResult {
    let output = envelope.get("output").cloned().unwrap_or(Value::Null);
    let mut run = envelope;
    if let Some(run) = run.as_object_mut() {
        run.remove("output");
    }
    if let Err(problem) = matches(schema, &output) {
        let run_id = run["run_id"].as_str().unwrap_or_default().to_owned();
        let blueprint = run["blueprint"].as_str().unwrap_or_default().to_owned();
        return CallToolResult::structured_error(json!({ "error": {
            "code": "OUTPUT_NOT_AS_DECLARED",
            "message": format!(
                "run {run_id} of `{blueprint}` succeeded, but its output does not match the blueprint's output schema: {problem}; fix `output` or `output_schema` in the blueprint (get_run shows the output)"
            ),
            "run_id": run_id,
        } }));
    }
    let mut result = CallToolResult::structured(output);
    let mut meta = Map::new();
    meta.insert(RUN_META.to_owned(), run);
    result.meta = Some(MetaObject(meta));
    result
}

/// `run_workflow` with `detail: "output"`, its run ended well (`envelope`): the output
/// alone — as text (a string as it is, anything else as JSON), and as `structuredContent`
/// when it is an object — with the run's id and status under `_meta["mcpflow/run"]`.
pub(super) fn output_only(envelope: Value) -> CallToolResult {
    let output = envelope.get("output").cloned().unwrap_or(Value::Null);
    let text = match &output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let mut result = match output {
        Value::Object(_) => CallToolResult::structured(output),
        _ => CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)]),
    };
    let mut meta = Map::new();
    meta.insert(RUN_META.to_owned(), json!({ "run_id": envelope["run_id"], "status": envelope["status"] }));
    result.meta = Some(MetaObject(meta));
    result
}

/// Whether `value` matches JSON Schema `schema`; else the first mismatch, with its pointer.
fn matches(schema: &Value, value: &Value) -> Result<(), String> {
    let validator = mcpflow_blueprint::validate::compile_schema(schema)?;
    match validator.iter_errors(value).next() {
        None => Ok(()),
        Some(e) => {
            let at = e.instance_path().as_str();
            Err(if at.is_empty() { e.to_string() } else { format!("at `{at}`: {e}") })
        }
    }
}
