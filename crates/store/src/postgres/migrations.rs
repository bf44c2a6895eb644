//! Opening a store in PostgreSQL: the connection, the store's lock, the SQL migrations
//! (`crates/store/migrations/NNNN_name.sql`, applied in order, each once, recorded in
//! `mcpflow_migrations`) and the data's schema version (`schema.rs`, in `mcpflow_meta`).
//!
//! A migration is never edited once released: a change is the next file, added to
//! [`MIGRATIONS`]. A database migrated further than this mcpflow knows is refused
//! before anything is written to it.

use super::{Mode, col};
use crate::codec::decode;
use crate::error::{Error, Result};
use crate::schema::{self, SCHEMA_VERSION, VERSION_KEY};
use postgres::{Client, NoTls};
use std::path::Path;
use std::time::{Duration, Instant};

/// The SQL migrations, in order: (version, name, SQL).
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "tables", include_str!("../../migrations/0001_tables.sql")),
    (2, "listings", include_str!("../../migrations/0002_listings.sql")),
    (3, "queue", include_str!("../../migrations/0003_queue.sql")),
    (4, "schedule fires", include_str!("../../migrations/0004_schedule_fires.sql")),
];

/// The advisory lock on the store ("mcpflow" and 1, as a number): the process owning the
/// store holds it exclusively, each process sharing it (workers) holds it shared, for as
/// long as it is connected — so an owner and sharers never meet.
const OWNER_LOCK: i64 = 0x6d63_7066_6c6f_7701;
/// The advisory lock migrations run under, so two processes never migrate at once.
const MIGRATION_LOCK: i64 = 0x6d63_7066_6c6f_7702;
/// The advisory lock of the one worker that fires the schedules (`postgres/queue.rs`).
pub(super) const SCHEDULER_LOCK: i64 = 0x6d63_7066_6c6f_7703;

/// How long opening waits for the store's lock: a process that just closed the store
/// may not have been seen gone by the server yet.
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// Connects, takes the store's lock (exclusive or shared, by `mode`) and migrates. `url`
/// is the URL to show.
pub(super) fn open(config: &postgres::Config, url: &str, mode: Mode) -> Result<(Client, Option<u32>)> {
    let mut client = config.connect(NoTls).map_err(|source| Error::Connect { url: url.to_owned(), source })?;
    take_lock(&mut client, url, mode)?;
    let migrated_from = migrate(&mut client, url)?;
    Ok((client, migrated_from))
}

fn take_lock(client: &mut Client, url: &str, mode: Mode) -> Result<()> {
    let action = "taking the store's lock";
    let statement = match mode {
        Mode::Owner => "SELECT pg_try_advisory_lock($1)",
        Mode::Shared => "SELECT pg_try_advisory_lock_shared($1)",
    };
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        let row = client.query_one(statement, &[&OWNER_LOCK]).map_err(Error::pg(action))?;
        if col::<bool>(&row, 0, action)? {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::DatabaseLocked { url: url.to_owned() });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Applies the migrations the database lacks and reconciles the data's schema version,
/// in one transaction. Returns the data's version migrated from, if it was older.
fn migrate(client: &mut Client, url: &str) -> Result<Option<u32>> {
    let action = "migrating the store's tables";
    let pg = Error::pg;
    let mut tx = client.transaction().map_err(pg(action))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(pg(action))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS mcpflow_migrations (
            version    bigint PRIMARY KEY,
            name       text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .map_err(pg(action))?;
    let row = tx.query_one("SELECT coalesce(max(version), 0) FROM mcpflow_migrations", &[]).map_err(pg(action))?;
    let applied: i64 = col(&row, 0, action)?;
    let known = MIGRATIONS.last().map_or(0, |(version, _, _)| *version);
    if applied > known {
        return Err(Error::NewerDatabase { url: url.to_owned(), found: applied, supported: known });
    }
    for (version, name, sql) in MIGRATIONS.iter().filter(|(version, _, _)| *version > applied) {
        tx.batch_execute(sql).map_err(pg(action))?;
        tx.execute("INSERT INTO mcpflow_migrations (version, name) VALUES ($1, $2)", &[version, name])
            .map_err(pg(action))?;
        tracing::info!(version, name, "applied a migration to the store's database");
    }
    let action = "checking the schema version";
    let row =
        tx.query_opt("SELECT value::text FROM mcpflow_meta WHERE key = 'schema_version'", &[]).map_err(pg(action))?;
    let found = match row {
        Some(row) => Some(decode::<u32>("mcpflow_meta", VERSION_KEY, col::<String>(&row, 0, action)?.as_bytes())?),
        None => None,
    };
    let migrated_from = match schema::reconcile(found, Path::new(url))? {
        None => None,
        Some(from) => {
            tx.execute(
                "INSERT INTO mcpflow_meta (key, value) VALUES ('schema_version', $1::text::json)
                 ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                &[&SCHEMA_VERSION.to_string()],
            )
            .map_err(pg(action))?;
            from
        }
    };
    tx.commit().map_err(pg(action))?;
    Ok(migrated_from)
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    #[test]
    fn migrations_are_numbered_from_1_without_gaps() {
        let versions: Vec<i64> = MIGRATIONS.iter().map(|(version, _, _)| *version).collect();
        assert_eq!(versions, (1..=MIGRATIONS.len() as i64).collect::<Vec<_>>());
    }
}
