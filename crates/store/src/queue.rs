//! The run queue of `mcpflow worker` (issue 34; PostgreSQL only, a folder refuses it with
//! `STORE_NEEDS_DATABASE`): a run is queued (`queued`), a worker claims it under a lease
//! it renews while the run goes on, and the reaper — any worker, on its loop — turns a
//! run whose lease expired (its worker was killed, its machine lost) into `interrupted`
//! and queues a run resuming it. Queueing wakes the workers that listen
//! ([`Store::listen_for_queued`], PostgreSQL's `LISTEN/NOTIFY` on [`CHANNEL`]). The SQL
//! is in `postgres/queue.rs`.

use crate::Store;
use crate::error::{Error, Result};
use crate::keys;
use crate::runs::{RecordStatus, RunRecord};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The `LISTEN/NOTIFY` channel a queued run is announced on (its id is the payload).
pub const CHANNEL: &str = "mcpflow_runs";

/// Claims of a run and of the runs resuming it after which the reaper stops queueing it
/// again: a run that takes its worker down every time stays `interrupted`.
pub const MAX_ATTEMPTS: i32 = 5;

/// A run the reaper found with its lease expired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaped {
    /// The run, now `interrupted`.
    pub interrupted: String,
    /// The queued run that resumes it; `None` after [`MAX_ATTEMPTS`] claims, or when the
    /// run keeps no copy of its blueprint.
    pub resumed_by: Option<String>,
    /// Its claims so far.
    pub attempts: i32,
}

