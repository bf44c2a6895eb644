//! `mcpflow servers`: what each configured server is (how it is reached, whether it may
//! start, how it authenticates) without starting anything, and a connection test that
//! reports what each server answered (protocol version, name, capabilities, counts) or
//! why it failed and what to do. The front doors only print these.

use crate::advice::Front;
use crate::app::{App, consent};
use crate::error::Result;
use crate::headless::HeadlessError;
use futures::StreamExt as _;
use mcpflow_auth::{Authenticator, Vault};
use mcpflow_blueprint::ProtocolEra;
use mcpflow_config::launch::{TransportKind, transport_kind};
use mcpflow_mcp::{Approvals, Consent, Pool, PoolOptions, ServerConfigs, ServerEntry};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How many servers are tested at once.
pub const TEST_CONCURRENCY: usize = 4;

/// One configured server, as `mcpflow servers` lists it. Starts nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSummary {
    pub name: String,
    /// `stdio`, `http` or `in-process`.
    pub transport: &'static str,
    /// The exact command line a stdio server starts (`${env:NAME}` left as written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The URL of an HTTP server, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Whether it may start or be reached now (approved, or nothing to approve).
    pub approved: bool,
    /// Whether it needs an approval at all (a stdio command; a blueprint's HTTP server
    /// that sends a variable or leaves loopback).
    pub needs_approval: bool,
    pub auth: Auth,
    /// The protocol era its entry pins (`"protocol"`); absent: probed when it connects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<&'static str>,
    /// The entry cannot be used as written (no command or url, legacy SSE …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// How a server authenticates (`kind`: `none`, `headers`, `oauth`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Auth {
    /// Nothing is sent (an HTTP server that answers 401 still gets a sign-in: then it
    /// shows as `oauth`).
    None,
    /// Static headers sent with every request: their names only, never their values.
    Headers { names: Vec<String> },
    /// OAuth: the server has an `oauth` object, holds a login, or asked for one.
    #[serde(rename = "oauth")]
    OAuth {
        signed_in: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        account: Option<String>,
        /// Unix milliseconds of the access token's expiry.
        #[serde(skip_serializing_if = "Option::is_none")]
        expires_at_ms: Option<i64>,
    },
}

impl std::fmt::Display for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::None => f.write_str("none"),
            Auth::Headers { names } => write!(f, "headers: {}", names.join(", ")),
            Auth::OAuth { signed_in: false, .. } => f.write_str("oauth: needs login"),
            Auth::OAuth { signed_in: true, account, expires_at_ms } => {
                f.write_str("oauth: signed in")?;
                if let Some(account) = account {
                    write!(f, " as {account}")?;
                }
                if let Some(at) = expires_at_ms.and_then(chrono::DateTime::from_timestamp_millis) {
                    write!(f, " (token expires {})", at.format("%Y-%m-%d %H:%M UTC"))?;
                }
                Ok(())
            }
        }
    }
}

/// How server `name` with `config` authenticates, by its entry and the vault: its own
/// `Authorization` header wins; else a held login, or an `oauth` object, is OAuth.
fn auth_of(name: &str, config: &mcpflow_blueprint::ServerConfig, vault: &Vault) -> Auth {
    let names: Vec<String> = config.headers.keys().cloned().collect();
    let plain = || if names.is_empty() { Auth::None } else { Auth::Headers { names: names.clone() } };
    let http = matches!(transport_kind(name, config), Ok(TransportKind::Http));
    if !http || mcpflow_auth::has_static_authorization(config) {
        return plain();
    }
    match login_of(name, config, vault) {
        Some(login) => Auth::OAuth { signed_in: true, account: login.account, expires_at_ms: login.expires_at_ms },
        None if config.oauth.is_some() => Auth::OAuth { signed_in: false, account: None, expires_at_ms: None },
        None => plain(),
    }
}

