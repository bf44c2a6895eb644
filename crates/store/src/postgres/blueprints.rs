//! Blueprints and revisions in PostgreSQL: `revisions` holds every revision's document,
//! `blueprints` the number of the current one.

use super::{Postgres, col, json_text};
use crate::backend::Blueprints;
use crate::blueprints::{BlueprintMeta, StoredBlueprint};
use crate::codec::decode;
use crate::error::{Error, Result};
use crate::keys;
use postgres::Row;
use serde_json::Value;

/// A revision number as stored (`bigint`, 1 to `u32::MAX`).
fn rev_of(id: &str, rev: i64) -> Result<u32> {
    u32::try_from(rev).map_err(|_| Error::Corrupt {
        tree: "blueprints",
        key: keys::display(id.as_bytes()),
        message: format!("revision number {rev} is not one mcpflow writes"),
    })
}

/// A revision from a row of (rev, saved_at, doc).
fn stored(id: &str, row: &Row, action: &'static str) -> Result<StoredBlueprint> {
    let rev = rev_of(id, col(row, 0, action)?)?;
    let saved_at: String = col(row, 1, action)?;
    let doc: String = col(row, 2, action)?;
    let json: Value = decode("revisions", format!("{id}/{rev}").as_bytes(), doc.as_bytes())?;
    Ok(StoredBlueprint { meta: BlueprintMeta::of(id, rev, saved_at, &json), json })
}

impl Blueprints for Postgres {
    fn save_blueprint(&self, id: &str, json: &Value, saved_at: &str) -> Result<BlueprintMeta> {
        let action = "saving a blueprint";
        let doc = json_text(|| "the blueprint".to_owned(), json)?;
        let (id, json, saved_at) = (id.to_owned(), json.clone(), saved_at.to_owned());
        self.call(action, move |client| {
            let pg = Error::pg;
            let mut tx = client.transaction().map_err(pg(action))?;
            let current = tx
                .query_opt(
                    "SELECT b.rev, r.saved_at, r.doc::text FROM blueprints b
                     LEFT JOIN revisions r ON r.blueprint = b.id AND r.rev = b.rev
                     WHERE b.id = $1 FOR UPDATE OF b",
                    &[&id],
                )
                .map_err(pg(action))?;
            let rev = match current {
                None => 1,
                Some(row) => {
                    let rev = rev_of(&id, col(&row, 0, action)?)?;
                    if col::<Option<String>>(&row, 2, action)?.as_deref() == Some(doc.as_str()) {
                        let stored_at: String = col(&row, 1, action)?;
                        return Ok(BlueprintMeta::of(&id, rev, stored_at, &json));
                    }
                    rev.checked_add(1).ok_or_else(|| Error::RevisionsExhausted { id: id.clone() })?
                }
            };
            tx.execute(
                "INSERT INTO revisions (blueprint, rev, saved_at, doc) VALUES ($1, $2, $3, $4::text::json)",
                &[&id, &i64::from(rev), &saved_at, &doc],
            )
            .map_err(pg(action))?;
            tx.execute(
                "INSERT INTO blueprints (id, rev) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET rev = EXCLUDED.rev",
                &[&id, &i64::from(rev)],
            )
            .map_err(pg(action))?;
            tx.commit().map_err(pg(action))?;
            Ok(BlueprintMeta::of(&id, rev, saved_at, &json))
        })
    }

    fn blueprint(&self, id: &str) -> Result<Option<StoredBlueprint>> {
        let action = "reading a blueprint";
        let id = id.to_owned();
        self.call(action, move |client| {
            let row = client
                .query_opt(
                    "SELECT b.rev, r.saved_at, r.doc::text, r.rev IS NULL FROM blueprints b
                     LEFT JOIN revisions r ON r.blueprint = b.id AND r.rev = b.rev WHERE b.id = $1",
                    &[&id],
                )
                .map_err(Error::pg(action))?;
            let Some(row) = row else { return Ok(None) };
            if col::<bool>(&row, 3, action)? {
                let rev: i64 = col(&row, 0, action)?;
                return Err(Error::Corrupt {
                    tree: "blueprints",
                    key: keys::display(id.as_bytes()),
                    message: format!("it names revision {rev} which is not in the `revisions` table"),
                });
            }
            stored(&id, &row, action).map(Some)
        })
    }

    fn blueprints(&self) -> Result<Vec<BlueprintMeta>> {
        let action = "listing blueprints";
        self.call(action, move |client| {
            // The name and description as `BlueprintMeta::of` takes them: strings only.
            let rows = client
                .query(
                    "SELECT b.id, b.rev, r.saved_at,
                        CASE WHEN json_typeof(r.doc) = 'object' AND json_typeof(r.doc -> 'name') = 'string'
                             THEN r.doc ->> 'name' END,
                        CASE WHEN json_typeof(r.doc) = 'object' AND json_typeof(r.doc -> 'description') = 'string'
                             THEN r.doc ->> 'description' END
                     FROM blueprints b JOIN revisions r ON r.blueprint = b.id AND r.rev = b.rev ORDER BY b.id",
                    &[],
                )
                .map_err(Error::pg(action))?;
            rows.iter()
                .map(|row| {
                    let id: String = col(row, 0, action)?;
                    let rev = rev_of(&id, col(row, 1, action)?)?;
                    Ok(BlueprintMeta {
                        rev,
                        saved_at: col(row, 2, action)?,
                        name: col(row, 3, action)?,
                        description: col(row, 4, action)?,
                        id,
                    })
                })
                .collect()
        })
    }

    fn revision_list(&self, id: &str) -> Result<Vec<StoredBlueprint>> {
        let action = "listing revisions";
        let id = id.to_owned();
        self.call(action, move |client| {
            let rows = client
                .query("SELECT rev, saved_at, doc::text FROM revisions WHERE blueprint = $1 ORDER BY rev", &[&id])
                .map_err(Error::pg(action))?;
            rows.iter().map(|row| stored(&id, row, action)).collect()
        })
    }

    fn revision(&self, id: &str, rev: u32) -> Result<Option<StoredBlueprint>> {
        let action = "reading a revision";
        let id = id.to_owned();
        self.call(action, move |client| {
            let row = client
                .query_opt(
                    "SELECT rev, saved_at, doc::text FROM revisions WHERE blueprint = $1 AND rev = $2",
                    &[&id, &i64::from(rev)],
                )
                .map_err(Error::pg(action))?;
            row.map(|row| stored(&id, &row, action)).transpose()
        })
    }

    fn delete_blueprint(&self, id: &str) -> Result<bool> {
        let action = "deleting a blueprint";
        let id = id.to_owned();
        self.call(action, move |client| {
            let mut tx = client.transaction().map_err(Error::pg(action))?;
            let revisions =
                tx.execute("DELETE FROM revisions WHERE blueprint = $1", &[&id]).map_err(Error::pg(action))?;
            let current = tx.execute("DELETE FROM blueprints WHERE id = $1", &[&id]).map_err(Error::pg(action))?;
            tx.commit().map_err(Error::pg(action))?;
            Ok(revisions + current > 0)
        })
    }
}
