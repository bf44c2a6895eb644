//! The lock on the tools (`BLUEPRINT.lock.json`): the schemas of every tool and prompt a
//! blueprint uses, as its servers listed them when it was locked (`mcpflow lock`), and how
//! the live servers differ from them (`validate --locked`, `run --locked`). A change that
//! breaks the blueprint is `LOCK_BREAKING_CHANGE` (an error), one it keeps working with is
//! `LOCK_COMPATIBLE_CHANGE` (a note).
//!
//! Only top-level object properties are compared (`properties`, `required`, each
//! property's `type`); any other difference is a compatible "schema changed" note. Output
//! fields count as read when a template reads them as a plain path (`step.field`,
//! `steps.step.field`, `prev.field`); an expression such as `keys(step)` is not followed.

use crate::catalog::{PromptArgument, ServerStatus, ToolCatalog};
use crate::diagnostic::{Code, Diagnostic};
use crate::model::StepKind;
use crate::plan::{Plan, StepIdx};
use crate::reads::{Read, output_reads};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The format version of lock files this mcpflow writes and reads.
pub const LOCK_VERSION: u64 = 1;

/// A whole lock file. Keys are sorted when written, so a changed schema diffs well.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// Format version of the lock; must be 1.
    pub lock: u64,
    /// The id of the blueprint it locks.
    pub blueprint: String,
    /// Server name → what the blueprint uses of it.
    pub servers: BTreeMap<String, LockedServer>,
}

/// The tools and prompts of one server a blueprint uses.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedServer {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, LockedTool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompts: BTreeMap<String, LockedPrompt>,
}

/// A tool's schemas when it was locked, each with the SHA-256 of its canonical JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LockedTool {
    pub input_schema: Value,
    pub input_schema_sha256: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema_sha256: Option<String>,
}

/// A prompt's arguments when it was locked (sorted by name), with their SHA-256.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedPrompt {
    pub arguments: Vec<PromptArgument>,
    pub sha256: String,
}

/// The lock file of a blueprint file: `greet.json` → `greet.lock.json`, beside it.
pub fn lock_path(blueprint: &Path) -> PathBuf {
    let name = blueprint.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    blueprint.with_file_name(format!("{stem}.lock.json"))
}

/// `value` with every object's keys sorted, so equal schemas serialize (and hash) equally.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, Value> = map.iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The SHA-256 of the canonical JSON of `value`, in lowercase hex.
pub fn sha256(value: &Value) -> String {
    let bytes = serde_json::to_vec(&canonical(value)).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

/// One step's use of a tool or a prompt of a server.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Use {
    server: String,
    name: String,
    prompt: bool,
}

impl Use {
    fn what(&self) -> String {
        let kind = if self.prompt { "prompt" } else { "tool" };
        format!("{kind} `{}` of server `{}`", self.name, self.server)
    }
}

/// The tool or prompt of each tool and prompt step, with the server it is routed to:
/// the step's `server`, else the one server `holder` finds for the tool.
fn uses(plan: &Plan, holder: impl Fn(&str) -> Option<String>) -> (BTreeMap<Use, Vec<StepIdx>>, Vec<StepIdx>) {
    let mut found: BTreeMap<Use, Vec<StepIdx>> = BTreeMap::new();
    let mut unrouted = Vec::new();
    for (idx, planned) in plan.steps.iter().enumerate() {
        let (server, name, prompt) = match &planned.step.kind {
            StepKind::Tool(t) => (t.server.clone().or_else(|| holder(&t.tool)), t.tool.clone(), false),
            StepKind::Prompt(p) => (Some(p.server.clone()), p.prompt.clone(), true),
            _ => continue,
        };
        match server {
            Some(server) => found.entry(Use { server, name, prompt }).or_default().push(idx),
            None => unrouted.push(idx),
        }
    }
    (found, unrouted)
}

/// The one server of the catalog that has `tool`, if exactly one has.
fn catalog_holder(catalog: &dyn ToolCatalog, tool: &str) -> Option<String> {
    let mut holders = catalog.server_names().into_iter().filter(|name| match catalog.server(name) {
        ServerStatus::Ready(info) => info.tools.iter().any(|t| t.name == tool),
        _ => false,
    });
    let first = holders.next();
    if holders.next().is_some() { None } else { first }
}

