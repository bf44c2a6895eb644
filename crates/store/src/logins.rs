//! Which servers hold an OAuth login: the server's name, the resource URL it signed in
//! to and when. Never a token: those live in the user-only vault of the data folder
//! (`mcpflow_mcp::auth::Vault`). Not part of an export: a login belongs to this machine.

use crate::Store;
use crate::codec::{decode, encode};
use crate::error::{Error, Result};
use crate::keys::{self, LOGINS};
use serde::{Deserialize, Serialize};

/// That server `server` signed in to `resource` at `signed_in_at_ms`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRecord {
    pub server: String,
    pub resource: String,
    pub signed_in_at_ms: i64,
}

impl Store {
    /// Records that `record.server` holds a login (replacing what was recorded).
    pub fn put_login(&self, record: &LoginRecord) -> Result<()> {
        keys::check("server name", &record.server)?;
        self.logins
            .insert(keys::single(&record.server), encode("the login record", record)?)
            .map_err(Error::db("recording a login"))?;
        Ok(())
    }

    /// Every recorded login, sorted by server name.
    pub fn logins(&self) -> Result<Vec<LoginRecord>> {
        self.logins
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing logins"))?;
                decode(LOGINS, &key, &bytes)
            })
            .collect()
    }

    /// Forgets that `server` holds a login. Returns whether it was recorded.
    pub fn delete_login(&self, server: &str) -> Result<bool> {
        keys::check("server name", server)?;
        let removed = self.logins.remove(keys::single(server)).map_err(Error::db("forgetting a login"))?;
        Ok(removed.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logins_are_recorded_by_server_and_not_exported() {
        let store = Store::open_temporary().unwrap();
        let record = LoginRecord { server: "gh".into(), resource: "https://h/mcp".into(), signed_in_at_ms: 5 };
        store.put_login(&record).unwrap();
        assert_eq!(store.logins().unwrap(), vec![record]);
        assert!(!store.export().unwrap().to_string().contains("https://h/mcp"));
        assert!(store.delete_login("gh").unwrap());
        assert!(store.logins().unwrap().is_empty());
    }
}
