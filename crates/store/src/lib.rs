//! mcpflow's persistence over sled (DESIGN §7): blueprints and their revisions, runs and
//! their events, saved values, server configs, consents, and scheduler state, in one
//! database folder. Keys are versioned and big-endian (`keys.rs` has the layout); values
//! are JSON, so the store is easy to inspect and [`Store::export`]s to one document.
//!
//! Open with [`Store::open`] (takes sled's lock on the folder, checks the schema version,
//! marks runs left `running` as `interrupted`, or `waiting` when they waited for a person). The store implements the engine's
//! [`mcpflow_engine::SavedValues`], [`mcpflow_engine::BlueprintSource`] and
//! [`mcpflow_engine::Journal`].
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

mod backup;
mod blueprints;
mod codec;
mod consents;
mod error;
mod keys;
mod logins;
mod runs;
mod saved;
mod schedules;
mod schema;
mod servers;
mod store;
mod unreadable;

pub use backup::{Backup, Counts, EXPORT_FORMAT, ImportOptions, ImportReport};
pub use blueprints::{BlueprintMeta, StoredBlueprint};
pub use codec::MAX_RECORD_DEPTH;
pub use consents::Consent;
pub use error::{Error, Result};
pub use runs::{OpenQuestions, RecordStatus, RerunMode, RerunOf, RunList, RunRecord, open_questions};
pub use schema::SCHEMA_VERSION;
pub use store::{Opened, Store};
pub use unreadable::Unreadable;
