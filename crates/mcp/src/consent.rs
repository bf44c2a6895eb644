//! The consent gate: nothing that could carry the user's machine or secrets somewhere
//! starts or connects until the user approved it, recorded as a hash.
//!
//! - A stdio server's command starts only when the user approved that exact command line
//!   (command, arguments, the *names* of the environment variables it sets, and its working
//!   directory when one is set), whoever declared it.
//! - An HTTP server declared by a blueprint (not by the user's own config) is reached only
//!   when approved if its URL is not loopback, or its URL or headers use `${env:NAME}`:
//!   approval covers the URL as written, the header names and the names of the variables
//!   it sends ([`Endpoint`]). HTTP servers of the user's config, loopback ones of a
//!   blueprint that send no variable, and in-process servers need no approval.
//!
//! Everything is taken as written, before `${env:NAME}` is resolved, so secrets never
//! reach the hash or a prompt and rotating a token does not ask again. Opening or adding
//! configs never starts anything.

use crate::error::{Error, Result};
use mcpflow_blueprint::ServerConfig;
use mcpflow_config::env::references;
use mcpflow_config::launch::{TransportKind, transport_kind};
use mcpflow_config::{Origin, ServerConfigs, ServerEntry};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::fmt;

/// The exact command line of a stdio server, as the user is asked to approve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    pub command: String,
    pub args: Vec<String>,
    /// Names of the variables the entry sets (values are never part of consent), sorted.
    pub env_names: Vec<String>,
    pub cwd: Option<String>,
    /// The entry's `roots` as written (the folders it is told it may work in: for
    /// server-filesystem they replace the folders of its arguments).
    pub roots: Option<Vec<String>>,
}

impl CommandLine {
    /// The command line of a stdio entry; `None` for HTTP entries and broken ones.
    pub fn of(server: &str, config: &ServerConfig) -> Option<Self> {
        match transport_kind(server, config) {
            Ok(TransportKind::Stdio) => {}
            _ => return None,
        }
        let mut env_names: Vec<String> = config.env.keys().cloned().collect();
        env_names.sort();
        Some(CommandLine {
            command: config.command.clone().unwrap_or_default(),
            args: config.args.clone(),
            env_names,
            cwd: config.cwd.clone(),
            roots: config.roots.clone(),
        })
    }

    /// `sha256:<hex>` of the command line; what approvals store.
    pub fn hash(&self) -> String {
        // A JSON array is an unambiguous encoding: no argument can forge a separator.
        let mut canonical = serde_json::json!(["mcpflow-consent/1", self.command, self.args, self.env_names, self.cwd]);
        // Only when written: the hashes of entries without `roots` stay what they were.
        if let (Some(roots), Some(items)) = (&self.roots, canonical.as_array_mut()) {
            items.push(serde_json::json!({ "roots": roots }));
        }
        sha256(&canonical.to_string())
    }
}

/// An HTTP endpoint a blueprint declared, as the user is asked to approve it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL as written (`${env:NAME}` unresolved).
    pub url: String,
    /// The names of the headers it sends, sorted (values are not part of consent).
    pub header_names: Vec<String>,
    /// The variables its URL and headers send (`${env:NAME}`), sorted, each once.
    pub env_names: Vec<String>,
    /// Its `oauth` object as written (which client signs in where, the secret's variable).
    pub oauth: Option<mcpflow_blueprint::OAuthConfig>,
}

impl Endpoint {
    /// The endpoint of an HTTP entry; `None` for stdio entries and broken ones.
    pub fn of(server: &str, config: &ServerConfig) -> Option<Self> {
        match transport_kind(server, config) {
            Ok(TransportKind::Http) => {}
            _ => return None,
        }
        let url = config.url.clone().unwrap_or_default();
        let mut env_names = BTreeSet::new();
        env_names.extend(references(&url).into_iter().map(str::to_owned));
        for value in config.headers.values() {
            if let Some(text) = value.as_str() {
                env_names.extend(references(text).into_iter().map(str::to_owned));
            }
        }
        if let Some(secret) = config.oauth.as_ref().and_then(|o| o.client_secret.as_deref()) {
            env_names.extend(references(secret).into_iter().map(str::to_owned));
        }
        let mut header_names: Vec<String> = config.headers.keys().cloned().collect();
        header_names.sort();
        Some(Endpoint { url, header_names, env_names: env_names.into_iter().collect(), oauth: config.oauth.clone() })
    }

