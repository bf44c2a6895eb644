//! Blueprints and revisions in sled: the `blueprints` tree holds the current revision's
//! [`BlueprintMeta`], `revisions` every revision (`keys.rs` has the layout).

use super::{Sled, tx_error};
use crate::backend::Blueprints;
use crate::blueprints::{BlueprintMeta, Revision, StoredBlueprint};
use crate::codec::{decode, encode};
use crate::error::{Error, Result};
use crate::keys::{self, BLUEPRINTS, REVISIONS};
use serde_json::Value;
use sled::Transactional;
use sled::transaction::ConflictableTransactionError;

impl Blueprints for Sled {
    fn save_blueprint(&self, id: &str, json: &Value, saved_at: &str) -> Result<BlueprintMeta> {
        let current_key = keys::single(id);
        let json_bytes = encode("the blueprint", json)?;
        let revision = encode("the revision", &Revision { saved_at: saved_at.to_owned(), json: json.clone() })?;
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
            let meta = BlueprintMeta::of(id, rev, saved_at.to_owned(), json);
            revisions.insert(keys::revision(id, rev), revision.as_slice())?;
            current.insert(current_key.as_slice(), encode("the blueprint meta", &meta).map_err(abort)?)?;
            Ok(meta)
        });
        result.map_err(tx_error("saving a blueprint"))
    }

    fn blueprint(&self, id: &str) -> Result<Option<StoredBlueprint>> {
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

    fn blueprints(&self) -> Result<Vec<BlueprintMeta>> {
        self.blueprints
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing blueprints"))?;
                decode(BLUEPRINTS, &key, &bytes)
            })
            .collect()
    }

    fn revision_list(&self, id: &str) -> Result<Vec<StoredBlueprint>> {
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

    fn revision(&self, id: &str, rev: u32) -> Result<Option<StoredBlueprint>> {
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

    fn delete_blueprint(&self, id: &str) -> Result<bool> {
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
