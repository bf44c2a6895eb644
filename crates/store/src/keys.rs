//! The key layout of every tree. A key starts with a version byte ([`VERSION`]); ids and
//! names are UTF-8 without NUL, a NUL byte separates a key's parts, and numbers are
//! big-endian so byte order is numeric order.
//!
//! | tree | key | value (JSON) |
//! |---|---|---|
//! | `blueprints` | `01 id` | [`crate::BlueprintMeta`] of the current revision |
//! | `revisions` | `01 id 00 rev:u32` | `{saved_at, json}` |
//! | `runs` | `01 run_id` | [`crate::RunRecord`] |
//! | `runs_by_blueprint` | `01 blueprint 00 run_id` | empty |
//! | `events` | `01 run_id 00 seq:u64` | [`mcpflow_engine::RunEvent`] |
//! | `saved` | `01 blueprint 00 name` | the saved value |
//! | `servers` | `01 name` | the `mcpServers` entry as written |
//! | `listings` | `01 name` | a server's last listing (`listings.rs`) |
//! | `consents` | `01 hash` | [`crate::Consent`] |
//! | `schedules` | `01 blueprint` | the scheduler's state |
//! | `meta` | `schema_version` (no version byte) | a number |

use crate::error::{Error, Result};

/// The version of the key layout, the first byte of every key.
pub(crate) const VERSION: u8 = 1;
const SEP: u8 = 0;

pub(crate) const BLUEPRINTS: &str = "blueprints";
pub(crate) const REVISIONS: &str = "revisions";
pub(crate) const RUNS: &str = "runs";
pub(crate) const RUN_INDEX: &str = "runs_by_blueprint";
pub(crate) const EVENTS: &str = "events";
pub(crate) const SAVED: &str = "saved";
pub(crate) const SERVERS: &str = "servers";
pub(crate) const LISTINGS: &str = "listings";
pub(crate) const CONSENTS: &str = "consents";
pub(crate) const SCHEDULES: &str = "schedules";
pub(crate) const META: &str = "meta";

/// Refuses what cannot be a key part: empty text, or text with a NUL (the separator).
pub(crate) fn check(what: &'static str, value: &str) -> Result<()> {
    let reason = if value.is_empty() {
        "it is empty"
    } else if value.as_bytes().contains(&SEP) {
        "it contains a NUL character"
    } else {
        return Ok(());
    };
    Err(Error::InvalidKey { what, value: value.to_owned(), reason })
}

/// `01 name`.
pub(crate) fn single(name: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(1 + name.len());
    key.push(VERSION);
    key.extend_from_slice(name.as_bytes());
    key
}

/// `01 owner 00`: every key of `owner` in a two-part tree starts with this.
pub(crate) fn prefix(owner: &str) -> Vec<u8> {
    let mut key = single(owner);
    key.push(SEP);
    key
}

/// `01 owner 00 tail`.
pub(crate) fn pair(owner: &str, tail: &[u8]) -> Vec<u8> {
    let mut key = prefix(owner);
    key.extend_from_slice(tail);
    key
}

pub(crate) fn revision(id: &str, rev: u32) -> Vec<u8> {
    pair(id, &rev.to_be_bytes())
}

pub(crate) fn event(run_id: &str, seq: u64) -> Vec<u8> {
    pair(run_id, &seq.to_be_bytes())
}

/// The name of a `01 name` key.
pub(crate) fn parse_single(tree: &'static str, key: &[u8]) -> Result<String> {
    match key.split_first() {
        Some((&VERSION, rest)) => text(tree, key, rest),
        _ => Err(bad_key(tree, key, "it does not start with key version 1")),
    }
}

/// The owner and the raw tail of a `01 owner 00 tail` key.
pub(crate) fn parse_pair<'k>(tree: &'static str, key: &'k [u8]) -> Result<(String, &'k [u8])> {
    let Some((&VERSION, rest)) = key.split_first() else {
        return Err(bad_key(tree, key, "it does not start with key version 1"));
    };
    let Some(at) = rest.iter().position(|&b| b == SEP) else {
        return Err(bad_key(tree, key, "it has no separator"));
    };
    Ok((text(tree, key, &rest[..at])?, &rest[at + 1..]))
}

/// The tail of a two-part key as text (a run id, a saved value's name).
pub(crate) fn tail_text(tree: &'static str, key: &[u8], tail: &[u8]) -> Result<String> {
    text(tree, key, tail)
}

/// The revision number at the end of a `revisions` key.
pub(crate) fn tail_u32(tree: &'static str, key: &[u8], tail: &[u8]) -> Result<u32> {
    let bytes: [u8; 4] = tail.try_into().map_err(|_| bad_key(tree, key, "its number is not 4 bytes long"))?;
    Ok(u32::from_be_bytes(bytes))
}

/// The sequence number at the end of an `events` key.
pub(crate) fn tail_u64(tree: &'static str, key: &[u8], tail: &[u8]) -> Result<u64> {
    let bytes: [u8; 8] = tail.try_into().map_err(|_| bad_key(tree, key, "its number is not 8 bytes long"))?;
    Ok(u64::from_be_bytes(bytes))
}

fn text(tree: &'static str, key: &[u8], bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| bad_key(tree, key, "it is not UTF-8"))
}

fn bad_key(tree: &'static str, key: &[u8], message: &str) -> Error {
    Error::Corrupt { tree, key: display(key), message: format!("the key is malformed: {message}") }
}

/// A key as readable text for messages: `"\x01my-bp\x00\x00\x00\x00\x02"`.
pub(crate) fn display(key: &[u8]) -> String {
    let escaped: String = key.iter().flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect();
    format!("\"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_big_endian_so_byte_order_is_numeric_order() {
        let mut keys: Vec<Vec<u8>> = [65_536u64, 255, 256, 1].iter().map(|&s| event("r", s)).collect();
        keys.sort();
        let seqs: Vec<u64> = keys.iter().map(|k| u64::from_be_bytes(k[3..].try_into().unwrap())).collect();
        assert_eq!(seqs, [1, 255, 256, 65_536]);
    }

    #[test]
    fn one_owner_prefix_never_matches_a_longer_owner() {
        assert!(!pair("ab", b"x").starts_with(&prefix("a")));
        assert!(pair("a", b"x").starts_with(&prefix("a")));
    }

    #[test]
    fn a_pair_parses_back_to_its_parts() {
        let key = revision("bp", 7);
        let (owner, tail) = parse_pair(REVISIONS, &key).unwrap();
        assert_eq!((owner.as_str(), tail_u32(REVISIONS, &key, tail).unwrap()), ("bp", 7));
    }

    #[test]
    fn keys_that_could_break_the_layout_are_refused() {
        assert_eq!(check("blueprint id", "").unwrap_err().code(), "STORE_INVALID_KEY");
        assert!(check("blueprint id", "a\0b").unwrap_err().to_string().contains("NUL"));
        assert!(check("blueprint id", "ok-id").is_ok());
    }

    #[test]
    fn a_key_of_another_version_is_reported_not_misread() {
        let err = parse_single(SERVERS, b"\x02name").unwrap_err();
        assert!(err.to_string().contains("\"\\x02name\""), "{err}");
    }
}
