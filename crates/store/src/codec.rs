//! Values are JSON (easy to inspect and export). Decoding names the tree and the key of
//! a value that does not parse, so a damaged file is an error, never a panic.

use crate::error::{Error, Result};
use crate::keys;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub(crate) fn encode<T: Serialize + ?Sized>(what: &'static str, value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| Error::Encode { what, message: e.to_string() })
}

pub(crate) fn decode<T: DeserializeOwned>(tree: &'static str, key: &[u8], bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::Corrupt {
        tree,
        key: keys::display(key),
        message: format!("the value is not the JSON mcpflow wrote there ({e})"),
    })
}

/// The current time as stored: RFC 3339, milliseconds, UTC (as the engine writes it).
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
