//! `mcpflow setup HOST`: the entry that makes an MCP host (Claude Desktop, Cursor, VS Code)
//! launch `mcpflow serve`, added to that host's configuration file with the rest of the
//! file kept as it is — key order, other servers, other settings.
//!
//! | host | file | key |
//! |---|---|---|
//! | Claude Desktop | `claude_desktop_config.json` in `~/Library/Application Support/Claude` (macOS), `%APPDATA%\Claude` (Windows), `~/.config/Claude` (Linux) | `mcpServers` |
//! | Cursor | `~/.cursor/mcp.json` | `mcpServers` |
//! | VS Code | `mcp.json` in the user settings folder (`~/.config/Code/User` on Linux, `~/Library/Application Support/Code/User` on macOS, `%APPDATA%\Code\User` on Windows) | `servers`, with `"type": "stdio"` |
//!
//! The entry runs this very `mcpflow` binary (its absolute path) with `serve`, and carries
//! `MCPFLOW_HOME` when one is set, so the host's agent works on the same data folder as
//! the studio. A file that is not plain JSON (VS Code allows comments) is not rewritten:
//! the error shows the entry to add by hand. Files are replaced whole (written beside,
//! then renamed), never left half written.

use serde_json::{Map, Value, json};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Largest host configuration file read.
const MAX_CONFIG: u64 = 4 * 1024 * 1024;

/// The MCP hosts `setup` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    ClaudeDesktop,
    Cursor,
    VsCode,
}

impl Host {
    pub const ALL: [Host; 3] = [Host::ClaudeDesktop, Host::Cursor, Host::VsCode];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
        }
    }

    pub fn parse(name: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.name() == name)
    }

    /// Where the host reads its servers, for the user `home` and config folder `config`
    /// (the platform's: `dirs::home_dir`, `dirs::config_dir`).
    pub fn config_file(self, home: &Path, config: &Path) -> PathBuf {
        match self {
            Host::ClaudeDesktop => config.join("Claude").join("claude_desktop_config.json"),
            Host::Cursor => home.join(".cursor").join("mcp.json"),
            Host::VsCode => config.join("Code").join("User").join("mcp.json"),
        }
    }

    /// The platform's file for this host; `None` when there is no home folder.
    pub fn default_config_file(self) -> Option<PathBuf> {
        Some(self.config_file(&dirs::home_dir()?, &dirs::config_dir()?))
    }

    /// The key its servers live under.
    fn key(self) -> &'static str {
        match self {
            Host::VsCode => "servers",
            Host::ClaudeDesktop | Host::Cursor => "mcpServers",
        }
    }

    /// The entry launching `mcpflow serve`.
    pub fn entry(self, binary: &Path, data_folder: Option<&Path>) -> Value {
        let mut entry = Map::new();
        if self == Host::VsCode {
            entry.insert("type".into(), json!("stdio"));
        }
        entry.insert("command".into(), json!(binary.display().to_string()));
        entry.insert("args".into(), json!(["serve"]));
        if let Some(folder) = data_folder {
            entry.insert("env".into(), json!({ "MCPFLOW_HOME": folder.display().to_string() }));
        }
        Value::Object(entry)
    }

    /// The snippet to paste into the file by hand: `{"mcpServers": {name: entry}}`.
    pub fn snippet(self, name: &str, entry: &Value) -> Value {
        json!({ self.key(): { name: entry } })
    }
}

/// What [`add_entry`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Added {
    /// The file did not exist and was written.
    Created,
    /// The entry was added to the file.
    Added,
    /// An entry of that name was there and is replaced; it was this.
    Replaced(Value),
    /// The entry was there already, exactly.
    Unchanged,
}

