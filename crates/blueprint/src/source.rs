//! Reading blueprint text: a strict JSON reader that keeps where every value came from.
//!
//! `serde_json` alone cannot say where a value was, silently keeps the last of two
//! duplicate keys and recurses without a depth limit we choose, so blueprints are read
//! by this small parser. It builds a [`serde_json::Value`] and a [`SourceMap`] from
//! JSON Pointers to byte offsets; line and column are worked out only for the few
//! offsets a diagnostic needs.

mod bounded;
mod weigh;

pub use crate::limits::SizeLimit;
pub use bounded::{ReadError, read_bounded, read_json, read_json_streamed};
pub use weigh::{count_values, heavier_than, nesting};

use crate::diagnostic::{Code, Diagnostic, Position, pointer_push};
use crate::limits::{BLUEPRINT_SIZE, MAX_JSON_DEPTH};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// Where each value of a parsed document starts.
///
/// For an object member the recorded offset is that of its key, so a diagnostic about
/// a field points at the field's name; for array elements and the root it is the value.
///
/// Reading records only one offset per value, in document (pre-)order; the pointer
/// index is built from the parsed value the first time a position is asked for, so a
/// clean document costs no pointer strings at all.
#[derive(Debug, Default)]
pub struct SourceMap {
    text: String,
    /// One offset per value, in pre-order (the root first, then each member's key or
    /// element, then its children).
    preorder: Vec<usize>,
    /// Pointer → offset, built on demand by [`SourceMap::index`].
    offsets: HashMap<String, usize>,
    line_starts: Vec<usize>,
}

impl SourceMap {
    fn new(text: &str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        SourceMap { text: text.to_owned(), preorder: Vec::new(), offsets: HashMap::new(), line_starts }
    }

    /// Builds the pointer index for `value`, which must be the value this map was read
    /// with. Cheap to call again.
    pub fn index(&mut self, value: &Value) {
        if !self.offsets.is_empty() || self.preorder.is_empty() {
            return;
        }
        let mut next = 0;
        let mut pointer = String::new();
        self.index_value(value, &mut pointer, &mut next);
    }

    fn index_value(&mut self, value: &Value, pointer: &mut String, next: &mut usize) {
        if let Some(&off) = self.preorder.get(*next) {
            self.offsets.insert(pointer.clone(), off);
        }
        *next += 1;
        let len = pointer.len();
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    pointer.truncate(len);
                    *pointer = pointer_push(pointer, k);
                    self.index_value(v, pointer, next);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    pointer.truncate(len);
                    *pointer = pointer_push(pointer, &i.to_string());
                    self.index_value(v, pointer, next);
                }
            }
            _ => {}
        }
        pointer.truncate(len);
    }

    /// Line and column (1-based; columns count characters) of a byte offset.
    pub fn position_of_offset(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self.text.get(start..offset).map_or(offset - start, |s| s.chars().count());
        Position { line: line as u32, col: col as u32 + 1 }
    }

    /// Position of the value a pointer names, or of its nearest recorded parent.
    pub fn position(&self, pointer: &str) -> Position {
        let mut p = pointer;
        loop {
            if let Some(&off) = self.offsets.get(p) {
                return self.position_of_offset(off);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return self.position_of_offset(0),
            }
        }
    }

    /// Fills in `position` on each diagnostic from its pointer. `value` is the value
    /// this map was read with.
    pub fn locate(&mut self, value: &Value, diagnostics: &mut [Diagnostic]) {
        if diagnostics.iter().all(|d| d.position.is_some()) {
            return;
        }
        self.index(value);
        for d in diagnostics {
            if d.position.is_none() {
                d.position = Some(self.position(&d.pointer));
            }
        }
    }
}

/// A parsed document with its source map and any warnings from reading it.
#[derive(Debug)]
pub struct Parsed {
    pub value: Value,
    pub map: SourceMap,
    pub warnings: Vec<Diagnostic>,
}

