//! Sampling (a server asks its client for a model completion), against servers nobody here
//! wrote: server-everything's `trigger-sampling-request` and `trigger-sampling-request-async`
//! (run on our side as a client-side task, polled by the server) and the TypeScript SDK's
//! `simpleTaskInteractive` example (`write_haiku`, a task). Headless, answered by the
//! provider of the data folder's `settings.json` — a loopback OpenAI-compatible endpoint
//! that records what it receives (`crates/cli/tests/fixtures/openai_endpoint.py`) —; refused
//! when the server's switch is off (the endpoint receives nothing); `SAMPLING_UNAVAILABLE`
//! with no provider; and through `mcpflow serve`, answered by the TypeScript SDK client's
//! sampling handler (tests/mcp/ts-sampling-client.mjs).

use crate::repo;
use crate::spawned::{self, Killed, Spawned};
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The loopback OpenAI-compatible endpoint, with the requests it received.
struct Endpoint {
    _child: Killed,
    port: u16,
    record: PathBuf,
}

impl Endpoint {
    /// Answers after `delay_ms` (a slow model).
    fn start(dir: &Path, delay_ms: u64) -> Endpoint {
        let record = dir.join("endpoint-requests.jsonl");
        let mut child = Command::new("python3")
            .arg(repo().join("crates/cli/tests/fixtures/openai_endpoint.py"))
            .arg(&record)
            .env("DELAY_MS", delay_ms.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the endpoint printed no port: {line:?}"));
        Endpoint { _child: Killed(child), port, record }
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The TypeScript SDK's `simpleTaskInteractive` example (streamable HTTP), on a free port.
struct Interactive {
    _server: Spawned,
    port: u16,
}

impl Interactive {
    fn start() -> Interactive {
        let (server, port) = spawned::simple_task_interactive();
        Interactive { _server: server, port }
    }
}

fn everything() -> Value {
    let script = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.is_file(), "{} is missing: run `npm ci`", script.display());
    json!({ "command": "node", "args": [script, "stdio"] })
}

/// `everything` with its switch on, `everything_off` without it, and `interactive` (switch
/// on) when it runs.
fn servers_file(dir: &Path, interactive: Option<&Interactive>) -> PathBuf {
    servers_file_with(dir, interactive, json!({}))
}

/// The same, with `extra` fields on the `interactive` entry.
fn servers_file_with(dir: &Path, interactive: Option<&Interactive>, extra: Value) -> PathBuf {
    let mut on = everything();
    on["sampling"] = json!(true);
    let mut servers = json!({ "everything": on, "everything_off": everything() });
    if let Some(i) = interactive {
        let mut entry = json!({ "url": format!("http://127.0.0.1:{}/mcp", i.port), "sampling": true });
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            entry[k] = v;
        }
        servers["interactive"] = entry;
    }
    let path = dir.join("servers.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path
}

/// A data folder whose settings name `endpoint` as the sampling provider (its key from
/// `${env:SAMPLING_TEST_KEY}`), or none.
fn home(dir: &Path, endpoint: Option<&Endpoint>) -> PathBuf {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    if let Some(e) = endpoint {
        let settings = json!({ "sampling": {
            "base_url": e.base_url(), "model": "test-model", "api_key": "${env:SAMPLING_TEST_KEY}" } });
        std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    }
    home
}

fn blueprint(dir: &Path, server: &str, tool: &str, args: Value) -> PathBuf {
    let path = dir.join(format!("{server}.json"));
    let doc = json!({ "blueprint": 1, "id": "sampling", "steps": [
        { "id": "ask", "kind": "tool", "server": server, "tool": tool, "args": args }
    ]});
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// `mcpflow run --json --events FILE`: the output, the envelope, the events.
fn run(dir: &Path, home: &Path, servers: &Path, blueprint: &Path) -> (Output, Value, Vec<Value>) {
    let events = dir.join("events.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--json", "-q", "--allow-all-servers", "--servers"])
        .arg(servers)
        .arg("--events")
        .arg(&events)
        .arg(blueprint)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .env("SAMPLING_TEST_KEY", "sk-loopback")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let envelope = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no envelope: {}{}", crate::stdout(&out), crate::stderr(&out)));
    let events = std::fs::read_to_string(&events)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out, envelope, events)
}

#[test]
fn trigger_sampling_request_headless_is_answered_by_the_provider_and_recorded_in_the_events() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::start(dir.path(), 0);
    let home = home(dir.path(), Some(&endpoint));
    let servers = servers_file(dir.path(), None);
    let bp = blueprint(
        dir.path(),
        "everything",
        "trigger-sampling-request",
        json!({ "prompt": "name a colour", "maxTokens": 20 }),
    );
    let (out, envelope, events) = run(dir.path(), &home, &servers, &bp);
    assert_eq!(out.status.code(), Some(0), "{envelope}\n{}", crate::stderr(&out));
    let output = envelope["output"].as_str().unwrap();
    assert!(
        output.contains("loopback says: Resource trigger-sampling-request context: name a colour"),
        "the tool's output has the endpoint's answer: {output}"
    );
    assert!(output.contains("loopback-model"), "{output}");
    // The endpoint saw the prompt, the system prompt, the limits and the key.
    let requests = endpoint.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!(request["path"], "/v1/chat/completions");
    assert_eq!(request["authorization"], "Bearer sk-loopback");
    assert_eq!(request["body"]["model"], "test-model");
    assert_eq!(
        request["body"]["messages"],
        json!([
            { "role": "system", "content": "You are a helpful test server." },
            { "role": "user", "content": "Resource trigger-sampling-request context: name a colour" },
        ])
    );
    assert_eq!(request["body"]["max_tokens"], 20);
    assert_eq!(request["body"]["temperature"], 0.7);
    // The request and the answer are in the run's events, on the step.
    let sampling = events.iter().find(|e| e["type"] == "StepSampling").expect("a StepSampling event");
    assert_eq!((&sampling["step"], &sampling["server"]), (&json!("ask"), &json!("everything")));
    assert_eq!(sampling["request"]["maxTokens"], 20);
    let sampled = events.iter().find(|e| e["type"] == "StepSampled").expect("a StepSampled event");
    assert_eq!(sampled["result"]["model"], "loopback-model");
    assert_eq!(
        sampled["result"]["content"]["text"],
        "loopback says: Resource trigger-sampling-request context: name a colour"
    );
}

