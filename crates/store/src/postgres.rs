//! The PostgreSQL backend: the store's data in tables of one database (the SQL is in
//! `crates/store/migrations/`, applied at open by `postgres/migrations.rs`), either owned
//! by one process at a time, as a sled folder is (`pg_try_advisory_lock`, held by the
//! store's connection for as long as it is open), or shared by `mcpflow worker`s and the
//! processes that queue runs for them (the same lock, taken shared: see [`Mode`]). Each
//! concern's operations are in `postgres/`; the run queue is `postgres/queue.rs`.
//!
//! ## Why the connection has a thread of its own
//!
//! [`crate::Store`]'s API is synchronous, as sled is, and it is called from plain
//! threads and from inside tokio tasks alike — the multi-threaded runtime of `serve` and
//! the studio, and the current-thread runtime `mcpflow run` drives the engine on.
//! tokio-postgres is asynchronous, and there is no sound way to wait for one of its
//! futures from a synchronous call inside a runtime: `Runtime::block_on` and
//! `Handle::block_on` panic there, `block_in_place` panics on a current-thread runtime,
//! and the `postgres` crate's blocking client is a `block_on` on a runtime of its own, so
//! it panics there too.
//!
//! So the store owns a thread, started when it connects and ended when its last clone is
//! dropped, that holds the one connection (the `postgres` crate's client — tokio-postgres
//! on a current-thread runtime that only this thread enters). An operation is a closure
//! sent to that thread over a channel; the caller waits for its answer on a
//! `std::sync::mpsc` channel, which blocks the calling thread like sled's disk I/O does
//! and never touches the caller's runtime. The thread needs nothing from any caller's
//! runtime, so a caller on a current-thread runtime cannot deadlock it, and no runtime is
//! ever entered from inside another. Operations run one at a time, in the order they
//! were sent, each in its own transaction where it writes more than one row; every
//! write is committed (durable) when it returns, so [`crate::Store::sync`] has nothing
//! to do.
//!
//! Not built yet: TLS (the URL must reach PostgreSQL over loopback, a Unix socket or a
//! network the operator trusts), reconnecting after the connection breaks (each call
//! then fails `STORE_IO` until mcpflow restarts).

mod blueprints;
mod import;
mod migrations;
mod queue;
mod runs;
mod values;

use crate::backend::Backend;
use crate::backup::Writes;
use crate::codec::encode_named;
use crate::error::{Error, Result};
use postgres::Client;
use postgres::config::Host;
use postgres::types::FromSql;
use serde::Serialize;
use std::fmt;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// How a process holds a store in PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One process owns the store, as with a folder: the commands of one person (`list`,
    /// `runs`, `show`, `export`, `import`, `run --store`). It takes the store's lock
    /// exclusively and sweeps the runs an earlier process left running.
    Owner,
    /// Several processes share the store: `mcpflow worker` and `mcpflow run --db URL`
    /// (which queues a run for them). Each takes the store's lock shared and sweeps
    /// nothing; runs whose worker died are the reaper's.
    Shared,
}

/// An operation run on the connection's thread.
type Job = Box<dyn FnOnce(&mut Client) + Send>;

/// The handle of a store in PostgreSQL: the queue to its connection's thread.
pub(crate) struct Postgres {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
    shown: String,
    /// Where to connect again (a listener's connection of its own).
    config: postgres::Config,
}

