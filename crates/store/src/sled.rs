//! The sled backend, the embedded default: one database folder with a tree per kind of
//! thing (`keys.rs` has the layout). Opening takes sled's lock on the folder, so one
//! process owns it. Each concern's operations are in `sled/`.

mod blueprints;
mod import;
mod runs;
mod values;

use crate::backend::Backend;
use crate::backup::Writes;
use crate::error::{Error, Result};
use crate::keys;
use crate::schema;
use sled::transaction::TransactionError;
use sled::{Db, Tree};
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

/// One sled database and its trees. Dropping it flushes to disk.
pub(crate) struct Sled {
    pub(crate) db: Db,
    pub(crate) blueprints: Tree,
    pub(crate) revisions: Tree,
    pub(crate) runs: Tree,
    pub(crate) run_index: Tree,
    pub(crate) events: Tree,
    pub(crate) saved: Tree,
    pub(crate) servers: Tree,
    pub(crate) listings: Tree,
    pub(crate) consents: Tree,
    pub(crate) schedules: Tree,
}

impl Sled {
    /// Opens (creating it if needed) the database in `dir`: takes sled's lock on the
    /// folder, makes it the user's alone, checks and migrates the schema version. Returns
    /// the version migrated from, if it was older.
    pub(crate) fn open(dir: &Path) -> Result<(Sled, Option<u32>)> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Folder { path: dir.to_owned(), source })?;
        let db = open_db(dir)?;
        user_only(dir).map_err(|source| Error::Folder { path: dir.to_owned(), source })?;
        Sled::on(db, dir)
    }

    /// A database in memory (sled's temporary mode), removed when dropped.
    pub(crate) fn temporary(path: &Path) -> Result<Sled> {
        let db = sled::Config::new()
            .temporary(true)
            .open()
            .map_err(|source| Error::Open { path: path.to_owned(), source })?;
        Ok(Sled::on(db, path)?.0)
    }

    fn on(db: Db, path: &Path) -> Result<(Sled, Option<u32>)> {
        let tree = |name: &'static str| db.open_tree(name).map_err(Error::db("opening a tree"));
        // The version is checked before any other tree is created in the folder.
        let migrated_from = schema::prepare(&tree(keys::META)?, path)?;
        drop_retired_logins(&db)?;
        let sled = Sled {
            blueprints: tree(keys::BLUEPRINTS)?,
            revisions: tree(keys::REVISIONS)?,
            runs: tree(keys::RUNS)?,
            run_index: tree(keys::RUN_INDEX)?,
            events: tree(keys::EVENTS)?,
            saved: tree(keys::SAVED)?,
            servers: tree(keys::SERVERS)?,
            listings: tree(keys::LISTINGS)?,
            consents: tree(keys::CONSENTS)?,
            schedules: tree(keys::SCHEDULES)?,
            db,
        };
        Ok((sled, migrated_from))
    }
}

impl Backend for Sled {
    /// sled also flushes in the background every 500 ms.
    fn sync(&self) -> Result<()> {
        self.db.flush().map_err(Error::db("flushing to disk"))?;
        Ok(())
    }

    fn apply_import(&self, writes: Writes) -> Result<()> {
        import::apply(self, writes)
    }
}

/// `Tree`'s own `Debug` walks every page.
impl fmt::Debug for Sled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sled").finish_non_exhaustive()
    }
}

/// Turns a transaction's failure into this crate's error.
pub(crate) fn tx_error(action: &'static str) -> impl FnOnce(TransactionError<Error>) -> Error {
    move |error| match error {
        TransactionError::Abort(error) => error,
        TransactionError::Storage(source) => Error::Db { action, source },
    }
}