/// The login held for an HTTP server's URL (`${env:NAME}` resolved from the process).
fn login_of(name: &str, config: &mcpflow_blueprint::ServerConfig, vault: &Vault) -> Option<mcpflow_auth::Login> {
    let url = mcpflow_auth::resolved_url(name, config, &mcpflow_config::env::process_env()).ok()?;
    let resource = mcpflow_auth::canonical_resource(&url).ok()?;
    vault.get(&resource).ok().flatten()
}

/// What testing one server found. Field names are stable (see `docs/servers.md`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerTest {
    pub name: String,
    /// It connected and listed its tools.
    pub ok: bool,
    /// How long the test took, in milliseconds.
    pub elapsed_ms: u64,
    /// The MCP protocol version the server answered `initialize` with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The capabilities object the server declared, as it sent it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TestError>,
    /// How it authenticates, as found: `oauth` with `signed_in: false` when it asked
    /// for a sign-in mcpflow does not hold.
    pub auth: Auth,
}

/// How many of each a server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub tools: usize,
    pub resources: usize,
    pub resource_templates: usize,
    pub prompts: usize,
}

/// Why a server failed its test, and what to do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestError {
    /// The pool's stable code (`SERVER_NOT_APPROVED`, `SERVER_START_FAILED`, …).
    pub code: String,
    /// What happened; for a stdio server that exited, it ends with its last stderr
    /// lines (`last stderr: …`).
    pub message: String,
    pub hint: String,
}

/// The servers of `mcpServers` files (later files over earlier ones) and what may start:
/// everything with `allow_all`, else the servers named — as `mcpflow run` without
/// `--store` decides.
pub fn file_servers(
    files: &[PathBuf],
    allow: &[String],
    allow_all: bool,
) -> std::result::Result<(ServerConfigs, Approvals), HeadlessError> {
    let mut configs = ServerConfigs::new();
    for file in files {
        configs.merge(ServerConfigs::read(file)?);
    }
    let mut approvals = if allow_all { Approvals::allow_all() } else { Approvals::new() };
    for name in allow {
        approvals.approve_server(&configs, name)?;
    }
    Ok((configs, approvals))
}

impl App {
    /// The configured servers (store, then `--servers` files) and what may start (stored
    /// approvals and this session's `--allow-server`), as runs of the store see them.
    pub fn server_set(&self) -> (ServerConfigs, Approvals) {
        let state = self.server_state();
        (state.configs, state.approvals)
    }

    /// [`summaries`] of the configured servers. Starts nothing.
    pub fn server_summaries(&self) -> Vec<ServerSummary> {
        let (configs, approvals) = self.server_set();
        summaries_in(&configs, &approvals, self.authenticator().vault())
    }
}

/// Every server of `configs`, in order, as it would be started, with the logins of the
/// data folder's vault. Starts nothing.
pub fn summaries(configs: &ServerConfigs, approvals: &Approvals) -> Vec<ServerSummary> {
    summaries_in(configs, approvals, &Vault::in_data_dir(&crate::home::data_dir()))
}

fn summaries_in(configs: &ServerConfigs, approvals: &Approvals, vault: &Vault) -> Vec<ServerSummary> {
    configs
        .iter()
        .map(|(name, entry)| match entry {
            ServerEntry::Config(config) => {
                let line = consent(configs, name);
                let kind = transport_kind(name, config);
                let stdio = matches!(kind, Ok(TransportKind::Stdio));
                let command = match &line {
                    Some(Consent::Command(c)) => Some(c.to_string()),
                    _ if stdio => config.command.clone(),
                    _ => None,
                };
                ServerSummary {
                    name: name.to_owned(),
                    transport: if stdio { "stdio" } else { "http" },
                    command,
                    url: if stdio { None } else { config.url.clone() },
                    approved: line.as_ref().is_none_or(|l| approvals.allows(l)),
                    needs_approval: line.is_some(),
                    auth: auth_of(name, config, vault),
                    protocol: config.protocol.map(ProtocolEra::as_str),
                    problem: kind.err().map(|e| e.to_string()),
                }
            }
            ServerEntry::InProcess(_) => ServerSummary {
                name: name.to_owned(),
                transport: "in-process",
                command: None,
                url: None,
                approved: true,
                needs_approval: false,
                auth: Auth::None,
                protocol: None,
                problem: None,
            },
        })
        .collect()
}

