//! Turning raw MCP results into step outputs (DESIGN §2, Results).
//!
//! | result | output |
//! |---|---|
//! | tool with `structuredContent` | that value |
//! | tool with one text item that parses as JSON | that JSON |
//! | tool with one text item | the string |
//! | otherwise | the `content` array |
//! | resource | the same rule over `contents`; a blob becomes `{ mimeType, blob }` |
//! | prompt | its `messages` array |
//!
//! `isError: true` fails the step with the tool's text as the message.

use mcpflow_blueprint::template::{Rcvar, Variable, value_ref_to_var};
use serde_json::{Value, json};
use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};

/// A tool result that reports failure (`isError: true`): the tool's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailed(pub String);

/// Whether a tool's error text says it refused its arguments: rmcp's "failed to
/// deserialize parameters", the TypeScript SDK's "Invalid arguments for tool" / "Input
/// validation error", JSON-RPC's -32602. The step then fails as `ARGS_INVALID` (not
/// retried: the same arguments fail the same way) with the server's text as its detail.
pub fn refused_arguments(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["failed to deserialize parameters", "invalid arguments for tool", "input validation error", "mcp error -32602"]
        .iter()
        .any(|p| lower.contains(p))
}

/// The output of a `tool` step.
pub fn tool_output(raw: &Value) -> Result<Value, ToolFailed> {
    tool_output_in(raw).map(Cow::into_owned)
}

/// The output of a `tool` step, borrowed from `raw` when it is a part of it.
pub(crate) fn tool_output_in(raw: &Value) -> Result<Cow<'_, Value>, ToolFailed> {
    let content = raw.get("content").filter(|c| c.is_array());
    let items = content.and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    if raw.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: Vec<&str> = items.iter().filter_map(|c| c.get("text").and_then(Value::as_str)).collect();
        let message =
            if text.is_empty() { "the tool reported an error without text".to_owned() } else { text.join("\n") };
        return Err(ToolFailed(message));
    }
    if let Some(structured) = raw.get("structuredContent").filter(|v| !v.is_null()) {
        return Ok(Cow::Borrowed(structured));
    }
    Ok(match (single_text(items, "text"), content) {
        (Some(text), _) => Cow::Owned(text),
        (None, Some(content)) => Cow::Borrowed(content),
        (None, None) => Cow::Owned(Value::Array(Vec::new())),
    })
}

/// The output of a `resource` step.
pub fn resource_output(raw: &Value) -> Value {
    let contents = raw.get("contents").and_then(Value::as_array).cloned().unwrap_or_default();
    if let [one] = contents.as_slice()
        && let Some(blob) = one.get("blob")
    {
        return json!({ "mimeType": one.get("mimeType").cloned().unwrap_or(Value::Null), "blob": blob });
    }
    single_text(&contents, "text").unwrap_or(Value::Array(contents))
}

/// The output of a `prompt` step.
pub fn prompt_output(raw: &Value) -> Value {
    raw.get("messages").cloned().unwrap_or(Value::Array(Vec::new()))
}

/// A step output in the two forms the engine keeps, made in one pass: the JMESPath
/// value templates read, and the JSON events and saved values show — the same JSON
/// [`var_to_value`](mcpflow_blueprint::template::var_to_value) gives back for that
/// value (object members in key order).
///
/// The JMESPath value is what a run keeps for as long as templates may read it, so it
/// is built compact: equal parts of one output (the same labels, resource limits,
/// timestamps, ports in every item of a list) are one shared value. Values are never
/// changed once built, so sharing is invisible to templates and to the JSON they give.
///
/// A small output (most single-object results) is built plainly: it has little to
/// share, and looking for equal parts would cost more than they weigh.
pub(crate) fn output_forms(output: Cow<'_, Value>) -> (Value, Rcvar) {
    let mut json = output.into_owned();
    // Reorders members in place: no key is hashed again.
    json.sort_all_objects();
    let var = if has_nodes(&json, SHARE_FROM_NODES) { Shared::default().var(&json) } else { value_ref_to_var(&json) };
    (json, var)
}

