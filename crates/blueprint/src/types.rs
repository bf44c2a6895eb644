//! What is known of a value before any run: its type, as a JSON Schema. A tool step's
//! output has the tool's `outputSchema`, the inputs have the blueprint's `inputs`, a
//! transform has the shape its `value` spells out, a loop is an array of what it
//! collects. Where nothing is known (no schema, an expression other than a plain path),
//! nothing is claimed: a lookup answers [`Lookup::Unknown`].
//!
//! Only the parts of JSON Schema that say what a value has are read: `type`,
//! `properties`, `additionalProperties`, `patternProperties`, `items`, `prefixItems`,
//! local `$ref`s (`#/$defs/…`, `#/definitions/…`) and the `anyOf`/`oneOf` of one type
//! with `null` that typed languages write for an optional value. Anything else
//! (`allOf`, unions of several shapes, remote references) reads as unknown.

use crate::template::{PathSegment, Template};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// How many `$ref`s (and optional wrappers) one lookup follows before giving up: a
/// recursive schema never loops.
const MAX_HOPS: usize = 32;

/// A known type: a schema, the document its `$ref`s point into, and where it came from
/// (for messages: "the output schema of tool `s`/`t` (step `w`)").
#[derive(Clone, Debug)]
pub struct Type {
    schema: Value,
    root: Arc<Value>,
    source: Arc<str>,
}

/// What looking up one path segment in a type found.
#[derive(Debug)]
pub enum Lookup {
    /// The segment is there, with this type (or `None`: there, of unknown type).
    Found(Option<Type>),
    /// Nothing can be said (no schema, or one this module does not read).
    Unknown,
    /// An object without that field. `closed`: the schema allows no other field.
    Missing { closed: bool, fields: Vec<String> },
    /// The value is not an object (or not an array, for an index): `found` names
    /// what it is ("a string").
    NotA { wanted: &'static str, found: String },
}

impl Type {
    /// `schema` as a whole document (its `$ref`s resolve against itself).
    pub fn new(schema: Value, source: impl Into<Arc<str>>) -> Type {
        let root = Arc::new(schema.clone());
        Type { schema, root, source: source.into() }
    }

    /// The type of a literal JSON value: its JSON type, and for objects exactly its keys.
    pub fn of_value(value: &Value, source: impl Into<Arc<str>>) -> Type {
        Type::new(schema_of_value(value), source)
    }

    /// Where the type comes from, for messages.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The schema itself (after following references and optional wrappers).
    pub fn schema(&self) -> &Value {
        self.resolved().unwrap_or(&self.schema)
    }

    fn child(&self, schema: &Value) -> Option<Type> {
        match schema {
            // `true` and `{}` say nothing.
            Value::Bool(true) => None,
            Value::Object(m) if m.is_empty() => None,
            Value::Object(_) => {
                Some(Type { schema: schema.clone(), root: self.root.clone(), source: self.source.clone() })
            }
            _ => None,
        }
    }

    /// The schema with `$ref`s and "this or null" wrappers followed; `None` when it
    /// cannot be read.
    fn resolved(&self) -> Option<&Value> {
        let mut at = &self.schema;
        for _ in 0..MAX_HOPS {
            let Value::Object(m) = at else { return None };
            if let Some(Value::String(r)) = m.get("$ref") {
                at = local_ref(&self.root, r)?;
                continue;
            }
            let union = m.get("anyOf").or_else(|| m.get("oneOf"));
            if let Some(Value::Array(branches)) = union {
                let mut not_null = branches.iter().filter(|b| !is_null_schema(b));
                match (not_null.next(), not_null.next()) {
                    (Some(one), None) => {
                        at = one;
                        continue;
                    }
                    _ => return None,
                }
            }
            return Some(at);
        }
        None
    }

    /// The JSON types the value may have (`integer` counted as `number`), or `None` when
    /// the schema does not say.
    pub fn json_types(&self) -> Option<Vec<&str>> {
        let s = self.resolved()?;
        let mut types: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if s.get("const").is_some() => vec![json_type(&s["const"])],
            _ => return None,
        };
        for t in &mut types {
            if *t == "integer" {
                *t = "number";
            }
        }
        types.sort_unstable();
        types.dedup();
        Some(types)
    }

    /// "a string", "a number or null": what the value is, for messages.
    pub fn describe(&self) -> String {
        match self.json_types() {
            Some(types) if !types.is_empty() => types.iter().map(|t| with_article(t)).collect::<Vec<_>>().join(" or "),
            _ => "a value".into(),
        }
    }

    /// The type of `segment` of this value.
    pub fn lookup(&self, segment: &PathSegment) -> Lookup {
        let Some(s) = self.resolved() else { return Lookup::Unknown };
        let types = self.json_types();
        match segment {
            PathSegment::Field(name) => {
                if let Some(types) = &types
                    && !types.contains(&"object")
                {
                    return Lookup::NotA { wanted: "object", found: self.describe() };
                }
                let properties = s.get("properties").and_then(Value::as_object);
                if let Some(p) = properties.and_then(|p| p.get(name)) {
                    return Lookup::Found(self.child(p));
                }
                if s.get("patternProperties").is_some() {
                    return Lookup::Unknown;
                }
                match s.get("additionalProperties") {
                    Some(Value::Bool(false)) => Lookup::Missing {
                        closed: true,
                        fields: properties.map(|p| p.keys().cloned().collect()).unwrap_or_default(),
                    },
                    Some(extra @ Value::Object(_)) => Lookup::Found(self.child(extra)),
                    // Open: a field the schema lists none of is worth a word only when it
                    // lists some.
                    _ => match properties {
                        Some(p) if !p.is_empty() => {
                            Lookup::Missing { closed: false, fields: p.keys().cloned().collect() }
                        }
                        _ => Lookup::Unknown,
                    },
                }
            }
            PathSegment::Index(i) => {
                if let Some(types) = &types
                    && !types.contains(&"array")
                {
                    return Lookup::NotA { wanted: "array", found: self.describe() };
                }
                if let (Ok(at), Some(Value::Array(prefix))) = (usize::try_from(*i), s.get("prefixItems"))
                    && let Some(p) = prefix.get(at)
                {
                    return Lookup::Found(self.child(p));
                }
                match s.get("items") {
                    Some(items @ Value::Object(_)) => Lookup::Found(self.child(items)),
                    _ => Lookup::Unknown,
                }
            }
        }
    }
}

