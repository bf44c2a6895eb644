//! The OpenAI-compatible client that answers a server's sampling requests
//! (`sampling/createMessage`): a [`ProviderConfig`] (the `sampling` section of the data
//! folder's `settings.json`, read by `mcpflow-app`) names a chat completions endpoint, and
//! a [`Provider`] is the engine's [`Sampler`] over it. [`chat_request`] and
//! [`message_result`] translate between MCP's messages and OpenAI's. No other mcpflow
//! crate than the engine's seam and the pool's `${env:NAME}` lookup.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

use futures::future::BoxFuture;
use mcpflow_engine::{CallError, SampleRequest, Sampler};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Largest answer read from the provider; past it the request fails.
const ANSWER_SIZE: usize = 4 * 1024 * 1024;
/// How long a provider may take when its settings do not say.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// A sampling provider: an OpenAI-compatible chat completions endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API's base, the part before `/chat/completions`: `http://localhost:11434/v1`
    /// (Ollama), `http://localhost:1234/v1` (LM Studio), `https://api.openai.com/v1`.
    #[serde(alias = "baseUrl")]
    pub base_url: String,
    /// The model asked for every request (a server's model preferences are hints only).
    pub model: String,
    /// Sent as `Authorization: Bearer …`; only as `${env:NAME}` (or text around it), so no
    /// key is ever written in the file.
    #[serde(default, alias = "apiKey", skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// How long one request may take (default 120 s).
    #[serde(default, alias = "timeoutMs", skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// A cap on the tokens a server may ask for (default: what it asks).
    #[serde(default, alias = "maxTokens", skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// An OpenAI-compatible endpoint answering sampling requests.
pub struct Provider {
    config: ProviderConfig,
    /// The HTTP client, or why it could not be made.
    client: Result<reqwest::Client, String>,
    /// Where `${env:NAME}` comes from.
    env: mcpflow_mcp::EnvLookup,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider").field("base_url", &self.config.base_url).field("model", &self.config.model).finish()
    }
}

impl Provider {
    pub fn new(config: ProviderConfig) -> Self {
        Self::with_env(config, mcpflow_config::env::process_env())
    }

    pub fn with_env(config: ProviderConfig, env: mcpflow_mcp::EnvLookup) -> Self {
        let timeout = config.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        let client = mcpflow_auth::trust::client_builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10).min(timeout))
            // The key goes to the configured host only.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(plain);
        Provider { config, client, env }
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.config.base_url.trim().trim_end_matches('/'))
    }

    /// Asks the endpoint; the answer as a `CreateMessageResult`.
    async fn complete(&self, request: &SampleRequest) -> Result<Value, CallError> {
        let body = chat_request(&request.params, &self.config).map_err(|problem| failed(request, &problem))?;
        let client = self.client.as_ref().map_err(|e| failed(request, &format!("no HTTP client: {e}")))?;
        let mut post = client.post(self.endpoint()).json(&body);
        if let Some(key) = &self.config.api_key {
            if let Some(name) = mcpflow_config::env::references(key).into_iter().find(|n| (self.env)(n).is_none()) {
                return Err(request.unavailable(&format!(
                    "the sampling provider's `api_key` is ${{env:{name}}}, which is not set; set it in the \
                     environment that runs mcpflow"
                )));
            }
            let key = mcpflow_config::env::resolve(key, &self.env, "sampling", "api_key")
                .map_err(|e| request.unavailable(&e.to_string()))?;
            post = post.bearer_auth(key);
        }
        let endpoint = self.endpoint();
        let mut response = post.send().await.map_err(|e| {
            let why = if e.is_timeout() { "it did not answer in time".to_owned() } else { plain(e) };
            failed(request, &format!("cannot reach the sampling provider at {endpoint}: {why}; is it running?"))
        })?;
        let status = response.status();
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > ANSWER_SIZE {
                        return Err(failed(
                            request,
                            &format!(
                                "the sampling provider at {endpoint} answered more than {} MiB",
                                ANSWER_SIZE >> 20
                            ),
                        ));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => {
                    return Err(failed(request, &format!("the answer of {endpoint} broke off: {}", plain(e))));
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let said = mcpflow_engine::sampling::clip(text.trim(), 512);
            return Err(failed(request, &format!("the sampling provider at {endpoint} answered {status}: {said}")));
        }
        let answer: Value = serde_json::from_str(&text)
            .map_err(|e| failed(request, &format!("the answer of {endpoint} is not JSON: {e}")))?;
        message_result(&answer, &self.config.model)
            .map_err(|problem| failed(request, &format!("the answer of {endpoint} {problem}")))
    }
}

