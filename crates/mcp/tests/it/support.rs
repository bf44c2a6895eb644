//! Shared helpers: server configs for the fixtures and the npm servers, pools, calls,
//! and process checks through /proc.

use mcpflow_blueprint::ServerConfig;
use mcpflow_engine::{CallRequest, CallTarget, Progress, ProgressSink};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use mcpflow_testkit::Fixture;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub fn config(value: Value) -> ServerConfig {
    serde_json::from_value(value).unwrap()
}

/// The testkit binary serving `fixture` over stdio.
pub fn testkit(fixture: &str) -> ServerConfig {
    config(json!({ "command": mcpflow_testkit::binary(), "args": [fixture] }))
}

/// `node_modules/@modelcontextprotocol/<package>/dist/index.js`, or a failure saying
/// how to install it. Never fetched at run time.
pub fn npm_server(package: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = root.join("node_modules/@modelcontextprotocol").join(package).join("dist/index.js");
    assert!(
        path.is_file(),
        "{} is missing: run `npm ci` in the repository root to install the reference MCP servers",
        path.display()
    );
    path
}

pub fn node(package: &str, args: &[&str]) -> ServerConfig {
    let mut all = vec![npm_server(package).display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    config(json!({ "command": "node", "args": all }))
}

/// `crates/mcp/tests/servers/<script>` run by the Python of `.venv-test/` (the Python MCP
/// SDK 2.x, pinned in `requirements-test.txt`), or a failure saying how to install it.
/// Never fetched at run time.
pub fn python_server(script: &str) -> ServerConfig {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let python = crate_dir.join("../../.venv-test/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run `python3 -m venv .venv-test && .venv-test/bin/pip install -r requirements-test.txt` \
         in the repository root (scripts/test.sh does) to install the Python MCP SDK",
        python.display()
    );
    let script = crate_dir.join("tests/servers").join(script);
    config(json!({ "command": python.display().to_string(), "args": [script.display().to_string()] }))
}

pub fn configs(servers: Vec<(&str, ServerConfig)>) -> ServerConfigs {
    let mut configs = ServerConfigs::new();
    for (name, config) in servers {
        configs.insert(name, config);
    }
    configs
}

pub fn in_process(configs: &mut ServerConfigs, name: &str, fixture: Fixture) {
    configs.insert_in_process(name, Arc::new(move || Ok(mcpflow_testkit::spawn_in_process(fixture.clone()))));
}

/// A pool where every command is approved.
pub fn pool(servers: Vec<(&str, ServerConfig)>) -> Pool {
    Pool::new(configs(servers), Approvals::allow_all(), PoolOptions::default())
}

pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object: {other}"),
    }
}

pub fn request(target: CallTarget) -> CallRequest {
    CallRequest {
        target,
        timeout: None,
        cancel: CancellationToken::new(),
        progress: None,
        stack: Vec::new(),
        tasks: Default::default(),
        ask: None,
        sample: None,
        trace: None,
    }
}

pub fn tool(server: Option<&str>, name: &str, arguments: Value) -> CallRequest {
    request(CallTarget::Tool { server: server.map(str::to_owned), tool: name.to_owned(), args: args(arguments) })
}

/// The text of a result's first content item.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content in {result}"))
}

/// The state letter of a process (`R`, `S`, `Z` …), or `None` when it no longer exists.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    after_name.trim_start().chars().next()
}

/// A progress sink and the channel its notifications arrive on, so a test can wait for
/// the moment a server works on a call (its first notification).
pub fn progress_events() -> (ProgressSink, tokio::sync::mpsc::UnboundedReceiver<Progress>) {
    let (sender, received) = tokio::sync::mpsc::unbounded_channel();
    let sink: ProgressSink = Arc::new(move |progress| {
        let _ = sender.send(progress);
    });
    (sink, received)
}

/// Polls `condition` until it holds or `limit` passes.
pub async fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    condition()
}

/// Starts an HTTP server process (stdin and stdout closed, killed when dropped) and
/// waits until a line of its stderr contains `listening` (20 s at most); the rest of its
/// stderr is drained in the background.
pub async fn start_listening(mut command: tokio::process::Command, listening: &str) -> tokio::process::Child {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains(listening) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "{command:?} did not say `{listening}` within 20 s");
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    child
}
