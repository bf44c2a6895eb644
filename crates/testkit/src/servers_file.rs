//! A temporary folder with an `mcpServers` file that starts the fixtures as child
//! processes of the testkit binary: where the crates' integration tests take their
//! servers from.

use serde_json::{Value, json};
use std::path::PathBuf;

/// A temporary folder and the `mcpServers` file in it (`servers.json`).
#[derive(Debug)]
pub struct ServersFile {
    pub dir: tempfile::TempDir,
    pub servers: PathBuf,
}

/// A folder whose `servers.json` names `echo`, `faulty` and `cluster` (the fixtures
/// started from [`crate::binary`]) and the entries of `extra` (an object of
/// `mcpServers` entries; a name of the three replaces it).
pub fn servers_file(extra: Value) -> std::io::Result<ServersFile> {
    let dir = tempfile::tempdir()?;
    let bin = crate::binary().display().to_string();
    let mut servers = json!({
        "echo": { "command": bin, "args": ["echo"] },
        "faulty": { "command": bin, "args": ["faulty"] },
        "cluster": { "command": bin, "args": ["cluster-sim"] },
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        servers[k] = v;
    }
    let path = dir.path().join("servers.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string())?;
    Ok(ServersFile { dir, servers: path })
}
