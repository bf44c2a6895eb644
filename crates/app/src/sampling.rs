//! Who answers a server's request for a model completion (MCP sampling) when mcpflow runs
//! a workflow: the sampling provider the user configured — any OpenAI-compatible endpoint,
//! a local Ollama or LM Studio or a hosted one — read from the `sampling` section of the
//! data folder's `settings.json`:
//!
//! ```json
//! { "sampling": { "base_url": "http://localhost:11434/v1", "model": "llama3.2",
//!                 "api_key": "${env:OPENAI_API_KEY}", "timeout_ms": 120000 } }
//! ```
//!
//! The request goes to `POST {base_url}/chat/completions`: the server's `systemPrompt` as
//! a system message, its messages (text, images), `maxTokens`, `temperature` and
//! `stopSequences`; the answer comes back as a `CreateMessageResult` (`{role: assistant,
//! content: {type: text, text}, model, stopReason}`). The key is only ever read from the
//! environment (`${env:NAME}`), when a request is made, and never shown. With no provider
//! (or a settings file that cannot be used) a request fails with `SAMPLING_UNAVAILABLE`
//! saying what to configure — or, in the studio, is shown to a person who answers it.
//! Through `mcpflow serve`, the calling client answers when it declared sampling
//! (`serve/sampling.rs`). Whether a server may ask at all is its own switch (`"sampling":
//! true` on its entry), checked before any of this.
//!
//! The studio edits the section through [`provider_settings`] and [`write_provider`]: the
//! rest of `settings.json` is kept as it is, and nothing is written that does not pass
//! the checks (an `http(s)` URL, a model, a key only as `${env:NAME}`).

use futures::future::BoxFuture;
use mcpflow_engine::people::{Answer, Asking, Question};
use mcpflow_engine::{CallError, SampleRequest, Sampler};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The settings file in the data folder.
pub const SETTINGS_FILE: &str = "settings.json";
/// Largest settings file read.
const SETTINGS_SIZE: u64 = 64 * 1024;
/// Largest answer read from the provider; past it the request fails.
const ANSWER_SIZE: usize = 4 * 1024 * 1024;
/// How long a provider may take when its settings do not say.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The model named in an answer a person wrote.
pub const PERSON_MODEL: &str = "person";

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

#[derive(Debug, Deserialize)]
struct Settings {
    #[serde(default)]
    sampling: Option<ProviderConfig>,
}

/// Where the settings live in data folder `home`.
pub fn settings_path(home: &Path) -> PathBuf {
    home.join(SETTINGS_FILE)
}

/// The bytes of the settings file at `path`: `Ok(None)` when there is none, `Err` naming
/// the file when it cannot be read or is larger than [`SETTINGS_SIZE`].
pub(crate) fn read_settings_bytes(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::File::open(path) {
        Ok(file) => {
            use std::io::Read as _;
            let mut bytes = Vec::new();
            file.take(SETTINGS_SIZE + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
            if bytes.len() as u64 > SETTINGS_SIZE {
                return Err(format!("{}: larger than {} KiB", path.display(), SETTINGS_SIZE / 1024));
            }
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{}: cannot read it: {e}", path.display())),
    }
}

/// The provider configured in `settings.json` of data folder `home`: `Ok(None)` when there
/// is none (no file, no `sampling` section), `Err` with what is wrong with the file.
pub fn read_provider(home: &Path) -> Result<Option<ProviderConfig>, String> {
    let path = settings_path(home);
    let Some(bytes) = read_settings_bytes(&path)? else { return Ok(None) };
    let settings: Settings = serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let Some(config) = settings.sampling else { return Ok(None) };
    check(&config).map_err(|problem| format!("{}: sampling: {problem}", path.display()))?;
    Ok(Some(config))
}

/// The `sampling` section as the studio's form shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSettings {
    /// The settings file (`settings.json` in the data folder).
    pub path: PathBuf,
    /// The section as written, when it reads as a provider — also one that does not pass
    /// the checks (`problem` says why), so that it can be corrected.
    pub provider: Option<ProviderConfig>,
    /// What is wrong with the file or its section, naming the file and the field. Until
    /// it is fixed no model is asked: requests fail with `SAMPLING_UNAVAILABLE`.
    pub problem: Option<String>,
    /// The environment variable the key is read from (`api_key` written `${env:NAME}`).
    pub key_variable: Option<String>,
    /// Whether that variable is set in this process's environment (its value is never
    /// read out).
    pub key_set: bool,
    /// The file is absent or a JSON object, so [`write_provider`] can write the section
    /// (a `problem` with the section is fixed by writing it again; one with the file is
    /// not).
    pub writable: bool,
}

/// Section `name` of the settings file at `path`, as the studio's forms read it: whether
/// the file can take the section (it is absent, or a JSON object), and the section (a
/// `null` one is none) or what is wrong with the file, naming it.
pub(crate) fn read_section(path: &Path, name: &str) -> (bool, Result<Option<Value>, String>) {
    let bytes = match read_settings_bytes(path) {
        Ok(None) => return (true, Ok(None)),
        Ok(Some(bytes)) => bytes,
        Err(problem) => return (false, Err(problem)),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut root)) => (true, Ok(root.shift_remove(name).filter(|s| !s.is_null()))),
        Ok(_) => (false, Err(format!("{}: not a JSON object; the settings are one object", path.display()))),
        Err(e) => (false, Err(format!("{}: not valid JSON: {e}", path.display()))),
    }
}

