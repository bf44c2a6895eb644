//! Merging an export document into a store. The whole document is checked first (shape,
//! keys, duplicates, every revision against the blueprint validator and its own `id`)
//! and the first problem is reported with its JSON pointer; only a sound document is
//! written: an import is all or nothing. What the store already holds wins: a different value
//! under the same key is left alone and listed in [`ImportReport::conflicts`].
//!
//! Importing is pure data: it never starts a server. It does not carry approvals over
//! unless asked ([`ImportOptions::consents`]): a document from elsewhere must not be able
//! to approve the command lines its own server entries would start.

use super::{Doc, DocBlueprint, DocRevision, DocRun, EXPORT_FORMAT};
use crate::blueprints::{BlueprintMeta, Revision};
use crate::codec::encode;
use crate::error::{Error, Result};
use crate::keys;
use crate::runs::{RecordStatus, RunRecord};
use crate::schema::SCHEMA_VERSION;
use crate::servers::check_server;
use crate::{Consent, Store};
use mcpflow_blueprint::diagnostic::pointer_token;
use mcpflow_blueprint::{Options, check_value};
use mcpflow_engine::RunEvent;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// How an import treats what needs the user's trust.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Also import the approved command lines. Only for the user's own backups.
    pub consents: bool,
}

/// What one kind of entry contributed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub added: usize,
    /// Already in the store (identical or conflicting), or withheld.
    pub skipped: usize,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// A blueprint counts as added when it gained at least one revision.
    pub blueprints: Counts,
    pub revisions: Counts,
    pub runs: Counts,
    pub saved: Counts,
    pub servers: Counts,
    /// Without [`ImportOptions::consents`] every consent is skipped.
    pub consents: Counts,
    pub schedules: Counts,
    /// JSON pointers (into the document) of entries not imported because the store holds
    /// something different under the same key.
    pub conflicts: Vec<String>,
}

/// The entries an import will write, planned before anything is written; the backend
/// writes them all ([`crate::backend::Backend::apply_import`]).
#[derive(Debug, Default)]
pub(crate) struct Writes {
    /// (blueprint, rev, revision)
    pub(crate) revisions: Vec<(String, u32, Revision)>,
    /// The blueprints whose current revision changes, with it.
    pub(crate) blueprints: Vec<BlueprintMeta>,
    /// New runs with their events.
    pub(crate) runs: Vec<(RunRecord, Vec<RunEvent>)>,
    /// (blueprint, name, value)
    pub(crate) saved: Vec<(String, String, Value)>,
    pub(crate) servers: Vec<(String, Value)>,
    pub(crate) consents: Vec<Consent>,
    pub(crate) schedules: Vec<(String, Value)>,
}

impl Store {
    /// Merges an export document into this store, without consents. See
    /// [`Store::import_with`].
    pub fn import(&self, doc: &Value) -> Result<ImportReport> {
        self.import_with(doc, ImportOptions::default())
    }