/// Tests `names` (every configured server when empty) of `configs`: each connects (a
/// stdio server starts only if approved), answers `initialize` and lists what it offers,
/// within `timeout`, at most [`TEST_CONCURRENCY`] at once. Every process is reaped before
/// this returns. Results come in the order asked.
pub async fn test_servers(
    configs: ServerConfigs,
    approvals: Approvals,
    names: &[String],
    timeout: Duration,
    front: Front,
) -> Vec<ServerTest> {
    let auth = crate::authenticator::authenticator(&crate::home::data_dir(), front);
    test_servers_with(configs, approvals, names, timeout, front, auth).await
}

async fn test_servers_with(
    configs: ServerConfigs,
    approvals: Approvals,
    names: &[String],
    timeout: Duration,
    front: Front,
    auth: Arc<Authenticator>,
) -> Vec<ServerTest> {
    let mut names: Vec<String> =
        if names.is_empty() { configs.iter().map(|(n, _)| n.to_owned()).collect() } else { names.to_vec() };
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    let secrets: HashMap<String, Vec<(String, String)>> =
        configs.iter().map(|(name, entry)| (name.to_owned(), secrets_of(entry))).collect();
    let described: HashMap<String, ServerSummary> =
        summaries_in(&configs, &approvals, auth.vault()).into_iter().map(|s| (s.name.clone(), s)).collect();
    let pool = Pool::new(configs, approvals, PoolOptions::default().with_connect_timeout(timeout).with_auth(auth));
    // Unordered, so a server that hangs holds one slot only; sorted back afterwards.
    let mut results: Vec<(usize, String, Duration, mcpflow_mcp::Result<Arc<mcpflow_mcp::Discovery>>)> =
        futures::stream::iter(names.iter().cloned().enumerate())
            .map(|(at, name)| {
                let pool = pool.clone();
                async move {
                    let started = Instant::now();
                    // The pool bounds the start and the listing by `timeout` each; this
                    // bounds the whole test, whatever a server does.
                    let found = match tokio::time::timeout(timeout.saturating_mul(2), pool.discover(&name)).await {
                        Ok(found) => found,
                        Err(_) => Err(mcpflow_mcp::Error::ServerStartFailed {
                            server: name.clone(),
                            message: format!("no answer within {} ms", timeout.saturating_mul(2).as_millis()),
                        }),
                    };
                    (at, name, started.elapsed(), found)
                }
            })
            .buffer_unordered(TEST_CONCURRENCY)
            .collect()
            .await;
    pool.shutdown().await;
    results.sort_by_key(|(at, ..)| *at);
    results
        .into_iter()
        .map(|(_, name, elapsed, found)| {
            let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
            let auth = described.get(&name).map_or(Auth::None, |s| s.auth.clone());
            match found {
                Ok(d) => ServerTest {
                    auth,
                    ok: true,
                    elapsed_ms,
                    protocol_version: d.protocol_version.clone(),
                    server_name: d.server_name.clone(),
                    server_version: d.server_version.clone(),
                    capabilities: d.capabilities.as_ref().and_then(|c| serde_json::to_value(c).ok()),
                    counts: Some(Counts {
                        tools: d.tools.len(),
                        resources: d.resources.len(),
                        resource_templates: d.resource_templates.len(),
                        prompts: d.prompts.len(),
                    }),
                    error: None,
                    name,
                },
                Err(e) => {
                    let summary = described.get(&name);
                    let hide = |text: &str| redact(text, secrets.get(&name).map_or(&[][..], Vec::as_slice));
                    ServerTest {
                        ok: false,
                        elapsed_ms,
                        protocol_version: None,
                        server_name: None,
                        server_version: None,
                        capabilities: None,
                        counts: None,
                        auth: if e.code() == "AUTH_REQUIRED" {
                            Auth::OAuth { signed_in: false, account: None, expires_at_ms: None }
                        } else {
                            auth
                        },
                        error: Some(TestError {
                            code: e.code().to_owned(),
                            message: hide(&e.to_string()),
                            hint: hint(&e, &name, summary, timeout, front),
                        }),
                        name,
                    }
                }
            }
        })
        .collect()
}

