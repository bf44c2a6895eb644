//! `mcpflow serve`'s mediator over streamable HTTP, driven by rmcp clients (our pool),
//! with the testkit fixtures as the downstream servers.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod http_limits;
mod serve;
mod serve_people;
mod telemetry;

use serde_json::{Value, json};
use std::path::PathBuf;

/// A temp dir with an `mcpServers` file naming the testkit fixtures (and `extra`).
#[derive(Debug)]
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub servers: PathBuf,
}

pub fn setup(extra: Value) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let mut servers = json!({
        "echo": { "command": bin, "args": ["echo"] },
        "faulty": { "command": bin, "args": ["faulty"] },
        "cluster": { "command": bin, "args": ["cluster-sim"] },
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        servers[k] = v;
    }
    let path = dir.path().join("servers.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    Setup { dir, servers: path }
}
