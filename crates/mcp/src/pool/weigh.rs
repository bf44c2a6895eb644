//! What a message will weigh once parsed: a JSON text of many tiny values (`[[],[],…]`)
//! becomes a `serde_json::Value` tree dozens of times its size. Each message — a line
//! over stdio, an SSE event over HTTP — is weighed by one pass over its bytes before
//! anything parses it (`mcpflow_blueprint::source::heavier_than`), and one heavier than
//! [`WEIGHT_FACTOR`] × the message limit is refused like a message longer than the limit
//! (an error answer for its call, made here): so memory for one message stays within a
//! small multiple of `max_message_bytes`. (A plain `application/json` answer body is
//! parsed by rmcp itself, within its own 16 MiB limit.)

use super::lines::{id_of_unparsed, made_up_error};
use super::notes::ServerNotes;
use rmcp::model::ServerJsonRpcMessage;
use sse_stream::Sse;

/// What one JSON value costs once parsed, beyond its bytes (a `serde_json::Value`, its
/// slot in an array or map, and rmcp's copy of the part it keeps).
const BYTES_PER_VALUE: usize = 80;

/// How many times the message limit a parsed message may weigh.
pub(crate) const WEIGHT_FACTOR: usize = 4;

/// Whether `line` would weigh more than [`WEIGHT_FACTOR`] × `max_message` once parsed.
pub(crate) fn too_heavy(line: &[u8], max_message: usize) -> bool {
    mcpflow_blueprint::source::heavier_than(line, BYTES_PER_VALUE, max_message.saturating_mul(WEIGHT_FACTOR))
}

/// A message too heavy to parse: an error answer for its id, or nothing for a message
/// without one (logged as dropped).
pub(crate) fn heavy_answer(text: &[u8], notes: &ServerNotes) -> Option<ServerJsonRpcMessage> {
    let size = text.len();
    tracing::warn!(server = notes.server(), size, "discarded an incoming message holding too many values");
    let Some(id) = id_of_unparsed(text) else {
        notes.log(super::LogStream::Stdout, format!("dropped a message of {size} bytes holding too many values"));
        return None;
    };
    let message = format!("its answer of {size} bytes holds too many values to be read");
    Some(made_up_error(id, "OUTPUT_TOO_HEAVY", message, Some(size)))
}

/// An SSE event with its data weighed: a heavy one has its data replaced by the error
/// answer for its id, or is left out.
pub(crate) fn weigh_event(event: Sse, max_message: usize, notes: &ServerNotes) -> Option<Sse> {
    let Some(data) = event.data.as_deref().filter(|d| too_heavy(d.as_bytes(), max_message)) else { return Some(event) };
    let answer = serde_json::to_string(&heavy_answer(data.as_bytes(), notes)?).ok()?;
    Some(Sse { data: Some(answer), ..event })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_tiny_values_are_too_heavy_and_long_text_is_not() {
        let arrays = format!("[{}]", vec!["[]"; 1000].join(","));
        assert!(too_heavy(arrays.as_bytes(), 10_000));
        let text = format!("{{\"text\":\"{}\"}}", "[],{}:".repeat(1000));
        assert!(!too_heavy(text.as_bytes(), 10_000));
    }
}