    /// It needs approval when a blueprint declares it: it sends a variable, or leaves
    /// this machine.
    pub fn needs_consent(&self) -> bool {
        !self.env_names.is_empty() || !is_loopback_url(&self.url)
    }

    /// `sha256:<hex>` of the endpoint; what approvals store.
    pub fn hash(&self) -> String {
        let mut canonical = serde_json::json!(["mcpflow-consent-http/1", self.url, self.header_names, self.env_names]);
        // Only when written: the hashes of entries without `oauth` stay what they were.
        if let (Some(oauth), Some(items)) = (&self.oauth, canonical.as_array_mut()) {
            items.push(serde_json::json!({ "oauth": oauth }));
        }
        sha256(&canonical.to_string())
    }
}

/// `URL https://h/mcp (sends: TOKEN)`: never a variable's value.
impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "URL {}", self.url)?;
        if !self.env_names.is_empty() {
            write!(f, " (sends: {})", self.env_names.join(", "))?;
        }
        Ok(())
    }
}

/// `http(s)://` to `localhost`, `127.0.0.0/8` or `[::1]`, as written (no DNS).
fn is_loopback_url(url: &str) -> bool {
    let Ok(uri) = url.parse::<http::Uri>() else { return false };
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return false;
    }
    let Some(host) = uri.host() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// What one server needs approved before it starts or is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consent {
    /// A stdio command line (any origin).
    Command(CommandLine),
    /// An HTTP endpoint a blueprint declared that sends a variable or is not loopback.
    Endpoint(Endpoint),
}

impl Consent {
    /// What `config` needs approved, given who declared it; `None` when it needs nothing
    /// (the user's HTTP servers, a blueprint's loopback ones that send no variable, broken
    /// entries, which fail when they start).
    pub fn required(server: &str, config: &ServerConfig, origin: Origin) -> Option<Self> {
        if let Some(line) = CommandLine::of(server, config) {
            return Some(Consent::Command(line));
        }
        match Endpoint::of(server, config) {
            Some(endpoint) if origin == Origin::Blueprint && endpoint.needs_consent() => {
                Some(Consent::Endpoint(endpoint))
            }
            _ => None,
        }
    }

    /// What server `name` of `configs` needs approved (`None`: not configured, or nothing).
    pub fn of_server(configs: &ServerConfigs, name: &str) -> Option<Self> {
        match configs.get(name)? {
            ServerEntry::Config(config) => Consent::required(name, config, configs.origin(name)),
            ServerEntry::InProcess(_) => None,
        }
    }

    /// `sha256:<hex>`; what approvals store.
    pub fn hash(&self) -> String {
        match self {
            Consent::Command(line) => line.hash(),
            Consent::Endpoint(endpoint) => endpoint.hash(),
        }
    }
}

impl fmt::Display for Consent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Consent::Command(line) => line.fmt(f),
            Consent::Endpoint(endpoint) => endpoint.fmt(f),
        }
    }
}

/// `node server.js --root '/my files' (env: TOKEN; cwd: /srv)`, quoted for a POSIX shell.
impl fmt::Display for CommandLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shell_quote(&self.command))?;
        for arg in &self.args {
            write!(f, " {}", shell_quote(arg))?;
        }
        let mut extras = Vec::new();
        if !self.env_names.is_empty() {
            extras.push(format!("env: {}", self.env_names.join(", ")));
        }
        if let Some(cwd) = &self.cwd {
            extras.push(format!("cwd: {cwd}"));
        }
        match self.roots.as_deref() {
            None => {}
            Some([]) => extras.push("roots: none".to_owned()),
            Some(roots) => extras.push(format!("roots: {}", roots.join(", "))),
        }
        if !extras.is_empty() {
            write!(f, " ({})", extras.join("; "))?;
        }
        Ok(())
    }
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,${}".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// The command lines the user approved, by hash; or everything (`allow_all`, for CI).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Approvals {
    hashes: BTreeSet<String>,
    allow_all: bool,
}