impl Lock {
    /// Locks what `plan` uses, as `catalog` lists it now. Err: each tool or prompt that
    /// could not be locked, and why (`step `a`: …`).
    pub fn build(blueprint_id: &str, plan: &Plan, catalog: &dyn ToolCatalog) -> Result<Lock, Vec<String>> {
        let (found, unrouted) = uses(plan, |tool| catalog_holder(catalog, tool));
        let mut problems: Vec<String> = unrouted
            .iter()
            .map(|&idx| {
                format!(
                    "step `{}`: no single listed server has its tool; add `server` to the step",
                    plan.steps[idx].step.id()
                )
            })
            .collect();
        let mut servers: BTreeMap<String, LockedServer> = BTreeMap::new();
        for (used, steps) in found {
            let step = plan.steps[steps[0]].step.id().to_owned();
            let info = match catalog.server(&used.server) {
                ServerStatus::Ready(info) => info,
                ServerStatus::NotConfigured => {
                    problems.push(format!("step `{step}`: server `{}` is not configured", used.server));
                    continue;
                }
                ServerStatus::NotListed => {
                    problems.push(format!("step `{step}`: server `{}` was not listed", used.server));
                    continue;
                }
                ServerStatus::Unreachable { reason } => {
                    problems.push(format!("step `{step}`: server `{}` could not be reached: {reason}", used.server));
                    continue;
                }
            };
            let entry = servers.entry(used.server.clone()).or_default();
            if used.prompt {
                match info.prompts.iter().find(|p| p.name == used.name) {
                    Some(p) => {
                        entry.prompts.insert(used.name.clone(), LockedPrompt::new(&p.arguments));
                    }
                    None => {
                        problems.push(format!("step `{step}`: server `{}` has no prompt `{}`", used.server, used.name))
                    }
                }
            } else {
                match info.tools.iter().find(|t| t.name == used.name) {
                    Some(t) => {
                        entry
                            .tools
                            .insert(used.name.clone(), LockedTool::new(&t.input_schema, t.output_schema.as_ref()));
                    }
                    None => {
                        problems.push(format!("step `{step}`: server `{}` has no tool `{}`", used.server, used.name))
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(Lock { lock: LOCK_VERSION, blueprint: blueprint_id.to_owned(), servers })
        } else {
            Err(problems)
        }
    }

    /// The lock file's text: pretty JSON with sorted keys and a final newline.
    pub fn to_text(&self) -> String {
        let value = serde_json::to_value(self).map(|v| canonical(&v)).unwrap_or_default();
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a lock file's JSON. Err says what is wrong with it.
    pub fn from_value(value: Value) -> Result<Lock, String> {
        let lock: Lock = serde_json::from_value(value).map_err(|e| format!("not a lock file: {e}"))?;
        if lock.lock != LOCK_VERSION {
            return Err(format!("lock format {} is not one this mcpflow reads ({LOCK_VERSION})", lock.lock));
        }
        Ok(lock)
    }

    /// How the live servers differ from the lock, for the steps of `plan`: one diagnostic
    /// per change, naming server, tool, field and the steps affected. A server that could
    /// not be listed is `LOCK_UNCHECKED`; one the catalog does not configure (a server
    /// only the blueprint declares) is skipped.
    pub fn compare(&self, plan: &Plan, catalog: &dyn ToolCatalog) -> Vec<Diagnostic> {
        let holder = |tool: &str| {
            let mut holders = self.servers.iter().filter(|(_, s)| s.tools.contains_key(tool));
            let first = holders.next().map(|(name, _)| name.clone());
            if holders.next().is_some() { None } else { first.or_else(|| catalog_holder(catalog, tool)) }
        };
        let (found, _) = uses(plan, holder);
        let mut out = Vec::new();
        for (used, steps) in found {
            let first = &plan.steps[steps[0]];
            let field = if used.prompt { "/prompt" } else { "/tool" };
            let at = format!("{}{field}", first.pointer);
            let affected = steps_text(plan, &steps);
            let locked = self.servers.get(&used.server);
            let locked_tool = locked.and_then(|s| s.tools.get(&used.name));
            let locked_prompt = locked.and_then(|s| s.prompts.get(&used.name));
            if locked_tool.is_none() && locked_prompt.is_none() {
                let d = Diagnostic::new(
                    Code::LockOutdated,
                    at,
                    format!("the lock does not list {}, which {affected} use", used.what()),
                )
                .with_step(first.step.id())
                .with_hint("lock it: `mcpflow lock --update FILE` with the same --servers");
                out.push(d);
                continue;
            }
            let info = match catalog.server(&used.server) {
                ServerStatus::Ready(info) => info,
                // Only the blueprint declares it (`run --locked` lists the --servers files).
                ServerStatus::NotConfigured => continue,
                ServerStatus::Unreachable { reason } => {
                    let message = format!(
                        "{} was not compared with the lock: the server could not be listed ({reason})",
                        used.what()
                    );
                    let d = Diagnostic::new(Code::LockUnchecked, at, message).with_step(first.step.id());
                    out.push(d.with_hint(format!("let it start: --allow-server {}", used.server)));
                    continue;
                }
                ServerStatus::NotListed => {
                    let message = format!("{} was not compared with the lock: the server was not listed", used.what());
                    out.push(Diagnostic::new(Code::LockUnchecked, at, message).with_step(first.step.id()));
                    continue;
                }
            };
            let changes = if let Some(locked) = locked_tool {
                match info.tools.iter().find(|t| t.name == used.name) {
                    Some(live) => {
                        let mut changes = compare_inputs(locked, &live.input_schema);
                        let reads = output_reads(plan, &steps);
                        changes.extend(compare_outputs(locked, live.output_schema.as_ref(), &reads));
                        changes
                    }
                    None => vec![Change::breaking("the server no longer has the tool".into())],
                }
            } else if let Some(locked) = locked_prompt {
                match info.prompts.iter().find(|p| p.name == used.name) {
                    Some(live) => compare_prompt(locked, &live.arguments),
                    None => vec![Change::breaking("the server no longer has the prompt".into())],
                }
            } else {
                Vec::new()
            };
            for change in changes {
                let code = if change.breaking { Code::LockBreakingChange } else { Code::LockCompatibleChange };
                let message = match &change.read_by {
                    Some(_) => format!("{}: {} (the output of {affected})", used.what(), change.message),
                    None => format!("{}: {}; steps affected: {affected}", used.what(), change.message),
                };
                let hint = if change.breaking {
                    "fix the steps for the new schema, then accept it with `mcpflow lock --update FILE`"
                } else {
                    "nothing breaks; accept it with `mcpflow lock --update FILE`"
                };
                let (pointer, step) = match change.read_by {
                    Some((pointer, step)) => (pointer, step),
                    None => (at.clone(), first.step.id().to_owned()),
                };
                out.push(Diagnostic::new(code, pointer, message).with_step(step).with_hint(hint));
            }
        }
        out
    }
}

impl LockedTool {
    fn new(input: &Value, output: Option<&Value>) -> Self {
        LockedTool {
            input_schema: canonical(input),
            input_schema_sha256: sha256(input),
            output_schema: output.map(canonical),
            output_schema_sha256: output.map(sha256),
        }
    }
}

impl LockedPrompt {
    fn new(arguments: &[PromptArgument]) -> Self {
        let mut arguments = arguments.to_vec();
        arguments.sort_by(|a, b| a.name.cmp(&b.name));
        let sha256 = sha256(&serde_json::to_value(&arguments).unwrap_or_default());
        LockedPrompt { arguments, sha256 }
    }
}

/// `step `a`` or `steps `a`, `b``.
fn steps_text(plan: &Plan, steps: &[StepIdx]) -> String {
    let ids: Vec<String> = steps.iter().map(|&i| format!("`{}`", plan.steps[i].step.id())).collect();
    let word = if ids.len() == 1 { "step" } else { "steps" };
    format!("{word} {}", ids.join(", "))
}

/// One difference between a locked schema and the live one.
struct Change {
    breaking: bool,
    message: String,
    /// For a read output field: the pointer of the template reading it, and its step.
    read_by: Option<(String, String)>,
}

impl Change {
    fn breaking(message: String) -> Self {
        Change { breaking: true, message, read_by: None }
    }

    fn compatible(message: String) -> Self {
        Change { breaking: false, message, read_by: None }
    }
}

fn properties(schema: Option<&Value>) -> BTreeMap<&str, &Value> {
    match schema.and_then(|s| s.get("properties")) {
        Some(Value::Object(props)) => props.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        _ => BTreeMap::new(),
    }
}

fn required(schema: &Value) -> BTreeSet<&str> {
    match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => BTreeSet::new(),
    }
}

/// A property's `type` as written (`"string"`, `["string","null"]`), if it has one.
fn type_of(property: &Value) -> Option<String> {
    property.get("type").map(|t| canonical(t).to_string())
}

fn compare_inputs(locked: &LockedTool, live: &Value) -> Vec<Change> {
    let mut changes = Vec::new();
    let (old, new) = (properties(Some(&locked.input_schema)), properties(Some(live)));
    let (old_required, new_required) = (required(&locked.input_schema), required(live));
    for name in new_required.difference(&old_required) {
        changes.push(Change::breaking(if old.contains_key(name) {
            format!("argument `{name}` is now required")
        } else {
            format!("new required argument `{name}`")
        }));
    }
    for (name, property) in &old {
        match new.get(name) {
            None => changes.push(Change::breaking(format!("argument `{name}` is gone"))),
            Some(now) => {
                if let (Some(was), Some(is)) = (type_of(property), type_of(now))
                    && was != is
                {
                    changes.push(Change::breaking(format!("argument `{name}` changed type from {was} to {is}")));
                }
            }
        }
    }
    for name in new.keys().filter(|n| !old.contains_key(*n) && !new_required.contains(*n)) {
        changes.push(Change::compatible(format!("new optional argument `{name}`")));
    }
    if changes.is_empty() && sha256(live) != locked.input_schema_sha256 {
        changes.push(Change::compatible("the input schema changed, in nothing a step relies on".into()));
    }
    changes
}

fn compare_outputs(locked: &LockedTool, live: Option<&Value>, reads: &[Read]) -> Vec<Change> {
    let mut changes = Vec::new();
    let (old, new) = (properties(locked.output_schema.as_ref()), properties(live));
    for (name, property) in &old {
        let readers: Vec<&Read> = reads.iter().filter(|r| r.field == *name).collect();
        let change = match new.get(name) {
            None => format!("output field `{name}` is gone"),
            Some(now) => match (type_of(property), type_of(now)) {
                (Some(was), Some(is)) if was != is => format!("output field `{name}` changed type from {was} to {is}"),
                _ => continue,
            },
        };
        if readers.is_empty() {
            changes.push(Change::compatible(format!("{change}, and no template reads it")));
        }
        for read in readers {
            changes.push(Change {
                breaking: true,
                message: format!("{change}; step `{}` reads it at {}", read.reader, read.pointer),
                read_by: Some((read.pointer.clone(), read.reader.clone())),
            });
        }
    }
    for name in new.keys().filter(|n| !old.contains_key(*n)) {
        changes.push(Change::compatible(format!("new output field `{name}`")));
    }
    let live_hash = live.map(sha256);
    if changes.is_empty() && live_hash != locked.output_schema_sha256 {
        let what = if live.is_none() { "the output schema is gone" } else { "the output schema changed" };
        changes.push(Change::compatible(format!("{what}, in nothing a template reads")));
    }
    changes
}

fn compare_prompt(locked: &LockedPrompt, live: &[PromptArgument]) -> Vec<Change> {
    let mut changes = Vec::new();
    for now in live {
        match locked.arguments.iter().find(|a| a.name == now.name) {
            None if now.required => changes.push(Change::breaking(format!("new required argument `{}`", now.name))),
            None => changes.push(Change::compatible(format!("new optional argument `{}`", now.name))),
            Some(was) if now.required && !was.required => {
                changes.push(Change::breaking(format!("argument `{}` is now required", now.name)))
            }
            Some(_) => {}
        }
    }
    for was in &locked.arguments {
        if !live.iter().any(|a| a.name == was.name) {
            changes.push(Change::breaking(format!("argument `{}` is gone", was.name)));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JsonCatalog, Options, check_value};
    use serde_json::json;

    /// The findings for `steps` locked against `before` and compared with `after`
    /// (each a `{"servers": …}` catalog): (code, message) pairs.
    fn drift(steps: Value, before: Value, after: Value) -> Vec<(String, String)> {
        let doc = json!({ "blueprint": 1, "id": "t", "steps": steps });
        let before: JsonCatalog = serde_json::from_value(before).unwrap();
        let after: JsonCatalog = serde_json::from_value(after).unwrap();
        let report = check_value(doc, &Options::default());
        let plan = report.plan.expect("a valid blueprint");
        let lock = Lock::build("t", &plan, &before).unwrap();
        lock.compare(&plan, &after).into_iter().map(|d| (d.code.name().to_owned(), d.message)).collect()
    }

    fn tool(input: Value, output: Option<Value>) -> Value {
        json!({ "servers": { "s": { "tools": [{ "name": "t", "inputSchema": input, "outputSchema": output }] } } })
    }

    fn object(properties: Value, required: &[&str]) -> Value {
        json!({ "type": "object", "properties": properties, "required": required })
    }

    const CALL: &str = r#"[{ "id": "a", "kind": "tool", "server": "s", "tool": "t", "args": { "x": "1" } },
        { "id": "b", "kind": "transform", "value": "{{ a.out }}" }]"#;

    #[test]
    fn an_argument_of_another_type_or_gone_is_breaking() {
        let before = tool(object(json!({ "x": { "type": "string" }, "y": { "type": "string" } }), &[]), None);
        let after = tool(object(json!({ "x": { "type": "number" } }), &[]), None);
        let found = drift(serde_json::from_str(CALL).unwrap(), before, after);
        assert_eq!(
            found,
            [
                (
                    "LOCK_BREAKING_CHANGE".to_owned(),
                    "tool `t` of server `s`: argument `x` changed type from \"string\" to \"number\"; steps affected: step `a`"
                        .to_owned()
                ),
                (
                    "LOCK_BREAKING_CHANGE".to_owned(),
                    "tool `t` of server `s`: argument `y` is gone; steps affected: step `a`".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn an_output_field_no_template_reads_may_go_and_a_read_one_may_not() {
        let input = object(json!({ "x": { "type": "string" } }), &[]);
        let output = object(json!({ "out": { "type": "string" }, "unused": { "type": "string" } }), &[]);
        let before = tool(input.clone(), Some(output));
        let after = tool(input, Some(object(json!({}), &[])));
        let found = drift(serde_json::from_str(CALL).unwrap(), before, after);
        let codes: Vec<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(codes, ["LOCK_BREAKING_CHANGE", "LOCK_COMPATIBLE_CHANGE"], "{found:?}");
        assert!(found[0].1.contains("output field `out` is gone; step `b` reads it at /steps/1/value"), "{found:?}");
        assert!(found[1].1.contains("output field `unused` is gone, and no template reads it"), "{found:?}");
    }

    #[test]
    fn a_tool_gone_is_breaking_and_a_tool_the_lock_lacks_is_outdated() {
        let before = tool(object(json!({}), &[]), None);
        let after = json!({ "servers": { "s": { "tools": [{ "name": "u" }] } } });
        let found = drift(json!([{ "id": "a", "kind": "tool", "server": "s", "tool": "t" }]), before.clone(), after);
        assert_eq!(found[0].0, "LOCK_BREAKING_CHANGE");
        assert!(found[0].1.contains("the server no longer has the tool"), "{found:?}");

        let doc =
            json!({ "blueprint": 1, "id": "t", "steps": [{ "id": "a", "kind": "tool", "server": "s", "tool": "t" }] });
        let plan = check_value(doc, &Options::default()).plan.unwrap();
        let catalog: JsonCatalog = serde_json::from_value(before).unwrap();
        let mut lock = Lock::build("t", &plan, &catalog).unwrap();
        lock.servers.clear();
        let found = lock.compare(&plan, &catalog);
        assert_eq!(found[0].code, Code::LockOutdated, "{found:?}");
    }

    #[test]
    fn a_new_required_prompt_argument_is_breaking() {
        let before = json!({ "servers": { "s": { "prompts": [{ "name": "p", "arguments": [] }] } } });
        let after = json!({ "servers": { "s": { "prompts": [{ "name": "p", "arguments": [{ "name": "who", "required": true }] }] } } });
        let found = drift(json!([{ "id": "a", "kind": "prompt", "server": "s", "prompt": "p" }]), before, after);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "LOCK_BREAKING_CHANGE");
        assert!(found[0].1.contains("prompt `p` of server `s`: new required argument `who`"), "{found:?}");
    }

    #[test]
    fn the_lock_file_sits_beside_the_blueprint() {
        assert_eq!(lock_path(Path::new("w/greet.json")), Path::new("w/greet.lock.json"));
        assert_eq!(lock_path(Path::new("greet.blueprint.json")), Path::new("greet.blueprint.lock.json"));
        assert_eq!(lock_path(Path::new("greet")), Path::new("greet.lock.json"));
    }

    #[test]
    fn hashes_do_not_depend_on_key_order() {
        let a: Value = serde_json::from_str(r#"{"type":"object","properties":{"b":{},"a":{}}}"#).unwrap();
        let b: Value = serde_json::from_str(r#"{"properties":{"a":{},"b":{}},"type":"object"}"#).unwrap();
        assert_eq!(sha256(&a), sha256(&b));
        assert_ne!(sha256(&a), sha256(&serde_json::json!({"type": "object"})));
    }
}
