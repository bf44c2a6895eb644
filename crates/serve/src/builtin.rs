//! The mediator's built-in tools as `tools/list` shows them: name, description, input
//! schema (every property described; exactly what each tool accepts) and annotations.
//! `args.rs` checks a call's arguments against these schemas before it runs.

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

/// What a tool does to the world, as its annotations say.
#[derive(Clone, Copy)]
enum Effect {
    /// Reads only (`readOnlyHint`); asking again answers the same.
    Reads,
    /// Writes mcpflow's own data, nothing destructive.
    Writes { idempotent: bool },
    /// May destroy: deletes, cancels, or calls downstream tools that may.
    Destroys { idempotent: bool },
}

fn tool(name: &'static str, description: &'static str, effect: Effect, open_world: bool, schema: Value) -> Tool {
    let (read_only, destructive, idempotent) = match effect {
        Effect::Reads => (true, false, true),
        Effect::Writes { idempotent } => (false, false, idempotent),
        Effect::Destroys { idempotent } => (false, true, idempotent),
    };
    let annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(open_world);
    Tool::new(name, description, Arc::new(schema.as_object().cloned().unwrap_or_default()))
        .with_annotations(annotations)
}

/// An object schema with these properties, refusing any other.
fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({ "type": "object", "properties": properties, "additionalProperties": false });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn string(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

/// The blueprint argument of the tools that take one.
fn blueprint() -> Value {
    json!({
        "type": ["object", "string"],
        "description": "A blueprint (format 1) as a JSON object, or a string holding its JSON. The format: the \
                        resource mcpflow://format, or the blueprint_format tool."
    })
}

/// The built-in tools, in the order DESIGN §5 lists them (then the format and the
/// lifecycle tools).
pub(super) fn builtin() -> &'static [Tool] {
    static TOOLS: OnceLock<Vec<Tool>> = OnceLock::new();
    TOOLS.get_or_init(tools)
}

/// The built-in tool called `name`.
pub(super) fn find(name: &str) -> Option<&'static Tool> {
    builtin().iter().find(|t| t.name == name)
}

pub(super) fn is_builtin(name: &str) -> bool {
    find(name).is_some()
}