/// The type of a template's result, where it can be told without running it: literals,
/// objects and arrays of templates, text (always a string) and plain paths, whose types
/// `path` gives.
pub fn infer(
    template: &Template,
    source: &Arc<str>,
    path: &mut dyn FnMut(&str, &[PathSegment]) -> Option<Type>,
) -> Option<Type> {
    Some(Type::new(infer_schema(template, path)?, source.clone()))
}

fn infer_schema(template: &Template, path: &mut dyn FnMut(&str, &[PathSegment]) -> Option<Type>) -> Option<Value> {
    match template {
        Template::Literal(v) => Some(schema_of_value(v)),
        Template::Text(_) => Some(json!({ "type": "string" })),
        Template::Expr(e) => {
            let (root, segments) = e.plain_path()?;
            path(root, segments).map(|t| inline(&t))
        }
        Template::Array(_) => Some(json!({ "type": "array" })),
        Template::Object(members) => {
            let mut properties = Map::new();
            for (k, t) in members {
                properties.insert(k.clone(), infer_schema(t, path).unwrap_or(json!({})));
            }
            Some(json!({ "type": "object", "properties": properties, "additionalProperties": false }))
        }
    }
}

/// A type's schema made self-contained enough to nest in another: its references
/// resolved one level (a deeper `$ref` into the original document reads as unknown).
fn inline(t: &Type) -> Value {
    t.resolved().cloned().unwrap_or(json!({}))
}

/// An array of `items`.
pub fn array_of(items: Option<&Type>, source: impl Into<Arc<str>>) -> Type {
    match items {
        Some(t) => {
            let root = t.root.clone();
            Type { schema: json!({ "type": "array", "items": inline(t) }), root, source: source.into() }
        }
        None => Type::new(json!({ "type": "array" }), source),
    }
}

fn schema_of_value(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let properties: Map<String, Value> = m.iter().map(|(k, v)| (k.clone(), schema_of_value(v))).collect();
            json!({ "type": "object", "properties": properties, "additionalProperties": false })
        }
        Value::Array(items) => {
            let first = items.first().map(schema_of_value);
            match first {
                Some(f) if items.iter().skip(1).all(|i| schema_of_value(i) == f) => {
                    json!({ "type": "array", "items": f })
                }
                _ => json!({ "type": "array" }),
            }
        }
        other => json!({ "type": json_type(other) }),
    }
}

/// The JSON Schema type name of a value (`integer` for a whole number).
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn with_article(t: &str) -> String {
    match t {
        "null" => "null".into(),
        "object" | "array" | "integer" => format!("an {t}"),
        _ => format!("a {t}"),
    }
}

fn is_null_schema(s: &Value) -> bool {
    s.get("type").and_then(Value::as_str) == Some("null")
}

/// `#/$defs/Name` (or any local JSON pointer) in `root`.
fn local_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(t: &Type, name: &str) -> Lookup {
        t.lookup(&PathSegment::Field(name.into()))
    }

    #[test]
    fn references_and_optional_wrappers_are_followed() {
        let t = Type::new(
            json!({ "type": "object", "properties": { "w": { "anyOf": [{ "$ref": "#/$defs/W" }, { "type": "null" }] } },
                    "$defs": { "W": { "type": "object", "properties": { "temp_c": { "type": "number" } } } } }),
            "test",
        );
        let Lookup::Found(Some(w)) = field(&t, "w") else { panic!() };
        assert!(matches!(field(&w, "temp_c"), Lookup::Found(Some(_))));
        assert!(matches!(field(&w, "temperature"), Lookup::Missing { closed: false, .. }));
    }

    #[test]
    fn a_recursive_reference_gives_up_instead_of_looping() {
        let t = Type::new(json!({ "$ref": "#" }), "test");
        assert!(matches!(field(&t, "x"), Lookup::Unknown));
    }

    #[test]
    fn open_and_absent_schemas_claim_nothing() {
        for schema in [
            json!({}),
            json!({ "type": "object" }),
            json!({ "type": "object", "patternProperties": { "^x": {} }, "properties": { "a": {} } }),
        ] {
            assert!(matches!(field(&Type::new(schema.clone(), "t"), "b"), Lookup::Unknown), "{schema}");
        }
    }

    #[test]
    fn a_literal_is_closed_and_a_string_has_no_fields() {
        let t = Type::of_value(&json!({ "name": "ada", "tags": ["a", "b"] }), "t");
        assert!(matches!(field(&t, "nmae"), Lookup::Missing { closed: true, .. }));
        let Lookup::Found(Some(name)) = field(&t, "name") else { panic!() };
        assert!(matches!(field(&name, "x"), Lookup::NotA { wanted: "object", .. }));
        let Lookup::Found(Some(tags)) = field(&t, "tags") else { panic!() };
        assert!(matches!(tags.lookup(&PathSegment::Index(0)), Lookup::Found(Some(_))));
        assert_eq!(name.describe(), "a string");
    }
}