/// The `sampling` section of `settings.json` in data folder `home`, for the studio's
/// form. Never fails: a file or section that cannot be used is described in `problem`.
pub fn provider_settings(home: &Path) -> ProviderSettings {
    let path = settings_path(home);
    let mut out = ProviderSettings {
        path: path.clone(),
        provider: None,
        problem: None,
        key_variable: None,
        key_set: false,
        writable: false,
    };
    let (writable, section) = read_section(&path, "sampling");
    out.writable = writable;
    let section = match section {
        Ok(Some(section)) => section,
        Ok(None) => return out,
        Err(problem) => {
            out.problem = Some(problem);
            return out;
        }
    };
    match serde_json::from_value::<ProviderConfig>(section) {
        Ok(config) => {
            if let Err(problem) = check(&config) {
                out.problem = Some(format!("{}: sampling: {problem}", path.display()));
            }
            // The variable named, also in a key the form cannot write back as it is.
            out.key_variable = config
                .api_key
                .as_deref()
                .and_then(|key| mcpflow_config::env::references(key).into_iter().find(|n| is_variable_name(n)))
                .map(str::to_owned);
            out.key_set = out.key_variable.as_deref().is_some_and(|name| std::env::var_os(name).is_some());
            out.provider = Some(config);
        }
        Err(e) => out.problem = Some(format!("{}: sampling: {e}", path.display())),
    }
    out
}

/// `NAME` of an `api_key` written exactly `${env:NAME}` with a valid name.
fn key_variable(api_key: &str) -> Option<&str> {
    let name = api_key.strip_prefix("${env:")?.strip_suffix('}')?;
    is_variable_name(name).then_some(name)
}