/// Parses blueprint bytes. Errors are fatal and carry a position.
pub fn parse(bytes: &[u8]) -> Result<Parsed, Diagnostic> {
    parse_within(bytes, &BLUEPRINT_SIZE)
}

/// Parses a document of another kind (inputs, a servers file) as strictly as a
/// blueprint, with that kind's size limit.
pub fn parse_within(bytes: &[u8], limit: &SizeLimit<'_>) -> Result<Parsed, Diagnostic> {
    if bytes.len() > limit.bytes {
        return Err(limit.exceeded());
    }
    let mut warnings = Vec::new();
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => {
            let mut d =
                Diagnostic::new(Code::JsonBom, "", "the file starts with a UTF-8 byte order mark; it was ignored")
                    .with_hint("save the file as UTF-8 without a BOM; other JSON tools may reject it");
            d.position = Some(Position { line: 1, col: 1 });
            warnings.push(d);
            rest
        }
        None => bytes,
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // The valid prefix is UTF-8 by construction.
            let prefix = std::str::from_utf8(valid).unwrap_or_default();
            let map = SourceMap::new(prefix);
            let mut d =
                Diagnostic::new(Code::JsonInvalidUtf8, "", format!("invalid UTF-8 at byte {}", e.valid_up_to()))
                    .with_hint("blueprints must be UTF-8 text; re-save the file with UTF-8 encoding");
            d.position = Some(map.position_of_offset(prefix.len()));
            return Err(d);
        }
    };
    let mut map = SourceMap::new(text);
    let mut parser = Parser { text, bytes: text.as_bytes(), pos: 0, preorder: &mut map.preorder };
    let result = parser.document();
    match result {
        Ok(value) => Ok(Parsed { value, map, warnings }),
        Err(mut d) => {
            d.position = Some(map.position_of_offset(d.position.map_or(0, |p| p.col as usize)));
            Err(d)
        }
    }
}

/// Where the parser is, as a chain on the stack; a pointer string is made only for errors.
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    fn pointer(&self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Key(parent, key) => pointer_push(&parent.pointer(), key),
            Path::Index(parent, i) => pointer_push(&parent.pointer(), &i.to_string()),
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    preorder: &'a mut Vec<usize>,
}

type PResult<T> = Result<T, Diagnostic>;

