//! Each server's last listing: what it offered (tools, resources, prompts) the last time
//! it was listed, so the studio's palette still shows it while the server is not started
//! (not approved yet, or failing). Replaced whole at each listing; a cache, not in backups.

use crate::Store;
use crate::error::Result;
use crate::keys;
use serde_json::Value;

impl Store {
    /// Remembers `listing` as server `server`'s last one.
    pub fn put_listing(&self, server: &str, listing: &Value) -> Result<()> {
        keys::check("server name", server)?;
        self.backend.put_listing(server, listing)
    }

    /// Server `server`'s last listing, if it was ever listed.
    pub fn listing(&self, server: &str) -> Result<Option<Value>> {
        keys::check("server name", server)?;
        self.backend.listing(server)
    }

    /// Forgets server `server`'s listing (the server was removed). Returns whether it had one.
    pub fn delete_listing(&self, server: &str) -> Result<bool> {
        keys::check("server name", server)?;
        self.backend.delete_listing(server)
    }
}
