//! Reading the answer to a `tools/call` as a tool result at once.
//!
//! rmcp reads every incoming message through untagged unions: the message is buffered,
//! then tried as a request, an answer, a notification, an error, and an answer's result
//! is tried as each of some twenty result types in turn until one fits — a tool result
//! comes sixteenth. For a tool answer that is most of the work of a call on the client
//! side. The transport knows which requests it sent were `tools/call`, so it reads
//! their answers as exactly that, in one pass, and hands rmcp the same message its
//! own reading would have produced. Anything else (another answer, an error, a
//! notification, a request from the server, an answer that is not a valid tool result)
//! goes the general way.

use indexmap::IndexSet;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest, JsonRpcVersion2_0, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};

/// Ids remembered at most: `tools/call` requests whose answers never came (the server
/// ignored a cancellation) are forgotten oldest first.
const REMEMBERED: usize = 1024;

/// The `tools/call` requests sent on one connection and not answered yet.
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    ids: IndexSet<RequestId>,
}

/// An answer read as a tool result. `method` and `error` are only noted as present: a
/// message with either is not an answer (rmcp's reading rejects it or reads it as
/// something else), so it goes the general way.
#[derive(Deserialize)]
struct ToolAnswer {
    #[expect(dead_code, reason = "checked to be \"2.0\" while reading, as rmcp does")]
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    result: CallToolResult,
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(deserializer).map(|_| true)
}

impl ToolCalls {
    /// Notes an outgoing message: a `tools/call` request's id is remembered.
    pub fn sent(&mut self, message: &ClientJsonRpcMessage) {
        if let JsonRpcMessage::Request(JsonRpcRequest { id, request: ClientRequest::CallToolRequest(_), .. }) = message
        {
            if self.ids.len() >= REMEMBERED {
                self.ids.shift_remove_index(0);
            }
            self.ids.insert(id.clone());
        }
    }

    /// The message `line` holds when it is the answer to a remembered `tools/call` and a
    /// valid tool result; `None` sends it the general way.
    pub fn read(&mut self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        if self.ids.is_empty() {
            return None;
        }
        let answer: ToolAnswer = serde_json::from_slice(line).ok()?;
        if answer.method || answer.error || !self.ids.swap_remove(&answer.id) {
            return None;
        }
        Some(ServerJsonRpcMessage::response(ServerResult::CallToolResult(answer.result), answer.id))
    }

    /// Forgets the request a message read the general way answers.
    pub fn answered(&mut self, message: &ServerJsonRpcMessage) {
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        if let Some(id) = id
            && !self.ids.is_empty()
        {
            self.ids.swap_remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequest, CallToolRequestParams, NumberOrString};
    use serde_json::json;

    fn tool_call(id: i64) -> ClientJsonRpcMessage {
        let request = CallToolRequest::new(CallToolRequestParams::new("t"));
        ClientJsonRpcMessage::request(ClientRequest::CallToolRequest(request), NumberOrString::Number(id))
    }

    /// What rmcp's own reading makes of `line`.
    fn general(line: &[u8]) -> ServerJsonRpcMessage {
        serde_json::from_slice(line).unwrap()
    }

    #[test]
    fn a_tool_answer_reads_as_rmcp_reads_it() {
        let mut calls = ToolCalls::default();
        calls.sent(&tool_call(3));
        let line = json!({"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "{\"a\":1}"}, {"type": "image", "data": "AA", "mimeType": "image/png"}],
            "structuredContent": {"a": 1}, "isError": false, "_meta": {"k": "v"}
        }})
        .to_string();
        let fast = calls.read(line.as_bytes()).unwrap();
        let JsonRpcMessage::Response(answer) = &general(line.as_bytes()) else { panic!() };
        assert!(matches!(answer.result, ServerResult::CallToolResult(_)));
        assert_eq!(serde_json::to_value(&fast).unwrap(), serde_json::to_value(answer).unwrap());
        assert!(matches!(&fast, JsonRpcMessage::Response(r) if matches!(r.result, ServerResult::CallToolResult(_))));
        // Answered: the id is forgotten, so a second answer goes the general way.
        assert!(calls.read(line.as_bytes()).is_none());
    }

    #[test]
    fn other_messages_go_the_general_way() {
        let mut calls = ToolCalls::default();
        calls.sent(&tool_call(1));
        let not_mine = json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}).to_string();
        let not_a_tool_result = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}).to_string();
        let both = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}, "error": null}).to_string();
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "result": {"content": []}}).to_string();
        let wrong_version = json!({"jsonrpc": "1.0", "id": 1, "result": {"content": []}}).to_string();
        for line in [not_mine, not_a_tool_result, both, request, wrong_version] {
            assert!(calls.read(line.as_bytes()).is_none(), "{line}");
        }
        // An error answer read the general way forgets the request.
        let error = general(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#);
        calls.answered(&error);
        assert!(calls.ids.is_empty());
    }

    #[test]
    fn unanswered_ids_are_forgotten_oldest_first() {
        let mut calls = ToolCalls::default();
        for id in 0..=REMEMBERED as i64 {
            calls.sent(&tool_call(id));
        }
        assert_eq!(calls.ids.len(), REMEMBERED);
        assert!(!calls.ids.contains(&NumberOrString::Number(0)));
        assert!(calls.ids.contains(&NumberOrString::Number(REMEMBERED as i64)));
    }
}
