//! Backup: the whole store as one JSON document ([`Store::export`]) and merging such a
//! document into a store ([`Store::import`], in `backup/import.rs`). The document:
//!
//! ```json
//! { "mcpflow_store": 1, "schema_version": 2,
//!   "blueprints": [ { "id": "…", "revisions": [ { "rev": 1, "saved_at": "…", "json": { … } } ] } ],
//!   "runs": [ { "record": { …RunRecord }, "events": [ …RunEvent ] } ],
//!   "saved": { "<blueprint>": { "<name>": … } },
//!   "servers": { "<name>": { …mcpServers entry } },
//!   "consents": [ { "hash": "sha256:…", "command": "…", "approved_at": "…" } ],
//!   "schedules": { "<blueprint>": … } }
//! ```
//!
//! `schema_version` is the store's ([`crate::SCHEMA_VERSION`]) when it was exported. A
//! document of an older version imports as it is — every version so far only added values
//! (version 2: the `waiting` status and its events), so what an older mcpflow wrote reads
//! unchanged; one of a newer version is refused (`/schema_version`: upgrade mcpflow).

mod import;

pub(crate) use import::Writes;
pub use import::{Counts, ImportOptions, ImportReport};

use crate::Store;
use crate::consents::Consent;
use crate::error::{Error, Result};
use crate::runs::RunRecord;
use crate::schema::SCHEMA_VERSION;
use crate::unreadable::Unreadable;
use mcpflow_engine::RunEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The version of the export document (`mcpflow_store`).
pub const EXPORT_FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Doc {
    pub(crate) mcpflow_store: u32,
    pub(crate) schema_version: u32,
    #[serde(default)]
    pub(crate) blueprints: Vec<DocBlueprint>,
    #[serde(default)]
    pub(crate) runs: Vec<DocRun>,
    #[serde(default)]
    pub(crate) saved: BTreeMap<String, BTreeMap<String, Value>>,
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, Value>,
    #[serde(default)]
    pub(crate) consents: Vec<Consent>,
    #[serde(default)]
    pub(crate) schedules: BTreeMap<String, Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocBlueprint {
    pub(crate) id: String,
    pub(crate) revisions: Vec<DocRevision>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocRevision {
    pub(crate) rev: u32,
    pub(crate) saved_at: String,
    pub(crate) json: Value,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocRun {
    pub(crate) record: RunRecord,
    #[serde(default)]
    pub(crate) events: Vec<RunEvent>,
}

/// A backup as [`Store::backup`] makes it: the document, and what it left out.
#[derive(Debug, Clone)]
pub struct Backup {
    /// The export document (see the module docs): everything readable.
    pub doc: Value,
    /// The runs, and events of runs, that cannot be read and are not in `doc`: a run
    /// whose record cannot be read is left out whole; an unreadable event alone.
    pub skipped: Vec<Unreadable>,
}

impl Store {
    /// Everything readable in the store as one JSON document (see the module docs), in
    /// key order. What cannot be read is left out: see [`Store::backup`].
    pub fn export(&self) -> Result<Value> {
        Ok(self.backup()?.doc)
    }

    /// Everything readable in the store as one JSON document, and the runs and events
    /// left out because they cannot be read (damaged, or nested deeper than
    /// [`crate::MAX_RECORD_DEPTH`]): one of them never fails the whole backup.
    #[tracing::instrument(skip_all, err)]
    pub fn backup(&self) -> Result<Backup> {
        let mut blueprints = Vec::new();
        for meta in self.blueprints()? {
            let revisions = self
                .revision_list(&meta.id)?
                .into_iter()
                .map(|stored| DocRevision { rev: stored.meta.rev, saved_at: stored.meta.saved_at, json: stored.json })
                .collect();
            blueprints.push(DocBlueprint { id: meta.id, revisions });
        }
        let mut runs = Vec::new();
        let (records, mut skipped) = self.backend.all_runs()?;
        for record in records {
            let (events, unreadable) = self.readable_events(&record.id)?;
            skipped.extend(unreadable);
            runs.push(DocRun { record, events });
        }
        for unreadable in &skipped {
            tracing::warn!(%unreadable, "left out of the backup");
        }
        let mut saved: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        for (blueprint, name, value) in self.backend.all_saved()? {
            saved.entry(blueprint).or_default().insert(name, value);
        }
        let doc = Doc {
            mcpflow_store: EXPORT_FORMAT,
            schema_version: SCHEMA_VERSION,
            blueprints,
            runs,
            saved,
            servers: self.servers()?.into_iter().collect(),
            consents: self.consents()?,
            schedules: self.backend.schedule_states()?.into_iter().collect(),
        };
        let doc = serde_json::to_value(&doc)
            .map_err(|e| Error::Encode { what: "the export".into(), message: e.to_string() })?;
        Ok(Backup { doc, skipped })
    }
}
