//! The schema version of the data (the records' format, the same for both backends) and
//! the migrations between versions. A new store gets [`SCHEMA_VERSION`]; an older one is
//! migrated step by step on open; a newer one is refused before anything is written to
//! it. sled keeps the version in its `meta` tree; PostgreSQL in its `mcpflow_meta` table
//! (its SQL schema has migrations of its own: `postgres/migrations.rs`).

use crate::codec::{decode, encode};
use crate::error::{Error, Result};
use crate::keys::META;
use sled::Tree;
use std::path::Path;

/// The store format this mcpflow writes and reads.
///
/// - 1: the first format.
/// - 2: a run record may be `waiting` (a question to a person is open), and its events
///   `StepWaiting` / `StepAnswered`. An mcpflow of version 1 cannot read those, so it must
///   refuse such a store (it does: a newer version) rather than misread it.
pub const SCHEMA_VERSION: u32 = 2;

pub(crate) const VERSION_KEY: &[u8] = b"schema_version";

/// Checks the sled store's recorded version, migrates an older store and records the
/// current version. Returns the version migrated from, if any.
pub(crate) fn prepare(meta: &Tree, path: &Path) -> Result<Option<u32>> {
    let found = match meta.get(VERSION_KEY).map_err(Error::db("reading the schema version"))? {
        Some(bytes) => Some(decode::<u32>(META, VERSION_KEY, &bytes)?),
        None => None,
    };
    let Some(migrated_from) = reconcile(found, path)? else { return Ok(None) };
    meta.insert(VERSION_KEY, encode("the schema version", &SCHEMA_VERSION)?)
        .map_err(Error::db("writing the schema version"))?;
    Ok(migrated_from)
}

/// What a store recording version `found` (none: a new store) needs: `None` when it is
/// current; `Some(from)` when the current version must be written after migrating from
/// `from` (`Some(None)`: a new store). A newer or unknown version is an error.
pub(crate) fn reconcile(found: Option<u32>, path: &Path) -> Result<Option<Option<u32>>> {
    match found {
        Some(found) if found == SCHEMA_VERSION => Ok(None),
        Some(found) if found > SCHEMA_VERSION => {
            Err(Error::NewerSchema { path: path.to_owned(), found, supported: SCHEMA_VERSION })
        }
        Some(found) => {
            migrate(found).map_err(|found| Error::UnknownSchema { path: path.to_owned(), found })?;
            tracing::info!(from = found, to = SCHEMA_VERSION, "migrated the store");
            Ok(Some(Some(found)))
        }
        // A new store: the version is the first thing written to it.
        None => Ok(Some(None)),
    }
}

/// Brings a store of version `from` to [`SCHEMA_VERSION`], one version at a time. Fails
/// with the version that has no migration.
pub(crate) fn migrate(from: u32) -> Result<(), u32> {
    (from..SCHEMA_VERSION).try_for_each(step)
}

/// Migrates from `version` to `version + 1`. A step that rewrites keys or values will
/// need the backend (and, for sled, to bump `keys::VERSION` if the key layout changes).
fn step(version: u32) -> Result<(), u32> {
    match version {
        // Version 2 only adds values (the `waiting` status, two event kinds): every record
        // and event of version 1 reads as it is, so nothing is rewritten.
        1 => Ok(()),
        _ => Err(version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_current_store_needs_no_migration_and_version_zero_has_none() {
        assert_eq!(migrate(SCHEMA_VERSION), Ok(()));
        assert_eq!(migrate(0), Err(0));
    }

    #[test]
    fn version_1_migrates_to_the_current_version() {
        assert_eq!(SCHEMA_VERSION, 2);
        assert_eq!(migrate(1), Ok(()));
    }

    #[test]
    fn a_newer_version_is_refused_and_a_new_store_is_written() {
        let path = Path::new("/x");
        assert_eq!(reconcile(Some(SCHEMA_VERSION + 1), path).unwrap_err().code(), "STORE_NEWER_SCHEMA");
        assert_eq!(reconcile(None, path).unwrap(), Some(None));
        assert_eq!(reconcile(Some(1), path).unwrap(), Some(Some(1)));
        assert_eq!(reconcile(Some(SCHEMA_VERSION), path).unwrap(), None);
    }
}
