//! Server configurations: `mcpServers` entries exactly as written. `${env:NAME}` is
//! never resolved here, so no secret is stored that was not typed into the entry.

use crate::Store;
use crate::error::{Error, Result};
use crate::keys;
use serde_json::Value;

impl Store {
    /// Adds or replaces server `name`. The entry must be a JSON object.
    pub fn put_server(&self, name: &str, config: &Value) -> Result<()> {
        keys::check("server name", name)?;
        check_server(name, config)?;
        self.backend.put_server(name, config)
    }

    /// Every server, sorted by name.
    pub fn servers(&self) -> Result<Vec<(String, Value)>> {
        self.backend.servers()
    }

    /// Removes server `name`. Returns whether it was there.
    pub fn delete_server(&self, name: &str) -> Result<bool> {
        keys::check("server name", name)?;
        self.backend.delete_server(name)
    }
}

pub(crate) fn check_server(name: &str, config: &Value) -> Result<()> {
    if config.is_object() {
        Ok(())
    } else {
        Err(Error::InvalidValue {
            what: format!("server `{name}`"),
            message: "an mcpServers entry is a JSON object (with `command` or `url`)".to_owned(),
        })
    }
}
