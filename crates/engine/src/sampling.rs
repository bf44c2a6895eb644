//! Sampling: a server asks its client for a model completion (MCP
//! `sampling/createMessage`) while it handles one of the run's calls. The request goes to
//! the call's step; the driver records it (`StepSampling`), hands it to the run's
//! [`Sampler`] — a provider configured by the user (any OpenAI-compatible endpoint), or the
//! client that called `mcpflow serve` — and records the answer or why there was none
//! (`StepSampled`). A server whose switch is off (`"sampling": true` absent from its
//! entry) is refused before any sampler hears of it: `SAMPLING_NOT_ALLOWED`.
//!
//! The engine does not speak MCP: the request's params and the answer are JSON in the
//! shapes of `CreateMessageRequest.params` and `CreateMessageResult`.

use crate::event::IterationPath;
use crate::people::AskSink;
use crate::servers::CallError;
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One `sampling/createMessage` request of a server's.
#[derive(Clone)]
pub struct SampleRequest {
    /// The step whose call the request came from (set by the driver).
    pub step: String,
    pub path: IterationPath,
    /// The configured server that asks.
    pub server: String,
    /// The server's switch: whether it may ask the model at all (`"sampling": true` on
    /// its entry). Set by the pool; when false the request is refused, never sampled.
    pub allowed: bool,
    /// `CreateMessageRequest.params` as the server sent them: `messages`, `systemPrompt`,
    /// `maxTokens`, `temperature`, `stopSequences`, `modelPreferences`, …
    pub params: Value,
    /// Asks the run's people on the request's step (set by the driver): a sampler with no
    /// model of its own may show the request to a person, who answers it (recorded as a
    /// question and its answer, `StepWaiting`/`StepAnswered`).
    pub ask: Option<AskSink>,
}

impl std::fmt::Debug for SampleRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleRequest")
            .field("step", &self.step)
            .field("path", &self.path)
            .field("server", &self.server)
            .field("allowed", &self.allowed)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl SampleRequest {
    /// `SAMPLING_NOT_ALLOWED`: the server's switch is off; names the server and the switch.
    pub fn not_allowed(&self) -> CallError {
        CallError::new(
            "SAMPLING_NOT_ALLOWED",
            format!(
                "server `{}` asked the model (sampling/createMessage) during step `{}`, but it may not: its \
                 switch (\"may ask the model\") is off. To let it, turn on \"May ask the model\" on its row \
                 in the studio's Servers panel, or add \"sampling\": true to its entry in the servers file",
                self.server, self.step
            ),
            false,
        )
    }

    /// `SAMPLING_UNAVAILABLE`: nobody here can answer; `what_to_do` says what to configure.
    pub fn unavailable(&self, what_to_do: &str) -> CallError {
        CallError::new(
            "SAMPLING_UNAVAILABLE",
            format!(
                "server `{}` asked the model (sampling/createMessage) during step `{}`, and no model can answer \
                 here; {what_to_do}",
                self.server, self.step
            ),
            false,
        )
    }
}

/// Answers sampling requests. `sample` ends with a `CreateMessageResult` (`{role, content,
/// model, stopReason}`) or an error (`SAMPLING_UNAVAILABLE`, `SAMPLING_FAILED`); when
/// `cancel` fires (the step or run ends first) it should give up and end.
pub trait Sampler: Send + Sync {
    fn sample(&self, request: SampleRequest, cancel: CancellationToken)
    -> BoxFuture<'static, Result<Value, CallError>>;
}

/// No model: every request fails with `SAMPLING_UNAVAILABLE`, saying what to configure.
#[derive(Debug, Clone)]
pub struct NoModel {
    /// What to do, in the front door's words (where the provider is configured).
    pub advice: String,
}

impl Default for NoModel {
    fn default() -> Self {
        NoModel {
            advice: "configure a sampling provider (an OpenAI-compatible endpoint: a `sampling` section in the data \
                     folder's settings.json), or run the workflow through `mcpflow serve` from a client that \
                     declares sampling"
                .to_owned(),
        }
    }
}

