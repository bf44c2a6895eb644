//! What the store holds but cannot read back — a run's record or event with damaged
//! bytes, or nested deeper than [`crate::MAX_RECORD_DEPTH`] (an older mcpflow wrote
//! such values) — as [`Unreadable`]: listings, the backup and the open-time sweep skip
//! it and report it with the command that removes it.

use crate::error::Error;
use crate::keys;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A run the store cannot read back all of, skipped where it was met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreadable {
    /// The run's id, as its key spells it.
    pub run_id: String,
    /// The `seq` of the event that cannot be read; `None` when the run's record itself
    /// cannot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<u64>,
    /// The stable code of why (`STORE_CORRUPT`).
    pub code: String,
    /// Why, in words: the tree, the key and what is wrong there.
    pub message: String,
}

impl Unreadable {
    /// The command that removes the run, its record and all its events.
    pub fn remove_command(&self) -> String {
        format!("mcpflow runs --remove {}", self.run_id)
    }

    pub(crate) fn record(run_id: String, error: &Error) -> Unreadable {
        Unreadable { run_id, event: None, code: error.code().to_owned(), message: cause(error) }
    }

    pub(crate) fn event(run_id: String, seq: u64, error: &Error) -> Unreadable {
        Unreadable { run_id, event: Some(seq), code: error.code().to_owned(), message: cause(error) }
    }

    /// The run id a `runs` key names, even when the key is not UTF-8 (then lossily).
    pub(crate) fn id_of_record_key(key: &[u8]) -> String {
        keys::parse_single(keys::RUNS, key)
            .unwrap_or_else(|_| String::from_utf8_lossy(key.get(1..).unwrap_or_default()).into_owned())
    }
}

/// What is wrong, without [`Error::Corrupt`]'s generic way out: [`Unreadable`] names
/// the command that removes the run instead.
fn cause(error: &Error) -> String {
    match error {
        Error::Corrupt { tree, key, message } => format!("the `{tree}` tree's entry at key {key}: {message}"),
        other => other.to_string(),
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.event {
            Some(seq) => format!("event {seq}"),
            None => "the record".to_owned(),
        };
        write!(
            f,
            "run `{}`: {what} cannot be read [{}]: {}; remove the run with `{}` (or restore a backup)",
            self.run_id,
            self.code,
            self.message,
            self.remove_command()
        )
    }
}