/// What to do about a failed test.
fn hint(
    e: &mcpflow_mcp::Error,
    name: &str,
    summary: Option<&ServerSummary>,
    timeout: Duration,
    front: Front,
) -> String {
    use mcpflow_auth::Error as A;
    use mcpflow_config::Error as C;
    use mcpflow_mcp::Error as E;
    match e {
        E::ServerNotApproved { .. } => front.approve(name),
        E::Auth(A::AuthRequired { .. }) => front.login(name),
        E::Auth(A::AuthFailed { .. } | A::AuthVault { .. }) => {
            format!("{}; if it keeps failing, `RUST_LOG=mcpflow=debug` shows the exchange", front.login(name))
        }
        E::Config(C::EnvVarMissing { name: var, .. }) => {
            format!("set `{var}` in the environment that runs mcpflow, then test again")
        }
        E::ServerNotConfigured { .. } => {
            "`mcpflow servers` lists the configured servers; add `--servers FILE` or `--store` for the ones in your \
             files or the data folder"
                .to_owned()
        }
        E::Config(C::ServerConfigInvalid { .. } | C::TransportUnsupported { .. }) => {
            "fix the entry where it is configured (its `mcpServers` file, or the studio's Servers panel)".to_owned()
        }
        E::ServerStartFailed { message, .. } if message.contains("within") || message.contains("longer than") => {
            format!(
                "it did not answer within {} s: it may be waiting for something (a download or a login on first \
                 start); run it by hand to see, or test again with a longer `--timeout`",
                timeout.as_secs()
            )
        }
        _ => match summary {
            Some(s) if s.transport == "stdio" => format!(
                "run its command line in a terminal to see why it fails: {}",
                s.command.as_deref().unwrap_or("(no command)")
            ),
            Some(s) if s.transport == "http" => format!(
                "check that the server is up at {} and speaks streamable HTTP (the URL usually ends in `/mcp`), and \
                 that its headers are right",
                s.url.as_deref().unwrap_or("its URL")
            ),
            _ => "run with `RUST_LOG=mcpflow=debug` to see the exchange with the server".to_owned(),
        },
    }
}

/// The values a server's entry may send or pass on that must not be printed, with what
/// to print instead: each `${env:NAME}` it references (`${env:NAME}`), and its header
/// values as written (`<NAME value>`). Values shorter than 4 bytes are left alone, so a
/// report is not mangled by replacing every `1`.
fn secrets_of(entry: &ServerEntry) -> Vec<(String, String)> {
    let ServerEntry::Config(config) = entry else { return Vec::new() };
    let mut texts: Vec<&str> = config.args.iter().map(String::as_str).collect();
    texts.extend(config.command.as_deref());
    texts.extend(config.url.as_deref());
    texts.extend(config.cwd.as_deref());
    texts.extend(config.env.values().chain(config.headers.values()).filter_map(Value::as_str));
    let mut out = Vec::new();
    for text in texts {
        for name in mcpflow_config::env::references(text) {
            if let Ok(value) = std::env::var(name) {
                out.push((value, format!("${{env:{name}}}")));
            }
        }
    }
    for (header, value) in &config.headers {
        if let Some(value) = value.as_str() {
            out.push((value.to_owned(), format!("<{header} value>")));
        }
    }
    out.retain(|(value, _)| value.len() >= 4);
    // Longest first, so a value containing another is replaced whole.
    out.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    out
}