/// `[A-Za-z_][A-Za-z0-9_]*`: the name of an environment variable as a shell writes it.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The section [`write_provider`] writes for `config`, or what is wrong with it, naming
/// the field: `base_url` an `http(s)` URL with a host, `model` not empty, `api_key` absent
/// or exactly `${env:NAME}`, `timeout_ms` and `max_tokens` at least 1 when given. Text
/// fields are trimmed.
pub fn writable(config: &ProviderConfig) -> Result<ProviderConfig, String> {
    let base_url = config.base_url.trim();
    let example = "e.g. \"http://localhost:11434/v1\" (Ollama) or \"https://api.openai.com/v1\"";
    match reqwest::Url::parse(base_url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some_and(|h| !h.is_empty()) => {}
        Ok(url) if !matches!(url.scheme(), "http" | "https") && base_url.contains("://") => {
            return Err(format!(
                "`base_url` is {base_url:?}, a {} URL; give the endpoint's http(s) base, {example}",
                url.scheme()
            ));
        }
        _ if base_url.is_empty() => {
            return Err(format!(
                "`base_url` is empty; give the endpoint's base, the part before /chat/completions, {example}"
            ));
        }
        _ => {
            return Err(format!("`base_url` is {base_url:?}, not an http(s) URL; give the endpoint's base, {example}"));
        }
    }
    let model = config.model.trim();
    if model.is_empty() {
        return Err("`model` is empty; name the model to ask, e.g. \"llama3.2\" or \"gpt-4o-mini\"".to_owned());
    }
    let api_key = match config.api_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        None => None,
        Some(key) if key_variable(key).is_some() => Some(key.to_owned()),
        Some(_) => {
            return Err("`api_key` must be written exactly \"${env:NAME}\", NAME the environment variable that holds \
                        the key (letters, digits and _, not starting with a digit; e.g. ${env:OPENAI_API_KEY}): \
                        the key itself is never written in a file"
                .to_owned());
        }
    };
    if config.timeout_ms == Some(0) {
        return Err("`timeout_ms` is 0; give the milliseconds a request may take (at least 1; leave it out for \
                    120000)"
            .to_owned());
    }
    if config.max_tokens == Some(0) {
        return Err(
            "`max_tokens` is 0; give the most tokens a server may ask for (at least 1), or leave it out".to_owned()
        );
    }
    Ok(ProviderConfig {
        base_url: base_url.to_owned(),
        model: model.to_owned(),
        api_key,
        timeout_ms: config.timeout_ms,
        max_tokens: config.max_tokens,
    })
}

/// One write of `settings.json` at a time in this process.
static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Writes the `sampling` section of `settings.json` in data folder `home` — `None`
/// removes it — and keeps every other key of the file as it was, in its place. Nothing
/// is written when the provider does not pass [`writable`] or the file is not a JSON
/// object (the error names the field or the file, and what to do). The file is replaced
/// whole (a temporary file, then a rename): a crash leaves the old one or the new one.
pub fn write_provider(home: &Path, provider: Option<&ProviderConfig>) -> Result<(), String> {
    let section = match provider {
        Some(config) => Some(serde_json::to_value(writable(config)?).map_err(|e| e.to_string())?),
        None => None,
    };
    write_section(home, "sampling", section)
}

/// Writes section `key` of `settings.json` in data folder `home` — `None` removes it —
/// keeping every other key of the file as it was, in its place. Nothing is written when
/// the file is not a JSON object (the error names the file and what to do). The file is
/// replaced whole (a temporary file, then a rename): a crash leaves the old one or the
/// new one. One write at a time in this process, whichever section.
pub(crate) fn write_section(home: &Path, key: &str, section: Option<Value>) -> Result<(), String> {
    let _one = WRITING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = settings_path(home);
    let mut root = match read_settings_bytes(&path)? {
        None => Map::new(),
        Some(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(root)) => root,
            Ok(_) => {
                return Err(format!(
                    "{}: not a JSON object, so the {key} section cannot be added to it; make it an object \
                     ({{\"{key}\": {{…}}}}) or remove it (nothing was written)",
                    path.display()
                ));
            }
            Err(e) => {
                return Err(format!(
                    "{}: not valid JSON ({e}); fix it or remove it, then save again (nothing was written)",
                    path.display()
                ));
            }
        },
    };
    match section {
        // An existing key keeps its place.
        Some(section) => {
            root.insert(key.to_owned(), section);
        }
        None => {
            root.shift_remove(key);
        }
    }
    let mut text = serde_json::to_string_pretty(&Value::Object(root)).map_err(|e| e.to_string())?;
    text.push('\n');
    let failed =
        |e: std::io::Error| format!("could not write {}: {e}; check that the data folder is writable", path.display());
    crate::files::write_whole(&path, &text).map_err(failed)
}

