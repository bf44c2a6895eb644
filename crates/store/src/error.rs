//! The store's one error type. Every variant has a stable code ([`Error::code`]) and a
//! message that says what went wrong, where, and what to do.

use crate::Unreadable;
use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why the store could not be opened, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An operation only a store in PostgreSQL has (the run queue of `mcpflow worker`).
    #[error("{what} needs the store in a PostgreSQL database (--db URL or MCPFLOW_DB); the store at {} is a folder", path.display())]
    NeedsDatabase { what: &'static str, path: PathBuf },

    /// The data folder could not be created or read.
    #[error("cannot use the store folder {}: {source}; check its permissions or set MCPFLOW_HOME", path.display())]
    Folder { path: PathBuf, source: std::io::Error },

    /// Another `Store` (in this process or another one) has the folder open.
    #[error("the store at {} is locked by another mcpflow process; close it or set MCPFLOW_HOME", path.display())]
    Locked { path: PathBuf },

    /// sled refused to open the folder for another reason (damaged files, I/O).
    #[error("cannot open the store at {}: {source}; restore a backup or set MCPFLOW_HOME", path.display())]
    Open { path: PathBuf, source: sled::Error },

    /// The PostgreSQL URL is not one, or the database cannot be reached or refused us.
    #[error(
        "cannot connect to the store's database at {url}: {source}; check that PostgreSQL runs there and that the \
         URL (--db or MCPFLOW_DB) names the right host, database, user and password"
    )]
    Connect { url: String, source: postgres::Error },

    /// Another process holds the store's lock in that database: one that owns the store
    /// (when sharing it), or workers sharing it (when owning it).
    #[error(
        "the store in the database at {url} is in use by another mcpflow process (it holds the store's lock: a \
         process owning the store, or `mcpflow worker`s sharing it); stop it, or point --db at another database"
    )]
    DatabaseLocked { url: String },

    /// The database's tables were migrated by a later mcpflow.
    #[error(
        "the store's database at {url} was migrated by a newer mcpflow (SQL migration {found}; this mcpflow knows up \
         to {supported}); upgrade mcpflow or point --db at another database"
    )]
    NewerDatabase { url: String, found: i64, supported: i64 },

    /// A statement failed in PostgreSQL (or the connection broke).
    #[error("the store's database failed while {action}: {source}; check that PostgreSQL is up and reachable")]
    Postgres { action: &'static str, source: postgres::Error },

    /// The thread that holds the database connection could not start, or has stopped.
    #[error("the store's database connection is gone while {action}: {detail}; restart mcpflow")]
    ConnectionGone { action: &'static str, detail: String },

    /// The store was written by a later mcpflow whose format this one cannot read.
    #[error(
        "the store at {} was made by a newer mcpflow (schema version {found}; this mcpflow reads up to \
         {supported}); upgrade mcpflow or set MCPFLOW_HOME to use another folder",
        path.display()
    )]
    NewerSchema { path: PathBuf, found: u32, supported: u32 },

    /// The recorded schema version is one no mcpflow ever wrote.
    #[error(
        "the store at {} records schema version {found}, which no mcpflow ever wrote; the `meta` tree is damaged \
         — restore a backup or set MCPFLOW_HOME",
        path.display()
    )]
    UnknownSchema { path: PathBuf, found: u32 },

    /// A read or write failed inside sled.
    #[error("the store failed while {action}: {source}; check the disk, or restore a backup if it persists")]
    Db { action: &'static str, source: sled::Error },

    /// A stored value (or key) is not what this mcpflow wrote there.
    #[error(
        "the store's `{tree}` tree holds a damaged entry at key {key}: {message}; delete that entry or restore a \
         backup"
    )]
    Corrupt { tree: &'static str, key: String, message: String },

    /// An id or name that cannot be a key (empty, or containing a NUL byte).
    #[error("{what} {value:?} cannot be stored: {reason}")]
    InvalidKey { what: &'static str, value: String, reason: &'static str },

    /// A value of the wrong shape was handed to the store.
    #[error("{what} cannot be stored: {message}")]
    InvalidValue { what: String, message: String },

    /// An event or a finish for a run that `begin_run` never recorded.
    #[error("no run `{id}` in the store; record it with begin_run first")]
    RunNotFound { id: String },

    /// `begin_run` for an id that is already recorded.
    #[error("run `{id}` is already recorded; every run needs a fresh id")]
    RunExists { id: String },

    /// A run's record or one of its events cannot be read back (see [`Unreadable`]).
    #[error("{0}")]
    Unreadable(Box<Unreadable>),

    /// A blueprint has been saved more revisions than a `u32` counts.
    #[error("blueprint `{id}` has reached the last revision number; export it and save it under a new id")]
    RevisionsExhausted { id: String },

    /// A value could not be turned into JSON.
    #[error("cannot encode {what} as JSON: {message}")]
    Encode { what: String, message: String },

    /// A value nested deeper than the store reads back ([`crate::MAX_RECORD_DEPTH`]);
    /// nothing was written.
    #[error(
        "{what} was not recorded: it nests {depth} levels deep, and the store reads back at most {limit}; lower \
         the blueprint's `limits.max_value_depth` or flatten the value"
    )]
    TooDeep { what: String, depth: usize, limit: usize },

    /// The import document is not an mcpflow store export; nothing was written.
    #[error("the import document is malformed at {}: {message}; nothing was imported", pointer_text(pointer))]
    ImportInvalid {
        /// JSON pointer of the offending member (empty for the whole document).
        pointer: String,
        message: String,
    },
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Folder { .. } => "STORE_FOLDER",
            Error::Locked { .. } => "STORE_LOCKED",
            Error::Open { .. } => "STORE_OPEN_FAILED",
            Error::NewerSchema { .. } => "STORE_NEWER_SCHEMA",
            Error::UnknownSchema { .. } => "STORE_UNKNOWN_SCHEMA",
            Error::Db { .. } | Error::Postgres { .. } | Error::ConnectionGone { .. } => "STORE_IO",
            Error::Connect { .. } => "STORE_CONNECT",
            Error::DatabaseLocked { .. } => "STORE_LOCKED",
            Error::NeedsDatabase { .. } => "STORE_NEEDS_DATABASE",
            Error::NewerDatabase { .. } => "STORE_NEWER_SCHEMA",
            Error::Corrupt { .. } => "STORE_CORRUPT",
            Error::InvalidKey { .. } => "STORE_INVALID_KEY",
            Error::InvalidValue { .. } => "STORE_INVALID_VALUE",
            Error::RunNotFound { .. } => "RUN_NOT_FOUND",
            Error::RunExists { .. } => "RUN_EXISTS",
            Error::Unreadable(_) => "RUN_UNREADABLE",
            Error::RevisionsExhausted { .. } => "REVISIONS_EXHAUSTED",
            Error::Encode { .. } => "STORE_ENCODE",
            Error::TooDeep { .. } => "STORE_VALUE_TOO_DEEP",
            Error::ImportInvalid { .. } => "IMPORT_INVALID",
        }
    }

    /// A closure for `map_err` on PostgreSQL calls.
    pub(crate) fn pg(action: &'static str) -> impl FnOnce(postgres::Error) -> Error {
        move |source| Error::Postgres { action, source }
    }

    /// A closure for `map_err` on sled calls.
    pub(crate) fn db(action: &'static str) -> impl FnOnce(sled::Error) -> Error {
        move |source| Error::Db { action, source }
    }
}

fn pointer_text(pointer: &str) -> String {
    if pointer.is_empty() { "the document root".to_owned() } else { format!("`{pointer}`") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locked_names_the_folder_and_the_way_out() {
        let e = Error::Locked { path: PathBuf::from("/x") };
        assert_eq!(e.code(), "STORE_LOCKED");
        assert_eq!(e.to_string(), "the store at /x is locked by another mcpflow process; close it or set MCPFLOW_HOME");
    }

    #[test]
    fn import_errors_name_the_pointer_or_the_root() {
        let at = Error::ImportInvalid { pointer: "/runs/0/record".into(), message: "missing field `id`".into() };
        assert!(at.to_string().contains("at `/runs/0/record`: missing field `id`"), "{at}");
        let root = Error::ImportInvalid { pointer: String::new(), message: "not an object".into() };
        assert!(root.to_string().contains("at the document root"), "{root}");
    }
}
