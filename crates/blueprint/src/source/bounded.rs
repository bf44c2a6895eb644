//! Reading documents from outside — files, standard input, an agent's text — within a
//! size limit that is checked while reading: never more than `limit + 1` bytes are read,
//! so `/dev/zero`, a FIFO or a 2 GB file costs the limit, not the file. This module opens
//! nothing: callers hand it a reader.
//!
//! Two readers, both strict (a duplicate key is an error, never "the last one wins"):
//! [`read_json`] reads the bytes (at most the limit) and parses them with
//! [`super::parse_within`], which keeps positions for every value — blueprints,
//! `mcpServers` files, inputs, catalogs. [`read_json_streamed`] parses as it reads,
//! holding no copy of the text — for store backups, which may be far larger than 5 MB.

use super::{Parsed, parse_within};
use crate::diagnostic::{Code, Diagnostic, Position, pointer_push};
use crate::limits::SizeLimit;
use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::io::Read;

/// Why a document could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Reading failed (no such file, permission, …).
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The document was refused: too large (`LIMIT_SIZE`, found while reading), not
    /// JSON, a duplicate key, … The diagnostic has a position.
    #[error("{0}")]
    Refused(Box<Diagnostic>),
}

impl From<Diagnostic> for ReadError {
    fn from(d: Diagnostic) -> Self {
        ReadError::Refused(Box::new(d))
    }
}

/// Reads all of `read`, but at most `limit.bytes + 1` bytes: one byte more than the
/// limit is enough to know the document is too large, and reading stops there.
pub fn read_bounded(read: impl Read, limit: &SizeLimit<'_>) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    read.take(limit.bytes as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit.bytes {
        return Err(limit.exceeded().into());
    }
    Ok(bytes)
}

/// [`read_bounded`], then the strict reader with positions ([`parse_within`]).
pub fn read_json(read: impl Read, limit: &SizeLimit<'_>) -> Result<Parsed, ReadError> {
    let bytes = read_bounded(read, limit)?;
    Ok(parse_within(&bytes, limit)?)
}

/// Parses JSON as it is read, without keeping the text: memory is the resulting value,
/// however large the input. As strict as [`super::parse`] on what matters — a duplicate
/// key is `JSON_DUPLICATE_KEY`, bad syntax or UTF-8 is `JSON_SYNTAX`, each with its line
/// and column (where the reader noticed it: just after a duplicate key) — and bounded:
/// past `limit.bytes` bytes it stops with `LIMIT_SIZE`; nesting stops at 128 levels.
pub fn read_json_streamed(read: impl Read, limit: &SizeLimit<'_>) -> Result<Value, ReadError> {
    let count = Cell::new(0);
    let counted = Counted { read: read.take(limit.bytes as u64 + 1), count: &count };
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(64 * 1024, counted));
    let context = RefCell::new(Context::default());
    let result = Strict { context: &context }.deserialize(&mut de).and_then(|value| de.end().map(|()| value));
    if count.get() > limit.bytes {
        return Err(limit.exceeded().into());
    }
    match result {
        Ok(value) => Ok(value),
        Err(e) if e.is_io() => Err(ReadError::Io(std::io::Error::other(e))),
        Err(e) => {
            let at = Position { line: e.line() as u32, col: e.column().max(1) as u32 };
            let context = context.into_inner();
            let d = match &context.duplicate {
                Some(key) => {
                    Diagnostic::new(Code::JsonDuplicateKey, context.pointer(), format!("duplicate key `{key}`"))
                        .with_hint("JSON readers disagree on which duplicate wins; keep only one")
                }
                None => Diagnostic::new(Code::JsonSyntax, context.pointer(), syntax_message(&e))
                    .with_hint("fix the JSON syntax; an editor with JSON support shows the exact spot"),
            };
            Err(d.at(at).into())
        }
    }
}

/// serde_json's message without its trailing " at line L column C" (the position is
/// the diagnostic's own).
fn syntax_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// Counts the bytes read through it.
struct Counted<'c, R> {
    read: R,
    count: &'c Cell<usize>,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.read.read(buf)?;
        self.count.set(self.count.get() + n);
        Ok(n)
    }
}

/// Where the streamed reader is, for the pointer of an error, and the duplicate found.
#[derive(Default)]
struct Context {
    path: Vec<String>,
    duplicate: Option<String>,
}

impl Context {
    fn pointer(&self) -> String {
        self.path.iter().fold(String::new(), |p, token| pointer_push(&p, token))
    }
}

/// Builds a [`Value`], refusing an object that names a key twice.
#[derive(Clone, Copy)]
struct Strict<'c> {
    context: &'c RefCell<Context>,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("a number out of range"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        loop {
            self.context.borrow_mut().path.push(items.len().to_string());
            let Some(item) = seq.next_element_seed(self)? else { break };
            self.context.borrow_mut().path.pop();
            items.push(item);
        }
        self.context.borrow_mut().path.pop();
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                let mut context = self.context.borrow_mut();
                context.path.push(key.clone());
                context.duplicate = Some(key.clone());
                return Err(A::Error::custom(format!("duplicate key `{key}`")));
            }
            self.context.borrow_mut().path.push(key.clone());
            let value = access.next_value_seed(self)?;
            self.context.borrow_mut().path.pop();
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: SizeLimit<'static> = SizeLimit { bytes: 16, what: "the thing", hint: "make it smaller" };

    /// Counts how much was asked of it: the limit plus one, never the endless rest.
    struct Endless {
        delivered: usize,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b' ');
            self.delivered += buf.len();
            Ok(buf.len())
        }
    }

    #[test]
    fn reading_stops_one_byte_past_the_limit() {
        let mut endless = Endless { delivered: 0 };
        let Err(ReadError::Refused(d)) = read_bounded(&mut endless, &SMALL) else { panic!("not refused") };
        assert_eq!(endless.delivered, 17);
        assert_eq!(d.code, Code::LimitSize);
        assert_eq!(d.position, Some(Position { line: 1, col: 1 }));
        assert_eq!(d.message, "the thing is larger than the limit of 16 bytes (16 bytes)");
        assert_eq!(read_bounded(&b"{\"a\": 1}"[..], &SMALL).unwrap(), b"{\"a\": 1}");
    }

    #[test]
    fn the_streamed_reader_is_bounded_and_refuses_duplicates_with_a_position() {
        let Err(ReadError::Refused(d)) = read_json_streamed(Endless { delivered: 0 }, &SMALL) else { panic!() };
        assert_eq!(d.code, Code::LimitSize);

        let text = "{\"a\": [1, {\"b\": 1,\n \"b\": 2}]}";
        let Err(ReadError::Refused(d)) = read_json_streamed(text.as_bytes(), &BIG) else { panic!() };
        assert_eq!((d.code, d.pointer.as_str()), (Code::JsonDuplicateKey, "/a/1/b"));
        assert_eq!(d.position.map(|p| p.line), Some(2));

        let Err(ReadError::Refused(d)) = read_json_streamed(&b"{\"a\": 1} x"[..], &BIG) else { panic!() };
        assert_eq!(d.code, Code::JsonSyntax);

        let text = r#"{"s": "\u00e9", "n": [0, -1, 1.5, 18446744073709551615], "o": {"x": null, "y": true}}"#;
        let ours = read_json_streamed(text.as_bytes(), &BIG).unwrap();
        assert_eq!(ours, serde_json::from_str::<Value>(text).unwrap());
        let keys: Vec<&String> = ours["o"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["x", "y"]);
    }

    const BIG: SizeLimit<'static> = SizeLimit { bytes: 1 << 20, what: "the thing", hint: "make it smaller" };
}
