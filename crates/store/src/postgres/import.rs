//! An import's planned entries written to PostgreSQL in one transaction: all of them,
//! or (on any failure) none.

use super::json_text;
use crate::backup::Writes;
use crate::error::{Error, Result};
use postgres::Client;

pub(super) fn apply(client: &mut Client, writes: &Writes) -> Result<()> {
    let action = "importing";
    let pg = Error::pg;
    let mut tx = client.transaction().map_err(pg(action))?;
    let revision = tx
        .prepare("INSERT INTO revisions (blueprint, rev, saved_at, doc) VALUES ($1, $2, $3, $4::text::json)")
        .map_err(pg(action))?;
    for (id, rev, stored) in &writes.revisions {
        let doc = json_text(|| format!("revision {rev} of blueprint `{id}`"), &stored.json)?;
        tx.execute(&revision, &[id, &i64::from(*rev), &stored.saved_at, &doc]).map_err(pg(action))?;
    }
    for meta in &writes.blueprints {
        tx.execute(
            "INSERT INTO blueprints (id, rev) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET rev = EXCLUDED.rev",
            &[&meta.id, &i64::from(meta.rev)],
        )
        .map_err(pg(action))?;
    }
    let event =
        tx.prepare("INSERT INTO events (run_id, seq, event) VALUES ($1, $2, $3::text::json)").map_err(pg(action))?;
    for (record, events) in &writes.runs {
        let text = json_text(|| format!("the record of run `{}`", record.id), record)?;
        tx.execute(
            "INSERT INTO runs (id, blueprint, status, record) VALUES ($1, $2, $3, $4::text::json)",
            &[&record.id, &record.blueprint, &record.status.as_str(), &text],
        )
        .map_err(pg(action))?;
        for one in events {
            let seq = i64::try_from(one.seq).map_err(|_| Error::InvalidValue {
                what: format!("event {} of run `{}`", one.seq, record.id),
                message: "PostgreSQL stores event numbers up to 2^63 - 1".to_owned(),
            })?;
            let text = json_text(|| format!("event {} of run `{}`", one.seq, record.id), one)?;
            tx.execute(&event, &[&record.id, &seq, &text]).map_err(pg(action))?;
        }
    }
    for (blueprint, name, value) in &writes.saved {
        let text = json_text(|| "an imported value".to_owned(), value)?;
        tx.execute(
            "INSERT INTO saved (blueprint, name, value) VALUES ($1, $2, $3::text::json)",
            &[blueprint, name, &text],
        )
        .map_err(pg(action))?;
    }
    for (name, config) in &writes.servers {
        let text = json_text(|| "an imported value".to_owned(), config)?;
        tx.execute("INSERT INTO servers (name, config) VALUES ($1, $2::text::json)", &[name, &text])
            .map_err(pg(action))?;
    }
    for consent in &writes.consents {
        let text = json_text(|| "a consent".to_owned(), consent)?;
        tx.execute("INSERT INTO consents (hash, consent) VALUES ($1, $2::text::json)", &[&consent.hash, &text])
            .map_err(pg(action))?;
    }
    for (blueprint, state) in &writes.schedules {
        let text = json_text(|| "an imported value".to_owned(), state)?;
        tx.execute("INSERT INTO schedules (blueprint, state) VALUES ($1, $2::text::json)", &[blueprint, &text])
            .map_err(pg(action))?;
    }
    tx.commit().map_err(pg(action))
}