impl Sampler for Provider {
    fn sample(
        &self,
        request: SampleRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Value, CallError>> {
        // The future owns what it needs (a clone of the client and settings).
        let provider = Provider { config: self.config.clone(), client: self.client.clone(), env: self.env.clone() };
        Box::pin(async move {
            tokio::select! {
                answer = provider.complete(&request) => answer,
                () = cancel.cancelled() => Err(CallError::cancelled()),
            }
        })
    }
}

/// A reqwest error in words, without the URL's query (the key is never in it, but a
/// provider's URL could carry other things).
fn plain(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

fn failed(request: &SampleRequest, problem: &str) -> CallError {
    CallError::new(
        "SAMPLING_FAILED",
        format!(
            "server `{}` asked the model during step `{}`, and the model did not answer: {problem}",
            request.server, request.step
        ),
        false,
    )
}

/// `CreateMessageRequest.params` → an OpenAI chat completions request.
pub fn chat_request(params: &Value, config: &ProviderConfig) -> Result<Value, String> {
    let mut messages = Vec::new();
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        messages.push(json!({ "role": "system", "content": system }));
    }
    let Some(list) = params.get("messages").and_then(Value::as_array) else {
        return Err("the request has no `messages`".to_owned());
    };
    for (i, message) in list.iter().enumerate() {
        let role = match message.get("role").and_then(Value::as_str) {
            Some(role @ ("user" | "assistant")) => role,
            other => return Err(format!("messages[{i}] has role {other:?}; expected user or assistant")),
        };
        let blocks: Vec<&Value> = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.iter().collect(),
            Some(block @ Value::Object(_)) => vec![block],
            _ => return Err(format!("messages[{i}] has no content")),
        };
        let mut parts = Vec::new();
        for block in blocks {
            parts.push(match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    json!({ "type": "text", "text": block.get("text").and_then(Value::as_str).unwrap_or("") })
                }
                Some("image") => {
                    let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("image/png");
                    let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                    json!({ "type": "image_url", "image_url": { "url": format!("data:{mime};base64,{data}") } })
                }
                other => {
                    return Err(format!(
                        "messages[{i}] holds {} content, which an OpenAI-compatible endpoint is not sent",
                        other.unwrap_or("untyped")
                    ));
                }
            });
        }
        // Text only: one string, as every endpoint takes it.
        let content = if parts.iter().all(|p| p["type"] == "text") {
            Value::String(parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"))
        } else {
            Value::Array(parts)
        };
        messages.push(json!({ "role": role, "content": content }));
    }
    let mut body = json!({ "model": config.model, "messages": messages, "stream": false });
    let asked = params.get("maxTokens").and_then(Value::as_u64);
    let cap = config.max_tokens.map(u64::from);
    if let Some(max) = match (asked, cap) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    } {
        body["max_tokens"] = json!(max);
    }
    // Sent as the server wrote it (it travels as an f32: 0.7 arrives as 0.699999988…).
    if let Some(t) = params.get("temperature").and_then(Value::as_f64) {
        body["temperature"] = json!((t * 1e6).round() / 1e6);
    }
    if let Some(stop) = params.get("stopSequences").filter(|s| s.is_array()) {
        body["stop"] = stop.clone();
    }
    Ok(body)
}

/// An OpenAI chat completion → a `CreateMessageResult`; `Err` says what is wrong with it.
pub fn message_result(answer: &Value, model: &str) -> Result<Value, String> {
    let choice = answer.get("choices").and_then(Value::as_array).and_then(|c| c.first()).ok_or("has no `choices`")?;
    let text = match choice.pointer("/message/content") {
        Some(Value::String(text)) => text.clone(),
        // Content parts: their text, joined.
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
        }
        _ => return Err("has no message content in `choices[0]`".to_owned()),
    };
    let stop = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") | None => "endTurn".to_owned(),
        Some("length") => "maxTokens".to_owned(),
        Some(other) => other.to_owned(),
    };
    let model = answer.get("model").and_then(Value::as_str).unwrap_or(model);
    Ok(json!({
        "role": "assistant",
        "content": { "type": "text", "text": text },
        "model": model,
        "stopReason": stop,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ProviderConfig {
        ProviderConfig {
            base_url: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            timeout_ms: None,
            max_tokens: Some(50),
        }
    }

    #[test]
    fn an_mcp_request_becomes_a_chat_completion_request() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hello"}},
                {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
                {"role": "user", "content": {"type": "image", "data": "AAA", "mimeType": "image/jpeg"}},
            ],
            "systemPrompt": "be brief", "maxTokens": 100, "temperature": 0.7, "stopSequences": ["END"],
        });
        let body = chat_request(&params, &config()).unwrap();
        assert_eq!(body["model"], "m");
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "be brief"}));
        assert_eq!(body["messages"][1], json!({"role": "user", "content": "hello"}));
        assert_eq!(body["messages"][2], json!({"role": "assistant", "content": "hi"}));
        assert_eq!(body["messages"][3]["content"][0]["image_url"]["url"], json!("data:image/jpeg;base64,AAA"));
        // The configured cap wins over what the server asks.
        assert_eq!(body["max_tokens"], 50);
        assert_eq!(body["temperature"], 0.7);
        assert_eq!(body["stop"], json!(["END"]));
        let bad = chat_request(&json!({"messages": [{"role": "tool", "content": {}}]}), &config()).unwrap_err();
        assert!(bad.contains("messages[0]"), "{bad}");
    }

    #[test]
    fn a_chat_completion_becomes_a_create_message_result() {
        let answer = json!({"model": "llama3.2", "choices": [{"message": {"role": "assistant", "content": "ok"},
            "finish_reason": "length"}]});
        assert_eq!(
            message_result(&answer, "m").unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "llama3.2",
                "stopReason": "maxTokens"})
        );
        assert!(message_result(&json!({"error": "x"}), "m").unwrap_err().contains("choices"));
    }
}