impl Approvals {
    /// Nothing approved.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every command approved (CI, trusted environments).
    pub fn allow_all() -> Self {
        Approvals { hashes: BTreeSet::new(), allow_all: true }
    }

    /// Approvals stored earlier (hashes from [`CommandLine::hash`]).
    pub fn from_hashes(hashes: impl IntoIterator<Item = String>) -> Self {
        Approvals { hashes: hashes.into_iter().collect(), allow_all: false }
    }

    pub fn approve(&mut self, line: &CommandLine) {
        self.hashes.insert(line.hash());
    }

    pub fn approve_hash(&mut self, hash: impl Into<String>) {
        self.hashes.insert(hash.into());
    }

    /// Approves what server `name` needs as configured (`--allow-server NAME`): its
    /// command line, or the endpoint a blueprint declared. A no-op for servers that need
    /// no approval.
    pub fn approve_server(&mut self, configs: &ServerConfigs, name: &str) -> Result<()> {
        match configs.get(name) {
            None => Err(Error::ServerNotConfigured {
                server: name.to_owned(),
                known: configs.names().map(str::to_owned).collect(),
            }),
            Some(ServerEntry::InProcess(_)) => Ok(()),
            Some(ServerEntry::Config(config)) => {
                transport_kind(name, config)?;
                if let Some(consent) = Consent::required(name, config, configs.origin(name)) {
                    self.approve_hash(consent.hash());
                }
                Ok(())
            }
        }
    }

    pub fn is_approved(&self, line: &CommandLine) -> bool {
        self.allow_all || self.hashes.contains(&line.hash())
    }

    /// Whether this consent was given (or everything is allowed).
    pub fn allows(&self, consent: &Consent) -> bool {
        self.allow_all || self.hashes.contains(&consent.hash())
    }

    pub fn allows_all(&self) -> bool {
        self.allow_all
    }

    /// The approved hashes, to store.
    pub fn hashes(&self) -> impl Iterator<Item = &str> {
        self.hashes.iter().map(String::as_str)
    }

