//! Scheduler state per blueprint (next fire time, last run …). The scheduler owns the
//! shape; to the store it is opaque JSON.

use crate::Store;
use crate::error::Result;
use crate::keys;
use serde_json::Value;

impl Store {
    /// The scheduler's state for `blueprint`.
    pub fn schedule_state(&self, blueprint: &str) -> Result<Option<Value>> {
        keys::check("blueprint id", blueprint)?;
        self.backend.schedule_state(blueprint)
    }

    /// Replaces the scheduler's state for `blueprint`.
    pub fn put_schedule_state(&self, blueprint: &str, state: &Value) -> Result<()> {
        keys::check("blueprint id", blueprint)?;
        self.backend.put_schedule_state(blueprint, state)
    }

    /// Forgets the scheduler's state for `blueprint`. Returns whether there was one.
    pub fn delete_schedule_state(&self, blueprint: &str) -> Result<bool> {
        keys::check("blueprint id", blueprint)?;
        self.backend.delete_schedule_state(blueprint)
    }
}
