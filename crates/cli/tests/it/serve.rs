//! `mcpflow serve` over stdio, driven by the official MCP TypeScript SDK client
//! (`@modelcontextprotocol/sdk` from node_modules) — see tests/mcp/ts-client.mjs.

use crate::repo;
use std::process::Command;

#[test]
fn the_typescript_sdk_client_lists_saves_runs_and_pipelines_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::echo_servers(dir.path());
    let out = Command::new("node")
        .arg(repo().join("tests/mcp/ts-client.mjs"))
        .current_dir(repo())
        .env("MCPFLOW_BIN", env!("CARGO_BIN_EXE_mcpflow"))
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .env("SERVERS_FILE", &servers)
        .output()
        .expect("node runs (npm ci installs @modelcontextprotocol/sdk)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(stdout.contains("ok - run_workflow by id: succeeded"), "{stdout}");
}
