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

/// `mcpflow serve` in the 2026-07-28 era: the Python MCP SDK 2.x client (from `.venv-test/`,
/// see requirements-test.txt) probes `server/discover` and gets an answer — see
/// tests/mcp/py-client.py. The TypeScript client above speaks 2025-11-25: both eras.
#[test]
fn the_python_sdk_client_reaches_mcpflow_serve_in_the_2026_07_28_era() {
    let python = crate::venv_python();
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::echo_servers(dir.path());
    let out = Command::new(python)
        .arg(repo().join("tests/mcp/py-client.py"))
        .current_dir(repo())
        .env("MCPFLOW_BIN", env!("CARGO_BIN_EXE_mcpflow"))
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .env("SERVERS_FILE", &servers)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("ok - era: 2026-07-28"), "{stdout}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
}
