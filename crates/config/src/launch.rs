//! What to start for a server entry: which transport it uses, and its command line or
//! endpoint with `${env:NAME}` resolved, and the secrets that resolving brought in
//! ([`Secrets`]: what every message built from the launch must hide). Built only at start
//! time, never stored.

use super::env::{EnvLookup, references, resolve};
use crate::error::{Error, Result};
use mcpflow_blueprint::ServerConfig;
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};

/// How the pool reaches a configured server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
    /// MCP streamable HTTP.
    Http,
}

/// The transport of an entry: its `type`, else `command` (stdio) or `url` (HTTP).
pub fn transport_kind(server: &str, config: &ServerConfig) -> Result<TransportKind> {
    let invalid = |message: &str| Error::ServerConfigInvalid { server: server.to_owned(), message: message.to_owned() };
    let kind = match config.transport.as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("stdio") => TransportKind::Stdio,
        Some("http" | "streamable-http" | "streamable_http" | "streamablehttp") => TransportKind::Http,
        Some(other) => {
            return Err(Error::TransportUnsupported { server: server.to_owned(), transport: other.to_owned() });
        }
        None => match (&config.command, &config.url) {
            (Some(_), None) => TransportKind::Stdio,
            (None, Some(_)) => TransportKind::Http,
            (Some(_), Some(_)) => return Err(invalid("has both `command` and `url`; set `type` to `stdio` or `http`")),
            (None, None) => return Err(invalid("needs a `command` (stdio) or a `url` (streamable HTTP)")),
        },
    };
    match kind {
        TransportKind::Stdio if config.command.as_deref().is_none_or(str::is_empty) => {
            Err(invalid("is a stdio server but has no `command`"))
        }
        TransportKind::Http if config.url.as_deref().is_none_or(str::is_empty) => {
            Err(invalid("is an HTTP server but has no `url`"))
        }
        kind => Ok(kind),
    }
}

/// What a start of `config` would hide ([`Secrets`]: its `${env:NAME}` values, its header
/// values), found without starting it — for what leaves mcpflow another way than the
/// pool's messages (a cassette made from a run's record). An entry that could not start
/// hides nothing.
pub fn secrets_of(server: &str, config: &ServerConfig, lookup: &EnvLookup) -> Secrets {
    let launched = match transport_kind(server, config) {
        Ok(TransportKind::Stdio) => stdio(server, config, lookup).map(|l| l.secrets),
        Ok(TransportKind::Http) => http(server, config, lookup).map(|l| l.secrets),
        Err(e) => Err(e),
    };
    launched.unwrap_or_default()
}

/// A stdio server's command line, resolved.
#[derive(Clone, PartialEq, Eq)]
pub struct StdioLaunch {
    pub command: String,
    pub args: Vec<String>,
    /// Added to the inherited environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub secrets: Secrets,
}

/// A streamable HTTP endpoint, resolved.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpLaunch {
    pub url: String,
    pub headers: Vec<(String, String)>,
    /// The URL as configured, `${env:NAME}` unresolved: what messages show.
    pub shown_url: String,
    pub secrets: Secrets,
}

// Debug shows what messages may show: no argument, variable or header value.
impl std::fmt::Debug for StdioLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioLaunch").field("command", &self.command).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for HttpLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpLaunch").field("shown_url", &self.shown_url).finish_non_exhaustive()
    }
}

/// The values a resolved launch holds that no message, event, log line or run record may
/// show, each with what to show instead: the value of every `${env:NAME}` the entry
/// references (shown as `${env:NAME}`, also in its percent-encoded forms, as an HTTP
/// client prints it in a URL) and every header value (shown as `<NAME value>`). Values
/// shorter than 4 bytes are left alone, so a message is not mangled by replacing every
/// `1` (as `mcpflow servers` does).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    /// Longest value first, so a value containing another is replaced whole.
    pairs: Vec<(String, String)>,
}

impl Secrets {
    /// Hides `value` (and its percent-encoded forms) as `shown`.
    pub fn add(&mut self, value: &str, shown: String) {
        if value.len() < 4 {
            return;
        }
        for form in [value.to_owned(), utf8_percent_encode(value, COMPONENT).to_string()]
            .into_iter()
            .chain(Some(utf8_percent_encode(value, QUERY_TEXT).to_string()))
        {
            if !self.pairs.iter().any(|(known, _)| *known == form) {
                self.pairs.push((form, shown.clone()));
            }
        }
        self.pairs.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    }

