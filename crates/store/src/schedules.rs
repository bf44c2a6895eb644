//! Scheduler state per blueprint (next fire time, last run …). The scheduler owns the
//! shape; to the store it is opaque JSON.

use crate::Store;
use crate::codec::{decode, encode};
use crate::error::{Error, Result};
use crate::keys::{self, SCHEDULES};
use serde_json::Value;

impl Store {
    /// The scheduler's state for `blueprint`.
    pub fn schedule_state(&self, blueprint: &str) -> Result<Option<Value>> {
        keys::check("blueprint id", blueprint)?;
        let key = keys::single(blueprint);
        match self.schedules.get(&key).map_err(Error::db("reading a schedule"))? {
            Some(bytes) => decode(SCHEDULES, &key, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Replaces the scheduler's state for `blueprint`.
    pub fn put_schedule_state(&self, blueprint: &str, state: &Value) -> Result<()> {
        keys::check("blueprint id", blueprint)?;
        self.schedules
            .insert(keys::single(blueprint), encode("the schedule state", state)?)
            .map_err(Error::db("saving a schedule"))?;
        Ok(())
    }

    /// Forgets the scheduler's state for `blueprint`. Returns whether there was one.
    pub fn delete_schedule_state(&self, blueprint: &str) -> Result<bool> {
        keys::check("blueprint id", blueprint)?;
        let removed = self.schedules.remove(keys::single(blueprint)).map_err(Error::db("removing a schedule"))?;
        Ok(removed.is_some())
    }

    /// Every blueprint's scheduler state, sorted by blueprint (for export).
    pub(crate) fn schedule_states(&self) -> Result<Vec<(String, Value)>> {
        self.schedules
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing schedules"))?;
                Ok((keys::parse_single(SCHEDULES, &key)?, decode(SCHEDULES, &key, &bytes)?))
            })
            .collect()
    }
}
