//! Cassettes: a run's MCP exchanges recorded at the engine's seam (`record.rs`, a
//! [`Servers`](mcpflow_engine::Servers) wrapper over the pool) and replayed without any
//! server (`replay.rs`); the test files `mcpflow test` runs over them (`suite.rs`).
//!
//! The file is JSON, versioned, its exchanges in the order their requests were made:
//!
//! ```json
//! {"version": 1, "exchanges": [
//!   {"target": {"kind": "tool", "server": "echo", "tool": "echo", "args": {"text": "hi"}},
//!    "progress": [], "result": {"content": [{"type": "text", "text": "hi"}]}}
//! ]}
//! ```
//!
//! Every string in it has the pool's secrets hidden (`${env:NAME}` values, header values,
//! OAuth tokens), as in the pool's own messages.

pub mod journal;
pub mod record;
pub mod replay;
pub mod suite;

use mcpflow_blueprint::source::{SizeLimit, read_json};
use mcpflow_engine::{Answer, CallError, CallTarget, Progress, Question};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The cassette format's version; a file of another version is refused.
pub const CASSETTE_VERSION: u32 = 1;

/// The largest cassette read from disk.
pub const CASSETTE_SIZE: SizeLimit<'static> = SizeLimit {
    bytes: 64 * 1024 * 1024,
    what: "the cassette",
    hint: "record a shorter run, or split the blueprint's test into several",
};

/// The largest test file read from disk.
pub const TEST_FILE_SIZE: SizeLimit<'static> =
    SizeLimit { bytes: 1024 * 1024, what: "the test file", hint: "keep large inputs in the cassette's run" };

/// Reads a JSON file within `limit` with the strict reader (a duplicate key is an error).
pub fn read_json_file(path: &Path, limit: &SizeLimit<'_>) -> Result<Value, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    read_json(file, limit).map(|parsed| parsed.value).map_err(|e| format!("{}: {e}", path.display()))
}

/// A run's MCP exchanges, in the order their requests were made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cassette {
    pub version: u32,
    pub exchanges: Vec<Exchange>,
}

impl Default for Cassette {
    fn default() -> Self {
        Cassette { version: CASSETTE_VERSION, exchanges: Vec::new() }
    }
}

/// One request and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    pub target: CallTarget,
    /// The progress notifications the server sent for it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<Progress>,
    /// The server's questions to a person during the call (elicitation), in the order
    /// they were answered. Recorded, not replayed: a replay answers with the result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asked: Vec<Asked>,
    /// The server's requests for a model completion during the call (sampling), in the
    /// order they were answered. Recorded, not replayed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sampled: Vec<Sampled>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// A server's question (elicitation) and how it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    pub question: Question,
    #[serde(flatten)]
    pub answer: Answered<Answer>,
}

/// A server's `sampling/createMessage` (its `params`) and the completion or the error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampled {
    pub params: Value,
    #[serde(flatten)]
    pub answer: Answered<Value>,
}

/// What answered a server's request: `{"answer": …}` or `{"error": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answered<T> {
    Answer(T),
    Error(CallError),
}

impl<T> From<Result<T, CallError>> for Answered<T> {
    fn from(r: Result<T, CallError>) -> Self {
        match r {
            Ok(t) => Answered::Answer(t),
            Err(e) => Answered::Error(e),
        }
    }
}

/// The raw MCP result, or the pool's error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Result(Value),
    Error(CallError),
}

impl Cassette {
    /// A cassette from JSON text (already read within [`CASSETTE_SIZE`]).
    pub fn from_value(value: Value) -> Result<Cassette, String> {
        let version = value.get("version").and_then(Value::as_u64);
        if version != Some(u64::from(CASSETTE_VERSION)) {
            return Err(format!(
                "CASSETTE_INVALID: the cassette's `version` is {}, this mcpflow reads version {CASSETTE_VERSION}; record it again with `mcpflow run FILE --record CASSETTE`",
                version.map_or_else(|| "missing".to_owned(), |v| v.to_string())
            ));
        }
        serde_json::from_value(value)
            .map_err(|e| format!("CASSETTE_INVALID: {e}; record it again with `mcpflow run FILE --record CASSETTE`"))
    }
}

/// How a request is shown in messages: `tools/call `echo` on `srv` with {…}`.
pub fn describe(target: &CallTarget) -> String {
    match target {
        CallTarget::Tool { server, tool, args } => {
            let on = server.as_deref().map(|s| format!(" on `{s}`")).unwrap_or_default();
            format!("tools/call `{tool}`{on} with arguments {}", Value::Object(args.clone()))
        }
        CallTarget::Resource { server, uri } => format!("resources/read `{uri}` on `{server}`"),
        CallTarget::Prompt { server, prompt, args } => {
            format!("prompts/get `{prompt}` on `{server}` with arguments {}", Value::Object(args.clone()))
        }
    }
}