fn tools() -> Vec<Tool> {
    vec![
        tool(
            "list_servers",
            "The downstream MCP servers mcpflow can call: name, transport, command or url, and whether it may start.",
            Effect::Reads,
            false,
            object(json!({}), &[]),
        ),
        tool(
            "list_tools",
            "The tools of the downstream servers (or of one), with their input schemas. Starts servers that may start.",
            Effect::Reads,
            true,
            object(json!({ "server": string("Only this server's tools (a name list_servers gives).") }), &[]),
        ),
        tool(
            "call_tool",
            "One trial call to a downstream tool, to learn the shape of its answer. Returns the raw MCP result \
             and `output`, the value a blueprint step would see. isError is true when the tool failed.",
            Effect::Destroys { idempotent: false },
            true,
            object(
                json!({
                    "server": string("The server of the tool; may be left out when one server has a tool of that name."),
                    "tool": string("The tool's name, as list_tools gives it."),
                    "args": { "type": "object", "description": "The tool's arguments, as its input schema says." }
                }),
                &["tool"],
            ),
        ),
        tool(
            "validate_workflow",
            "Every diagnostic (errors and warnings, with JSON pointers and hints) of a blueprint; `valid` is false \
             when one is an error. The format is the resource mcpflow://format (or blueprint_format). Tool names, \
             prompts and literal arguments are checked against the servers listed so far; a note names the servers \
             whose tools were not checked. `check_tools: true` lists them first (it starts them).",
            Effect::Reads,
            true,
            object(
                json!({
                    "blueprint": blueprint(),
                    "check_tools": { "type": "boolean", "description": "List the tools of the servers the blueprint uses first, so every tool is checked (starts those servers). Default false." }
                }),
                &["blueprint"],
            ),
        ),
        tool(
            "save_workflow",
            "Saves a blueprint as a new revision (the format: resource mcpflow://format, or blueprint_format). \
             Errors block the save; warnings are returned. A blueprint with `expose: true` becomes a tool of \
             this server: its id may not be a built-in tool's or another exposed blueprint's.",
            Effect::Writes { idempotent: false },
            false,
            object(json!({ "blueprint": blueprint() }), &["blueprint"]),
        ),
        tool(
            "list_workflows",
            "The stored blueprints: id, name, description, revision.",
            Effect::Reads,
            false,
            object(json!({}), &[]),
        ),
        tool(
            "get_workflow",
            "A stored blueprint's current revision.",
            Effect::Reads,
            false,
            object(json!({ "id": string("The blueprint's id (list_workflows lists them).") }), &["id"]),
        ),
        tool(
            "run_workflow",
            "Runs a stored blueprint (`id`) or an inline one (`blueprint`) with `inputs` and returns the result \
             envelope { run_id, status, output, summary, errors, duration_ms }; isError is true when the run did \
             not succeed. Sends progress notifications. A question the run asks a person (an input step, an \
             approval, a server's elicitation) comes to this client as an elicitation when it declared that \
             capability; otherwise the call ends with INPUT_REQUIRED naming the question, the run waits, and \
             answer_run answers it.",
            Effect::Destroys { idempotent: false },
            true,
            json!({
                "type": "object",
                "properties": {
                    "id": string("A stored blueprint's id. Give this or `blueprint`, not both."),
                    "blueprint": blueprint(),
                    "inputs": { "type": "object", "description": "The run's inputs, as the blueprint's `inputs` schema says." },
                    "detail": {
                        "enum": ["summary", "steps", "output"],
                        "description": "`summary` (default): the envelope; `steps`: the envelope and each step's status; `output`: the output alone (the run id in _meta)."
                    }
                },
                "oneOf": [ { "required": ["id"] }, { "required": ["blueprint"] } ],
                "additionalProperties": false
            }),
        ),
        tool(
            "run_pipeline",
            "Runs tool calls in sequence. Each step is { id, tool, server?, args, continue_on_error? }; args may \
             use {{ id.path }} to read an earlier step's output (a whole-string template keeps its type). \
             Returns each step's status and result, `aborted` and `total_duration_ms`; isError is true when a \
             step failed without continue_on_error.",
            Effect::Destroys { idempotent: false },
            true,
            object(
                json!({
                    "steps": {
                        "type": "array",
                        "minItems": 1,
                        "description": "The calls, in order.",
                        "items": object(
                            json!({
                                "id": string("The step's id ([A-Za-z_][A-Za-z0-9_]*); later steps read its output as {{ id }}."),
                                "tool": string("The tool to call."),
                                "server": string("Its server; may be left out when one server has a tool of that name."),
                                "args": { "type": "object", "description": "The tool's arguments; strings may hold {{ … }} templates." },
                                "continue_on_error": { "type": "boolean", "description": "Go on after this step fails (default false: the pipeline stops)." }
                            }),
                            &["id", "tool"],
                        )
                    }
                }),
                &["steps"],
            ),
        ),
        tool(
            "get_run",
            "A recorded run: its status, envelope, each step's record, the questions it waits on, and the runs \
             it resumed (`resumed_from`) or was resumed by (`resumed_by`).",
            Effect::Reads,
            false,
            object(json!({ "run_id": string("The run's id (run_workflow and list_runs give it).") }), &["run_id"]),
        ),
        tool(
            "answer_run",
            "Answers a question a run waits on (run_workflow's INPUT_REQUIRED names it; get_run lists them), \
             also when the run was left waiting by an earlier mcpflow process: then a new run resumes it, and \
             the answer names it (`run_id`, `resumed_from`). `question_id` may be left out when the run (or its \
             `step`) has one open question. Returns the run's envelope when it finishes within 10 s, else \
             { status: waiting | running, questions }.",
            Effect::Writes { idempotent: false },
            true,
            object(
                json!({
                    "run_id": string("The waiting run's id."),
                    "question_id": string("The question's id (INPUT_REQUIRED and get_run give it)."),
                    "step": string("The step whose question is answered, when question_id is left out."),
                    "answer": {
                        "type": "object",
                        "description": "{ action: accept, content: the form's fields }, or { action: decline } / { action: cancel }.",
                        "properties": {
                            "action": { "enum": ["accept", "decline", "cancel"], "description": "accept answers; decline and cancel refuse." },
                            "content": { "type": "object", "description": "The form's fields, for accept." }
                        },
                        "required": ["action"],
                        "additionalProperties": false
                    }
                }),
                &["run_id", "answer"],
            ),
        ),
        tool(
            "list_runs",
            "Recorded runs, newest first: run_id, blueprint, status, started_at, finished_at; waiting runs with \
             the questions they wait on (answer_run answers them).",
            Effect::Reads,
            false,
            object(
                json!({
                    "blueprint": string("Only runs of this blueprint."),
                    "status": {
                        "enum": ["running", "waiting", "succeeded", "partial", "failed", "cancelled", "interrupted"],
                        "description": "Only runs with this status."
                    },
                    "waiting": { "type": "boolean", "description": "Only runs waiting for an answer (the same as status: waiting)." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 1000, "description": "At most this many runs (default 20)." }
                }),
                &[],
            ),
        ),
        tool(
            "cancel_run",
            "Cancels a run that is running or waiting for an answer; answers { run_id, status }.",
            Effect::Destroys { idempotent: true },
            false,
            object(json!({ "run_id": string("The run's id (list_runs lists them).") }), &["run_id"]),
        ),
        tool(
            "resume_run",
            "Resumes an interrupted run (its process stopped) with a new run: the steps that had finished keep \
             their outputs, the rest run. Answers as run_workflow does, with `resumed_from`.",
            Effect::Destroys { idempotent: false },
            true,
            object(
                json!({ "run_id": string("The interrupted run's id (list_runs with status: interrupted).") }),
                &["run_id"],
            ),
        ),
        tool(
            "delete_workflow",
            "Deletes a stored blueprint and all its revisions (refused while a run of it is in flight). The \
             history of its runs stays (get_run, list_runs).",
            Effect::Destroys { idempotent: true },
            false,
            object(json!({ "id": string("The blueprint's id (list_workflows lists them).") }), &["id"]),
        ),
        tool(
            "test_workflow",
            "Tests a blueprint with no server started: each of its tests replays the MCP exchanges of a run \
             it made and checks the same status and output come out. With save_run, a finished run of it is \
             saved as a test first. Answers passed, failed and each test's failure; isError when one fails.",
            Effect::Writes { idempotent: false },
            false,
            object(
                json!({
                    "id": string("The blueprint's id (list_workflows lists them)."),
                    "save_run": string("A finished run of this blueprint to save as a test first (run_workflow answers its run_id)."),
                    "blueprint": {
                        "type": "object",
                        "description": "A draft to test instead of the stored blueprint, with the same id (not saved)."
                    }
                }),
                &["id"],
            ),
        ),
        tool(
            "blueprint_format",
            "How to write a blueprint: a short guide (kinds, templates, three examples) or, with part: \"schema\", \
             the format's JSON Schema. The same as the resources mcpflow://format and mcpflow://format/schema.",
            Effect::Reads,
            false,
            object(
                json!({ "part": { "enum": ["guide", "schema"], "description": "`guide` (default) or `schema`." } }),
                &[],
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every property of every built-in tool says what it is.
    fn undescribed(schema: &Value, at: &str, out: &mut Vec<String>) {
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                let here = format!("{at}/{name}");
                if prop.get("description").is_none() {
                    out.push(here.clone());
                }
                undescribed(prop, &here, out);
            }
        }
        if let Some(items) = schema.get("items") {
            undescribed(items, &format!("{at}/items"), out);
        }
    }

    #[test]
    fn every_property_of_every_tool_is_described_and_every_tool_annotated() {
        let mut missing = Vec::new();
        for t in builtin() {
            undescribed(&Value::Object((*t.input_schema).clone()), &t.name, &mut missing);
            let a = t.annotations.as_ref().unwrap_or_else(|| panic!("{} has no annotations", t.name));
            assert!(a.read_only_hint.is_some() && a.destructive_hint.is_some() && a.idempotent_hint.is_some());
            assert_eq!(t.input_schema.get("additionalProperties"), Some(&json!(false)), "{}", t.name);
        }
        assert!(missing.is_empty(), "properties without a description: {missing:?}");
    }
}
