//! The schema version in the `meta` tree and the migrations between versions. A new
//! store gets [`SCHEMA_VERSION`]; an older one is migrated step by step on open; a newer
//! one is refused before anything is written to it.

use crate::codec::{decode, encode};
use crate::error::{Error, Result};
use crate::keys::META;
use sled::{Db, Tree};
use std::path::Path;

/// The store format this mcpflow writes and reads.
///
/// - 1: the first format.
/// - 2: a run record may be `waiting` (a question to a person is open), and its events
///   `StepWaiting` / `StepAnswered`. An mcpflow of version 1 cannot read those, so it must
///   refuse such a store (it does: a newer version) rather than misread it.
pub const SCHEMA_VERSION: u32 = 2;

const VERSION_KEY: &[u8] = b"schema_version";

/// Checks the recorded version, migrates an older store and records the current version.
/// Returns the version migrated from, if any.
pub(crate) fn prepare(db: &Db, meta: &Tree, path: &Path) -> Result<Option<u32>> {
    let found = match meta.get(VERSION_KEY).map_err(Error::db("reading the schema version"))? {
        Some(bytes) => Some(decode::<u32>(META, VERSION_KEY, &bytes)?),
        None => None,
    };
    let migrated_from = match found {
        Some(found) if found == SCHEMA_VERSION => return Ok(None),
        Some(found) if found > SCHEMA_VERSION => {
            return Err(Error::NewerSchema { path: path.to_owned(), found, supported: SCHEMA_VERSION });
        }
        Some(found) => {
            migrate(found, db).map_err(|found| Error::UnknownSchema { path: path.to_owned(), found })?;
            tracing::info!(from = found, to = SCHEMA_VERSION, "migrated the store");
            Some(found)
        }
        // A new store: the version is the first thing written to it.
        None => None,
    };
    meta.insert(VERSION_KEY, encode("the schema version", &SCHEMA_VERSION)?)
        .map_err(Error::db("writing the schema version"))?;
    Ok(migrated_from)
}

/// Brings a store of version `from` to [`SCHEMA_VERSION`], one version at a time. Fails
/// with the version that has no migration.
pub(crate) fn migrate(from: u32, db: &Db) -> Result<(), u32> {
    (from..SCHEMA_VERSION).try_for_each(|version| step(version, db))
}

/// Migrates from `version` to `version + 1`. A step that rewrites keys or values does it
/// tree by tree (and bumps `keys::VERSION` if the key layout changes).
fn step(version: u32, _db: &Db) -> Result<(), u32> {
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
        let db = sled::Config::new().temporary(true).open().unwrap();
        assert_eq!(migrate(SCHEMA_VERSION, &db), Ok(()));
        assert_eq!(migrate(0, &db), Err(0));
    }

    #[test]
    fn version_1_migrates_to_the_current_version() {
        let db = sled::Config::new().temporary(true).open().unwrap();
        assert_eq!(SCHEMA_VERSION, 2);
        assert_eq!(migrate(1, &db), Ok(()));
    }
}