fn check(config: &ProviderConfig) -> Result<(), String> {
    let url = config.base_url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("`base_url` is {url:?}; give the endpoint's base, e.g. \"http://localhost:11434/v1\""));
    }
    if config.model.trim().is_empty() {
        return Err("`model` is empty; name the model to ask, e.g. \"llama3.2\"".to_owned());
    }
    if let Some(key) = &config.api_key
        && mcpflow_config::env::references(key).is_empty()
    {
        return Err("`api_key` must be written as \"${env:NAME}\": keys are read from the environment, never \
                    kept in a file"
            .to_owned());
    }
    Ok(())
}

impl crate::App {
    /// The sampling provider of the data folder's `settings.json`, for the studio's form.
    pub fn sampling_settings(&self) -> ProviderSettings {
        provider_settings(&self.inner.home)
    }

    /// Writes the sampling provider to the data folder's `settings.json` (`None` removes
    /// it: in the studio a person answers then), keeping the rest of the file; refused
    /// with the field named when it does not pass the checks. Runs read it when they
    /// start, so the next one uses it. Returns what is now configured.
    pub fn set_sampling_provider(&self, provider: Option<&ProviderConfig>) -> crate::error::Result<ProviderSettings> {
        write_provider(&self.inner.home, provider).map_err(crate::AppError::BadRequest)?;
        Ok(self.sampling_settings())
    }
}

/// Who answers sampling requests, as configured for a front door.
#[derive(Debug, Clone)]
pub enum Model {
    /// The configured provider.
    Provider(Arc<Provider>),
    /// A person, through the run's questions (the studio, when no provider is configured).
    Person,
    /// Nobody: `SAMPLING_UNAVAILABLE` with what to do.
    Unavailable { advice: String },
}

impl Model {
    /// The provider configured in data folder `home`; else a person when `person` (the
    /// studio), else nobody, with what to configure.
    pub fn configured(home: &Path, person: bool) -> Model {
        match read_provider(home) {
            Ok(Some(config)) => Model::Provider(Arc::new(Provider::new(config))),
            Ok(None) if person => Model::Person,
            Ok(None) => Model::Unavailable {
                advice: format!(
                    "configure a sampling provider: a `sampling` section in {} such as {{\"sampling\": \
                     {{\"base_url\": \"http://localhost:11434/v1\", \"model\": \"llama3.2\"}}}} (any \
                     OpenAI-compatible endpoint), or run the workflow through `mcpflow serve` from a client that \
                     declares sampling",
                    settings_path(home).display()
                ),
            },
            Err(problem) => Model::Unavailable { advice: format!("the sampling provider cannot be used: {problem}") },
        }
    }
}

