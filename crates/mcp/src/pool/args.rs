//! A tool call's arguments checked against the tool's `inputSchema` (from `tools/list`)
//! before the call is sent: a call that breaks it fails with `ARGS_INVALID`, naming each
//! argument by JSON Pointer (`/a: expected number, got object`), and nothing reaches the
//! server.
//!
//! A server's schema is input from outside: one larger than [`MAX_SCHEMA_BYTES`] or one
//! that does not compile is not used — the call goes out unchecked and the server's log
//! gets one note saying so. Nothing here panics on a schema (compiling runs under
//! `catch_unwind`) or fetches anything (`jsonschema` is built without its resolvers).
//! Compiled validators are kept per tool until the tool's schema changes (a new listing).

use super::LogStream;
use super::notes::ServerNotes;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Largest `inputSchema`, in bytes of JSON, that is compiled and used.
pub(crate) const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Problems named in one error; the rest are counted.
const MAX_REPORTED: usize = 5;
/// Problems looked at for one call.
const MAX_COLLECTED: usize = 100;
/// Characters of one problem's text kept in the message.
const MAX_PROBLEM_CHARS: usize = 200;

/// The compiled validators of one connection's tools.
#[derive(Debug, Default)]
pub(crate) struct ArgChecks {
    cache: Mutex<HashMap<String, Compiled>>,
}

#[derive(Debug, Clone)]
struct Compiled {
    /// The schema it was compiled from (a new listing brings a new `Arc`).
    schema: Arc<JsonObject>,
    /// `None`: too large or not compilable; calls go out unchecked.
    validator: Option<Arc<jsonschema::Validator>>,
}

impl ArgChecks {
    /// `Err` with one line per problem (`/a: expected number, got object`) when `args`
    /// break `tool`'s input schema; `Ok` when they fit or the schema cannot be used.
    pub(crate) fn check(&self, notes: &ServerNotes, tool: &Tool, args: &Map<String, Value>) -> Result<(), String> {
        let Some(validator) = self.validator(notes, tool) else { return Ok(()) };
        let instance = Value::Object(args.clone());
        // In document order of the pointers, the first few; the rest are counted.
        let mut problems: Vec<String> =
            validator.iter_errors(&instance).take(MAX_COLLECTED).map(|e| describe(&e)).collect();
        if problems.is_empty() {
            return Ok(());
        }
        problems.sort();
        let more = problems.len().saturating_sub(MAX_REPORTED);
        problems.truncate(MAX_REPORTED);
        if more > 0 {
            problems.push(format!("and {more} more"));
        }
        Err(problems.join("; "))
    }

    fn validator(&self, notes: &ServerNotes, tool: &Tool) -> Option<Arc<jsonschema::Validator>> {
        let name = tool.name.to_string();
        {
            let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(c) = cache.get(&name)
                && Arc::ptr_eq(&c.schema, &tool.input_schema)
            {
                return c.validator.clone();
            }
        }
        let validator = compile(notes, &name, &tool.input_schema);
        let compiled = Compiled { schema: tool.input_schema.clone(), validator: validator.clone() };
        self.cache.lock().unwrap_or_else(PoisonError::into_inner).insert(name, compiled);
        validator
    }
}

/// Compiles a server's schema within bounds; a note in the server's log when it is not used.
fn compile(notes: &ServerNotes, tool: &str, schema: &JsonObject) -> Option<Arc<jsonschema::Validator>> {
    let size = serde_json::to_vec(schema).map_or(usize::MAX, |b| b.len());
    let skip = |why: String| {
        notes.log(
            LogStream::Notification,
            format!("mcpflow: the arguments of tool `{tool}` are not checked before calls: {why}"),
        );
        None
    };
    if size > MAX_SCHEMA_BYTES {
        return skip(format!("its input schema is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit"));
    }
    match mcpflow_blueprint::validate::compile_schema(&Value::Object(schema.clone())) {
        Ok(v) => Some(Arc::new(v)),
        Err(e) => skip(format!("its input schema does not compile ({})", cut(&e, MAX_PROBLEM_CHARS))),
    }
}

/// `/a: expected number, got object`, `/: missing required argument `b``, …
fn describe(e: &jsonschema::ValidationError<'_>) -> String {
    let at = e.instance_path().as_str();
    let at = if at.is_empty() { "/" } else { at };
    let text = match e.kind() {
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" or "),
            };
            format!("expected {expected}, got {}", mcpflow_blueprint::types::json_type(e.instance()))
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().map_or_else(|| property.to_string(), str::to_owned);
            let pointer = if at == "/" { format!("/{name}") } else { format!("{at}/{name}") };
            return format!("{pointer}: required, missing");
        }
        _ => e.to_string(),
    };
    format!("{at}: {}", cut(&text, MAX_PROBLEM_CHARS))
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(schema: Value) -> Tool {
        let Value::Object(schema) = schema else { panic!("an object") };
        Tool::new("add", "adds", Arc::new(schema))
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn each_problem_is_named_by_its_pointer() {
        let checks = ArgChecks::default();
        let notes = ServerNotes::new("echo", None);
        let t = tool(
            json!({ "type": "object", "properties": { "a": { "type": "number" }, "b": { "type": "number" } }, "required": ["a", "b"] }),
        );
        let err = checks.check(&notes, &t, &args(json!({ "a": { "x": 1 } }))).unwrap_err();
        assert_eq!(err, "/a: expected number, got object; /b: required, missing");
        assert!(checks.check(&notes, &t, &args(json!({ "a": 1, "b": 2.5 }))).is_ok());
    }

    #[test]
    fn a_schema_that_does_not_compile_or_is_too_large_is_skipped_not_fatal() {
        let checks = ArgChecks::default();
        let notes = ServerNotes::new("hostile", None);
        let broken = tool(json!({ "type": 12, "pattern": "(" }));
        assert!(checks.check(&notes, &broken, &args(json!({ "a": 1 }))).is_ok());
        let big: Map<String, Value> =
            (0..20_000).map(|i| (format!("p{i}"), json!({ "type": "string", "description": "x" }))).collect();
        let huge = tool(json!({ "type": "object", "properties": big }));
        assert!(checks.check(&notes, &huge, &args(json!({ "p1": 1 }))).is_ok(), "over the limit: not checked");
    }
}