    /// Merges an export document into this store. A malformed document is an
    /// [`Error::ImportInvalid`] naming the JSON pointer of the problem, and nothing is
    /// written. Blueprints gain the revisions they lack when the document's history
    /// extends the stored one; runs the store already has are skipped; a run the document
    /// shows `running` is imported as `interrupted` (no process here is running it).
    #[tracing::instrument(skip_all, err)]
    pub fn import_with(&self, doc: &Value, options: ImportOptions) -> Result<ImportReport> {
        let doc = parse(doc)?;
        let mut report = ImportReport::default();
        let mut writes = Writes::default();
        for (i, blueprint) in doc.blueprints.iter().enumerate() {
            self.plan_blueprint(i, blueprint, &mut report, &mut writes)?;
        }
        for run in &doc.runs {
            self.plan_run(run, &mut report, &mut writes)?;
        }
        for (blueprint, values) in &doc.saved {
            for (name, value) in values {
                let pointer = format!("/saved/{}/{}", pointer_token(blueprint), pointer_token(name));
                let stored = self.backend.saved_value(blueprint, name)?;
                if merge(stored, value, &mut report.conflicts, pointer, &mut report.saved) {
                    writes.saved.push((blueprint.clone(), name.clone(), value.clone()));
                }
            }
        }
        for (name, config) in &doc.servers {
            let pointer = format!("/servers/{}", pointer_token(name));
            let stored = self.backend.server(name)?;
            if merge(stored, config, &mut report.conflicts, pointer, &mut report.servers) {
                writes.servers.push((name.clone(), config.clone()));
            }
        }
        for (blueprint, state) in &doc.schedules {
            let pointer = format!("/schedules/{}", pointer_token(blueprint));
            let stored = self.backend.schedule_state(blueprint)?;
            if merge(stored, state, &mut report.conflicts, pointer, &mut report.schedules) {
                writes.schedules.push((blueprint.clone(), state.clone()));
            }
        }
        for (i, consent) in doc.consents.iter().enumerate() {
            if !options.consents {
                report.consents.skipped += 1;
                continue;
            }
            match self.backend.consent(&consent.hash)? {
                Some(stored) => {
                    report.consents.skipped += 1;
                    if stored.command != consent.command {
                        report.conflicts.push(format!("/consents/{i}"));
                    }
                }
                None => {
                    writes.consents.push(consent.clone());
                    report.consents.added += 1;
                }
            }
        }
        self.backend.apply_import(writes)?;
        self.sync()?;
        tracing::info!(?report, "imported");
        Ok(report)
    }

    fn plan_blueprint(
        &self,
        index: usize,
        blueprint: &DocBlueprint,
        report: &mut ImportReport,
        writes: &mut Writes,
    ) -> Result<()> {
        let id = &blueprint.id;
        let stored: HashMap<u32, Vec<u8>> = self
            .revision_list(id)?
            .into_iter()
            .map(|stored| Ok((stored.meta.rev, encode("a revision", &stored.json)?)))
            .collect::<Result<_>>()?;
        let total = blueprint.revisions.len();
        let mut fresh = Vec::new();
        for revision in &blueprint.revisions {
            match stored.get(&revision.rev) {
                None => fresh.push(revision),
                Some(bytes) if *bytes == encode("a revision", &revision.json)? => {}
                // The histories differ: keep the stored one whole.
                Some(_) => {
                    report.blueprints.skipped += 1;
                    report.revisions.skipped += total;
                    report.conflicts.push(format!("/blueprints/{index}"));
                    return Ok(());
                }
            }
        }
        report.revisions.added += fresh.len();
        report.revisions.skipped += total - fresh.len();
        let Some(newest) = fresh.iter().max_by_key(|revision| revision.rev) else {
            report.blueprints.skipped += 1;
            return Ok(());
        };
        report.blueprints.added += 1;
        for revision in &fresh {
            let value = Revision { saved_at: revision.saved_at.clone(), json: revision.json.clone() };
            writes.revisions.push((id.clone(), revision.rev, value));
        }
        let current = self.backend.blueprint(id)?.map(|stored| stored.meta.rev);
        if current.is_none_or(|rev| newest.rev > rev) {
            writes.blueprints.push(BlueprintMeta::of(id, newest.rev, newest.saved_at.clone(), &newest.json));
        }
        Ok(())
    }

    fn plan_run(&self, run: &DocRun, report: &mut ImportReport, writes: &mut Writes) -> Result<()> {
        if self.backend.run_exists(&run.record.id)? {
            report.runs.skipped += 1;
            return Ok(());
        }
        let mut record = run.record.clone();
        if record.status == RecordStatus::Running {
            record.status = RecordStatus::Interrupted;
        }
        writes.runs.push((record, run.events.clone()));
        report.runs.added += 1;
        Ok(())
    }
}

/// Whether `value` is to be written: the store has nothing under its key. A different
/// stored value is a conflict at `pointer`; either way `counts` says which it was.
fn merge(
    stored: Option<Value>,
    value: &Value,
    conflicts: &mut Vec<String>,
    pointer: String,
    counts: &mut Counts,
) -> bool {
    match stored {
        Some(stored) => {
            if stored != *value {
                conflicts.push(pointer);
            }
            counts.skipped += 1;
            false
        }
        None => {
            counts.added += 1;
            true
        }
    }
}