/// Outputs of at least this many JSON values are built with equal parts shared.
const SHARE_FROM_NODES: usize = 64;

/// Whether `value` holds at least `n` JSON values (itself included); stops counting there.
fn has_nodes(value: &Value, n: usize) -> bool {
    fn reaches(value: &Value, left: &mut usize) -> bool {
        *left = left.saturating_sub(1);
        *left == 0
            || match value {
                Value::Array(items) => items.iter().any(|v| reaches(v, left)),
                Value::Object(map) => map.values().any(|v| reaches(v, left)),
                _ => false,
            }
    }
    let mut left = n;
    reaches(value, &mut left)
}

/// Builds JMESPath values from JSON whose objects are in key order, sharing equal
/// parts (hash-consing). Children are shared before their parent is built, so two
/// equal values have the very same children, and comparing them is shallow.
///
/// Values are found by a quick hash of their content ([`Quick`]); a value whose hash
/// was taken by an unequal one is simply not shared, so values a server chose to
/// collide cost no more than values that are all different.
#[derive(Default)]
struct Shared {
    seen: HashMap<u64, Rcvar>,
    /// `null`, `false`, `true`.
    scalars: [Option<Rcvar>; 3],
}

impl Shared {
    fn var(&mut self, value: &Value) -> Rcvar {
        match value {
            Value::Null => self.scalar(0, Variable::Null),
            Value::Bool(b) => self.scalar(1 + usize::from(*b), Variable::Bool(*b)),
            Value::Number(n) => {
                let (kind, bits) = number_key(n);
                let hash = Quick::of(|h| {
                    h.add(u64::from(kind));
                    h.add(bits);
                });
                self.share(
                    hash,
                    |seen| matches!(seen, Variable::Number(m) if number_key(m) == (kind, bits)),
                    || Variable::Number(n.clone()),
                )
            }
            Value::String(s) => {
                let hash = Quick::of(|h| {
                    h.add(3);
                    h.add_bytes(s.as_bytes());
                });
                self.share(hash, |seen| matches!(seen, Variable::String(t) if t == s), || Variable::String(s.clone()))
            }
            Value::Array(items) => {
                let items: Vec<Rcvar> = items.iter().map(|v| self.var(v)).collect();
                let hash = Quick::of(|h| {
                    h.add(4);
                    items.iter().for_each(|v| h.add(Rcvar::as_ptr(v) as usize as u64));
                });
                self.share_built(hash, Variable::Array(items))
            }
            // From members in key order, the tree is built in one go.
            Value::Object(map) => {
                let map: BTreeMap<String, Rcvar> = map.iter().map(|(k, v)| (k.clone(), self.var(v))).collect();
                let hash = Quick::of(|h| {
                    h.add(5);
                    for (k, v) in &map {
                        h.add_bytes(k.as_bytes());
                        h.add(Rcvar::as_ptr(v) as usize as u64);
                    }
                });
                self.share_built(hash, Variable::Object(map))
            }
        }
    }

    fn scalar(&mut self, slot: usize, value: Variable) -> Rcvar {
        self.scalars[slot].get_or_insert_with(|| Rcvar::new(value)).clone()
    }

    /// The value seen before under `hash` when `same` says it is equal, else a new one.
    fn share(&mut self, hash: u64, same: impl FnOnce(&Variable) -> bool, new: impl FnOnce() -> Variable) -> Rcvar {
        match self.seen.entry(hash) {
            Entry::Occupied(seen) if same(seen.get()) => seen.get().clone(),
            Entry::Occupied(_) => Rcvar::new(new()),
            Entry::Vacant(slot) => slot.insert(Rcvar::new(new())).clone(),
        }
    }

    fn share_built(&mut self, hash: u64, value: Variable) -> Rcvar {
        match self.seen.entry(hash) {
            Entry::Occupied(seen) if shallow_eq(seen.get(), &value) => seen.get().clone(),
            Entry::Occupied(_) => Rcvar::new(value),
            Entry::Vacant(slot) => slot.insert(Rcvar::new(value)).clone(),
        }
    }
}

