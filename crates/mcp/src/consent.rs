//! The consent gate: a stdio server's command is started only when the user approved
//! that exact command line (command, arguments, the *names* of the environment variables
//! it sets, and its working directory when one is set), recorded as a hash.
//!
//! The command line is taken as written, before `${env:NAME}` is resolved, so secrets never
//! reach the hash and rotating a token does not ask again. HTTP and in-process servers start
//! no process and need no approval. Opening or adding configs never starts anything.

use crate::config::launch::{TransportKind, transport_kind};
use crate::config::{ServerConfigs, ServerEntry};
use crate::error::{Error, Result};
use mcpflow_blueprint::ServerConfig;
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
        })
    }

    /// `sha256:<hex>` of the command line; what approvals store.
    pub fn hash(&self) -> String {
        // A JSON array is an unambiguous encoding: no argument can forge a separator.
        let canonical = serde_json::json!(["mcpflow-consent/1", self.command, self.args, self.env_names, self.cwd]);
        let digest = Sha256::digest(canonical.to_string().as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        format!("sha256:{hex}")
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

    /// Approves the command of the server `name` as configured (`--allow-server NAME`).
    /// HTTP and in-process servers need no approval; this is then a no-op.
    pub fn approve_server(&mut self, configs: &ServerConfigs, name: &str) -> Result<()> {
        match configs.get(name) {
            None => Err(Error::ServerNotConfigured {
                server: name.to_owned(),
                known: configs.names().map(str::to_owned).collect(),
            }),
            Some(ServerEntry::InProcess(_)) => Ok(()),
            Some(ServerEntry::Config(config)) => {
                transport_kind(name, config)?;
                if let Some(line) = CommandLine::of(name, config) {
                    self.approve(&line);
                }
                Ok(())
            }
        }
    }

    pub fn is_approved(&self, line: &CommandLine) -> bool {
        self.allow_all || self.hashes.contains(&line.hash())
    }

    pub fn allows_all(&self) -> bool {
        self.allow_all
    }

    /// The approved hashes, to store.
    pub fn hashes(&self) -> impl Iterator<Item = &str> {
        self.hashes.iter().map(String::as_str)
    }

    /// `Ok` when the entry may start: `SERVER_NOT_APPROVED` with the exact command line
    /// otherwise. Checked before anything is spawned.
    pub fn check(&self, server: &str, config: &ServerConfig) -> Result<()> {
        match CommandLine::of(server, config) {
            Some(line) if !self.is_approved(&line) => {
                Err(Error::ServerNotApproved { server: server.to_owned(), command_line: line.to_string() })
            }
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
        let err = approvals.check("inv", &c).unwrap_err();
        assert_eq!(err.code(), "SERVER_NOT_APPROVED");
        assert!(err.to_string().contains("srv --a") && err.to_string().contains("--allow-server inv"));
        let mut configs = ServerConfigs::new();
        configs.insert("inv", c.clone());
        approvals.approve_server(&configs, "inv").unwrap();
        assert!(approvals.check("inv", &c).is_ok());
        assert!(approvals.check("inv", &config(json!({"command": "srv", "args": ["--b"]}))).is_err());
        assert!(Approvals::allow_all().check("inv", &config(json!({"command": "anything"}))).is_ok());
        assert!(Approvals::new().check("web", &config(json!({"url": "http://h/mcp"}))).is_ok());
        assert_eq!(approvals.approve_server(&configs, "nope").unwrap_err().code(), "SERVER_NOT_CONFIGURED");
    }
}
