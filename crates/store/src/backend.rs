//! The store's operations as the two backends implement them: [`Backend`] is sled
//! (`sled.rs` + `sled/`, the embedded default) or PostgreSQL (`postgres.rs` +
//! `postgres/`). The public [`crate::Store`] checks its arguments (`keys::check`), keeps
//! the logic both share (the open-time sweep, finishing a run, planning an import, the
//! backup document) and calls one of these; each backend keeps each operation atomic in
//! its own way (a sled transaction, an SQL transaction).
//!
//! The traits are split by concern so each backend implements each in its own file.

use crate::backup::Writes;
use crate::blueprints::{BlueprintMeta, StoredBlueprint};
use crate::consents::Consent;
use crate::error::Result;
use crate::queue::Queue;
use crate::runs::{RunList, RunRecord};
use crate::unreadable::Unreadable;
use mcpflow_engine::RunEvent;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A change to a run record, applied atomically by [`Runs::update_run`]. Owned (`Arc`,
/// `'static`) so the PostgreSQL backend can hand it to its connection thread; `Fn`, as
/// sled may run a transaction again after a conflict.
pub(crate) type Change = Arc<dyn Fn(&mut RunRecord) + Send + Sync>;

/// One backend: every operation of the store.
pub(crate) trait Backend: Blueprints + Runs + Values + Send + Sync + 'static {
    /// A durability barrier: everything written so far is on disk when it returns.
    fn sync(&self) -> Result<()>;

    /// Writes an import's planned entries, all of them or (where the backend can
    /// promise it) none.
    fn apply_import(&self, writes: Writes) -> Result<()>;

    /// The run queue, when the backend has one (PostgreSQL).
    fn queue(&self) -> Option<&dyn Queue> {
        None
    }
}

/// Blueprints and their revisions.
pub(crate) trait Blueprints {
    /// Saves `json` as the next revision unless it is the current one (byte for byte);
    /// returns the current revision after.
    fn save_blueprint(&self, id: &str, json: &Value, saved_at: &str) -> Result<BlueprintMeta>;
    fn blueprint(&self, id: &str) -> Result<Option<StoredBlueprint>>;
    /// The current revision of every blueprint, sorted by id.
    fn blueprints(&self) -> Result<Vec<BlueprintMeta>>;
    /// Every revision of `id` with its document, oldest first.
    fn revision_list(&self, id: &str) -> Result<Vec<StoredBlueprint>>;
    fn revision(&self, id: &str, rev: u32) -> Result<Option<StoredBlueprint>>;
    fn delete_blueprint(&self, id: &str) -> Result<bool>;
}

/// Runs and their events.
pub(crate) trait Runs {
    /// Records a new run; [`crate::Error::RunExists`] when its id is taken.
    fn begin_run(&self, record: &RunRecord) -> Result<()>;
    /// Writes (or overwrites) the event under its `seq`; [`crate::Error::RunNotFound`]
    /// when the run is not recorded.
    fn append_event(&self, run_id: &str, event: &RunEvent) -> Result<()>;
    /// Applies `change` to the record atomically; returns the record as it was before.
    fn update_run(&self, run_id: &str, change: Change) -> Result<RunRecord>;
    fn run_exists(&self, id: &str) -> Result<bool>;
    /// [`crate::Error::Unreadable`] when the record cannot be read.
    fn run(&self, id: &str) -> Result<Option<RunRecord>>;
    /// The newest `limit` readable runs (of one blueprint or all), newest first, and the
    /// unreadable ones met on the way.
    fn run_list(&self, blueprint: Option<&str>, limit: usize) -> Result<RunList>;
    /// The runs recorded `waiting`, oldest first.
    fn waiting_runs(&self) -> Result<Vec<RunRecord>>;
    /// The runs recorded `running` or `waiting`, oldest first, and the records met that
    /// cannot be read (sled reads every record to find them; PostgreSQL only the
    /// unfinished ones).
    fn unfinished_runs(&self) -> Result<(Vec<RunRecord>, Vec<Unreadable>)>;
    /// Every readable run, oldest first, and the ones that cannot be read (the backup).
    fn all_runs(&self) -> Result<(Vec<RunRecord>, Vec<Unreadable>)>;
    /// A run's readable events after `seq` `after` (0: all of them) in `seq` order, and
    /// the ones that cannot be read.
    fn readable_events(&self, run_id: &str, after: u64) -> Result<(Vec<RunEvent>, Vec<Unreadable>)>;
    /// Removes the run with its events (also when its record cannot be read).
    fn delete_run(&self, id: &str) -> Result<bool>;
    /// Files the readable runs of blueprint `from` under `to`, except those in `keep`;
    /// each run's record and index move together. Returns how many moved.
    fn move_runs(&self, from: &str, to: &str, keep: &[String]) -> Result<u32>;
    /// The first later run of the same blueprint whose `resumed_from` is `record`'s id.
    fn resumed_by(&self, record: &RunRecord) -> Result<Option<String>>;
}

/// Saved values, servers, consents and schedule state: values under one or two names.
pub(crate) trait Values {
    fn saved_values(&self, blueprint: &str) -> Result<Map<String, Value>>;
    fn saved_value(&self, blueprint: &str, name: &str) -> Result<Option<Value>>;
    fn save_value(&self, blueprint: &str, name: &str, value: &Value) -> Result<()>;
    /// Every saved value as (blueprint, name, value), sorted.
    fn all_saved(&self) -> Result<Vec<(String, String, Value)>>;

    fn put_server(&self, name: &str, config: &Value) -> Result<()>;
    fn server(&self, name: &str) -> Result<Option<Value>>;
    fn servers(&self) -> Result<Vec<(String, Value)>>;
    fn delete_server(&self, name: &str) -> Result<bool>;

    /// A server's last listing (`listings.rs`), replaced whole.
    fn put_listing(&self, server: &str, listing: &Value) -> Result<()>;
    fn listing(&self, server: &str) -> Result<Option<Value>>;
    fn delete_listing(&self, server: &str) -> Result<bool>;

    /// Records the consent (and makes it durable).
    fn put_consent(&self, consent: &Consent) -> Result<()>;
    fn consent(&self, hash: &str) -> Result<Option<Consent>>;
    fn consents(&self) -> Result<Vec<Consent>>;
    /// Withdraws the consent (durably); whether it was there.
    fn revoke(&self, hash: &str) -> Result<bool>;

    fn schedule_state(&self, blueprint: &str) -> Result<Option<Value>>;
    fn put_schedule_state(&self, blueprint: &str, state: &Value) -> Result<()>;
    fn delete_schedule_state(&self, blueprint: &str) -> Result<bool>;
    fn schedule_states(&self) -> Result<Vec<(String, Value)>>;
}
