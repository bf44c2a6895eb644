//! `mcpflow serve` over stdio, driven by the official MCP TypeScript SDK client
//! (`@modelcontextprotocol/sdk` from node_modules) — see tests/mcp/ts-client.mjs.

use crate::repo;
use crate::spawned;
use std::process::Command;

#[test]
fn the_typescript_sdk_client_lists_saves_runs_and_pipelines_with_progress() {
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::echo_servers(dir.path());
    let (stdout, _) = spawned::serve_client("ts-client.mjs", &dir.path().join("home"), &servers);
    assert!(stdout.contains("ok - run_workflow by id: succeeded"), "{stdout}");
}

/// Issue 31: an agent reads the format from the server, writes, checks, saves, runs a
/// three-step blueprint, cancels a run, lists runs, deletes the blueprint; each wrong input
/// gets its error; `isError` says what failed; a question asked through one `serve` is
/// answered through the next; a run whose `serve` was killed is resumed (see
/// tests/mcp/ts-agent.mjs).
#[test]
fn an_agent_reads_the_format_writes_a_blueprint_runs_it_and_answers_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::echo_servers(dir.path());
    let (stdout, _) = spawned::serve_client("ts-agent.mjs", &dir.path().join("home"), &servers);
    for line in [
        "ok - the format:",
        "ok - wrong types, extra properties",
        "ok - validate_workflow: a note names the servers not checked",
        "ok - isError:",
        "ok - cancel_run, list_runs",
        "ok - answer_run from a new serve process",
        "ok - resume_run resumes a run whose serve was killed",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
}

/// `mcpflow serve` in the 2026-07-28 era: the Python MCP SDK 2.x client (from `.venv-test/`,
/// see requirements-test.txt) probes `server/discover` and gets an answer — see
/// tests/mcp/py-client.py. The TypeScript client above speaks 2025-11-25: both eras.
#[test]
fn the_python_sdk_client_reaches_mcpflow_serve_in_the_2026_07_28_era() {
    let python = crate::venv_python();
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::echo_servers(dir.path());
    let mut client = Command::new(python);
    client.arg(repo().join("tests/mcp/py-client.py"));
    let (stdout, _) = spawned::serve_client_with(&mut client, &dir.path().join("home"), &servers);
    assert!(stdout.contains("ok - era: 2026-07-28"), "{stdout}");
}
