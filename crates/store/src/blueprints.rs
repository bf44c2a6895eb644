//! Blueprints and their revisions. Every save that changes the document is a new
//! revision (1, 2, 3 …); the `blueprints` tree (or table) points at the current one.

use crate::Store;
use crate::codec::now;
use crate::error::Result;
use crate::keys;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One revision of a blueprint, without its document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlueprintMeta {
    pub id: String,
    pub rev: u32,
    /// RFC 3339, UTC.
    pub saved_at: String,
    /// The document's `name`, if it has one.
    #[serde(default)]
    pub name: Option<String>,
    /// The document's `description`, if it has one.
    #[serde(default)]
    pub description: Option<String>,
}

/// A revision with its document.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredBlueprint {
    pub meta: BlueprintMeta,
    pub json: Value,
}

/// A `revisions` value.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Revision {
    pub(crate) saved_at: String,
    pub(crate) json: Value,
}

impl BlueprintMeta {
    pub(crate) fn of(id: &str, rev: u32, saved_at: String, json: &Value) -> Self {
        let text = |field: &str| json.get(field).and_then(Value::as_str).map(str::to_owned);
        BlueprintMeta { id: id.to_owned(), rev, saved_at, name: text("name"), description: text("description") }
    }
}

impl Store {
    /// Saves `json` as the next revision of blueprint `id` and returns it. JSON identical
    /// (byte for byte, once serialized) to the current revision adds nothing and returns
    /// the current revision.
    #[tracing::instrument(skip(self, json), err)]
    pub fn save_blueprint(&self, id: &str, json: &Value) -> Result<BlueprintMeta> {
        keys::check("blueprint id", id)?;
        self.backend.save_blueprint(id, json, &now())
    }

    /// The current revision of blueprint `id`.
    pub fn blueprint(&self, id: &str) -> Result<Option<StoredBlueprint>> {
        keys::check("blueprint id", id)?;
        self.backend.blueprint(id)
    }

    /// The current revision of every blueprint, sorted by id.
    pub fn blueprints(&self) -> Result<Vec<BlueprintMeta>> {
        self.backend.blueprints()
    }

    /// Every revision of blueprint `id`, oldest first (empty if there is no such blueprint).
    pub fn revisions(&self, id: &str) -> Result<Vec<BlueprintMeta>> {
        Ok(self.revision_list(id)?.into_iter().map(|stored| stored.meta).collect())
    }

    /// Every revision of blueprint `id` with its document, oldest first.
    pub(crate) fn revision_list(&self, id: &str) -> Result<Vec<StoredBlueprint>> {
        keys::check("blueprint id", id)?;
        self.backend.revision_list(id)
    }

    /// Revision `rev` of blueprint `id`.
    pub fn revision(&self, id: &str, rev: u32) -> Result<Option<StoredBlueprint>> {
        keys::check("blueprint id", id)?;
        self.backend.revision(id, rev)
    }

    /// Removes blueprint `id` and all its revisions; its runs and saved values stay.
    /// Returns whether there was anything to remove.
    #[tracing::instrument(skip(self), err)]
    pub fn delete_blueprint(&self, id: &str) -> Result<bool> {
        keys::check("blueprint id", id)?;
        self.backend.delete_blueprint(id)
    }
}

/// `workflow` steps find their sub-workflows among the stored blueprints.
impl mcpflow_engine::BlueprintSource for Store {
    fn load(&self, id: &str) -> Result<Vec<u8>, String> {
        match self.blueprint(id) {
            // Pretty, so line and column in a validation message point somewhere readable.
            Ok(Some(stored)) => serde_json::to_vec_pretty(&stored.json).map_err(|e| e.to_string()),
            Ok(None) => Err(format!("no stored blueprint `{id}`")),
            Err(error) => Err(error.to_string()),
        }
    }
}
