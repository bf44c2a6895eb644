//! Shapes of tool results: plain text, structured objects (also sent as one text item) and tool errors.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// A successful result with one text item.
pub(crate) fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

/// A successful result carrying `value` as `structuredContent` and the same JSON as one text item.
pub(crate) fn structured(value: Value) -> CallToolResult {
    CallToolResult::structured(value)
}

/// A tool-level error (`isError: true`) with one text item.
pub(crate) fn error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}
