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
pub use mcpflow_sampling::{Provider, ProviderConfig};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The settings file in the data folder.
pub const SETTINGS_FILE: &str = "settings.json";
/// Largest settings file read.
const SETTINGS_SIZE: u64 = 64 * 1024;
/// The model named in an answer a person wrote.
pub const PERSON_MODEL: &str = "person";

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
