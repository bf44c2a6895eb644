//! Headless runs against real MCP servers: the testkit fixtures as child processes and
//! the npm reference servers from node_modules.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod auth;
mod debug;
mod faults;
mod import;
mod noise;
mod reference;
mod rerun;
mod roots;
mod roots_change;
mod runs;
mod sampling;
mod saved_tests;
mod servers;
mod telemetry;
mod waiting;

use mcpflow_app::headless::{self, HeadlessRun};
use mcpflow_engine::{Envelope, EventKind, EventSink, RunEvent};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// The messages of a recorded run's `Log` events, in order.
pub fn recorded_logs(app: &mcpflow_app::App, run: &str) -> Vec<String> {
    app.run_detail(run)
        .unwrap()
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Log { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub use mcpflow_testkit::ServersFile as Setup;

/// A temp dir with an `mcpServers` file naming the testkit fixtures (and `extra`).
pub fn setup(extra: Value) -> Setup {
    mcpflow_testkit::servers_file(extra).unwrap()
}

/// The result of a run and every event it produced.
#[derive(Debug)]
pub struct Ran {
    pub envelope: Envelope,
    pub events: Vec<RunEvent>,
}

impl Ran {
    pub fn finished(&self, step: &str) -> Vec<&EventKind> {
        self.events
            .iter()
            .map(|e| &e.kind)
            .filter(|k| matches!(k, EventKind::StepFinished { step: s, .. } if s == step))
            .collect()
    }
}

pub async fn run(setup: &Setup, blueprint: Value, inputs: &[&str]) -> Ran {
    let spec = HeadlessRun {
        assignments: inputs.iter().map(|s| (*s).to_owned()).collect(),
        saved_dir: Some(setup.dir.path().join("saved")),
        ..setup.spec()
    };
    run_as(blueprint, &spec).await
}

/// A headless run in a setup's folder with its servers, all allowed.
pub trait Spec {
    fn spec(&self) -> HeadlessRun;
}

impl Spec for Setup {
    fn spec(&self) -> HeadlessRun {
        HeadlessRun {
            folder: Some(self.dir.path().to_owned()),
            server_files: vec![self.servers.clone()],
            allow_all: true,
            ..HeadlessRun::default()
        }
    }
}

/// Runs `blueprint` headless as `spec` says; the envelope and every event.
pub async fn run_as(blueprint: Value, spec: &HeadlessRun) -> Ran {
    let bytes = blueprint.to_string().into_bytes();
    let checked = headless::check(&bytes).unwrap_or_else(|e| panic!("{e:?}"));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink: EventSink = {
        let events = events.clone();
        Arc::new(move |e: &RunEvent| events.lock().unwrap().push(e.clone()))
    };
    let envelope = headless::run(&checked, spec, sink, CancellationToken::new()).await.unwrap();
    let events = events.lock().unwrap().clone();
    Ran { envelope, events }
}

/// Live processes (children of this test process) whose environment holds `tag`.
/// Tests run concurrently in one process, so each fault test tags its own server.
/// A zombie has no environment left, so only live processes can be found; the pool's
/// own tests check reaping by pid.
pub fn processes_tagged(tag: &str) -> Vec<u32> {
    let needle = format!("MCPFLOW_TEST_TAG={tag}");
    mcpflow_testkit::procs::children_of(std::process::id())
        .into_iter()
        .filter(|c| c.state != 'Z' && c.environ.contains(&needle))
        .map(|c| c.pid)
        .collect()
}
