//! The `mcpflow` binary as users run it: output, exit codes, flags.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod ask;
mod budget;
mod circles;
mod closed_pipe;
mod consent;
mod crash;
mod database;
mod deploy;
mod doc_paths;
mod era_pin;
mod eras;
mod floods;
mod history;
#[cfg(unix)]
mod home;
mod lock;
mod long_lists;
mod memory;
mod noise;
mod oauth;
mod oauth_fixture;
mod paginate;
mod people;
mod portable;
mod reading;
mod readme;
mod replay;
mod rerun;
mod run;
mod sampling;
mod secrets;
mod serve;
mod servers;
mod service;
mod setup;
mod signals;
mod spawned;
mod studio_client;
mod tasks;
mod team;
mod telemetry;
mod trust;
mod validate;
mod waiting;
mod workers;
mod workflow_refs;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python of `.venv-test/` (the MCP Python SDK 2.x, see requirements-test.txt), which
/// scripts/test.sh creates; a clear failure when it is missing.
pub fn venv_python() -> PathBuf {
    let python = repo().join(".venv-test/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `python3 -m venv .venv-test && .venv-test/bin/pip install -r requirements-test.txt` \
         in the repository root (scripts/test.sh does)",
        python.display()
    );
    python
}

/// Runs `mcpflow` with `args` from the repository root.
pub fn mcpflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow")).args(args).current_dir(repo()).output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An `mcpServers` file in `dir` naming the testkit echo server.
pub fn echo_servers(dir: &Path) -> PathBuf {
    let bin = mcpflow_testkit::binary().display().to_string();
    let path = dir.join("servers.json");
    let doc = serde_json::json!({ "mcpServers": { "echo": { "command": bin, "args": ["echo"] } } });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}
