//! Values are JSON (easy to inspect and export). Decoding names the tree and the key of
//! a value that does not parse, so a damaged file is an error, never a panic.
//!
//! Both sides hold the same depth limit, [`MAX_RECORD_DEPTH`]: [`encode`] refuses a value
//! nested deeper (nothing is written) and [`decode`] reports one as unreadable before
//! serde_json sees it, so whatever the store writes, it reads back. Depth is measured on
//! the bytes (`mcpflow_blueprint::source::nesting`, one pass), never by a walk over the
//! value.

use crate::error::{Error, Result};
use crate::keys;
use mcpflow_blueprint::limits::MAX_MAX_VALUE_DEPTH;
use mcpflow_blueprint::source::nesting;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The deepest nesting of arrays and objects in a stored value, record and all.
///
/// serde_json reads at most 127 levels; an export wraps a run's record or event in 4
/// more (document → `runs` → run → `events`), so a backup of anything within this limit
/// is read back by `import` too. A step's value (at most `MAX_MAX_VALUE_DEPTH`) sits
/// fewer than 20 levels inside its record, so every value the engine lets through fits.
pub const MAX_RECORD_DEPTH: usize = 120;
const _: () = assert!(MAX_MAX_VALUE_DEPTH as usize + 20 <= MAX_RECORD_DEPTH && MAX_RECORD_DEPTH + 4 < 128);

pub(crate) fn encode<T: Serialize + ?Sized>(what: &'static str, value: &T) -> Result<Vec<u8>> {
    encode_named(|| what.to_owned(), value)
}

/// [`encode`], naming the value with `what()` when it is refused (a run id, an event).
pub(crate) fn encode_named<T: Serialize + ?Sized>(what: impl Fn() -> String, value: &T) -> Result<Vec<u8>> {
    let bytes = serde_json::to_vec(value).map_err(|e| Error::Encode { what: what(), message: e.to_string() })?;
    let depth = nesting(&bytes);
    if depth > MAX_RECORD_DEPTH {
        return Err(Error::TooDeep { what: what(), depth, limit: MAX_RECORD_DEPTH });
    }
    Ok(bytes)
}

pub(crate) fn decode<T: DeserializeOwned>(tree: &'static str, key: &[u8], bytes: &[u8]) -> Result<T> {
    let depth = nesting(bytes);
    if depth > MAX_RECORD_DEPTH {
        return Err(Error::Corrupt {
            tree,
            key: keys::display(key),
            message: format!(
                "the value nests {depth} levels deep; the store reads at most {MAX_RECORD_DEPTH} (an older mcpflow \
                 recorded it)"
            ),
        });
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn deep(levels: usize) -> String {
        "[".repeat(levels) + &"]".repeat(levels)
    }

    #[test]
    fn encode_refuses_what_decode_would_refuse_and_keeps_the_rest() {
        let ok: Value = serde_json::from_str(&deep(MAX_RECORD_DEPTH)).unwrap();
        let bytes = encode("a value", &ok).unwrap();
        assert_eq!(decode::<Value>("saved", b"\x01k", &bytes).unwrap(), ok);

        let too_deep = json!([serde_json::from_str::<Value>(&deep(MAX_RECORD_DEPTH)).unwrap()]);
        let error = encode("a value", &too_deep).unwrap_err();
        assert_eq!(error.code(), "STORE_VALUE_TOO_DEEP");
        let error = decode::<Value>("saved", b"\x01k", deep(MAX_RECORD_DEPTH + 1).as_bytes()).unwrap_err();
        assert!(error.to_string().contains("nests 121 levels deep"), "{error}");
    }
}