    /// Hides what `other` hides too.
    pub fn join(&mut self, other: &Secrets) {
        for (value, shown) in &other.pairs {
            if !self.pairs.iter().any(|(known, _)| known == value) {
                self.pairs.push((value.clone(), shown.clone()));
            }
        }
        self.pairs.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    }

    /// The `${env:NAME}` values `text` refers to.
    fn add_references(&mut self, text: &str, lookup: &EnvLookup) {
        for name in references(text) {
            if let Some(value) = lookup(name) {
                self.add(&value, format!("${{env:{name}}}"));
            }
        }
    }

    /// `text` with every secret replaced by what stands for it, matched regardless of
    /// ASCII case: a server that prints its hex key in upper case still shows nothing.
    pub fn redact(&self, text: &str) -> String {
        self.pairs.iter().fold(text.to_owned(), |text, (value, shown)| replace_ignoring_ascii_case(text, value, shown))
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} hidden)", self.pairs.len())
    }
}

/// `text` with every occurrence of `value`, in any ASCII case, replaced by `shown`. ASCII
/// lower-casing keeps every byte offset and character boundary, so the offsets found in
/// the lowered text cut the original.
fn replace_ignoring_ascii_case(text: String, value: &str, shown: &str) -> String {
    let (lowered, needle) = (text.to_ascii_lowercase(), value.to_ascii_lowercase());
    if needle.is_empty() || !lowered.contains(&needle) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in lowered.match_indices(&needle) {
        out.push_str(&text[last..at]);
        out.push_str(shown);
        last = at + needle.len();
    }
    out.push_str(&text[last..]);
    out
}

/// Everything but the unreserved characters `A-Z a-z 0-9 - . _ ~` (as `encodeURIComponent`
/// and form encoders write a value).
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
/// Controls, space and `" # < > '` (as URL parsers write a query).
const QUERY_TEXT: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'<').add(b'>').add(b'\'');

pub fn stdio(server: &str, config: &ServerConfig, lookup: &EnvLookup) -> Result<StdioLaunch> {
    let command = config.command.as_deref().unwrap_or_default();
    let mut secrets = Secrets::default();
    for text in config.args.iter().map(String::as_str).chain(config.cwd.as_deref()).chain(Some(command)) {
        secrets.add_references(text, lookup);
    }
    for text in config.env.values().filter_map(Value::as_str) {
        secrets.add_references(text, lookup);
    }
    Ok(StdioLaunch {
        command: resolve(command, lookup, server, "command")?,
        args: config
            .args
            .iter()
            .enumerate()
            .map(|(i, arg)| resolve(arg, lookup, server, &format!("args[{i}]")))
            .collect::<Result<_>>()?,
        env: pairs(server, &config.env, "env", lookup)?,
        cwd: config.cwd.as_deref().map(|cwd| resolve(cwd, lookup, server, "cwd")).transpose()?,
        secrets,
    })
}

pub fn http(server: &str, config: &ServerConfig, lookup: &EnvLookup) -> Result<HttpLaunch> {
    // A blueprint's `servers` entry was not checked when it was read.
    if let Some(oauth) = &config.oauth {
        super::oauth::check(oauth)
            .map_err(|message| Error::ServerConfigInvalid { server: server.to_owned(), message })?;
    }
    let url = config.url.as_deref().unwrap_or_default();
    let headers = pairs(server, &config.headers, "headers", lookup)?;
    let mut secrets = Secrets::default();
    secrets.add_references(url, lookup);
    for text in config.headers.values().filter_map(Value::as_str) {
        secrets.add_references(text, lookup);
    }
    for (name, value) in &headers {
        secrets.add(value, format!("<{name} value>"));
    }
    // The OAuth client secret (only ever `${env:NAME}`, see `oauth.rs`).
    if let Some(secret) = config.oauth.as_ref().and_then(|oauth| oauth.client_secret.as_deref()) {
        secrets.add_references(secret, lookup);
    }
    // The private key, when an environment variable holds it.
    if let Some(key) = config.oauth.as_ref().and_then(|oauth| oauth.private_key.as_deref()) {
        secrets.add_references(key, lookup);
    }
    Ok(HttpLaunch { url: resolve(url, lookup, server, "url")?, headers, shown_url: url.to_owned(), secrets })
}