impl Postgres {
    /// Connects to `url`, takes the store's lock there (exclusive or shared, by `mode`)
    /// and migrates its tables and data. Returns the data's schema version migrated
    /// from, if it was older.
    pub(crate) fn connect(url: &str, mode: Mode) -> Result<(Postgres, Option<u32>)> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|source| Error::Connect { url: "(the URL given, which is not one)".to_owned(), source })?;
        if config.get_application_name().is_none() {
            config.application_name("mcpflow");
        }
        let shown = shown(&config);
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ready, opened) = mpsc::sync_channel(1);
        let at = shown.clone();
        let own = config.clone();
        let thread = std::thread::Builder::new()
            .name("mcpflow-store-postgres".to_owned())
            .spawn(move || {
                let mut client = match migrations::open(&own, &at, mode) {
                    Ok((client, migrated_from)) => {
                        let _ = ready.send(Ok(migrated_from));
                        client
                    }
                    Err(error) => {
                        let _ = ready.send(Err(error));
                        return;
                    }
                };
                while let Ok(job) = queue.recv() {
                    job(&mut client);
                }
            })
            .map_err(|e| Error::ConnectionGone {
                action: "connecting",
                detail: format!("its thread cannot start: {e}"),
            })?;
        let migrated_from = match opened.recv() {
            Ok(answer) => answer,
            Err(_) => Err(gone("connecting")),
        };
        let store = Postgres { jobs: Some(jobs), thread: Some(thread), shown, config };
        Ok((store, migrated_from?))
    }

    /// The database's URL without its password.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `job` on the connection's thread and waits for its answer.
    fn call<T: Send + 'static>(
        &self,
        action: &'static str,
        job: impl FnOnce(&mut Client) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (answer, answered) = mpsc::sync_channel(1);
        let jobs = self.jobs.as_ref().ok_or_else(|| gone(action))?;
        jobs.send(Box::new(move |client: &mut Client| {
            let _ = answer.send(job(client));
        }))
        .map_err(|_| gone(action))?;
        answered.recv().map_err(|_| gone(action))?
    }
}

impl Backend for Postgres {
    /// Every write was committed when it returned.
    fn sync(&self) -> Result<()> {
        Ok(())
    }

    fn apply_import(&self, writes: Writes) -> Result<()> {
        self.call("importing", move |client| import::apply(client, &writes))
    }

    fn queue(&self) -> Option<&dyn crate::queue::Queue> {
        Some(self)
    }
}

/// The last clone of the store closes the connection (which releases the store's lock)
/// before the drop returns, so the store can be opened again at once.
impl Drop for Postgres {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for Postgres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Postgres").field("at", &self.shown).finish_non_exhaustive()
    }
}

fn gone(action: &'static str) -> Error {
    Error::ConnectionGone { action, detail: "the thread holding the connection has stopped".to_owned() }
}

/// The URL to show for `config`: user, first host, port and database — never the
/// password. A Unix socket folder goes in `?host=`, as libpq reads it.
fn shown(config: &postgres::Config) -> String {
    let user = config.get_user().map(|user| format!("{user}@")).unwrap_or_default();
    let db = config.get_dbname().unwrap_or_default();
    let port = config.get_ports().first().copied();
    match config.get_hosts().first() {
        Some(Host::Tcp(host)) => {
            let port = port.map(|port| format!(":{port}")).unwrap_or_default();
            format!("postgresql://{user}{host}{port}/{db}")
        }
        #[cfg(unix)]
        Some(Host::Unix(folder)) => {
            let port = port.map(|port| format!("&port={port}")).unwrap_or_default();
            format!("postgresql://{user}/{db}?host={}{port}", folder.display())
        }
        None => format!("postgresql://{user}/{db}"),
    }
}

/// A value as the JSON text stored in a `json` column (with the store's depth limit).
pub(crate) fn json_text<T: Serialize + ?Sized>(what: impl Fn() -> String, value: &T) -> Result<String> {
    let bytes = encode_named(&what, value)?;
    String::from_utf8(bytes).map_err(|e| Error::Encode { what: what(), message: e.to_string() })
}

/// Column `index` of `row`.
pub(crate) fn col<'a, T: FromSql<'a>>(row: &'a postgres::Row, index: usize, action: &'static str) -> Result<T> {
    row.try_get(index).map_err(Error::pg(action))
}

#[cfg(test)]
mod tests {
    use super::shown;

    #[test]
    fn the_shown_url_keeps_where_and_drops_the_password() {
        let tcp: postgres::Config = "postgresql://ann:s3cret@db.example:6543/flows".parse().unwrap();
        assert_eq!(shown(&tcp), "postgresql://ann@db.example:6543/flows");
        let socket: postgres::Config = "host=/tmp/pg port=5433 user=ci password=pw dbname=t1".parse().unwrap();
        assert_eq!(shown(&socket), "postgresql://ci@/t1?host=/tmp/pg&port=5433");
    }
}