#[test]
fn trigger_sampling_request_async_runs_as_a_client_side_task_the_provider_answers() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::start(dir.path(), 0);
    let provided = home(dir.path(), Some(&endpoint));
    let servers = servers_file(dir.path(), None);
    let args = json!({ "prompt": "name a river", "maxTokens": 30 });
    let bp = blueprint(dir.path(), "everything", "trigger-sampling-request-async", args);
    let (out, envelope, events) = run(dir.path(), &provided, &servers, &bp);
    assert_eq!(out.status.code(), Some(0), "{envelope}\n{}", crate::stderr(&out));
    let output = envelope["output"].as_str().unwrap();
    // A task was made (the tool falls back to `[SYNC]` for a plain answer), polled, and its
    // result fetched with `tasks/result`.
    assert!(output.contains("[COMPLETED] Async sampling completed!") && output.contains("Task created:"), "{output}");
    assert!(
        output.contains("loopback says: Resource trigger-sampling-request-async context: name a river"),
        "{output}"
    );
    assert!(output.contains("io.modelcontextprotocol/related-task"), "{output}");
    let requests = endpoint.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["body"]["max_tokens"], 30);
    assert!(events.iter().any(|e| e["type"] == "StepSampled" && e["result"]["model"] == "loopback-model"));

    // No provider: SAMPLING_UNAVAILABLE, at once, though the server would poll for a minute
    // (and then answer otherwise): the code is the evidence.
    let bare = home(&dir.path().join("bare"), None);
    let (out, envelope, _) = run(dir.path(), &bare, &servers, &bp);
    assert_eq!(out.status.code(), Some(1), "{envelope}");
    assert_eq!(envelope["errors"][0]["code"], "SAMPLING_UNAVAILABLE", "{envelope}");
}

#[test]
fn a_server_whose_switch_is_off_fails_sampling_not_allowed_and_the_provider_is_never_called() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::start(dir.path(), 0);
    let home = home(dir.path(), Some(&endpoint));
    let servers = servers_file(dir.path(), None);
    let bp = blueprint(dir.path(), "everything_off", "trigger-sampling-request", json!({ "prompt": "secret" }));
    let (out, envelope, events) = run(dir.path(), &home, &servers, &bp);
    assert_eq!(out.status.code(), Some(1), "{envelope}");
    let error = &envelope["errors"][0];
    assert_eq!(error["code"], "SAMPLING_NOT_ALLOWED", "{envelope}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("`everything_off`") && message.contains("\"sampling\": true"), "{message}");
    assert!(endpoint.requests().is_empty(), "the provider was called: {:?}", endpoint.requests());
    // The refused request is on record too.
    let sampled = events.iter().find(|e| e["type"] == "StepSampled").expect("a StepSampled event");
    assert_eq!(sampled["error"]["code"], "SAMPLING_NOT_ALLOWED");
}

#[test]
fn with_no_provider_sampling_fails_sampling_unavailable_naming_what_to_configure() {
    let dir = tempfile::tempdir().unwrap();
    let home = home(dir.path(), None);
    let servers = servers_file(dir.path(), None);
    let bp = blueprint(dir.path(), "everything", "trigger-sampling-request", json!({ "prompt": "x" }));
    let (out, envelope, _) = run(dir.path(), &home, &servers, &bp);
    assert_eq!(out.status.code(), Some(1), "{envelope}");
    let error = &envelope["errors"][0];
    assert_eq!(error["code"], "SAMPLING_UNAVAILABLE", "{envelope}");
    let message = error["message"].as_str().unwrap();
    let settings = home.join("settings.json").display().to_string();
    assert!(message.contains(&settings) && message.contains("mcpflow serve"), "{message}");
}

