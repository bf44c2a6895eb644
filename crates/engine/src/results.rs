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

use mcpflow_blueprint::template::{Rcvar, Variable};
use serde_json::{Value, json};
use std::borrow::Cow;

/// A tool result that reports failure (`isError: true`): the tool's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailed(pub String);

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
pub(crate) fn output_forms(output: Cow<'_, Value>) -> (Value, Rcvar) {
    let mut json = output.into_owned();
    // Reorders members in place: no key is hashed again.
    json.sort_all_objects();
    let var = sorted_var(&json);
    (json, var)
}

/// The JMESPath value of JSON whose objects are in key order.
fn sorted_var(value: &Value) -> Rcvar {
    Rcvar::new(match value {
        Value::Null => Variable::Null,
        Value::Bool(b) => Variable::Bool(*b),
        Value::Number(n) => Variable::Number(n.clone()),
        Value::String(s) => Variable::String(s.clone()),
        Value::Array(items) => Variable::Array(items.iter().map(sorted_var).collect()),
        // From members in key order, the tree is built in one go.
        Value::Object(map) => Variable::Object(map.iter().map(|(k, v)| (k.clone(), sorted_var(v))).collect()),
    })
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
    fn prompts_yield_their_messages() {
        let raw =
            json!({"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
        assert_eq!(prompt_output(&raw), json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]));
    }
}
