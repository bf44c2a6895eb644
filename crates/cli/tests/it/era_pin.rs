//! An entry's `"protocol"` pin, as `mcpflow servers` shows it and `mcpflow run` uses it:
//! the Python SDK server (which speaks both eras) pinned to 2025-11-25 in a blueprint's
//! own `servers` is spoken to in 2025-11-25.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::process::Command;

#[test]
fn a_pin_is_listed_and_a_run_speaks_the_pinned_era() {
    let python = crate::venv_python();
    let dir = tempfile::tempdir().unwrap();
    let modern = json!({ "command": python, "args": [repo().join("crates/mcp/tests/servers/modern_py.py")],
        "protocol": "2025-11-25" });
    let servers = dir.path().join("servers.json");
    std::fs::write(&servers, json!({ "mcpServers": { "modern": modern } }).to_string()).unwrap();
    let listed = crate::mcpflow(&["servers", "--servers", servers.to_str().unwrap()]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    assert!(stdout(&listed).contains("  protocol: 2025-11-25 (pinned)\n"), "{}", stdout(&listed));
    let json_listed = crate::mcpflow(&["servers", "--json", "--servers", servers.to_str().unwrap()]);
    let line: Value = serde_json::from_slice(&json_listed.stdout).unwrap();
    assert_eq!(line["protocol"], "2025-11-25", "{line}");

    let blueprint = json!({ "blueprint": 1, "id": "pinned", "servers": { "modern": modern },
        "steps": [{ "id": "era", "kind": "tool", "server": "modern", "tool": "era", "args": {} }],
        "output": "{{ era.result }}" });
    let file = dir.path().join("pinned.json");
    std::fs::write(&file, blueprint.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", file.to_str().unwrap(), "--allow-all-servers", "--json"])
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["output"], "2025-11-25", "{envelope}");
}