/// Adds `entry` as server `name` to the host's file `file`, keeping everything else.
/// Errors say what is wrong with the file and show the snippet to add by hand.
pub fn add_entry(host: Host, file: &Path, name: &str, entry: &Value) -> Result<Added, String> {
    let by_hand = || {
        format!(
            "add this to {} by hand:\n{}",
            file.display(),
            serde_json::to_string_pretty(&host.snippet(name, entry)).unwrap_or_default()
        )
    };
    let mut doc = match read_config(file) {
        Ok(Some(doc)) => doc,
        Ok(None) => Value::Object(Map::new()),
        Err(why) => return Err(format!("{why}; {}", by_hand())),
    };
    let existed = file.exists();
    let Some(root) = doc.as_object_mut() else {
        return Err(format!("{} is not a JSON object; {}", file.display(), by_hand()));
    };
    let servers = root.entry(host.key()).or_insert_with(|| Value::Object(Map::new()));
    let Some(servers) = servers.as_object_mut() else {
        return Err(format!("`{}` in {} is not an object; {}", host.key(), file.display(), by_hand()));
    };
    let added = match servers.insert(name.to_owned(), entry.clone()) {
        Some(old) if &old == entry => return Ok(Added::Unchanged),
        Some(old) => Added::Replaced(old),
        None if existed => Added::Added,
        None => Added::Created,
    };
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    crate::files::write_whole(file, &text)
        .map_err(|e| format!("cannot write {}: {e}; {}", file.display(), by_hand()))?;
    Ok(added)
}

/// The host's file as JSON; `None` when it does not exist or is empty.
fn read_config(file: &Path) -> Result<Option<Value>, String> {
    let opened = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let mut text = String::new();
    opened
        .take(MAX_CONFIG + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if text.len() as u64 > MAX_CONFIG {
        return Err(format!("{} is larger than {} MiB", file.display(), MAX_CONFIG / 1024 / 1024));
    }
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&text).map(Some).map_err(|e| {
        format!(
            "{}:{}:{}: not plain JSON ({e}){}",
            file.display(),
            e.line(),
            e.column(),
            if text.contains("//") || text.contains("/*") {
                ", perhaps comments, which are kept by not rewriting it"
            } else {
                ""
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_is_added_and_the_rest_kept_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("claude_desktop_config.json");
        let before = r#"{"theme": "dark", "mcpServers": {"memory": {"command": "npx", "args": ["-y", "m"]}}, "z": 1}"#;
        std::fs::write(&file, before).unwrap();
        let entry = Host::ClaudeDesktop.entry(Path::new("/usr/bin/mcpflow"), None);
        assert_eq!(add_entry(Host::ClaudeDesktop, &file, "mcpflow", &entry), Ok(Added::Added));
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["theme", "mcpServers", "z"]);
        assert_eq!(after["mcpServers"]["memory"]["args"], json!(["-y", "m"]));
        assert_eq!(after["mcpServers"]["mcpflow"], json!({"command": "/usr/bin/mcpflow", "args": ["serve"]}));
        assert_eq!(add_entry(Host::ClaudeDesktop, &file, "mcpflow", &entry), Ok(Added::Unchanged));
    }

    #[test]
    fn vscode_uses_servers_with_a_type_and_a_file_with_comments_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        let entry = Host::VsCode.entry(Path::new("/opt/mcpflow"), Some(Path::new("/data")));
        assert_eq!(add_entry(Host::VsCode, &file, "mcpflow", &entry), Ok(Added::Created));
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(after["servers"]["mcpflow"]["type"], "stdio");
        assert_eq!(after["servers"]["mcpflow"]["env"]["MCPFLOW_HOME"], "/data");

        let commented = "{\n  // mine\n  \"servers\": {}\n}\n";
        std::fs::write(&file, commented).unwrap();
        let err = add_entry(Host::VsCode, &file, "mcpflow", &entry).unwrap_err();
        assert!(err.contains("mcp.json:2:") && err.contains("comments") && err.contains("by hand"), "{err}");
        assert!(err.contains("\"servers\"") && err.contains("/opt/mcpflow"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), commented);
    }

    #[test]
    fn a_different_entry_of_the_name_is_replaced_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, r#"{"mcpServers": {"mcpflow": {"command": "/old/mcpflow", "args": ["serve"]}}}"#)
            .unwrap();
        let entry = Host::Cursor.entry(Path::new("/new/mcpflow"), None);
        let added = add_entry(Host::Cursor, &file, "mcpflow", &entry).unwrap();
        assert_eq!(added, Added::Replaced(json!({"command": "/old/mcpflow", "args": ["serve"]})));
        std::fs::write(&file, r#"{"mcpServers": []}"#).unwrap();
        let err = add_entry(Host::Cursor, &file, "mcpflow", &entry).unwrap_err();
        assert!(err.contains("`mcpServers`") && err.contains("not an object"), "{err}");
    }
}