impl Sampler for NoModel {
    fn sample(
        &self,
        request: SampleRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Value, CallError>> {
        let error = request.unavailable(&self.advice);
        Box::pin(async move { Err(error) })
    }
}

/// What a call hands a server's sampling requests to: the driver records the request on
/// the call's step, asks the run's [`Sampler`] and records the answer. The pool fills in
/// `server`, `allowed` and `params`; `step`, `path` and `ask` are filled in by the driver.
pub type SampleSink = Arc<dyn Fn(SampleRequest) -> BoxFuture<'static, Result<Value, CallError>> + Send + Sync>;

/// Longest string kept of a request or an answer in the run's events.
pub const EVENT_TEXT: usize = 4096;
/// Most items kept of an array (messages, content blocks) in the run's events.
const EVENT_ITEMS: usize = 64;
/// Deepest nesting kept in the run's events.
const EVENT_DEPTH: usize = 8;

/// A request's params or an answer as the run's events keep it: strings at most
/// [`EVENT_TEXT`] bytes (cut with `…`), binary `data` (images, audio) replaced by its
/// size, arrays at most 64 items, 8 levels deep. A server cannot grow the events
/// without bound through what it asks.
pub fn bounded(value: &Value) -> Value {
    bound(value, 0)
}

fn bound(value: &Value, depth: usize) -> Value {
    match value {
        Value::String(s) => Value::String(clip(s, EVENT_TEXT)),
        Value::Array(items) if depth >= EVENT_DEPTH => Value::String(format!("[{} items]", items.len())),
        Value::Object(map) if depth >= EVENT_DEPTH => Value::String(format!("{{{} fields}}", map.len())),
        Value::Array(items) => {
            let mut kept: Vec<Value> = items.iter().take(EVENT_ITEMS).map(|v| bound(v, depth + 1)).collect();
            if items.len() > EVENT_ITEMS {
                kept.push(Value::String(format!("… {} more", items.len() - EVENT_ITEMS)));
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            let mut kept = Map::new();
            for (key, v) in map.iter().take(EVENT_ITEMS) {
                let v = match v {
                    // Base64 of an image or a sound: its size says enough.
                    Value::String(data) if key == "data" && data.len() > 256 => {
                        Value::String(format!("({} bytes of base64)", data.len()))
                    }
                    other => bound(other, depth + 1),
                };
                kept.insert(clip(key, 256), v);
            }
            Value::Object(kept)
        }
        other => other.clone(),
    }
}

/// `text`, at most `max` bytes, cut at a character boundary with `…`.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}…", &text[..at])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounded_cuts_long_text_and_binary_data_and_long_lists() {
        let long = "é".repeat(5000);
        let value = json!({
            "messages": (0..100).map(|i| json!({"role": "user", "content": {"type": "text", "text": format!("m{i}")}})).collect::<Vec<_>>(),
            "systemPrompt": long,
            "image": {"type": "image", "data": "A".repeat(10_000), "mimeType": "image/png"},
        });
        let kept = bounded(&value);
        let messages = kept["messages"].as_array().unwrap();
        assert_eq!(messages.len(), EVENT_ITEMS + 1);
        assert_eq!(messages[EVENT_ITEMS], json!("… 36 more"));
        let prompt = kept["systemPrompt"].as_str().unwrap();
        assert!(prompt.len() <= EVENT_TEXT + '…'.len_utf8() && prompt.ends_with('…'));
        assert_eq!(kept["image"]["data"], json!("(10000 bytes of base64)"));
        assert_eq!(kept["image"]["mimeType"], json!("image/png"));
    }

    #[test]
    fn not_allowed_names_the_server_the_step_and_the_switch() {
        let request = SampleRequest {
            step: "ask".into(),
            path: vec![],
            server: "everything".into(),
            allowed: false,
            params: json!({}),
            ask: None,
        };
        let e = request.not_allowed();
        assert_eq!(e.code, "SAMPLING_NOT_ALLOWED");
        assert!(e.message.contains("`everything`") && e.message.contains("`ask`"));
        assert!(e.message.contains("\"sampling\": true"));
        assert!(e.message.contains("\"May ask the model\" on its row in the studio's Servers panel"), "{}", e.message);
    }
}
