//! Saved values: what a blueprint's steps `save` for its later runs, one entry per
//! blueprint and name. The engine reads and writes them through [`SavedValues`].

use crate::Store;
use crate::codec::{decode, encode};
use crate::error::{Error, Result};
use crate::keys::{self, SAVED};
use mcpflow_engine::SavedValues;
use serde_json::{Map, Value};

impl Store {
    /// Every saved value of `blueprint`, by name (sorted).
    pub fn saved_values(&self, blueprint: &str) -> Result<Map<String, Value>> {
        keys::check("blueprint id", blueprint)?;
        self.saved
            .scan_prefix(keys::prefix(blueprint))
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("reading saved values"))?;
                let (_, tail) = keys::parse_pair(SAVED, &key)?;
                Ok((keys::tail_text(SAVED, &key, tail)?, decode(SAVED, &key, &bytes)?))
            })
            .collect()
    }

    /// Saves `value` under `name` for `blueprint`'s later runs.
    pub fn save_value(&self, blueprint: &str, name: &str, value: &Value) -> Result<()> {
        keys::check("blueprint id", blueprint)?;
        keys::check("saved value name", name)?;
        self.saved
            .insert(keys::pair(blueprint, name.as_bytes()), encode("the saved value", value)?)
            .map_err(Error::db("saving a value"))?;
        Ok(())
    }

    /// The blueprints that have saved values, with them (for export).
    pub(crate) fn all_saved(&self) -> Result<Vec<(String, String, Value)>> {
        self.saved
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("reading saved values"))?;
                let (blueprint, tail) = keys::parse_pair(SAVED, &key)?;
                Ok((blueprint, keys::tail_text(SAVED, &key, tail)?, decode(SAVED, &key, &bytes)?))
            })
            .collect()
    }
}

impl SavedValues for Store {
    fn load(&self, blueprint: &str) -> Result<Value, String> {
        self.saved_values(blueprint).map(Value::Object).map_err(|e| e.to_string())
    }

    fn save(&self, blueprint: &str, name: &str, value: &Value) -> Result<(), String> {
        self.save_value(blueprint, name, value).map_err(|e| e.to_string())
    }
}
