//! Server configurations: `mcpServers` JSON files exactly as Claude Desktop, Cursor, Cline
//! or VS Code write them, merged with a blueprint's own `servers` (the blueprint wins; each
//! entry remembers whether the user or a blueprint declared it, for consent).
//!
//! Reading a config never starts anything and never resolves `${env:NAME}`: values are kept
//! as written, so nothing resolved is ever stored or exported. They are resolved only when
//! a server starts ([`launch`]).
//!
//! A crate of its own because the pool (`mcpflow-mcp`) and the sign-in (`mcpflow-auth`)
//! both read server entries; it depends on `mcpflow-blueprint` only.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod env;
pub mod error;
pub mod launch;
pub mod oauth;
pub mod roots;

pub use env::EnvLookup;
pub use error::{Error, Result};

use indexmap::IndexMap;
use mcpflow_blueprint::limits::SERVERS_FILE_SIZE;
use mcpflow_blueprint::source::{ReadError, read_bounded};
use mcpflow_blueprint::{ProtocolEra, ServerConfig};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Opens a fresh in-process connection to a server running inside this process (the
/// testkit fixtures, the demo). Called again after the connection ends.
pub type InProcessConnect = Arc<dyn Fn() -> std::io::Result<tokio::io::DuplexStream> + Send + Sync>;

/// One configured server.
#[derive(Clone)]
pub enum ServerEntry {
    /// A stdio command or a streamable HTTP url, in `mcpServers` shape.
    Config(Box<ServerConfig>),
    /// A server in this process, reached over an in-memory pipe. Needs no consent.
    InProcess(InProcessConnect),
}

impl fmt::Debug for ServerEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerEntry::Config(config) => f.debug_tuple("Config").field(config).finish(),
            ServerEntry::InProcess(_) => f.write_str("InProcess"),
        }
    }
}

/// Who declared a server: the user (`mcpServers` files, the store, the studio's Servers
/// panel) or a blueprint's own `servers`. Consent asks more of a blueprint's servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    #[default]
    User,
    Blueprint,
}

/// Named servers, in the order they were configured.
#[derive(Debug, Clone, Default)]
pub struct ServerConfigs {
    entries: IndexMap<String, ServerEntry>,
    /// The names whose entry a blueprint declared (or replaced).
    from_blueprint: BTreeSet<String>,
}

