//! What to start for a server entry: which transport it uses, and its command line or
//! endpoint with `${env:NAME}` resolved. Built only at start time, never stored.

use super::env::{EnvLookup, resolve};
use crate::error::{Error, Result};
use mcpflow_blueprint::ServerConfig;
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

/// A stdio server's command line, resolved.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct StdioLaunch {
    pub command: String,
    pub args: Vec<String>,
    /// Added to the inherited environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
}

/// A streamable HTTP endpoint, resolved.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct HttpLaunch {
    pub url: String,
    pub headers: Vec<(String, String)>,
}

pub(crate) fn stdio(server: &str, config: &ServerConfig, lookup: &EnvLookup) -> Result<StdioLaunch> {
    let command = config.command.as_deref().unwrap_or_default();
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
    })
}

pub(crate) fn http(server: &str, config: &ServerConfig, lookup: &EnvLookup) -> Result<HttpLaunch> {
    // A blueprint's `servers` entry was not checked when it was read.
    if let Some(oauth) = &config.oauth {
        super::oauth::check(oauth)
            .map_err(|message| Error::ServerConfigInvalid { server: server.to_owned(), message })?;
    }
    let url = config.url.as_deref().unwrap_or_default();
    Ok(HttpLaunch {
        url: resolve(url, lookup, server, "url")?,
        headers: pairs(server, &config.headers, "headers", lookup)?,
    })
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
    fn a_blueprints_oauth_secret_is_checked_at_start() {
        let lookup: EnvLookup = Arc::new(|_: &str| None);
        let c =
            config(serde_json::json!({"url": "http://h/mcp", "oauth": {"client_id": "a", "client_secret": "plain"}}));
        let err = http("s", &c, &lookup).err().unwrap();
        assert_eq!(err.code(), "SERVER_CONFIG_INVALID");
        assert!(err.to_string().contains("${env:NAME}"), "{err}");
    }
}