/// Listens for queued runs until dropped (the listening connection closes then).
#[derive(Debug)]
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    pub(crate) fn new(stop: Arc<AtomicBool>, thread: JoinHandle<()>) -> Listener {
        Listener { stop, thread: Some(thread) }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The hold of the one worker that fires the schedules (PostgreSQL's advisory lock
/// `SCHEDULER_LOCK`, held by a connection of its own on a thread of its own, which checks
/// every quarter second that the connection still answers). Dropping it lets go; so does
/// the worker's death, as the server closes its connection.
#[derive(Debug)]
pub struct Leadership {
    lost: Arc<AtomicBool>,
    _thread: Listener,
}

impl Leadership {
    pub(crate) fn new(lost: Arc<AtomicBool>, thread: Listener) -> Leadership {
        Leadership { lost, _thread: thread }
    }

    /// Whether the lock is still this process's: `false` once its connection broke (the
    /// database restarted, the network went away), after which another worker may lead.
    pub fn held(&self) -> bool {
        !self.lost.load(Ordering::Acquire)
    }
}

impl Store {
    /// The queue, or why this store has none.
    fn queue(&self, what: &'static str) -> Result<&dyn Queue> {
        self.backend.queue().ok_or_else(|| Error::NeedsDatabase { what, path: self.path().to_owned() })
    }

    /// Queues `record` (status `queued`, its blueprint in `definition`) and wakes the
    /// workers that listen. The id must be new.
    pub fn enqueue(&self, record: &RunRecord) -> Result<()> {
        check_queued(record)?;
        self.queue("queueing a run")?.enqueue(record)
    }

    /// Claims the oldest queued run for `owner` (it becomes `running` under a lease of
    /// `lease`) and returns its record as it was queued; `None` when none is queued.
    pub fn claim(&self, owner: &str, lease: Duration) -> Result<Option<RunRecord>> {
        self.queue("claiming a queued run")?.claim(owner, lease)
    }

    /// Extends `owner`'s lease on run `run_id` to `lease` from now. `false`: the lease is
    /// no longer `owner`'s (the reaper took the run) or the run has ended.
    pub fn renew_lease(&self, run_id: &str, owner: &str, lease: Duration) -> Result<bool> {
        keys::check("run id", run_id)?;
        self.queue("renewing a run's lease")?.renew(run_id, owner, lease)
    }

    /// Lets go of `owner`'s lease on a run that has ended.
    pub fn release_lease(&self, run_id: &str, owner: &str) -> Result<()> {
        keys::check("run id", run_id)?;
        self.queue("releasing a run's lease")?.release(run_id, owner)
    }

    /// Turns every run whose lease expired into `interrupted` and queues a run resuming
    /// each (up to [`MAX_ATTEMPTS`] claims); returns what it did. Safe to call from any
    /// number of workers at once: each run is reaped once.
    pub fn reap(&self) -> Result<Vec<Reaped>> {
        self.queue("reaping runs whose lease expired")?.reap()
    }

    /// Calls `on_queued` (on a thread of its own, with a connection of its own) each time a
    /// run is queued, until the [`Listener`] is dropped or the connection breaks.
    pub fn listen_for_queued(&self, on_queued: impl Fn() + Send + 'static) -> Result<Listener> {
        self.queue("listening for queued runs")?.listen(Box::new(on_queued))
    }

    /// Takes the scheduler's lock if no other process holds it: `Some` makes this process
    /// the one that fires the schedules for as long as [`Leadership::held`].
    pub fn lead_schedules(&self) -> Result<Option<Leadership>> {
        self.queue("taking the scheduler's lock")?.lead()
    }

    /// Queues `record`, the run of a schedule's fire for `slot` (RFC 3339), unless that
    /// slot of its blueprint was fired already (by a scheduler that died before it saved
    /// its state): `false` then, and nothing is queued.
    pub fn enqueue_fire(&self, record: &RunRecord, slot: &str) -> Result<bool> {
        check_queued(record)?;
        self.queue("queueing a scheduled run")?.enqueue_fire(record, slot)
    }

    /// The blueprints with a run queued or running on any worker (a schedule does not
    /// fire over one).
    pub fn blueprints_in_flight(&self) -> Result<Vec<String>> {
        self.queue("reading the runs in flight")?.in_flight()
    }

    /// Whether the database answers (a worker's readiness).
    pub fn ping(&self) -> Result<()> {
        self.queue("checking the connection")?.ping()
    }

    /// Records, over the queued run a worker claimed, the record of the run now starting
    /// (its status, start time and what resumes what), and flushes.
    pub fn take_over_run(&self, record: &RunRecord) -> Result<()> {
        let record = record.clone();
        self.update_run(&record.id.clone(), move |stored| *stored = record.clone())?;
        self.sync()
    }
}

/// Whether `record` may be queued: good ids, status `queued`, its blueprint in `definition`.
fn check_queued(record: &RunRecord) -> Result<()> {
    keys::check("run id", &record.id)?;
    keys::check("blueprint id", &record.blueprint)?;
    if record.status != RecordStatus::Queued || record.definition.is_none() {
        return Err(Error::InvalidValue {
            what: format!("the record of run `{}`", record.id),
            message: "a queued run is `queued` and carries its blueprint (`definition`)".to_owned(),
        });
    }
    Ok(())
}

/// The run queue of `mcpflow worker`, as a backend keeps it (PostgreSQL's: `postgres/queue.rs`).
pub(crate) trait Queue {
    fn enqueue(&self, record: &RunRecord) -> Result<()>;
    fn claim(&self, owner: &str, lease: Duration) -> Result<Option<RunRecord>>;
    fn renew(&self, run_id: &str, owner: &str, lease: Duration) -> Result<bool>;
    fn release(&self, run_id: &str, owner: &str) -> Result<()>;
    fn reap(&self) -> Result<Vec<Reaped>>;
    fn listen(&self, on_queued: Box<dyn Fn() + Send>) -> Result<Listener>;
    fn ping(&self) -> Result<()>;
    fn lead(&self) -> Result<Option<Leadership>>;
    fn enqueue_fire(&self, record: &RunRecord, slot: &str) -> Result<bool>;
    fn in_flight(&self) -> Result<Vec<String>>;
}