    /// `Ok` when the entry may start or be reached: `SERVER_NOT_APPROVED` with the exact
    /// command line, or the URL and the names of the variables it would send, otherwise.
    /// Checked before anything is spawned or connected.
    pub fn check(&self, server: &str, config: &ServerConfig, origin: Origin) -> Result<()> {
        match Consent::required(server, config, origin) {
            Some(consent) if !self.allows(&consent) => Err(Error::ServerNotApproved {
                server: server.to_owned(),
                action: match consent {
                    Consent::Command(_) => "start this command",
                    Consent::Endpoint(_) => "connect to this URL, which the blueprint declares",
                },
                command_line: consent.to_string(),
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(value: serde_json::Value) -> ServerConfig {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_hash_covers_command_args_env_names_and_cwd_but_not_env_values() {
        let base = config(json!({"command": "node", "args": ["s.js"], "env": {"TOKEN": "a"}}));
        let line = CommandLine::of("s", &base).unwrap();
        let same_names = config(json!({"command": "node", "args": ["s.js"], "env": {"TOKEN": "b"}}));
        assert_eq!(CommandLine::of("s", &same_names).unwrap().hash(), line.hash());
        for other in [
            json!({"command": "nodejs", "args": ["s.js"], "env": {"TOKEN": "a"}}),
            json!({"command": "node", "args": ["s.js", "--x"], "env": {"TOKEN": "a"}}),
            json!({"command": "node", "args": ["s.js"], "env": {"TOKEN": "a", "LD_PRELOAD": "x"}}),
            json!({"command": "node", "args": ["s.js"], "env": {"TOKEN": "a"}, "cwd": "/tmp"}),
            // An argument containing a space is not two arguments.
            json!({"command": "node", "args": ["s.js --x"], "env": {"TOKEN": "a"}}),
        ] {
            assert_ne!(CommandLine::of("s", &config(other.clone())).unwrap().hash(), line.hash(), "{other}");
        }
        assert!(line.hash().starts_with("sha256:") && line.hash().len() == 71);
    }

    #[test]
    fn an_endpoints_oauth_is_part_of_its_hash_and_entries_without_it_keep_theirs() {
        let plain = Endpoint::of("s", &config(json!({"url": "https://h/mcp"}))).unwrap();
        // The hash of an endpoint without `oauth`, as before `oauth` existed.
        let before = sha256(&json!(["mcpflow-consent-http/1", "https://h/mcp", [], []]).to_string());
        assert_eq!(plain.hash(), before);
        let with = |oauth: serde_json::Value| {
            Endpoint::of("s", &config(json!({"url": "https://h/mcp", "oauth": oauth}))).unwrap()
        };
        let a = with(json!({"client_id": "a"}));
        let b = with(json!({"client_id": "b"}));
        assert_ne!(a.hash(), plain.hash());
        assert_ne!(a.hash(), b.hash());
        // The secret's variable is one the endpoint sends.
        let secret = with(json!({"client_id": "a", "client_secret": "${env:CS}"}));
        assert_eq!(secret.env_names, vec!["CS".to_owned()]);
        assert!(secret.needs_consent());
    }

    #[test]
    fn roots_are_part_of_the_command_line_and_entries_without_them_keep_their_hash() {
        let base = config(json!({"command": "npx", "args": ["server-filesystem", "/home/me/docs"]}));
        let line = CommandLine::of("fs", &base).unwrap();
        // The hash of an entry without `roots`, as stored before roots existed.
        let before = serde_json::json!(["mcpflow-consent/1", "npx", ["server-filesystem", "/home/me/docs"], [], null]);
        assert_eq!(line.hash(), sha256(&before.to_string()));
        // server-filesystem works in its roots instead of its arguments: another folder
        // (or none) is another approval.
        let everything = CommandLine::of(
            "fs",
            &config(json!({"command": "npx", "args": ["server-filesystem",
            "/home/me/docs"], "roots": ["/"]})),
        )
        .unwrap();
        let none = CommandLine::of(
            "fs",
            &config(json!({"command": "npx", "args": ["server-filesystem",
            "/home/me/docs"], "roots": []})),
        )
        .unwrap();
        assert!(everything.hash() != line.hash() && none.hash() != line.hash() && none.hash() != everything.hash());
        assert_eq!(everything.to_string(), "npx server-filesystem /home/me/docs (roots: /)");
        assert_eq!(none.to_string(), "npx server-filesystem /home/me/docs (roots: none)");
    }

    #[test]
    fn shows_the_command_line_as_a_shell_would_read_it() {
        let c = config(
            json!({"command": "node", "args": ["s.js", "--root", "/my files", "it's"], "env": {"B": "1", "A": "2"}}),
        );
        assert_eq!(
            CommandLine::of("s", &c).unwrap().to_string(),
            r"node s.js --root '/my files' 'it'\''s' (env: A, B)"
        );
    }

    #[test]
    fn only_approved_stdio_commands_pass() {
        let c = config(json!({"command": "srv", "args": ["--a"]}));
        let mut approvals = Approvals::new();
        let err = approvals.check("inv", &c, Origin::User).unwrap_err();
        assert_eq!(err.code(), "SERVER_NOT_APPROVED");
        assert!(err.to_string().contains("srv --a") && err.to_string().contains("server `inv`"));
        let mut configs = ServerConfigs::new();
        configs.insert("inv", c.clone());
        approvals.approve_server(&configs, "inv").unwrap();
        assert!(approvals.check("inv", &c, Origin::User).is_ok());
        assert!(approvals.check("inv", &config(json!({"command": "srv", "args": ["--b"]})), Origin::User).is_err());
        assert!(Approvals::allow_all().check("inv", &config(json!({"command": "anything"})), Origin::User).is_ok());
        assert!(Approvals::new().check("web", &config(json!({"url": "http://h/mcp"})), Origin::User).is_ok());
        assert_eq!(approvals.approve_server(&configs, "nope").unwrap_err().code(), "SERVER_NOT_CONFIGURED");
    }

    #[test]
    fn a_blueprints_http_server_needs_approval_when_it_sends_a_variable_or_leaves_the_machine() {
        let needs = |json: serde_json::Value, origin| Consent::required("s", &config(json), origin);
        let secret = json!({"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${env:SECRET}"}});
        // The user's own HTTP servers are trusted as they are.
        assert_eq!(needs(secret.clone(), Origin::User), None);
        assert_eq!(needs(json!({"url": "https://example.com/mcp"}), Origin::User), None);
        // A blueprint's: loopback without variables passes; variables or another host ask.
        for ok in ["http://127.0.0.1:9/mcp", "http://localhost/mcp", "http://[::1]:8/mcp", "http://127.1.2.3/x"] {
            assert_eq!(needs(json!({"url": ok}), Origin::Blueprint), None, "{ok}");
        }
        for asks in [
            json!({"url": "http://192.0.2.1/mcp"}),
            json!({"url": "http://localhost.attacker.example/mcp"}),
            json!({"url": "http://127.0.0.1:9/mcp?k=${env:SECRET}"}),
            json!({"url": "http://${env:HOST}/mcp"}),
            json!({"url": "not a url"}),
            secret.clone(),
        ] {
            assert!(needs(asks.clone(), Origin::Blueprint).is_some(), "{asks}");
        }
        let consent = needs(secret, Origin::Blueprint).unwrap();
        assert_eq!(consent.to_string(), "URL http://127.0.0.1:9/mcp (sends: SECRET)");
        let err = Approvals::new()
            .check(
                "s",
                &config(json!({"url": "http://192.0.2.1/mcp", "headers": {"A": "${env:B}"}})),
                Origin::Blueprint,
            )
            .unwrap_err();
        assert_eq!(err.code(), "SERVER_NOT_APPROVED");
        assert!(err.to_string().contains("URL http://192.0.2.1/mcp (sends: B)"), "{err}");
    }

    #[test]
    fn an_endpoint_hash_covers_url_header_names_and_variable_names_but_not_values() {
        let hash = |json: serde_json::Value| Endpoint::of("s", &config(json)).unwrap().hash();
        let base = hash(json!({"url": "http://h/mcp", "headers": {"A": "Bearer ${env:T}", "B": "lit"}}));
        assert_eq!(base, hash(json!({"url": "http://h/mcp", "headers": {"A": "Token ${env:T}", "B": "other"}})));
        for other in [
            json!({"url": "http://h2/mcp", "headers": {"A": "Bearer ${env:T}", "B": "lit"}}),
            json!({"url": "http://h/mcp", "headers": {"A": "Bearer ${env:U}", "B": "lit"}}),
            json!({"url": "http://h/mcp", "headers": {"X": "Bearer ${env:T}", "B": "lit"}}),
            json!({"url": "http://h/mcp", "headers": {"A": "Bearer ${env:T}"}}),
        ] {
            assert_ne!(hash(other.clone()), base, "{other}");
        }
        // An endpoint's approval is never a command line's.
        let line = CommandLine::of("s", &config(json!({"command": "http://h/mcp"}))).unwrap();
        assert_ne!(line.hash(), base);
    }

    #[test]
    fn allow_server_approves_the_endpoint_a_blueprint_declared_over_the_users_entry() {
        let mut user = ServerConfigs::new();
        user.insert("web", config(json!({"url": "http://127.0.0.1:9/mcp"})));
        let mut own = indexmap::IndexMap::new();
        own.insert("web".to_owned(), config(json!({"url": "http://192.0.2.1/mcp", "headers": {"A": "${env:K}"}})));
        let merged = user.with_blueprint(&own);
        let Some(ServerEntry::Config(entry)) = merged.get("web") else { panic!() };
        let mut approvals = Approvals::new();
        assert!(approvals.check("web", entry, merged.origin("web")).is_err());
        approvals.approve_server(&merged, "web").unwrap();
        assert!(approvals.check("web", entry, merged.origin("web")).is_ok());
    }
}