/// Checks the whole document; the first problem is an error at its JSON pointer.
pub(crate) fn parse(doc: &Value) -> Result<Doc> {
    let Some(object) = doc.as_object() else {
        return Err(invalid(String::new(), "expected a JSON object (an mcpflow store export)"));
    };
    match object.get("mcpflow_store") {
        Some(format) if format.as_u64() == Some(u64::from(EXPORT_FORMAT)) => {}
        Some(format) => {
            return Err(invalid(
                "/mcpflow_store".into(),
                format!("this mcpflow reads store exports of format {EXPORT_FORMAT}, not {format}"),
            ));
        }
        None => return Err(invalid(String::new(), "not an mcpflow store export: `mcpflow_store` is missing")),
    }
    match object.get("schema_version").and_then(Value::as_u64) {
        Some(version) if version > u64::from(SCHEMA_VERSION) => {
            return Err(invalid(
                "/schema_version".into(),
                format!(
                    "made by a newer mcpflow (schema version {version}; this mcpflow reads up to {SCHEMA_VERSION}); \
                     upgrade mcpflow"
                ),
            ));
        }
        // An older document reads as it is: no version so far rewrote what an older one
        // wrote (see `schema::step`); a version that does must convert the document here.
        Some(version) if version >= 1 => {}
        _ => return Err(invalid("/schema_version".into(), "expected the schema version, a positive integer")),
    }
    let doc: Doc =
        serde_path_to_error::deserialize(doc).map_err(|e| invalid(pointer_of(e.path()), e.inner().to_string()))?;
    check(&doc)?;
    Ok(doc)
}

/// What serde cannot see: keys the layout refuses, duplicates, revision numbers.
fn check(doc: &Doc) -> Result<()> {
    let mut ids = HashMap::new();
    for (i, blueprint) in doc.blueprints.iter().enumerate() {
        let at = format!("/blueprints/{i}");
        key_ok("blueprint id", &blueprint.id, format!("{at}/id"))?;
        unique(&mut ids, blueprint.id.as_str(), i, &at, "/blueprints", "blueprint")?;
        if blueprint.revisions.is_empty() {
            return Err(invalid(format!("{at}/revisions"), "a blueprint needs at least one revision"));
        }
        let mut revs = HashMap::new();
        for (k, revision) in blueprint.revisions.iter().enumerate() {
            let at = format!("{at}/revisions/{k}");
            if revision.rev == 0 {
                return Err(invalid(format!("{at}/rev"), "revisions are numbered from 1"));
            }
            unique(&mut revs, revision.rev, k, &at, &format!("/blueprints/{i}/revisions"), "revision")?;
            check_revision(&blueprint.id, revision, &at)?;
        }
    }
    let mut runs = HashMap::new();
    for (i, run) in doc.runs.iter().enumerate() {
        let at = format!("/runs/{i}");
        key_ok("run id", &run.record.id, format!("{at}/record/id"))?;
        key_ok("blueprint id", &run.record.blueprint, format!("{at}/record/blueprint"))?;
        unique(&mut runs, run.record.id.as_str(), i, &at, "/runs", "run")?;
        let mut seqs = HashMap::new();
        for (k, event) in run.events.iter().enumerate() {
            unique(&mut seqs, event.seq, k, &format!("{at}/events/{k}"), &format!("{at}/events"), "event seq")?;
        }
    }
    for (blueprint, values) in &doc.saved {
        let at = format!("/saved/{}", pointer_token(blueprint));
        key_ok("blueprint id", blueprint, at.clone())?;
        for name in values.keys() {
            key_ok("saved value name", name, format!("{at}/{}", pointer_token(name)))?;
        }
    }
    for (name, config) in &doc.servers {
        let at = format!("/servers/{}", pointer_token(name));
        key_ok("server name", name, at.clone())?;
        check_server(name, config).map_err(|e| invalid(at, e.to_string()))?;
    }
    let mut hashes = HashMap::new();
    for (i, consent) in doc.consents.iter().enumerate() {
        let at = format!("/consents/{i}");
        key_ok("consent hash", &consent.hash, format!("{at}/hash"))?;
        unique(&mut hashes, consent.hash.as_str(), i, &at, "/consents", "consent")?;
    }
    for blueprint in doc.schedules.keys() {
        key_ok("blueprint id", blueprint, format!("/schedules/{}", pointer_token(blueprint)))?;
    }
    Ok(())
}

