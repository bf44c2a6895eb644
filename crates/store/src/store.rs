//! The [`Store`] handle: opening a sled folder ([`Store::open`]) or connecting to a
//! PostgreSQL database ([`Store::connect`]), the sweep both do on open (runs left
//! running), and the durability barrier. The operations are in `blueprints.rs`,
//! `runs.rs`, `saved.rs`, `servers.rs`, `consents.rs`, `schedules.rs` and `backup.rs`;
//! each backend implements them in `sled/` and `postgres/`.

use crate::backend::Backend;
use crate::error::Result;
use crate::postgres::{Mode, Postgres};
use crate::sled::Sled;
use crate::unreadable::Unreadable;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// mcpflow's persistence: a sled folder (the default) or a PostgreSQL database, behind
/// one API. Cheap to clone; every clone is the same store. Dropping the last clone
/// flushes sled to disk, or closes the database connection.
#[derive(Clone)]
pub struct Store {
    pub(crate) backend: Arc<dyn Backend>,
    path: Arc<PathBuf>,
}

/// What [`Store::open`] (or [`Store::connect`]) found.
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
    /// Opens (creating it if needed) the sled store in `dir`: takes sled's lock on the
    /// folder, checks and migrates the schema version, marks runs left `running` as
    /// `interrupted` — or `waiting` when their events end with an open question — (their
    /// events stay), and flushes.
    #[tracing::instrument(skip_all, fields(dir = %dir.display()), err)]
    pub fn open(dir: &Path) -> Result<Opened> {
        let (sled, migrated_from) = Sled::open(dir)?;
        Store::opened(Arc::new(sled), dir.to_owned(), migrated_from)
    }

    /// Connects to the store in the PostgreSQL database at `url` (`postgresql://…` or
    /// libpq's `key=value` form): takes the store's lock in that database (one process
    /// owns a store, as with a folder), applies the SQL migrations it lacks, then checks
    /// the schema version and sweeps runs left running as [`Store::open`] does. The URL's
    /// password never appears in [`Store::path`] or in messages.
    #[tracing::instrument(skip_all, err)]
    pub fn connect(url: &str) -> Result<Opened> {
        let (postgres, migrated_from) = Postgres::connect(url, Mode::Owner)?;
        let shown = PathBuf::from(postgres.shown());
        Store::opened(Arc::new(postgres), shown, migrated_from)
    }

    /// Connects to the store in the PostgreSQL database at `url` to share it with other
    /// processes ([`Mode::Shared`]): `mcpflow worker` and `mcpflow run --db URL` (which
    /// queues). No sweep at open — other processes' runs are theirs, and a run whose
    /// worker died is the reaper's ([`Store::reap`]). Refused (`STORE_LOCKED`) while a
    /// process owns the store ([`Store::connect`]), and the other way round.
    #[tracing::instrument(skip_all, err)]
    pub fn connect_shared(url: &str) -> Result<Opened> {
        let (postgres, migrated_from) = Postgres::connect(url, Mode::Shared)?;
        let store = Store { path: Arc::new(PathBuf::from(postgres.shown())), backend: Arc::new(postgres) };
        Ok(Opened { store, interrupted: Vec::new(), waiting: Vec::new(), unreadable: Vec::new(), migrated_from })
    }

    /// A store in memory (sled's temporary mode), removed when the last clone is dropped.
    /// For tests of the crates above.
    pub fn open_temporary() -> Result<Store> {
        let path = PathBuf::from("(temporary store)");
        let sled = Sled::temporary(&path)?;
        Ok(Store { backend: Arc::new(sled), path: Arc::new(path) })
    }

    fn opened(backend: Arc<dyn Backend>, path: PathBuf, migrated_from: Option<u32>) -> Result<Opened> {
        let store = Store { backend, path: Arc::new(path) };
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

    /// Where this store lives: the folder, `(temporary store)`, or the database's URL
    /// without its password (`postgresql://user@host:port/db`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes everything recorded so far to disk (a durability barrier). sled also
    /// flushes in the background every 500 ms; PostgreSQL commits every write.
    pub fn sync(&self) -> Result<()> {
        self.backend.sync()
    }
}

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