impl Parser<'_> {
    /// A fatal error at a byte offset. The offset travels in `position.col` until
    /// [`parse`] converts it into a real line and column.
    fn fail(&self, code: Code, path: &Path<'_>, at: usize, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(code, path.pointer(), message);
        d.position = Some(Position { line: 0, col: at as u32 });
        d
    }

    fn syntax(&self, path: &Path<'_>, message: impl Into<String>) -> Diagnostic {
        self.fail(Code::JsonSyntax, path, self.pos, message)
            .with_hint("fix the JSON syntax; an editor with JSON support shows the exact spot")
    }

    fn document(&mut self) -> PResult<Value> {
        self.ws();
        if self.pos >= self.bytes.len() {
            return Err(self.syntax(&Path::Root, "the document is empty; expected a JSON object"));
        }
        self.preorder.push(self.pos);
        let v = self.value(&Path::Root, 0)?;
        self.ws();
        if self.pos < self.bytes.len() {
            return Err(
                self.syntax(&Path::Root, format!("unexpected {} after the end of the document", self.describe_here()))
            );
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while let Some(b) = self.bytes.get(self.pos) {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.pos += 1,
                _ => break,
            }
        }
    }

    fn describe_here(&self) -> String {
        match self.text.get(self.pos..).and_then(|s| s.chars().next()) {
            None => "end of file".into(),
            Some(c) if c.is_control() => format!("control character U+{:04X}", c as u32),
            Some(c) => format!("`{c}`"),
        }
    }

    fn value(&mut self, ptr: &Path<'_>, depth: usize) -> PResult<Value> {
        match self.bytes.get(self.pos) {
            Some(b'{') => self.object(ptr, depth + 1),
            Some(b'[') => self.array(ptr, depth + 1),
            Some(b'"') => self.string(ptr).map(Value::String),
            Some(b't') => self.keyword("true", Value::Bool(true), ptr),
            Some(b'f') => self.keyword("false", Value::Bool(false), ptr),
            Some(b'n') => self.keyword("null", Value::Null, ptr),
            Some(b'-' | b'0'..=b'9') => self.number(ptr),
            _ => Err(self.syntax(ptr, format!("expected a value, found {}", self.describe_here()))),
        }
    }

    fn enter(&self, ptr: &Path<'_>, depth: usize) -> PResult<()> {
        if depth > MAX_JSON_DEPTH {
            return Err(self
                .fail(Code::LimitNesting, ptr, self.pos, format!("JSON nested deeper than {MAX_JSON_DEPTH} levels"))
                .with_hint(
                    "flatten the data; deeply nested values belong in an input or a resource, not in the blueprint",
                ));
        }
        Ok(())
    }

    fn keyword(&mut self, word: &str, v: Value, ptr: &Path<'_>) -> PResult<Value> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.syntax(ptr, format!("expected a value, found {}", self.describe_here())))
        }
    }

    fn object(&mut self, ptr: &Path<'_>, depth: usize) -> PResult<Value> {
        self.enter(ptr, depth)?;
        self.pos += 1;
        let mut map = Map::new();
        let mut first_seen: HashMap<String, usize> = HashMap::new();
        self.ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(
                    self.syntax(ptr, format!("expected a key in double quotes, found {}", self.describe_here()))
                );
            }
            let key_at = self.pos;
            let key = self.string(ptr)?;
            let child = Path::Key(ptr, &key);
            if let Some(&first) = first_seen.get(&key) {
                let (line, col) = line_col(self.text, first);
                return Err(self
                    .fail(
                        Code::JsonDuplicateKey,
                        &child,
                        key_at,
                        format!("duplicate key `{key}` (first at line {line}, column {col})"),
                    )
                    .with_hint("JSON readers disagree on which duplicate wins; keep only one"));
            }
            first_seen.insert(key.clone(), key_at);
            self.preorder.push(key_at);
            self.ws();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.syntax(&child, format!("expected `:` after the key, found {}", self.describe_here())));
            }
            self.pos += 1;
            self.ws();
            let v = self.value(&child, depth)?;
            map.insert(key, v);
            self.ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(self.syntax(ptr, format!("expected `,` or `}}`, found {}", self.describe_here()))),
            }
        }
    }

    fn array(&mut self, ptr: &Path<'_>, depth: usize) -> PResult<Value> {
        self.enter(ptr, depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            self.preorder.push(self.pos);
            let child = Path::Index(ptr, items.len());
            items.push(self.value(&child, depth)?);
            self.ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    // Grown by doubling: a long list would keep up to twice its size.
                    items.shrink_to_fit();
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.syntax(ptr, format!("expected `,` or `]`, found {}", self.describe_here()))),
            }
        }
    }

    fn string(&mut self, ptr: &Path<'_>) -> PResult<String> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(&b) = self.bytes.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            out.push_str(&self.text[start..self.pos]);
            match self.bytes.get(self.pos) {
                None => return Err(self.syntax(ptr, "unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let c = self.escape(ptr)?;
                    out.push(c);
                }
                Some(_) => {
                    return Err(self.syntax(
                        ptr,
                        format!("{} inside a string; write it escaped (\\n, \\t, \\u00XX)", self.describe_here()),
                    ));
                }
            }
        }
    }

    fn escape(&mut self, ptr: &Path<'_>) -> PResult<char> {
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.syntax(ptr, "unterminated string"));
        };
        self.pos += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4(ptr)?;
                if (0xD800..0xDC00).contains(&hi) {
                    if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                        return Err(self.syntax(ptr, "a high surrogate escape must be followed by a low surrogate"));
                    }
                    self.pos += 2;
                    let lo = self.hex4(ptr)?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(self.syntax(ptr, "invalid low surrogate in a \\u escape"));
                    }
                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                    char::from_u32(c).ok_or_else(|| self.syntax(ptr, "invalid \\u escape"))?
                } else {
                    char::from_u32(hi).ok_or_else(|| self.syntax(ptr, "a lone low surrogate in a \\u escape"))?
                }
            }
            _ => {
                self.pos -= 1;
                return Err(self.syntax(ptr, format!("invalid escape `\\{}`", self.describe_here().trim_matches('`'))));
            }
        })
    }

    fn hex4(&mut self, ptr: &Path<'_>) -> PResult<u32> {
        let digits = self.text.get(self.pos..self.pos + 4).filter(|s| s.bytes().all(|b| b.is_ascii_hexdigit()));
        let Some(digits) = digits else {
            return Err(self.syntax(ptr, "a \\u escape needs four hex digits"));
        };
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.syntax(ptr, "a \\u escape needs four hex digits"))
    }

    fn number(&mut self, ptr: &Path<'_>) -> PResult<Value> {
        let start = self.pos;
        let b = self.bytes;
        let digits = |p: &mut usize| {
            let s = *p;
            while b.get(*p).is_some_and(u8::is_ascii_digit) {
                *p += 1;
            }
            *p > s
        };
        let mut p = self.pos;
        if b.get(p) == Some(&b'-') {
            p += 1;
        }
        let int_start = p;
        if !digits(&mut p) {
            self.pos = p;
            return Err(self.syntax(ptr, "a number needs digits"));
        }
        if b[int_start] == b'0' && p - int_start > 1 {
            self.pos = int_start;
            return Err(self.syntax(ptr, "numbers may not have leading zeros"));
        }
        let mut is_float = false;
        if b.get(p) == Some(&b'.') {
            p += 1;
            is_float = true;
            if !digits(&mut p) {
                self.pos = p;
                return Err(self.syntax(ptr, "a digit must follow the decimal point"));
            }
        }
        if matches!(b.get(p), Some(b'e' | b'E')) {
            p += 1;
            is_float = true;
            if matches!(b.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            if !digits(&mut p) {
                self.pos = p;
                return Err(self.syntax(ptr, "an exponent needs digits"));
            }
        }
        self.pos = p;
        let lexeme = &self.text[start..p];
        if !is_float {
            if let Ok(n) = lexeme.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
            if let Ok(n) = lexeme.parse::<i64>() {
                return Ok(Value::Number(n.into()));
            }
        }
        match lexeme.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Value::Number(n)),
            None => {
                self.pos = start;
                Err(self.syntax(ptr, format!("the number {lexeme} is out of range")))
            }
        }
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_key_positions_for_members_and_value_positions_for_elements() {
        let mut p = parse(b"{\n  \"a\": [1,\n    {\"b\": true}]\n}").unwrap();
        p.map.index(&p.value);
        assert_eq!(p.map.position("/a"), Position { line: 2, col: 3 });
        assert_eq!(p.map.position("/a/1"), Position { line: 3, col: 5 });
        assert_eq!(p.map.position("/a/1/b"), Position { line: 3, col: 6 });
        assert_eq!(p.map.position("/a/1/b/zzz"), Position { line: 3, col: 6 });
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let mut p = parse("{\"é\": 1, \"x\": 2}".as_bytes()).unwrap();
        p.map.index(&p.value);
        assert_eq!(p.map.position("/x"), Position { line: 1, col: 10 });
    }

    #[test]
    fn parses_escapes_and_numbers_like_serde_json() {
        let text = r#"{"s": "a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "n": [0, -1, 1.5, 1e3, 18446744073709551615, -9223372036854775808]}"#;
        let ours = parse(text.as_bytes()).unwrap().value;
        let theirs: Value = serde_json::from_str(text).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn rejects_what_json_forbids() {
        for bad in [
            "",
            "{",
            "{\"a\" 1}",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "\"\\x\"",
            "\"\u{1}\"",
            "nul",
            "{} x",
            "\"\\ud800\"",
            "1e999",
        ] {
            let err = parse(bad.as_bytes()).unwrap_err();
            assert_eq!(err.code, Code::JsonSyntax, "{bad:?}: {err}");
        }
    }
}