/// A revision is a blueprint the validator accepts (errors only; warnings are the
/// editor's business), stored under its own `id`: a revision that would not save here
/// does not come in through a backup either.
fn check_revision(id: &str, revision: &DocRevision, at: &str) -> Result<()> {
    let report = check_value(revision.json.clone(), &Options::default());
    let mut errors = report.diagnostics.iter().filter(|d| d.is_error());
    if let Some(first) = errors.next() {
        let more = errors.count();
        let more = if more > 0 { format!(" (and {more} more)") } else { String::new() };
        let pointer = if first.pointer.is_empty() { "/" } else { first.pointer.as_str() };
        return Err(invalid(
            format!("{at}/json{}", first.pointer),
            format!(
                "blueprint `{id}` revision {} is not a valid blueprint: {} at {pointer}: {}{more}; fix it with \
                 `mcpflow validate` before importing",
                revision.rev, first.code, first.message
            ),
        ));
    }
    match revision.json.get("id").and_then(Value::as_str) {
        Some(own) if own == id => Ok(()),
        own => Err(invalid(
            format!("{at}/json/id"),
            format!(
                "revision {} is listed under blueprint `{id}` but its `id` is {}; a revision is stored under its \
                 own id",
                revision.rev,
                own.map_or("missing".to_owned(), |own| format!("`{own}`"))
            ),
        )),
    }
}

fn key_ok(what: &'static str, value: &str, pointer: String) -> Result<()> {
    keys::check(what, value).map_err(|e| invalid(pointer, e.to_string()))
}

/// Records `value` as seen at `index`; a second sighting is an error at `at`.
fn unique<T: std::hash::Hash + Eq + std::fmt::Debug + Copy>(
    seen: &mut HashMap<T, usize>,
    value: T,
    index: usize,
    at: &str,
    list: &str,
    what: &str,
) -> Result<()> {
    match seen.insert(value, index) {
        Some(first) => Err(invalid(at.to_owned(), format!("{what} {value:?} appears twice (first at {list}/{first})"))),
        None => Ok(()),
    }
}

fn invalid(pointer: String, message: impl Into<String>) -> Error {
    Error::ImportInvalid { pointer, message: message.into() }
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(format!("/{index}")),
            Segment::Map { key } => Some(format!("/{}", pointer_token(key))),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointer(doc: Value) -> String {
        match parse(&doc) {
            Err(Error::ImportInvalid { pointer, .. }) => pointer,
            other => panic!("expected ImportInvalid, got {other:?}"),
        }
    }

    #[test]
    fn shape_errors_point_at_the_member() {
        let doc = json!({"mcpflow_store": 1, "schema_version": 1, "blueprints": [{"id": "a", "revisions": [{"rev": "one", "saved_at": "t", "json": {}}]}]});
        assert_eq!(pointer(doc), "/blueprints/0/revisions/0/rev");
    }

    #[test]
    fn duplicate_event_seqs_are_refused() {
        let event = json!({"seq": 1, "at_ms": 0, "type": "RunResumed"});
        let record = json!({"id": "r", "blueprint": "b", "status": "succeeded", "trigger": "cli", "inputs": {}, "started_at": "t"});
        let doc =
            json!({"mcpflow_store": 1, "schema_version": 1, "runs": [{"record": record, "events": [event, event]}]});
        assert_eq!(pointer(doc), "/runs/0/events/1");
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        let doc = json!({"mcpflow_store": 1, "schema_version": 1, "servers": {"a/b~c": "npx"}});
        assert_eq!(pointer(doc), "/servers/a~1b~0c");
    }

    #[test]
    fn a_newer_or_foreign_document_is_refused_up_front() {
        assert_eq!(pointer(json!({"mcpflow_store": 1, "schema_version": 9})), "/schema_version");
        assert_eq!(pointer(json!({"mcpflow_store": 2, "schema_version": 1})), "/mcpflow_store");
        assert_eq!(pointer(json!([])), "");
    }
}