#[test]
fn write_haiku_of_the_sdks_simple_task_interactive_samples_from_its_task_through_the_provider() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::start(dir.path(), 0);
    let interactive = Interactive::start();
    let home = home(dir.path(), Some(&endpoint));
    let servers = servers_file(dir.path(), Some(&interactive));
    let bp = blueprint(dir.path(), "interactive", "write_haiku", json!({ "topic": "rivers" }));
    let (out, envelope, events) = run(dir.path(), &home, &servers, &bp);
    assert_eq!(out.status.code(), Some(0), "{envelope}\n{}", crate::stderr(&out));
    assert_eq!(envelope["output"], "Haiku:\nloopback says: Write a haiku about rivers");
    assert!(events.iter().any(|e| e["type"] == "StepTaskStarted"), "it ran as a task");
    let requests = endpoint.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0]["body"]["max_tokens"], 50);
}

#[test]
fn a_slow_model_does_not_time_out_the_task_whose_server_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    // Each request to the server may take 1 s; the model takes 2.5 s.
    let endpoint = Endpoint::start(dir.path(), 2500);
    let interactive = Interactive::start();
    let home = home(dir.path(), Some(&endpoint));
    let servers = servers_file_with(dir.path(), Some(&interactive), json!({ "timeout_ms": 1000 }));
    let bp = blueprint(dir.path(), "interactive", "write_haiku", json!({ "topic": "snails" }));
    let (out, envelope, _) = run(dir.path(), &home, &servers, &bp);
    assert_eq!(out.status.code(), Some(0), "{envelope}\n{}", crate::stderr(&out));
    assert_eq!(envelope["output"], "Haiku:\nloopback says: Write a haiku about snails");
}

#[test]
fn through_serve_the_typescript_sdk_clients_sampling_handler_answers() {
    let dir = tempfile::tempdir().unwrap();
    let interactive = Interactive::start();
    let servers = servers_file(dir.path(), Some(&interactive));
    let (stdout, _) = spawned::serve_client("ts-sampling-client.mjs", &dir.path().join("homes"), &servers);
    assert!(stdout.contains("ok - simpleTaskInteractive write_haiku"), "{stdout}");
    assert!(stdout.contains("ok - trigger-sampling-request-async through serve"), "{stdout}");
}

#[test]
fn a_provider_that_cannot_be_reached_fails_sampling_failed_naming_its_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let home = home(dir.path(), None);
    let settings = json!({ "sampling": { "base_url": format!("http://127.0.0.1:{closed}/v1"), "model": "m" } });
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
    let servers = servers_file(dir.path(), None);
    let bp = blueprint(dir.path(), "everything", "trigger-sampling-request", json!({ "prompt": "x" }));
    let (out, envelope, _) = run(dir.path(), &home, &servers, &bp);
    assert_eq!(out.status.code(), Some(1), "{envelope}");
    let error = &envelope["errors"][0];
    assert_eq!(error["code"], "SAMPLING_FAILED", "{envelope}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&format!("http://127.0.0.1:{closed}/v1/chat/completions")), "{message}");
}

/// The Python SDK 2.x server `ask_py.py` pinned to `era`, its switch on or off.
fn python_servers(dir: &Path, era: &str, on: bool) -> PathBuf {
    let script = repo().join("crates/mcp/tests/servers/ask_py.py");
    let entry = json!({ "command": crate::venv_python(), "args": [script], "protocol": era, "sampling": on });
    let path = dir.join(format!("py-{era}-{on}.json"));
    std::fs::write(&path, json!({ "mcpServers": { "py": entry } }).to_string()).unwrap();
    path
}

#[test]
fn a_2026_07_28_input_required_sampling_request_is_answered_like_a_2025_11_25_one() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::start(dir.path(), 0);
    let home = home(dir.path(), Some(&endpoint));
    let bp = blueprint(dir.path(), "py", "haiku", json!({ "topic": "rain" }));
    for era in ["2026-07-28", "2025-11-25"] {
        let before = endpoint.requests().len();
        let (out, envelope, events) = run(dir.path(), &home, &python_servers(dir.path(), era, true), &bp);
        assert_eq!(out.status.code(), Some(0), "{era}: {envelope}\n{}", crate::stderr(&out));
        let said = envelope["output"]["result"].as_str().unwrap_or_default();
        assert!(said.starts_with("loopback says:") && said.contains("Write a haiku about rain."), "{era}: {envelope}");
        assert_eq!(endpoint.requests().len(), before + 1, "{era}: one completion");
        assert!(events.iter().any(|e| e["type"] == "StepSampled" && e["step"] == "ask"), "{era}: on record");

        // The server's switch off: refused, the endpoint never asked.
        let before = endpoint.requests().len();
        let (_, envelope, _) = run(dir.path(), &home, &python_servers(dir.path(), era, false), &bp);
        assert_eq!(envelope["errors"][0]["code"], "SAMPLING_NOT_ALLOWED", "{era}: {envelope}");
        assert_eq!(endpoint.requests().len(), before, "{era}: the provider was not called");
    }
}
