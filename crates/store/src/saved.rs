//! Saved values: what a blueprint's steps `save` for its later runs, one entry per
//! blueprint and name. The engine reads and writes them through [`SavedValues`].

use crate::Store;
use crate::error::Result;
use crate::keys;
use mcpflow_engine::SavedValues;
use serde_json::{Map, Value};

impl Store {
    /// Every saved value of `blueprint`, by name (sorted).
    pub fn saved_values(&self, blueprint: &str) -> Result<Map<String, Value>> {
        keys::check("blueprint id", blueprint)?;
        self.backend.saved_values(blueprint)
    }

    /// Saves `value` under `name` for `blueprint`'s later runs.
    pub fn save_value(&self, blueprint: &str, name: &str, value: &Value) -> Result<()> {
        keys::check("blueprint id", blueprint)?;
        keys::check("saved value name", name)?;
        self.backend.save_value(blueprint, name, value)
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
