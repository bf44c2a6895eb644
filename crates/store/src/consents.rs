//! Consents: the command-line hashes the user approved (see `mcpflow_mcp::consent`),
//! with the command line as it was shown, so they can be reviewed and revoked.

use crate::Store;
use crate::codec::now;
use crate::error::Result;
use crate::keys;
use serde::{Deserialize, Serialize};

/// One approved command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Consent {
    /// `sha256:<hex>` of the command line.
    pub hash: String,
    /// The command line as the user approved it, for display.
    pub command: String,
    /// RFC 3339, UTC.
    pub approved_at: String,
}

impl Store {
    /// Records that the user approved `command` (whose hash is `hash`).
    pub fn approve(&self, hash: &str, command: &str) -> Result<()> {
        keys::check("consent hash", hash)?;
        let consent = Consent { hash: hash.to_owned(), command: command.to_owned(), approved_at: now() };
        self.backend.put_consent(&consent)
    }

    /// Whether the command line with this hash was approved.
    pub fn is_approved(&self, hash: &str) -> Result<bool> {
        keys::check("consent hash", hash)?;
        Ok(self.backend.consent(hash)?.is_some())
    }

    /// Every approval, sorted by hash.
    pub fn consents(&self) -> Result<Vec<Consent>> {
        self.backend.consents()
    }

    /// Withdraws an approval. Returns whether it was there.
    pub fn revoke(&self, hash: &str) -> Result<bool> {
        keys::check("consent hash", hash)?;
        self.backend.revoke(hash)
    }
}