/// The retired `logins` tree. Stores written before it was retired recorded there which
/// servers held an OAuth login (name, resource URL, when). Nothing read it, and the token
/// vault (`mcpflow_auth::Vault`, user-only, keyed by the canonical resource URL,
/// naming the server and when it signed in) answers that question by itself — and is
/// always right, where the record was written only by front doors holding a store and
/// went stale with every `mcpflow auth` run without `--store`. Opening a store drops the
/// tree, so no stale record of a login outlives it. (The PostgreSQL schema never had it.)
fn drop_retired_logins(db: &Db) -> Result<()> {
    db.drop_tree("logins").map_err(Error::db("dropping the retired `logins` tree"))?;
    Ok(())
}

/// Makes the store's folder the user's alone, whatever the umask it was made under:
/// itself and its folders 0700, sled's files 0600 (sled creates them with the umask's
/// modes). Files sled makes later land in the 0700 folder. Nothing to do off Unix.
fn user_only(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mut folders = vec![dir.to_owned()];
        while let Some(folder) = folders.pop() {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700))?;
            for entry in std::fs::read_dir(&folder)? {
                let entry = entry?;
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    folders.push(entry.path());
                } else if kind.is_file() {
                    std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o600))?;
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// How long [`Sled::open`] waits for a held lock before it reports [`Error::Locked`].
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// Opens sled in `dir`, waiting up to [`LOCK_WAIT`] for its lock: sled lets go of the
/// folder when its last background job ends, which can be a moment after the last
/// handle in this process was dropped (a store closed and reopened at once found it
/// locked now and then). Another process holding it still gets `Locked`, a second later.
fn open_db(dir: &Path) -> Result<Db> {
    let deadline = Instant::now() + LOCK_WAIT;
    let mut cleared = false;
    loop {
        match sled::Config::new().path(dir).open() {
            Ok(db) => return Ok(db),
            Err(sled::Error::Corruption { at: None, .. }) if !cleared && clear_torn_snapshots(dir) => cleared = true,
            Err(e) => match open_error(dir, e) {
                Error::Locked { .. } if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                other => return Err(other),
            },
        }
    }
}

/// Removes the `snap.*.generating` files of the store in `dir`; whether there were any.
///
/// sled 0.34 writes a snapshot to `snap.{lsn}.generating`, syncs it and renames it to
/// `snap.{lsn}`. A process killed in the middle leaves the `.generating` file torn, and
/// sled's next open takes it for the newest snapshot (it lists every `snap.` file) and
/// fails with a corruption "at file offset None" — the store could not be opened again
/// (spacejam/sled#1527; our crash test hit it once in 50 SIGKILLs). Such a file is never
/// the only copy of anything: the log holds every write and the last complete snapshot
/// stays. It is removed only after sled itself refused the folder for it, so no process
/// has the store open (none can while the file is there).
fn clear_torn_snapshots(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    let mut cleared = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") && std::fs::remove_file(entry.path()).is_ok() {
            tracing::warn!(file = %entry.path().display(), "removed a snapshot the last process left half-written");
            cleared = true;
        }
    }
    cleared
}

fn open_error(dir: &Path, source: sled::Error) -> Error {
    // sled reports a held lock as an I/O error with this text (config.rs, `try_lock`).
    match &source {
        sled::Error::Io(io) if io.to_string().contains("could not acquire lock") => {
            Error::Locked { path: dir.to_owned() }
        }
        _ => Error::Open { path: dir.to_owned(), source },
    }
}

#[cfg(test)]
mod tests {
    use super::Sled;

    #[test]
    fn opening_a_store_drops_the_retired_logins_tree() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            db.open_tree("logins").unwrap().insert(b"\x01gh", b"{\"resource\":\"https://h/mcp\"}".to_vec()).unwrap();
            db.flush().unwrap();
        }
        let (sled, _) = Sled::open(dir.path()).unwrap();
        let names: Vec<Vec<u8>> = sled.db.tree_names().into_iter().map(|n| n.to_vec()).collect();
        assert!(!names.contains(&b"logins".to_vec()), "the retired tree is still there");
        assert!(names.contains(&b"blueprints".to_vec()), "the store's own trees are there");
    }
}
