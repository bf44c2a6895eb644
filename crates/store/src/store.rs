//! The [`Store`] handle: opening the sled folder (lock, schema, interrupted runs) and the
//! durability barrier. What lives in each tree is in `blueprints.rs`, `runs.rs`,
//! `saved.rs`, `servers.rs`, `consents.rs`, `schedules.rs` and `backup.rs`.

use crate::error::{Error, Result};
use crate::keys;
use crate::schema;
use crate::unreadable::Unreadable;
use sled::{Db, Tree};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// mcpflow's persistence: one sled database with a tree per kind of thing. Cheap to
/// clone; every clone is the same store. Dropping the last clone flushes to disk.
#[derive(Clone)]
pub struct Store {
    pub(crate) db: Db,
    pub(crate) blueprints: Tree,
    pub(crate) revisions: Tree,
    pub(crate) runs: Tree,
    pub(crate) run_index: Tree,
    pub(crate) events: Tree,
    pub(crate) saved: Tree,
    pub(crate) servers: Tree,
    pub(crate) consents: Tree,
    pub(crate) schedules: Tree,
    path: Arc<PathBuf>,
}

/// What [`Store::open`] found.
#[derive(Debug)]
pub struct Opened {
    pub store: Store,
    /// Runs that were left `running` by a process that died; they are now `interrupted`.
    pub interrupted: Vec<String>,
    /// Runs left waiting for a person (a question open at the end of their events) by a
    /// process that stopped or died; they are `waiting`, and answering one resumes it.
    pub waiting: Vec<String>,
    /// Runs whose record or events cannot be read (damaged, or nested deeper than
    /// [`crate::MAX_RECORD_DEPTH`]): left as they are, each with the command that
    /// removes it.
    pub unreadable: Vec<Unreadable>,
    /// The schema version the store was migrated from, if it was older.
    pub migrated_from: Option<u32>,
}

impl Store {
    /// Opens (creating it if needed) the store in `dir`: takes sled's lock on the folder,
    /// checks and migrates the schema version, marks runs left `running` as
    /// `interrupted` — or `waiting` when their events end with an open question — (their
    /// events stay), and flushes.
    #[tracing::instrument(skip_all, fields(dir = %dir.display()), err)]
    pub fn open(dir: &Path) -> Result<Opened> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Folder { path: dir.to_owned(), source })?;
        let db = open_db(dir)?;
        user_only(dir).map_err(|source| Error::Folder { path: dir.to_owned(), source })?;
        let (store, migrated_from) = Store::on(db, dir.to_owned())?;
        let crate::runs::Swept { interrupted, waiting, unreadable } = store.interrupt_running()?;
        for unreadable in &unreadable {
            tracing::warn!(%unreadable, "a recorded run cannot be read; the store opened without it");
        }
        if !interrupted.is_empty() {
            tracing::warn!(runs = ?interrupted, "runs left running by an earlier process are now interrupted");
        }
        if !waiting.is_empty() {
            tracing::info!(runs = ?waiting, "runs an earlier process left waiting for a person still wait");
        }
        store.sync()?;
        Ok(Opened { store, interrupted, waiting, unreadable, migrated_from })
    }

    /// A store in memory (sled's temporary mode), removed when the last clone is dropped.
    /// For tests of the crates above.
    pub fn open_temporary() -> Result<Store> {
        let path = PathBuf::from("(temporary store)");
        let db =
            sled::Config::new().temporary(true).open().map_err(|source| Error::Open { path: path.clone(), source })?;
        Ok(Store::on(db, path)?.0)
    }

    fn on(db: Db, path: PathBuf) -> Result<(Store, Option<u32>)> {
        let tree = |name: &'static str| db.open_tree(name).map_err(Error::db("opening a tree"));
        // The version is checked before any other tree is created in the folder.
        let migrated_from = schema::prepare(&db, &tree(keys::META)?, &path)?;
        crate::logins::drop_retired(&db)?;
        let store = Store {
            blueprints: tree(keys::BLUEPRINTS)?,
            revisions: tree(keys::REVISIONS)?,
            runs: tree(keys::RUNS)?,
            run_index: tree(keys::RUN_INDEX)?,
            events: tree(keys::EVENTS)?,
            saved: tree(keys::SAVED)?,
            servers: tree(keys::SERVERS)?,
            consents: tree(keys::CONSENTS)?,
            schedules: tree(keys::SCHEDULES)?,
            path: Arc::new(path),
            db,
        };
        Ok((store, migrated_from))
    }

    /// The folder this store lives in (`(temporary store)` for [`Store::open_temporary`]).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes everything recorded so far to disk (a durability barrier). sled also
    /// flushes in the background every 500 ms.
    pub fn sync(&self) -> Result<()> {
        self.db.flush().map_err(Error::db("flushing to disk"))?;
        Ok(())
    }
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

/// How long [`Store::open`] waits for a held lock before it reports [`Error::Locked`].
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

/// `Tree`'s own `Debug` walks every page; this prints only where the store is.
impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish_non_exhaustive()
    }
}

/// The engine calls this after a step finished and before the next call starts, so a
/// finished step is on disk before any step that depends on it runs.
impl mcpflow_engine::Journal for Store {
    fn sync(&self) {
        if let Err(error) = Store::sync(self) {
            tracing::error!(%error, "could not flush the run record");
        }
    }
}
