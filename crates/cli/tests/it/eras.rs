//! Both protocol eras in one blueprint: `mcpflow run` with a 2026-07-28 server (the Python
//! MCP SDK 2.3.0) and a 2025-11-25 server (server-everything, TypeScript SDK 1.x).

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::process::Command;

#[test]
fn a_blueprint_uses_a_2026_07_28_server_and_a_2025_11_25_server_in_one_run() {
    let python = crate::venv_python();
    let everything = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(everything.is_file(), "{} is missing: run `npm ci`", everything.display());
    let dir = tempfile::tempdir().unwrap();
    let servers = json!({ "mcpServers": {
        "modern": { "command": python, "args": [repo().join("crates/mcp/tests/servers/modern_py.py")] },
        "legacy": { "command": "node", "args": [everything, "stdio"] }
    } });
    let servers_file = dir.path().join("servers.json");
    std::fs::write(&servers_file, servers.to_string()).unwrap();
    let blueprint = json!({ "blueprint": 1, "id": "eras",
        "steps": [
            { "id": "loud", "kind": "tool", "server": "modern", "tool": "shout", "args": { "text": "two eras" } },
            { "id": "echoed", "kind": "tool", "server": "legacy", "tool": "echo", "args": { "message": "{{ loud.result }}" } },
            { "id": "era", "kind": "tool", "server": "modern", "tool": "era", "args": {} }
        ],
        "output": { "echoed": "{{ echoed }}", "era": "{{ era.result }}" } });
    let file = dir.path().join("eras.json");
    std::fs::write(&file, blueprint.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", file.to_str().unwrap(), "--servers", servers_file.to_str().unwrap(), "--allow-all-servers"])
        .arg("--json")
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["status"], "succeeded", "{env}");
    assert_eq!(env["output"]["echoed"], "Echo: TWO ERAS", "{env}");
    // The server itself says which era the pool's request came in.
    assert_eq!(env["output"]["era"], "2026-07-28", "{env}");
    assert_eq!(env["summary"]["tool_calls"], 3, "{env}");
}
