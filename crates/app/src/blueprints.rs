//! Blueprints in the store: validate, save (errors block, warnings are returned), list,
//! get, delete. Saving never starts a server.

use crate::app::{App, Change};
use crate::error::{AppError, Result};
use mcpflow_blueprint::source::{ReadError, SizeLimit, read_json};
use mcpflow_blueprint::validate::workflow_calls;
use mcpflow_blueprint::{Diagnostic, Options, Report, WorkflowCatalog, check_bytes, check_value};
use mcpflow_store::{BlueprintMeta, Store, StoredBlueprint};
use serde_json::Value;

/// A saved blueprint and the warnings it has.
#[derive(Debug, Clone)]
pub struct Saved {
    pub meta: BlueprintMeta,
    pub warnings: Vec<Diagnostic>,
}

/// A blueprint served as an MCP tool of its own (`"expose": true`).
#[derive(Debug, Clone, PartialEq)]
pub struct Exposed {
    pub id: String,
    pub description: String,
    /// The blueprint's `inputs` schema (an empty object schema when it has none).
    pub input_schema: Value,
    /// Its `output_schema`, else one derived from an object `output` (its keys, any
    /// values); `None` when its output is not an object.
    pub output_schema: Option<Value>,
}

/// The blueprint as JSON, from a JSON value or from text holding JSON. Text goes through
/// the same strict reader as a blueprint file (`mcpflow validate`): a duplicate key, a
/// document over 5 MB or nested past 64 is [`AppError::Invalid`] with that diagnostic
/// and its line and column in the text, never a key silently dropped.
pub fn document(blueprint: &Value) -> Result<Value> {
    match blueprint {
        Value::String(text) => mcpflow_blueprint::source::parse(text.as_bytes())
            .map(|parsed| parsed.value)
            .map_err(|d| AppError::Invalid(vec![d])),
        other => Ok(other.clone()),
    }
}

/// Stored blueprints as a [`WorkflowCatalog`], so recursion across blueprints is caught.
struct StoredWorkflows<'a>(&'a Store);

impl WorkflowCatalog for StoredWorkflows<'_> {
    fn calls(&self, id: &str) -> Option<Vec<String>> {
        let stored = self.0.blueprint(id).ok()??;
        let report = check_value(stored.json, &Options::default());
        report.blueprint.map(|bp| workflow_calls(&bp.steps))
    }
}

impl App {
    /// Every diagnostic of a blueprint (JSON value), checking `workflow` references
    /// against the stored blueprints, and tools, prompts and literal arguments against
    /// the servers whose lists are known (those started so far: by a run, a connection
    /// test, the palette, `list_tools`). Starts no server: one not started yet is not
    /// checked (`ServerStatus::NotListed`).
    pub fn validate(&self, doc: &Value) -> Report {
        let workflows = StoredWorkflows(self.store());
        let catalog = self.pool().listed_catalog();
        // Through text, so diagnostics carry positions like the CLI's.
        let text = serde_json::to_vec_pretty(doc).unwrap_or_default();
        let mut report = check_bytes(&text, &Options { catalog: Some(&catalog), workflows: Some(&workflows) });
        let front = self.inner.options.front;
        report.diagnostics = std::mem::take(&mut report.diagnostics).into_iter().map(|d| front.diagnostic(d)).collect();
        let mut shadowed = self.shadowed_servers(doc);
        if !shadowed.is_empty() {
            if let Ok(mut parsed) = mcpflow_blueprint::source::parse(&text) {
                parsed.map.locate(&parsed.value, &mut shadowed);
            }
            report.diagnostics.extend(shadowed);
            report.diagnostics.sort_by_key(|d| d.position);
        }
        report
    }

    /// Saves a new revision. Errors block and come back in [`AppError::Invalid`].
    pub fn save_blueprint(&self, doc: &Value) -> Result<Saved> {
        let report = self.validate(doc);
        if report.has_errors() {
            return Err(AppError::Invalid(report.diagnostics));
        }
        let Some(bp) = report.blueprint else {
            return Err(AppError::Invalid(report.diagnostics));
        };
        let meta = self.store().save_blueprint(&bp.id, doc)?;
        self.changed(Change::Blueprints);
        Ok(Saved { meta, warnings: report.diagnostics })
    }

    pub fn blueprints(&self) -> Result<Vec<BlueprintMeta>> {
        Ok(self.store().blueprints()?)
    }