fn pairs(server: &str, map: &Map<String, Value>, what: &str, lookup: &EnvLookup) -> Result<Vec<(String, String)>> {
    map.iter()
        .map(|(name, value)| {
            let field = format!("{what}.{name}");
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => value.to_string(),
                _ => {
                    return Err(Error::ServerConfigInvalid {
                        server: server.to_owned(),
                        message: format!("`{field}` must be a string"),
                    });
                }
            };
            Ok((name.clone(), resolve(&text, lookup, server, &field)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn config(json: Value) -> ServerConfig {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_transport_follows_type_command_or_url() {
        let kind = |json| transport_kind("s", &config(json));
        assert_eq!(kind(serde_json::json!({"command": "x"})).unwrap(), TransportKind::Stdio);
        assert_eq!(kind(serde_json::json!({"url": "http://h/mcp"})).unwrap(), TransportKind::Http);
        assert_eq!(kind(serde_json::json!({"type": "streamable-http", "url": "u"})).unwrap(), TransportKind::Http);
        assert_eq!(kind(serde_json::json!({"type": "sse", "url": "u"})).unwrap_err().code(), "TRANSPORT_UNSUPPORTED");
        assert_eq!(kind(serde_json::json!({})).unwrap_err().code(), "SERVER_CONFIG_INVALID");
        assert_eq!(kind(serde_json::json!({"type": "stdio", "url": "u"})).unwrap_err().code(), "SERVER_CONFIG_INVALID");
    }

    #[test]
    fn resolves_args_env_and_headers_at_start() {
        let lookup: EnvLookup = Arc::new(|name: &str| (name == "T").then(|| "tok".to_owned()));
        let c = config(serde_json::json!({"command": "srv", "args": ["--t=${env:T}"], "env": {"A": "${env:T}"}}));
        let launch = stdio("s", &c, &lookup).unwrap();
        assert_eq!((launch.args, launch.env), (vec!["--t=tok".to_owned()], vec![("A".to_owned(), "tok".to_owned())]));
        let h = config(serde_json::json!({"url": "http://h/${env:T}", "headers": {"X": "${env:MISSING}"}}));
        let err = http("s", &h, &lookup).err().unwrap();
        assert!(err.to_string().contains("`MISSING`") && err.to_string().contains("headers.X"), "{err}");
    }

    #[test]
    fn secrets_are_hidden_as_configured_also_percent_encoded() {
        let lookup: EnvLookup = Arc::new(|name: &str| (name == "K").then(|| "s3cr et/+".to_owned()));
        let h = config(
            serde_json::json!({"url": "http://h/mcp?k=${env:K}", "headers": {"Authorization": "Bearer ${env:K}"}}),
        );
        let launch = http("s", &h, &lookup).unwrap();
        let text = "GET http://h/mcp?k=s3cr%20et/+ or s3cr%20et%2F%2B, sent Bearer s3cr et/+ and s3cr et/+";
        assert_eq!(
            launch.secrets.redact(text),
            "GET http://h/mcp?k=${env:K} or ${env:K}, sent <Authorization value> and ${env:K}"
        );
        assert_eq!(launch.shown_url, "http://h/mcp?k=${env:K}");
        let c = config(serde_json::json!({"command": "srv", "args": ["--t=${env:K}"], "env": {"A": "x${env:K}"}}));
        assert_eq!(stdio("s", &c, &lookup).unwrap().secrets.redact("argv: --t=s3cr et/+"), "argv: --t=${env:K}");
        // In any ASCII case, and the text around it kept as written.
        assert_eq!(launch.secrets.redact("Key S3CR ET/+ Seen"), "Key ${env:K} Seen");
        let short: EnvLookup = Arc::new(|_: &str| Some("abc".to_owned()));
        assert!(stdio("s", &c, &short).unwrap().secrets.is_empty());
    }

    #[test]
    fn a_blueprints_oauth_secret_is_checked_at_start() {
        let lookup: EnvLookup = Arc::new(|_: &str| None);
        let c =
            config(serde_json::json!({"url": "http://h/mcp", "oauth": {"client_id": "a", "client_secret": "plain"}}));
        let err = http("s", &c, &lookup).err().unwrap();
        assert_eq!(err.code(), "SERVER_CONFIG_INVALID");
        assert!(err.to_string().contains("${env:NAME}"), "{err}");
    }

    #[test]
    fn the_oauth_secret_and_private_key_from_the_environment_are_hidden() {
        let lookup: EnvLookup = Arc::new(|name: &str| Some(format!("value-of-{name}")));
        let c = config(serde_json::json!({"url": "http://h/mcp",
            "oauth": {"client_id": "a", "client_secret": "${env:SECRET}", "private_key": "${env:KEY}"}}));
        let launch = http("s", &c, &lookup).unwrap();
        assert_eq!(launch.secrets.redact("value-of-SECRET and value-of-KEY"), "${env:SECRET} and ${env:KEY}");
    }
}