impl ServerConfigs {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads an `mcpServers` file (Claude Desktop's `claude_desktop_config.json`, Cursor's
    /// `mcp.json`, …), at most [`SERVERS_FILE_SIZE`] of it: a larger file (or
    /// `/dev/zero`) is refused with `LIMIT_SIZE` once one byte past the limit is read.
    pub fn read(path: &Path) -> Result<Self> {
        let cannot = |e: std::io::Error| Error::ConfigRead { path: path.to_owned(), message: e.to_string() };
        let file = std::fs::File::open(path).map_err(cannot)?;
        let bytes = read_bounded(file, &SERVERS_FILE_SIZE).map_err(|e| match e {
            ReadError::Io(e) => cannot(e),
            ReadError::Refused(diagnostic) => Error::ConfigRefused { path: path.to_owned(), diagnostic },
        })?;
        let text = String::from_utf8(bytes).map_err(|e| Error::ConfigInvalid {
            origin: path.display().to_string(),
            message: format!("invalid UTF-8 at byte {}; save the file as UTF-8", e.utf8_error().valid_up_to()),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses `{"mcpServers": {"name": {...}}}` (VS Code's `{"servers": {...}}` too).
    ///
    /// Entries are taken as those clients write them: `command`/`args`/`env`/`cwd` for stdio,
    /// `url`/`headers` (or Windsurf's `serverUrl`) for streamable HTTP, an optional `type`
    /// (or Cline's `transportType`). Fields other clients add (`autoApprove`, `alwaysAllow`,
    /// `timeout`, `envFile`, …) are ignored; entries with `"disabled": true` are skipped.
    /// `origin` names the source in error messages.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let invalid = |message: String| Error::ConfigInvalid { origin: origin.to_owned(), message };
        // The blueprint crate's strict reader: a server named twice is an error at its
        // line and column, where serde would keep the last entry without a word.
        let root = mcpflow_blueprint::source::parse(text.as_bytes()).map(|p| p.value).map_err(|d| {
            let at = d.position.map(|p| format!(":{}:{}", p.line, p.col)).unwrap_or_default();
            Error::ConfigInvalid {
                origin: format!("{origin}{at}"),
                message: match &d.hint {
                    Some(hint) => format!("{}; {hint}", d.message),
                    None => d.message.clone(),
                },
            }
        })?;
        let Value::Object(root) = root else {
            return Err(invalid("expected a JSON object with an `mcpServers` object".to_owned()));
        };
        let (key, servers) = match (root.get("mcpServers"), root.get("servers")) {
            (Some(servers), _) => ("mcpServers", servers),
            (None, Some(servers)) => ("servers", servers),
            // Claude Desktop writes its other settings to the same file; no servers is fine.
            (None, None) => return Ok(Self::new()),
        };
        let Value::Object(servers) = servers else {
            return Err(invalid(format!("`{key}` must be an object of servers by name")));
        };
        let mut configs = Self::new();
        for (name, entry) in servers {
            let Value::Object(entry) = entry else {
                return Err(invalid(format!("/{key}/{name}: a server entry must be an object")));
            };
            if entry.get("disabled") == Some(&Value::Bool(true)) || entry.get("enabled") == Some(&Value::Bool(false)) {
                continue;
            }
            let config = entry_config(entry).map_err(|message| invalid(format!("/{key}/{name}: {message}")))?;
            configs.entries.insert(name.clone(), ServerEntry::Config(Box::new(config)));
        }
        Ok(configs)
    }

    /// Adds or replaces a server of the user's.
    pub fn insert(&mut self, name: impl Into<String>, config: ServerConfig) {
        let name = name.into();
        self.from_blueprint.remove(&name);
        self.entries.insert(name, ServerEntry::Config(Box::new(config)));
    }

    /// Adds or replaces an in-process server.
    pub fn insert_in_process(&mut self, name: impl Into<String>, connect: InProcessConnect) {
        let name = name.into();
        self.from_blueprint.remove(&name);
        self.entries.insert(name, ServerEntry::InProcess(connect));
    }

    /// Adds `other`'s servers; on a name clash `other` wins, with its origin.
    pub fn merge(&mut self, other: ServerConfigs) {
        for (name, entry) in other.entries {
            if other.from_blueprint.contains(&name) {
                self.from_blueprint.insert(name.clone());
            } else {
                self.from_blueprint.remove(&name);
            }
            self.entries.insert(name, entry);
        }
    }

    /// These servers plus a blueprint's own `servers`; the blueprint's entries win, and
    /// an entry a blueprint replaced is the blueprint's ([`Origin::Blueprint`]), not the
    /// user's.
    pub fn with_blueprint(mut self, servers: &IndexMap<String, ServerConfig>) -> Self {
        for (name, config) in servers {
            self.from_blueprint.insert(name.clone());
            self.entries.insert(name.clone(), ServerEntry::Config(Box::new(config.clone())));
        }
        self
    }

    /// These servers plus those of a blueprint's own `servers` that are not configured
    /// here: a configured server is never shadowed by a document's entry of the same
    /// name (the studio's rule; the CLI, where the file is the only source, uses
    /// [`Self::with_blueprint`]). Returns the names the document declared but did not
    /// get, in its order, so the caller can say so (`SERVER_SHADOWED`).
    pub fn under_blueprint(mut self, servers: &IndexMap<String, ServerConfig>) -> (Self, Vec<String>) {
        let mut shadowed = Vec::new();
        for (name, config) in servers {
            if self.entries.contains_key(name) {
                shadowed.push(name.clone());
                continue;
            }
            self.from_blueprint.insert(name.clone());
            self.entries.insert(name.clone(), ServerEntry::Config(Box::new(config.clone())));
        }
        (self, shadowed)
    }

    /// Who declared server `name` (the user's when it is not configured at all).
    pub fn origin(&self, name: &str) -> Origin {
        if self.from_blueprint.contains(name) { Origin::Blueprint } else { Origin::User }
    }

    pub fn get(&self, name: &str) -> Option<&ServerEntry> {
        self.entries.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &ServerEntry)> {
        self.entries.iter().map(|(name, entry)| (name.as_str(), entry))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The fields mcpflow understands, taken from one tolerant `mcpServers` entry.
fn entry_config(entry: &Map<String, Value>) -> Result<ServerConfig, String> {
    let transport = optional_string(entry, "type")?.or(optional_string(entry, "transportType")?);
    let url = optional_string(entry, "url")?.or(optional_string(entry, "serverUrl")?);
    Ok(ServerConfig {
        transport,
        command: optional_string(entry, "command")?,
        args: match entry.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| scalar_text(item).ok_or_else(|| format!("args[{i}] must be a string")))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err("`args` must be an array of strings".to_owned()),
        },
        env: string_map(entry, "env")?,
        cwd: optional_string(entry, "cwd")?,
        url,
        headers: string_map(entry, "headers")?,
        max_concurrency: optional_u64(entry, &["max_concurrency", "maxConcurrency"])?
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        timeout_ms: optional_u64(entry, &["timeout_ms", "timeoutMs"])?,
        roots: match entry.get("roots") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) if items.len() <= roots::MAX_ROOTS => {
                let roots = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| match item {
                        Value::String(s) => Ok(s.clone()),
                        _ => Err(format!("roots/{i} must be a string (an absolute path or a file:// URI)")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                // Checked now, so a bad root is found when the file is read, not at start.
                roots::parse_list(&roots)?;
                Some(roots)
            }
            Some(Value::Array(items)) => {
                return Err(format!("`roots` has {} entries; at most {} are allowed", items.len(), roots::MAX_ROOTS));
            }
            Some(_) => return Err("`roots` must be an array of absolute paths or file:// URIs".to_owned()),
        },
        protocol: match entry.get("protocol") {
            None | Some(Value::Null) => None,
            Some(Value::String(era)) if let Some(era) = ProtocolEra::parse(era) => Some(era),
            Some(other) => {
                return Err(format!(
                    "`protocol` is {other}; it pins the MCP protocol era: \"2025-11-25\" or \"2026-07-28\" (leave it \
                     out to probe)"
                ));
            }
        },
        oauth: match entry.get("oauth") {
            None | Some(Value::Null) => None,
            Some(value) => Some(oauth::parse(value)?),
        },
        sampling: match entry.get("sampling") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(on)) => *on,
            Some(other) => {
                return Err(format!(
                    "`sampling` is {other}; it says whether the server may ask the model: true or false (off when \
                     left out)"
                ));
            }
        },
    })
}

fn optional_string(entry: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

fn optional_u64(entry: &Map<String, Value>, keys: &[&str]) -> Result<Option<u64>, String> {
    for key in keys {
        match entry.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => return Ok(n.as_u64()),
            Some(_) => return Err(format!("`{key}` must be a positive integer")),
        }
    }
    Ok(None)
}

/// `env` and `headers`: string values; numbers and booleans are written as text, as the
/// clients that produce these files accept them.
fn string_map(entry: &Map<String, Value>, key: &str) -> Result<Map<String, Value>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| match scalar_text(value) {
                Some(text) => Ok((name.clone(), Value::String(text))),
                None => Err(format!("`{key}.{name}` must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` must be an object of strings")),
    }
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(configs: &ServerConfigs, name: &str) -> ServerConfig {
        match configs.get(name) {
            Some(ServerEntry::Config(config)) => (**config).clone(),
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn reads_a_claude_desktop_file_with_its_other_settings() {
        let text = r#"{
          "globalShortcut": "Ctrl+Space",
          "mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}", "DEBUG": 1},
                       "autoApprove": ["search"], "disabled": false},
            "old": {"command": "old-server", "disabled": true},
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
          }
        }"#;
        let configs = ServerConfigs::parse(text, "claude_desktop_config.json").unwrap();
        assert_eq!(configs.names().collect::<Vec<_>>(), ["filesystem", "github", "remote"]);
        let github = config(&configs, "github");
        assert_eq!(github.command.as_deref(), Some("gh-mcp"));
        // Kept as written: resolution happens only when the server starts.
        assert_eq!(github.env.get("GITHUB_TOKEN"), Some(&json!("${env:GITHUB_TOKEN}")));
        assert_eq!(github.env.get("DEBUG"), Some(&json!("1")));
        assert_eq!(config(&configs, "remote").headers.get("Authorization"), Some(&json!("Bearer ${env:TOKEN}")));
    }

    #[test]
    fn reads_cursor_vscode_and_windsurf_shapes() {
        let cursor = r#"{"mcpServers": {"a": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#;
        assert_eq!(config(&ServerConfigs::parse(cursor, "c").unwrap(), "a").transport.as_deref(), Some("http"));
        let vscode = r#"{"servers": {"b": {"type": "stdio", "command": "b", "args": ["--x"]}}}"#;
        assert_eq!(config(&ServerConfigs::parse(vscode, "v").unwrap(), "b").args, ["--x"]);
        let windsurf = r#"{"mcpServers": {"c": {"serverUrl": "https://w/mcp"}}}"#;
        assert_eq!(config(&ServerConfigs::parse(windsurf, "w").unwrap(), "c").url.as_deref(), Some("https://w/mcp"));
    }

    #[test]
    fn a_file_without_servers_is_empty_and_bad_shapes_say_where() {
        assert!(ServerConfigs::parse(r#"{"theme": "dark"}"#, "f").unwrap().is_empty());
        let err = ServerConfigs::parse(r#"{"mcpServers": {"a": {"args": "x"}}}"#, "f.json").unwrap_err();
        assert_eq!(err.code(), "CONFIG_INVALID");
        assert_eq!(err.to_string(), "f.json: /mcpServers/a: `args` must be an array of strings");
        assert_eq!(ServerConfigs::parse("[", "f").unwrap_err().code(), "CONFIG_INVALID");
    }

    #[test]
    fn the_sampling_switch_is_off_unless_set_true_and_checked() {
        let text = r#"{"mcpServers": {"on": {"command": "a", "sampling": true}, "off": {"command": "b"}}}"#;
        let configs = ServerConfigs::parse(text, "f").unwrap();
        assert!(config(&configs, "on").sampling);
        assert!(!config(&configs, "off").sampling);
        let err = ServerConfigs::parse(r#"{"mcpServers": {"a": {"command": "a", "sampling": "yes"}}}"#, "f.json")
            .unwrap_err();
        assert_eq!(err.code(), "CONFIG_INVALID");
        assert!(err.to_string().starts_with("f.json: /mcpServers/a: `sampling` is \"yes\""), "{err}");
    }

    #[test]
    fn a_server_named_twice_is_an_error_at_the_second_name_not_the_last_one_winning() {
        let text = "{\n  \"mcpServers\": {\n    \"memory\": { \"command\": \"a\" },\n    \"memory\": { \"command\": \"b\" }\n  }\n}\n";
        let err = ServerConfigs::parse(text, "mcp.json").unwrap_err();
        assert_eq!(err.code(), "CONFIG_INVALID");
        let message = err.to_string();
        assert!(message.starts_with("mcp.json:4:5: duplicate key `memory` (first at line 3, column 5)"), "{message}");
        let syntax = ServerConfigs::parse("{\"mcpServers\": {\"a\": {\"command\": \"x\",}}}", "f.json").unwrap_err();
        assert!(syntax.to_string().starts_with("f.json:1:"), "{syntax}");
    }

    #[test]
    fn blueprint_servers_win_over_the_app_config() {
        let mut configs = ServerConfigs::parse(r#"{"mcpServers": {"a": {"command": "app-a"}}}"#, "f").unwrap();
        configs.merge(ServerConfigs::parse(r#"{"mcpServers": {"b": {"command": "app-b"}}}"#, "g").unwrap());
        let mut own = IndexMap::new();
        own.insert(
            "a".to_owned(),
            config(&ServerConfigs::parse(r#"{"mcpServers": {"a": {"command": "bp-a"}}}"#, "h").unwrap(), "a"),
        );
        let merged = configs.with_blueprint(&own);
        assert_eq!(config(&merged, "a").command.as_deref(), Some("bp-a"));
        assert_eq!(config(&merged, "b").command.as_deref(), Some("app-b"));
        // The entry the blueprint replaced is the blueprint's, for consent.
        assert_eq!((merged.origin("a"), merged.origin("b")), (Origin::Blueprint, Origin::User));
        let mut again = merged.clone();
        again.insert("a", config(&merged, "b"));
        assert_eq!(again.origin("a"), Origin::User);
        let mut into = ServerConfigs::new();
        into.merge(merged);
        assert_eq!(into.origin("a"), Origin::Blueprint);
    }

    #[test]
    fn under_a_blueprint_the_configured_servers_keep_their_names() {
        let configs = ServerConfigs::parse(r#"{"mcpServers": {"memory": {"command": "/abs/memory"}}}"#, "f").unwrap();
        let own = ServerConfigs::parse(
            r#"{"mcpServers": {"memory": {"command": "node", "args": ["rel/memory.js"]}, "extra": {"command": "x"}}}"#,
            "h",
        )
        .unwrap();
        let own: IndexMap<String, ServerConfig> =
            own.names().map(|n| (n.to_owned(), config(&own, n))).collect::<Vec<_>>().into_iter().collect();
        let (merged, shadowed) = configs.clone().under_blueprint(&own);
        assert_eq!(shadowed, ["memory"]);
        assert_eq!(config(&merged, "memory").command.as_deref(), Some("/abs/memory"));
        assert_eq!((merged.origin("memory"), merged.origin("extra")), (Origin::User, Origin::Blueprint));
        assert_eq!(config(&merged, "extra").command.as_deref(), Some("x"));
        // The CLI's rule, where the document is the only source next to `--servers`.
        let cli = configs.with_blueprint(&own);
        assert_eq!(config(&cli, "memory").command.as_deref(), Some("node"));
    }

    #[test]
    fn reading_a_missing_file_names_it() {
        let err = ServerConfigs::read(Path::new("/nonexistent/mcp.json")).unwrap_err();
        assert_eq!(err.code(), "CONFIG_READ_FAILED");
        assert!(err.to_string().contains("/nonexistent/mcp.json"), "{err}");
    }
}
