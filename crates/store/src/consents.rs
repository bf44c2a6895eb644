//! Consents: the command-line hashes the user approved (see `mcpflow_mcp::consent`),
//! with the command line as it was shown, so they can be reviewed and revoked.

use crate::Store;
use crate::codec::{decode, encode, now};
use crate::error::{Error, Result};
use crate::keys::{self, CONSENTS};
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
        self.put_consent(&consent)
    }

    pub(crate) fn put_consent(&self, consent: &Consent) -> Result<()> {
        self.consents
            .insert(keys::single(&consent.hash), encode("the consent", consent)?)
            .map_err(Error::db("recording a consent"))?;
        self.sync()
    }

    /// Whether the command line with this hash was approved.
    pub fn is_approved(&self, hash: &str) -> Result<bool> {
        keys::check("consent hash", hash)?;
        self.consents.contains_key(keys::single(hash)).map_err(Error::db("reading consents"))
    }

    /// Every approval, sorted by hash.
    pub fn consents(&self) -> Result<Vec<Consent>> {
        self.consents
            .iter()
            .map(|entry| {
                let (key, bytes) = entry.map_err(Error::db("listing consents"))?;
                decode(CONSENTS, &key, &bytes)
            })
            .collect()
    }

    /// Withdraws an approval. Returns whether it was there.
    pub fn revoke(&self, hash: &str) -> Result<bool> {
        keys::check("consent hash", hash)?;
        let removed = self.consents.remove(keys::single(hash)).map_err(Error::db("revoking a consent"))?;
        self.sync()?;
        Ok(removed.is_some())
    }
}
