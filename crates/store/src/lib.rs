//! mcpflow's persistence (DESIGN §7): blueprints and their revisions, runs and their
//! events, saved values, server configs, consents, and scheduler state — in one sled
//! database folder (the default, embedded) or in a PostgreSQL database, behind the one
//! [`Store`] API (`backend.rs`: the operations each backend implements, in `sled/` and
//! `postgres/`). Values are JSON, so the store is easy to inspect and [`Store::export`]s
//! to one document; sled's keys are versioned and big-endian (`keys.rs`), PostgreSQL's
//! tables are created by the SQL migrations in `crates/store/migrations/`.
//!
//! Open with [`Store::open`] (a folder: takes sled's lock on it) or [`Store::connect`] (a
//! `postgresql://` URL: takes the store's lock in that database, applies the migrations
//! it lacks; `postgres.rs` says how its connection's thread keeps this synchronous API
//! safe to call inside tokio runtimes). Either checks the schema version and marks runs
//! left `running` as `interrupted`, or `waiting` when they waited for a person. The
//! store implements the engine's
//! [`mcpflow_engine::SavedValues`], [`mcpflow_engine::BlueprintSource`] and
//! [`mcpflow_engine::Journal`].
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

mod backend;
mod backup;
mod blueprints;
mod codec;
mod consents;
mod error;
mod keys;
mod listings;
mod postgres;
mod queue;
mod runs;
mod saved;
mod schedules;
mod schema;
mod servers;
mod sled;
mod store;
mod unreadable;

pub use backup::{Backup, Counts, EXPORT_FORMAT, ImportOptions, ImportReport};
pub use blueprints::{BlueprintMeta, StoredBlueprint};
pub use codec::MAX_RECORD_DEPTH;
pub use consents::Consent;
pub use error::{Error, Result};
pub use postgres::Mode;
pub use queue::{CHANNEL, Leadership, Listener, MAX_ATTEMPTS, Reaped};
pub use runs::{OpenQuestions, RecordStatus, RerunMode, RerunOf, RunList, RunRecord, open_questions};
pub use schema::SCHEMA_VERSION;
pub use store::{Opened, Store};
pub use unreadable::Unreadable;
