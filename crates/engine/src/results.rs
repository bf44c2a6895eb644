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

use serde_json::{Value, json};

/// A tool result that reports failure (`isError: true`): the tool's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFailed(pub String);

/// The output of a `tool` step.
pub fn tool_output(raw: &Value) -> Result<Value, ToolFailed> {
    let content = raw.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
    if raw.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: Vec<&str> = content.iter().filter_map(|c| c.get("text").and_then(Value::as_str)).collect();
        let message =
            if text.is_empty() { "the tool reported an error without text".to_owned() } else { text.join("\n") };
        return Err(ToolFailed(message));
    }
    if let Some(structured) = raw.get("structuredContent").filter(|v| !v.is_null()) {
        return Ok(structured.clone());
    }
    Ok(single_text(&content, "text").unwrap_or(Value::Array(content)))
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
    fn prompts_yield_their_messages() {
        let raw =
            json!({"description": "d", "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
        assert_eq!(prompt_output(&raw), json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]));
    }
}