    pub fn blueprint(&self, id: &str) -> Result<StoredBlueprint> {
        self.store().blueprint(id)?.ok_or_else(|| AppError::NotFound { what: "blueprint", id: id.to_owned() })
    }

    /// Revision `rev` of blueprint `id`, as it was saved (what a run of it ran).
    pub fn blueprint_revision(&self, id: &str, rev: u32) -> Result<StoredBlueprint> {
        self.store()
            .revision(id, rev)?
            .ok_or_else(|| AppError::NotFound { what: "blueprint revision", id: format!("{id}@{rev}") })
    }

    pub fn delete_blueprint(&self, id: &str) -> Result<()> {
        if !self.store().delete_blueprint(id)? {
            return Err(AppError::NotFound { what: "blueprint", id: id.to_owned() });
        }
        self.changed(Change::Blueprints);
        Ok(())
    }

    /// The stored blueprints with `"expose": true`.
    pub fn exposed(&self) -> Result<Vec<Exposed>> {
        let mut out = Vec::new();
        for meta in self.blueprints()? {
            let Some(stored) = self.store().blueprint(&meta.id)? else { continue };
            if stored.json.get("expose") != Some(&Value::Bool(true)) {
                continue;
            }
            let description = [meta.name.as_deref(), meta.description.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ");
            let description = if description.is_empty() {
                format!("Runs the mcpflow blueprint `{}`", meta.id)
            } else {
                format!("{description} (mcpflow blueprint `{}`)", meta.id)
            };
            let input_schema = match stored.json.get("inputs") {
                Some(Value::Object(schema)) => Value::Object(schema.clone()),
                _ => serde_json::json!({ "type": "object" }),
            };
            let output_schema = output_schema(&stored.json);
            out.push(Exposed { id: meta.id, description, input_schema, output_schema });
        }
        Ok(out)
    }
}

/// The schema of a blueprint's output for MCP's `outputSchema`, which describes an
/// object: its `output_schema` when it declares one, else, when its `output` is an
/// object, that object's keys (each of any type).
fn output_schema(doc: &Value) -> Option<Value> {
    if let Some(Value::Object(schema)) = doc.get("output_schema") {
        return Some(Value::Object(schema.clone()));
    }
    let Value::Object(output) = doc.get("output")? else { return None };
    let properties: serde_json::Map<String, Value> =
        output.keys().map(|k| (k.clone(), serde_json::json!({}))).collect();
    Some(
        serde_json::json!({ "type": "object", "properties": properties, "required": output.keys().collect::<Vec<_>>() }),
    )
}

/// Reads a blueprint file to import, as written — see [`read_json_file`]. What the
/// document says is not checked here: the editor shows its diagnostics. Starts nothing.
pub fn read_blueprint_file(path: &std::path::Path) -> Result<Value> {
    read_json_file(path, "a blueprint", "move large data into inputs or a resource")
}

/// Reads a JSON file a user picked (a blueprint, an `mcpServers` file). The bytes go
/// through the blueprint crate's strict reader, not plain serde, so a duplicate key,
/// invalid UTF-8, nesting past 64 or a file over 5 MB is an error naming
/// `file:line:col` instead of a key silently dropped; a leading BOM is skipped. The size
/// is checked while reading: a FIFO or `/dev/zero` costs 5 MB, not all memory. `what`
/// names the kind of file in the size error, `shrink` says what to do about it.
pub fn read_json_file(path: &std::path::Path, what: &str, shrink: &str) -> Result<Value> {
    let cannot = |e: std::io::Error| AppError::BadRequest(format!("could not read {}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(cannot)?;
    let limit = SizeLimit { bytes: mcpflow_blueprint::limits::MAX_BLUEPRINT_BYTES, what, hint: shrink };
    match read_json(file, &limit) {
        Ok(parsed) => Ok(parsed.value),
        Err(ReadError::Io(e)) => Err(cannot(e)),
        Err(ReadError::Refused(d)) => {
            let at = d.position.map(|p| format!(":{}:{}", p.line, p.col)).unwrap_or_default();
            let hint = d.hint.as_deref().map(|h| format!(" ({h})")).unwrap_or_default();
            Err(AppError::BadRequest(format!("{}{at}: error[{}]: {}{hint}", path.display(), d.code, d.message)))
        }
    }
}
