//! Blueprints and their revisions. Every save that changes the document is a new
//! revision (1, 2, 3 …); the `blueprints` tree points at the current one.

use crate::Store;
use crate::codec::{decode, encode, now};
use crate::error::{Error, Result};
use crate::keys::{self, BLUEPRINTS, REVISIONS};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError};

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
        let current_key = keys::single(id);
        let json_bytes = encode("the blueprint", json)?;
        let saved_at = now();
        let revision = encode("the revision", &Revision { saved_at: saved_at.clone(), json: json.clone() })?;
        let result = (&self.blueprints, &self.revisions).transaction(|(current, revisions)| {
            let abort = ConflictableTransactionError::Abort;
            let meta = match current.get(&current_key)? {
                Some(bytes) => Some(decode::<BlueprintMeta>(BLUEPRINTS, &current_key, &bytes).map_err(abort)?),
                None => None,
            };
            if let Some(meta) = &meta {
                let key = keys::revision(id, meta.rev);
                if let Some(bytes) = revisions.get(&key)? {
                    let stored = decode::<Revision>(REVISIONS, &key, &bytes).map_err(abort)?;
                    if encode("the revision", &stored.json).map_err(abort)? == json_bytes {
                        return Ok(meta.clone());
                    }
                }
            }
            let rev = match &meta {
                Some(meta) => {
                    meta.rev.checked_add(1).ok_or_else(|| abort(Error::RevisionsExhausted { id: id.to_owned() }))?
                }
                None => 1,
            };
            let meta = BlueprintMeta::of(id, rev, saved_at.clone(), json);
            revisions.insert(keys::revision(id, rev), revision.as_slice())?;
            current.insert(current_key.as_slice(), encode("the blueprint meta", &meta).map_err(abort)?)?;
            Ok(meta)
        });
        result.map_err(tx_error("saving a blueprint"))
    }

    /// The current revision of blueprint `id`.
    pub fn blueprint(&self, id: &str) -> Result<Option<StoredBlueprint>> {
        keys::check("blueprint id", id)?;
        let current_key = keys::single(id);
        // One transaction, so the pointer and the revision it names are read together.
        let result = (&self.blueprints, &self.revisions).transaction(|(current, revisions)| {
            let abort = ConflictableTransactionError::Abort;
            let Some(bytes) = current.get(&current_key)? else { return Ok(None) };
            let meta = decode::<BlueprintMeta>(BLUEPRINTS, &current_key, &bytes).map_err(abort)?;
            let key = keys::revision(id, meta.rev);
            let Some(bytes) = revisions.get(&key)? else {
                return Err(abort(Error::Corrupt {
                    tree: BLUEPRINTS,
                    key: keys::display(&current_key),
                    message: format!("it names revision {} which is not in the `revisions` tree", meta.rev),
                }));
            };
            let json = decode::<Revision>(REVISIONS, &key, &bytes).map_err(abort)?.json;
            Ok(Some(StoredBlueprint { meta, json }))
        });
        result.map_err(tx_error("reading a blueprint"))
    }

    /// The current revision of every blueprint, sorted by id.
    pub fn blueprints(&self) -> Result<Vec<BlueprintMeta>> {
        self.blueprints
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing blueprints"))?;
                decode(BLUEPRINTS, &key, &bytes)
            })
            .collect()
    }

    /// Every revision of blueprint `id`, oldest first (empty if there is no such blueprint).
    pub fn revisions(&self, id: &str) -> Result<Vec<BlueprintMeta>> {
        Ok(self.revision_list(id)?.into_iter().map(|stored| stored.meta).collect())
    }

    /// Every revision of blueprint `id` with its document, oldest first.
    pub(crate) fn revision_list(&self, id: &str) -> Result<Vec<StoredBlueprint>> {
        keys::check("blueprint id", id)?;
        self.revisions
            .scan_prefix(keys::prefix(id))
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing revisions"))?;
                let (_, tail) = keys::parse_pair(REVISIONS, &key)?;
                let rev = keys::tail_u32(REVISIONS, &key, tail)?;
                let revision = decode::<Revision>(REVISIONS, &key, &bytes)?;
                let meta = BlueprintMeta::of(id, rev, revision.saved_at, &revision.json);
                Ok(StoredBlueprint { meta, json: revision.json })
            })
            .collect()
    }

    /// Revision `rev` of blueprint `id`.
    pub fn revision(&self, id: &str, rev: u32) -> Result<Option<StoredBlueprint>> {
        keys::check("blueprint id", id)?;
        let key = keys::revision(id, rev);
        let Some(bytes) = self.revisions.get(&key).map_err(Error::db("reading a revision"))? else {
            return Ok(None);
        };
        let revision = decode::<Revision>(REVISIONS, &key, &bytes)?;
        Ok(Some(StoredBlueprint {
            meta: BlueprintMeta::of(id, rev, revision.saved_at, &revision.json),
            json: revision.json,
        }))
    }

    /// Removes blueprint `id` and all its revisions; its runs and saved values stay.
    /// Returns whether there was anything to remove.
    #[tracing::instrument(skip(self), err)]
    pub fn delete_blueprint(&self, id: &str) -> Result<bool> {
        keys::check("blueprint id", id)?;
        let current_key = keys::single(id);
        let revision_keys = self
            .revisions
            .scan_prefix(keys::prefix(id))
            .keys()
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::db("listing revisions"))?;
        let result = (&self.blueprints, &self.revisions).transaction(|(current, revisions)| {
            let mut found = current.remove(current_key.as_slice())?.is_some();
            for key in &revision_keys {
                found |= revisions.remove(key)?.is_some();
            }
            Ok(found)
        });
        result.map_err(tx_error("deleting a blueprint"))
    }
}

/// Turns a transaction's failure into this crate's error.
pub(crate) fn tx_error(action: &'static str) -> impl FnOnce(TransactionError<Error>) -> Error {
    move |error| match error {
        TransactionError::Abort(error) => error,
        TransactionError::Storage(source) => Error::Db { action, source },
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
