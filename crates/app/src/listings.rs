//! Each server's last listing, remembered in the store when it is listed, so the palette
//! shows what a server offers while it is not started: not approved yet (its tools can be
//! dropped and approved on the node) or failing. Remembering never fails a listing.

use crate::app::App;
use crate::servers::Offer;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A server's last listing and when it was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    /// RFC 3339, UTC.
    pub listed_at: String,
    pub offer: Offer,
}

/// Listings made elsewhere, as `demo/listings.json` ships those of the demo servers:
/// when they were made and what each server offered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shipped {
    /// RFC 3339, UTC.
    pub listed_at: String,
    pub servers: BTreeMap<String, Offer>,
}

impl App {
    /// Remembers the shipped listings of configured servers never listed here: the demo
    /// servers at first start, so their tools are in the palette (to find, drop and
    /// approve on the node) before anything was approved or started. Returns the servers
    /// whose listing it remembered.
    pub fn remember_shipped(&self, shipped: &Shipped) -> Vec<String> {
        let configured: Vec<String> = self.servers().into_iter().map(|s| s.name).collect();
        let mut remembered = Vec::new();
        for (name, offer) in &shipped.servers {
            if !configured.contains(name) || self.last_listing(name).is_some() {
                continue;
            }
            let listed = Listed { listed_at: shipped.listed_at.clone(), offer: offer.clone() };
            let stored = serde_json::to_value(&listed)
                .map_err(|e| e.to_string())
                .and_then(|value| self.store().put_listing(name, &value).map_err(|e| e.to_string()));
            match stored {
                Ok(()) => remembered.push(name.clone()),
                Err(error) => tracing::warn!(server = %name, %error, "could not remember the shipped listing"),
            }
        }
        remembered
    }

    /// Remembers `offer` as server `name`'s last listing. A store that cannot take it is
    /// logged: the listing itself still stands.
    pub(crate) fn remember_listing(&self, name: &str, offer: &Offer) {
        let listed = Listed { listed_at: chrono::Utc::now().to_rfc3339(), offer: offer.clone() };
        let stored = serde_json::to_value(&listed)
            .map_err(|e| e.to_string())
            .and_then(|value| self.store().put_listing(name, &value).map_err(|e| e.to_string()));
        if let Err(error) = stored {
            tracing::warn!(server = name, %error, "could not remember the server's listing; the palette will not show it while the server is not started");
        }
    }

    /// Server `name`'s last listing, if it was listed before (and can be read back).
    pub fn last_listing(&self, name: &str) -> Option<Listed> {
        let value = match self.store().listing(name) {
            Ok(value) => value?,
            Err(error) => {
                tracing::warn!(server = name, %error, "could not read the server's last listing");
                return None;
            }
        };
        serde_json::from_value(value)
            .inspect_err(|error| tracing::warn!(server = name, %error, "the server's last listing is unreadable; it is listed again once it starts"))
            .ok()
    }

    /// Forgets server `name`'s listing (it was removed).
    pub(crate) fn forget_listing(&self, name: &str) {
        if let Err(error) = self.store().delete_listing(name) {
            tracing::warn!(server = name, %error, "could not forget the removed server's listing");
        }
    }
}