/// A quick, non-cryptographic hash (FxHash's mixing), used only to find candidates.
struct Quick(u64);

impl Quick {
    fn of(build: impl FnOnce(&mut Quick)) -> u64 {
        let mut h = Quick(0);
        build(&mut h);
        h.0
    }

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn add_bytes(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let mut last = [0; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(last));
        self.add(bytes.len() as u64);
    }
}

/// A number's exact JSON form: `1`, `-1` and `1.0` (and `0.0` and `-0.0`) stay apart.
fn number_key(n: &serde_json::Number) -> (u8, u64) {
    match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => (0, u),
        (None, Some(i), _) => (1, i.cast_unsigned()),
        (None, None, f) => (2, f.unwrap_or_default().to_bits()),
    }
}

/// Equal arrays or objects whose children are shared: the same keys, the same children.
fn shallow_eq(a: &Variable, b: &Variable) -> bool {
    match (a, b) {
        (Variable::Array(x), Variable::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| Rcvar::ptr_eq(a, b))
        }
        (Variable::Object(x), Variable::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && Rcvar::ptr_eq(a, b))
        }
        _ => false,
    }
}

/// A single text item: its JSON when it parses, else the string.
fn single_text(items: &[Value], field: &str) -> Option<Value> {
    let [one] = items else { return None };
    let text = one.get(field)?.as_str()?;
    if one.get("type").and_then(Value::as_str).is_some_and(|t| t != "text") {
        return None;
    }
    Some(serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpflow_blueprint::template::{value_to_var, var_to_value};

    #[test]
    fn structured_content_wins() {
        let raw = json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"b": 2}});
        assert_eq!(tool_output(&raw), Ok(json!({"b": 2})));
    }

    #[test]
    fn a_single_json_text_becomes_json_and_plain_text_stays_a_string() {
        assert_eq!(tool_output(&json!({"content": [{"type": "text", "text": "[1,2]"}]})), Ok(json!([1, 2])));
        assert_eq!(tool_output(&json!({"content": [{"type": "text", "text": "hello"}]})), Ok(json!("hello")));
        assert_eq!(tool_output(&json!({"content": [{"type": "text", "text": "42"}]})), Ok(json!(42)));
    }

    #[test]
    fn several_items_stay_the_content_array() {
        let content = json!([{"type": "text", "text": "a"}, {"type": "image", "data": "xx", "mimeType": "image/png"}]);
        assert_eq!(tool_output(&json!({"content": content})), Ok(content));
        assert_eq!(tool_output(&json!({"content": []})), Ok(json!([])));
    }

    #[test]
    fn is_error_fails_with_the_tool_text() {
        let raw = json!({"content": [{"type": "text", "text": "no such pod"}], "isError": true});
        assert_eq!(tool_output(&raw), Err(ToolFailed("no such pod".into())));
    }

    #[test]
    fn resources_follow_the_same_rule_and_blobs_keep_their_type() {
        let text = json!({"contents": [{"uri": "x://a", "mimeType": "application/json", "text": "{\"k\":1}"}]});
        assert_eq!(resource_output(&text), json!({"k": 1}));
        let blob = json!({"contents": [{"uri": "x://b", "mimeType": "image/png", "blob": "AAEC"}]});
        assert_eq!(resource_output(&blob), json!({"mimeType": "image/png", "blob": "AAEC"}));
    }

    #[test]
    fn both_forms_are_what_the_scope_and_its_conversion_back_give() {
        let value = json!({"b": [1, 2.5, "x", null, true, {"z": {}, "c": [{"y": 1, "x": 2}]}], "a": "y", "n": -3});
        let expected_var = value_to_var(value.clone());
        let expected_json = serde_json::to_string(&var_to_value(&expected_var)).unwrap();
        for (json, var) in [output_forms(Cow::Borrowed(&value)), output_forms(Cow::Owned(value.clone()))] {
            assert_eq!(var, expected_var);
            // Member order included.
            assert_eq!(serde_json::to_string(&json).unwrap(), expected_json);
        }
    }

    /// Both forms, built with sharing whatever the size.
    fn shared_forms(value: &Value) -> (Value, Rcvar) {
        let mut json = value.clone();
        json.sort_all_objects();
        let var = Shared::default().var(&json);
        (json, var)
    }

    #[test]
    fn equal_parts_of_an_output_are_one_shared_value() {
        let item = json!({"limits": {"cpu": "100m", "memory": "128Mi"}, "ports": [{"port": 80}], "up": true});
        let value = json!({"items": [item.clone(), item, {"limits": {"cpu": "100m", "memory": "128Mi"}}]});
        let (_, var) = shared_forms(&value);
        let items = var.as_object().unwrap()["items"].as_array().unwrap().clone();
        assert!(Rcvar::ptr_eq(&items[0], &items[1]));
        assert!(!Rcvar::ptr_eq(&items[0], &items[2]));
        let limits = |v: &Rcvar| v.as_object().unwrap()["limits"].clone();
        assert!(Rcvar::ptr_eq(&limits(&items[0]), &limits(&items[2])));
        assert_eq!(var, value_to_var(value));
    }

    #[test]
    fn numbers_are_shared_only_with_the_same_json_form() {
        let value = json!([1, 1.0, -1, 0.0, -0.0, 1, [1, 1.0], [1, 1.0], [1.0, 1], {}, {}, [], [], "1", "1"]);
        let (json, var) = shared_forms(&value);
        assert_eq!(json.to_string(), value.to_string());
        assert_eq!(var_to_value(&var).to_string(), value.to_string());
        let items = var.as_array().unwrap();
        assert!(Rcvar::ptr_eq(&items[0], &items[5]));
        for (a, b) in [(0, 1), (0, 2), (3, 4), (6, 8), (0, 13)] {
            assert!(!Rcvar::ptr_eq(&items[a], &items[b]), "{a} and {b}");
        }
        for (a, b) in [(6, 7), (9, 10), (11, 12), (13, 14)] {
            assert!(Rcvar::ptr_eq(&items[a], &items[b]), "{a} and {b}");
        }
    }

    #[test]
    fn only_outputs_of_some_size_are_built_with_sharing() {
        let list = |n: usize| json!({ "items": vec![json!({"phase": "Running"}); n] });
        // An object, its `items`, and two values per item.
        let small = list((SHARE_FROM_NODES - 2) / 2 - 1);
        let large = list((SHARE_FROM_NODES - 2) / 2);
        assert!(!has_nodes(&small, SHARE_FROM_NODES) && has_nodes(&large, SHARE_FROM_NODES));
        for (value, shared) in [(small, false), (large, true)] {
            let (json, var) = output_forms(Cow::Borrowed(&value));
            assert_eq!(json, value);
            assert_eq!(var, value_to_var(value.clone()));
            let items = var.as_object().unwrap()["items"].as_array().unwrap().clone();
            assert_eq!(Rcvar::ptr_eq(&items[0], &items[1]), shared);
        }
    }

    #[test]
    fn tool_outputs_are_borrowed_from_the_result_when_they_are_part_of_it() {
        let raw = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "structuredContent": {"k": 1}});
        assert!(matches!(tool_output_in(&raw), Ok(Cow::Borrowed(v)) if *v == json!({"k": 1})));
        let raw = json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]});
        assert!(matches!(tool_output_in(&raw), Ok(Cow::Borrowed(v)) if v == &raw["content"]));
        assert_eq!(tool_output(&json!({"content": "not a list"})), Ok(json!([])));
        assert_eq!(tool_output(&json!({})), Ok(json!([])));
    }

    #[test]
    fn a_tool_refusing_its_arguments_is_told_apart_from_other_errors() {
        assert!(refused_arguments("failed to deserialize parameters: invalid type: map, expected f64"));
        assert!(refused_arguments("MCP error -32602: Input validation error: Invalid arguments for tool get-sum"));
        assert!(!refused_arguments("the cluster is on fire"));
    }

    #[test]
    fn prompts_yield_their_messages() {
        let raw =
            json!({"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
        assert_eq!(prompt_output(&raw), json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]));
    }
}