impl Sampler for Model {
    fn sample(
        &self,
        request: SampleRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Value, CallError>> {
        match self {
            Model::Provider(provider) => provider.sample(request, cancel),
            Model::Person => ask_a_person(request),
            Model::Unavailable { advice } => {
                let error = request.unavailable(advice);
                Box::pin(async move { Err(error) })
            }
        }
    }
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
        let client = reqwest::Client::builder()
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

/// The field a person writes the model's answer in.
pub const ANSWER_FIELD: &str = "answer";

/// Shows the request to a person (a question on the step: the conversation and the form
/// of one text field) and answers with what they write; declined or dismissed, the
/// request is refused.
fn ask_a_person(request: SampleRequest) -> BoxFuture<'static, Result<Value, CallError>> {
    Box::pin(async move {
        let Some(ask) = request.ask.clone() else {
            return Err(request.unavailable("nobody is there to answer it"));
        };
        let question = Question {
            id: String::new(),
            step: request.step.clone(),
            path: request.path.clone(),
            asking: Asking::Elicitation,
            server: Some(request.server.clone()),
            message: conversation(&request.params),
            schema: Some(json!({
                "type": "object",
                "properties": { ANSWER_FIELD: {
                    "type": "string",
                    "title": "The model's answer",
                    "description": "What the server gets back as the model's answer",
                } },
                "required": [ANSWER_FIELD],
            })),
            default: None,
            url: None,
            call: None,
        };
        match ask(question).await? {
            Answer::Accept { content } => {
                let text = content.get(ANSWER_FIELD).and_then(Value::as_str).unwrap_or_default().to_owned();
                Ok(json!({
                    "role": "assistant",
                    "content": { "type": "text", "text": text },
                    "model": PERSON_MODEL,
                    "stopReason": "endTurn",
                }))
            }
            Answer::Decline | Answer::Cancel => Err(CallError::new(
                "SAMPLING_DECLINED",
                format!(
                    "server `{}` asked the model during step `{}`, and the person declined to answer",
                    request.server, request.step
                ),
                false,
            )),
        }
    })
}

/// What a person is shown: who asks, the system prompt and the messages, as text (at most
/// 4 KiB, as every question's message).
fn conversation(params: &Value) -> String {
    let mut text = String::from("The server asks the model for an answer. Write it, or decline.");
    if let Some(system) = params.get("systemPrompt").and_then(Value::as_str) {
        text.push_str(&format!("\n\nsystem: {system}"));
    }
    for message in params.get("messages").and_then(Value::as_array).into_iter().flatten() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("user");
        let blocks = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(block) => vec![block.clone()],
            None => Vec::new(),
        };
        for block in blocks {
            let said = match block.get("text").and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => format!("({} content)", block.get("type").and_then(Value::as_str).unwrap_or("other")),
            };
            text.push_str(&format!("\n\n{role}: {said}"));
        }
    }
    mcpflow_engine::sampling::clip(&text, 4096)
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

    #[test]
    fn settings_are_checked_and_a_key_must_come_from_the_environment() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(read_provider(home.path()).unwrap(), None);
        let write = |text: &str| std::fs::write(settings_path(home.path()), text).unwrap();
        write(r#"{"theme": "dark"}"#);
        assert_eq!(read_provider(home.path()).unwrap(), None);
        write(r#"{"sampling": {"baseUrl": "http://localhost:11434/v1", "model": "llama3.2"}}"#);
        assert_eq!(read_provider(home.path()).unwrap().unwrap().model, "llama3.2");
        write(r#"{"sampling": {"base_url": "http://x/v1", "model": "m", "api_key": "sk-123"}}"#);
        assert!(read_provider(home.path()).unwrap_err().contains("${env:NAME}"));
        write(r#"{"sampling": {"base_url": "http://x/v1", "modle": "m"}}"#);
        assert!(read_provider(home.path()).unwrap_err().contains("modle"));
        write(r#"{"sampling": {"base_url": "localhost", "model": "m"}}"#);
        assert!(read_provider(home.path()).unwrap_err().contains("base_url"));
    }

    fn provider(base_url: &str, model: &str, api_key: Option<&str>) -> ProviderConfig {
        ProviderConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: api_key.map(str::to_owned),
            timeout_ms: Some(30_000),
            max_tokens: None,
        }
    }

    #[test]
    fn writing_the_provider_keeps_every_other_key_of_the_settings_in_its_place() {
        let home = tempfile::tempdir().unwrap();
        let path = settings_path(home.path());
        std::fs::write(&path, r#"{"theme": "dark", "sampling": {"baseUrl": "http://old/v1", "model": "old"}, "zeta": [1, {"b": 2, "a": 1}]}"#)
            .unwrap();
        write_provider(
            home.path(),
            Some(&provider(" http://localhost:11434/v1 ", " llama3.2 ", Some("${env:OLLAMA_KEY}"))),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let root: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = root.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["theme", "sampling", "zeta"], "the section keeps its place: {text}");
        assert_eq!(root["theme"], "dark");
        assert_eq!(root["zeta"], json!([1, {"b": 2, "a": 1}]));
        assert_eq!(
            root["sampling"],
            json!({"base_url": "http://localhost:11434/v1", "model": "llama3.2", "api_key": "${env:OLLAMA_KEY}",
                "timeout_ms": 30000}),
            "trimmed, written in the documented spelling, no empty fields"
        );
        // Removing it keeps the rest too.
        write_provider(home.path(), None).unwrap();
        let root: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(root, json!({"theme": "dark", "zeta": [1, {"b": 2, "a": 1}]}));
        assert_eq!(read_provider(home.path()).unwrap(), None);
    }

    #[test]
    fn a_written_provider_reads_back_as_it_was_given_and_runs_use_it() {
        let home = tempfile::tempdir().unwrap();
        // No file yet: it is made.
        assert_eq!(provider_settings(home.path()).provider, None);
        let mut given = provider("https://api.example.com/v1", "gpt-test", Some("${env:MCPFLOW_TEST_NO_SUCH_KEY}"));
        given.max_tokens = Some(256);
        write_provider(home.path(), Some(&given)).unwrap();
        assert_eq!(read_provider(home.path()).unwrap(), Some(given.clone()), "what runs read");
        let shown = provider_settings(home.path());
        assert_eq!(shown.provider, Some(given));
        assert_eq!(shown.problem, None);
        assert_eq!(shown.key_variable.as_deref(), Some("MCPFLOW_TEST_NO_SUCH_KEY"));
        assert!(!shown.key_set, "the variable is not set here");
        assert_eq!(shown.path, settings_path(home.path()));
    }

    #[test]
    fn a_literal_key_or_a_bad_field_is_refused_by_name_and_nothing_is_written() {
        let home = tempfile::tempdir().unwrap();
        let path = settings_path(home.path());
        let before = r#"{"theme": "dark"}"#;
        std::fs::write(&path, before).unwrap();
        let refused = |config: ProviderConfig| write_provider(home.path(), Some(&config)).unwrap_err();
        for key in ["sk-abc123", "Bearer ${env:KEY}", "${env:1KEY}", "${env:MY-KEY}", "${env:}", "$OPENAI_API_KEY"] {
            let err = refused(provider("http://x/v1", "m", Some(key)));
            assert!(err.starts_with("`api_key` must be written exactly \"${env:NAME}\""), "{key}: {err}");
            assert!(!err.contains(key), "the key is not echoed: {err}");
        }
        let err = refused(provider("localhost:11434/v1", "m", None));
        assert!(err.starts_with("`base_url` is \"localhost:11434/v1\", not an http(s) URL"), "{err}");
        let err = refused(provider("ftp://x/v1", "m", None));
        assert!(err.contains("a ftp URL"), "{err}");
        let err = refused(provider("", "m", None));
        assert!(err.starts_with("`base_url` is empty"), "{err}");
        let err = refused(provider("http://x/v1", "  ", None));
        assert!(err.starts_with("`model` is empty"), "{err}");
        let mut zero = provider("http://x/v1", "m", None);
        zero.timeout_ms = Some(0);
        assert!(refused(zero).starts_with("`timeout_ms` is 0"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before, "nothing was written");
        // An empty key field means no key.
        write_provider(home.path(), Some(&provider("http://x/v1", "m", Some(" ")))).unwrap();
        assert_eq!(read_provider(home.path()).unwrap().unwrap().api_key, None);
    }

    #[test]
    fn a_settings_file_that_is_not_an_object_is_never_overwritten() {
        let home = tempfile::tempdir().unwrap();
        let path = settings_path(home.path());
        for text in ["{\"theme\": ", "[1, 2]"] {
            std::fs::write(&path, text).unwrap();
            let err = write_provider(home.path(), Some(&provider("http://x/v1", "m", None))).unwrap_err();
            assert!(err.starts_with(&path.display().to_string()) && err.contains("nothing was written"), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            let shown = provider_settings(home.path());
            assert!(shown.problem.unwrap().starts_with(&path.display().to_string()));
            assert!(!shown.writable, "the file must be fixed first");
        }
        // A section the runs cannot use is shown as written, with why.
        std::fs::write(&path, r#"{"sampling": {"base_url": "http://x/v1", "model": "m", "api_key": "sk-123"}}"#)
            .unwrap();
        let shown = provider_settings(home.path());
        assert_eq!(shown.provider.unwrap().model, "m");
        assert!(shown.problem.unwrap().contains("`api_key` must be written as"));
        assert!(shown.writable, "saving the form fixes the section");
    }
}