/// `text` with every secret of `secrets` replaced by its stand-in.
fn redact(text: &str, secrets: &[(String, String)]) -> String {
    secrets.iter().fold(text.to_owned(), |text, (value, stand_in)| text.replace(value.as_str(), stand_in))
}

impl App {
    /// [`test_servers`] over this application's servers and approvals, with a pool of
    /// its own (the shared one is left alone), reaped before this returns.
    pub async fn test_server_set(&self, names: &[String], timeout: Duration) -> Result<Vec<ServerTest>> {
        let (configs, approvals) = self.server_set();
        Ok(test_servers_with(configs, approvals, names, timeout, self.inner.options.front, self.authenticator()).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(config: Value) -> ServerEntry {
        ServerEntry::Config(Box::new(serde_json::from_value(config).unwrap()))
    }

    #[test]
    fn secrets_are_replaced_longest_first_and_short_values_are_left() {
        let e = entry(serde_json::json!({
            "url": "http://h/mcp",
            "headers": { "X-Key": "abcdefgh", "X-Short": "ab", "X-Long": "abcdefgh-and-more" },
        }));
        let secrets = secrets_of(&e);
        let text = "sent abcdefgh-and-more and abcdefgh and ab";
        assert_eq!(redact(text, &secrets), "sent <X-Long value> and <X-Key value> and ab");
    }

    #[test]
    fn summaries_name_headers_never_their_values() {
        let mut configs = ServerConfigs::new();
        if let ServerEntry::Config(c) =
            entry(serde_json::json!({ "url": "https://h/mcp", "headers": { "Authorization": "Bearer s3cret" } }))
        {
            configs.insert("remote", *c);
        }
        let list = summaries(&configs, &Approvals::new());
        assert_eq!(list[0].auth, Auth::Headers { names: vec!["Authorization".into()] });
        assert_eq!(list[0].auth.to_string(), "headers: Authorization");
        assert!(!serde_json::to_string(&list).unwrap().contains("s3cret"));
        assert!(list[0].approved && !list[0].needs_approval);
    }

    #[test]
    fn summaries_show_whether_an_oauth_server_is_signed_in() {
        let dir = tempfile::tempdir().unwrap();
        let vault = Vault::in_data_dir(dir.path());
        let mut configs = ServerConfigs::new();
        for (name, config) in [
            ("oauth", serde_json::json!({ "url": "https://h/mcp", "oauth": { "scopes": ["read"] } })),
            ("plain", serde_json::json!({ "url": "https://other/mcp" })),
            ("own", serde_json::json!({ "url": "https://h/mcp", "headers": { "Authorization": "Bearer x" } })),
        ] {
            if let ServerEntry::Config(c) = entry(config) {
                configs.insert(name, *c);
            }
        }
        let auth = |list: &[ServerSummary], name: &str| list.iter().find(|s| s.name == name).unwrap().auth.clone();
        let list = summaries_in(&configs, &Approvals::new(), &vault);
        assert_eq!(auth(&list, "oauth").to_string(), "oauth: needs login");
        assert_eq!(auth(&list, "plain"), Auth::None);
        let login: mcpflow_auth::Login = serde_json::from_value(serde_json::json!({
            "resource": "https://h/mcp", "server": "oauth", "grant": "authorization_code", "access_token": "AT-x",
            "account": "me@example.com", "client_id": "c", "token_endpoint": "https://as/token", "updated_ms": 0}))
        .unwrap();
        vault.put(login).unwrap();
        let list = summaries_in(&configs, &Approvals::new(), &vault);
        assert_eq!(auth(&list, "oauth").to_string(), "oauth: signed in as me@example.com");
        // Its own `Authorization` header wins over the login for the same URL.
        assert_eq!(auth(&list, "own"), Auth::Headers { names: vec!["Authorization".into()] });
        assert!(!serde_json::to_string(&list).unwrap().contains("AT-x"));
    }
}
