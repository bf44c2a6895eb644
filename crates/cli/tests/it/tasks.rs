//! A run killed with SIGKILL while a tool runs as a task, then `mcpflow resume`: the
//! resumed run polls the same task and finishes, and the tool ran once.
//!
//! Servers: `tests/servers/tasks_http.mjs`, a stateless streamable HTTP server on the
//! official TypeScript SDK's task support whose tasks outlive sessions (the SDK's own
//! examples bind tasks to the session that created them, and server-everything's task
//! store lives and dies with its session, so after the kill neither knows the task — that
//! case is the second test, on the SDK's `simpleStreamableHttp` example and its `delay`
//! tool: `TASK_LOST`, without calling the tool again). The same server answering with
//! JSON bodies (`JSON_RESPONSE=1`) shows the fallback for a listing the pool cannot read
//! raw: the refused plain call.

use crate::repo;
use crate::spawned::{Logs, Spawned, wait_for};
use mcpflow_engine::EventKind;
use mcpflow_store::Store;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starts the node server `script` with `env`, logging on stdout or stderr, and waits for
/// a line containing `ready`; its port follows the line's last space.
fn start(script: &Path, env: &[(&str, &str)], logs: Logs, ready: &str) -> (Spawned, u16) {
    let server = Spawned::node(script, env, logs);
    let line = server.wait_for_line(ready);
    let port = line.rsplit(' ').next().and_then(|p| p.trim().parse().ok()).unwrap_or(0);
    (server, port)
}

/// Starts `mcpflow run --store` on `blueprint`, waits until the server runs `step` as a
/// task and the task's first status reached the run (so its handle is on disk), and kills
/// the process with SIGKILL. The run's id and the task's.
fn run_and_kill(home: &Path, servers: &Path, blueprint: &Path, step: &str) -> (String, String) {
    // `--events -` writes each event as a line as it happens.
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "-q", "--allow-all-servers", "--events", "-", "--servers"])
        .arg(servers)
        .arg(blueprint)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let events: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = events.clone();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str(&line) {
                sink.lock().unwrap().push(event);
            }
        }
    });
    let read = || events.lock().unwrap().clone();
    let found = wait_for(Duration::from_secs(30), || {
        let events = read();
        let task = events.iter().find(|e| e["type"] == "StepTaskStarted" && e["step"] == step)?;
        // Progress follows the handle only once the journal synced it.
        events
            .iter()
            .any(|e| e["type"] == "StepProgress" && e["step"] == step)
            .then(|| (events[0]["run_id"].as_str().unwrap().to_owned(), task["task_id"].as_str().unwrap().to_owned()))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let found = found.unwrap_or_else(|| panic!("no task started for `{step}`: {:?}", read()));
    assert!(read().iter().all(|e| e["type"] != "RunFinished"), "the run finished before the kill");
    found
}

fn resume(home: &Path, servers: &Path, blueprint: &Path, run: &str) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["resume", run, "--json", "-q", "--allow-all-servers", "--servers"])
        .arg(servers)
        .arg("--file")
        .arg(blueprint)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .output()
        .unwrap();
    let envelope = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no envelope: {}{}", crate::stdout(&out), crate::stderr(&out)));
    (out.status.code(), envelope)
}

#[test]
fn a_run_killed_mid_task_resumes_by_polling_the_same_task_and_the_tool_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let script = repo().join("crates/cli/tests/servers/tasks_http.mjs");
    let (server, port) = start(&script, &[("PORT", "0")], Logs::Stderr, "listening on");
    let servers = dir.path().join("servers.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(&servers, json!({"mcpServers": {"counter": {"type": "http", "url": url}}}).to_string()).unwrap();
    let blueprint = dir.path().join("count.json");
    let doc = json!({"blueprint": 1, "id": "count", "steps": [
        {"id": "slow", "kind": "tool", "server": "counter", "tool": "count-slowly", "args": {"n": 12, "ms": 250}},
        {"id": "after", "kind": "transform", "value": "{{ steps.slow.output.counted }}"}
    ]});
    std::fs::write(&blueprint, doc.to_string()).unwrap();

    let (run, task) = run_and_kill(&home, &servers, &blueprint, "slow");
    server.wait_for_line("tools/call count-slowly as a task");
    let calls_before_kill = server.lines().iter().filter(|l| l.starts_with("tools/call")).count();
    // What the studio and the daemon offer on start: the run, with its task in flight.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let app = mcpflow_app::App::open(&home, mcpflow_app::AppOptions::default()).unwrap();
        let offered: Vec<(String, Vec<String>)> = app
            .resumable()
            .into_iter()
            .map(|(run, tasks)| (run, tasks.into_iter().map(|t| t.task_id).collect()))
            .collect();
        assert_eq!(offered, [(run.clone(), vec![task.clone()])]);
        app.shutdown().await;
    });
    drop(runtime);

    let (code, envelope) = resume(&home, &servers, &blueprint, &run);
    assert_eq!(code, Some(0), "{envelope}");
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert_eq!(envelope["output"], json!(12), "{envelope}");

    // The tool ran once: exactly one `tools/call` in all, as a task from the first (the
    // tool's listing says `taskSupport: "required"`), before the kill; none from the
    // resumed run.
    let lines = server.lines();
    let calls: Vec<&String> = lines.iter().filter(|l| l.starts_with("tools/call")).collect();
    assert_eq!(calls.len(), calls_before_kill, "the resumed run called the tool again: {calls:?}");
    assert_eq!(calls, ["tools/call count-slowly as a task"], "{calls:?}");

    // The journal: the killed run holds the task's handle and is `interrupted`; the new
    // run names it, and is refused a second resume.
    let store = Store::open(&home.join("store")).unwrap().store;
    let killed = store.run(&run).unwrap().unwrap();
    assert_eq!(killed.status.as_str(), "interrupted");
    let handle = store.events(&run).unwrap().into_iter().find_map(|e| match e.kind {
        EventKind::StepTaskStarted { step, server, task_id, .. } => Some((step, server, task_id)),
        _ => None,
    });
    assert_eq!(handle, Some(("slow".to_owned(), "counter".to_owned(), task.clone())));
    let resumed = store.run(envelope["run_id"].as_str().unwrap()).unwrap().unwrap();
    assert_eq!(resumed.resumed_from.as_deref(), Some(run.as_str()));
    drop(store);
    let again = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["resume", &run, "--allow-all-servers", "--servers"])
        .arg(&servers)
        .arg("--file")
        .arg(&blueprint)
        .env("MCPFLOW_HOME", &home)
        .output()
        .unwrap();
    assert!(crate::stderr(&again).contains("was already resumed by run"), "{}", crate::stderr(&again));
    let code = again.status.code();
    assert_eq!(code, Some(2), "a run is resumed once");
}

#[test]
fn a_task_the_server_forgot_fails_with_task_lost_and_is_not_called_again() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let script = repo().join("node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js");
    let port = free_port();
    let (server, _) = start(
        &script,
        &[("MCP_PORT", &port.to_string())],
        Logs::Stdout,
        "MCP Streamable HTTP Server listening on port",
    );
    let servers = dir.path().join("servers.json");
    let url = format!("http://localhost:{port}/mcp");
    std::fs::write(&servers, json!({"mcpServers": {"sdk": {"type": "http", "url": url}}}).to_string()).unwrap();
    let blueprint = dir.path().join("delay.json");
    let doc = json!({"blueprint": 1, "id": "delay", "steps": [
        {"id": "wait", "kind": "tool", "server": "sdk", "tool": "delay", "args": {"duration": 4000}}
    ]});
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let (run, task) = run_and_kill(&home, &servers, &blueprint, "wait");
    // The example's tasks belong to the session that created them; the killed process's
    // session is gone with it, so the server no longer knows the task.
    let (code, envelope) = resume(&home, &servers, &blueprint, &run);
    assert_eq!(code, Some(1), "{envelope}");
    assert_eq!(envelope["status"], "failed", "{envelope}");
    let error = &envelope["errors"][0];
    assert_eq!(error["code"], "TASK_LOST", "{envelope}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains(&task) && message.contains("run the workflow again"), "{message}");
    // Called again, `delay` would have answered after its 4 s: the run would have succeeded.
    drop(server);
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_task_steps_progress_is_in_the_events_and_its_timeout_cancels_the_task_on_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let script = repo().join("crates/cli/tests/servers/tasks_http.mjs");
    let (server, port) = start(&script, &[("PORT", "0")], Logs::Stderr, "listening on");
    let servers = dir.path().join("servers.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(&servers, json!({"mcpServers": {"counter": {"type": "http", "url": url}}}).to_string()).unwrap();
    let blueprint = dir.path().join("late.json");
    let doc = json!({"blueprint": 1, "id": "late", "steps": [
        {"id": "slow", "kind": "tool", "server": "counter", "tool": "count-slowly", "args": {"n": 100, "ms": 100},
         "timeout_ms": 5000}
    ]});
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "-q", "--allow-all-servers", "--events", "-", "--servers"])
        .arg(&servers)
        .arg(&blueprint)
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", crate::stderr(&out));
    let events: Vec<Value> = crate::stdout(&out).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let task = events.iter().find(|e| e["type"] == "StepTaskStarted").expect("the task is an event");
    let task_id = task["task_id"].as_str().unwrap();
    // The task's status messages are the step's progress, as progress notifications are.
    // (The server says one every 100 ms and is polled every 200 ms: three of them in the
    // 5 s before the timeout leave a loaded machine a wide margin.)
    let messages: Vec<&str> =
        events.iter().filter(|e| e["type"] == "StepProgress").filter_map(|e| e["message"].as_str()).collect();
    assert!(messages.contains(&"step 1 of 100") && messages.len() >= 3, "{messages:?}");
    let finished = events.iter().find(|e| e["type"] == "StepFinished").unwrap();
    assert_eq!(finished["error"]["code"], "STEP_TIMEOUT", "{finished}");
    // The step's timeout bounds the whole task and cancels it on the server.
    let cancelled = format!("tasks/cancel {task_id}");
    let told = wait_for(Duration::from_secs(5), || server.lines().contains(&cancelled).then_some(()));
    assert!(told.is_some(), "no `{cancelled}` in {:?}", server.lines());
}

#[test]
fn a_task_only_tool_listed_in_a_json_body_is_learned_from_the_servers_refusal() {
    // rmcp parses an `application/json` answer itself and drops the tools' `execution`,
    // so the pool cannot read `taskSupport` there: the server's refusal of the plain call
    // (nothing ran) is the fallback, and the task runs once.
    let dir = tempfile::tempdir().unwrap();
    let script = repo().join("crates/cli/tests/servers/tasks_http.mjs");
    let (server, port) = start(&script, &[("PORT", "0"), ("JSON_RESPONSE", "1")], Logs::Stderr, "listening on");
    let servers = dir.path().join("servers.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(&servers, json!({"mcpServers": {"counter": {"type": "http", "url": url}}}).to_string()).unwrap();
    let blueprint = dir.path().join("count.json");
    let doc = json!({"blueprint": 1, "id": "count", "steps": [
        {"id": "slow", "kind": "tool", "server": "counter", "tool": "count-slowly", "args": {"n": 2, "ms": 50}}
    ], "output": "{{ slow.counted }}"});
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--json", "--allow-all-servers", "--servers"])
        .arg(&servers)
        .arg(&blueprint)
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", crate::stdout(&out), crate::stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["output"], json!(2), "{envelope}");
    // The server's output is read on another thread: wait for the second call's line.
    server.wait_for_line("tools/call count-slowly as a task");
    let lines = server.lines();
    let calls: Vec<&String> = lines.iter().filter(|l| l.starts_with("tools/call")).collect();
    assert_eq!(calls, ["tools/call count-slowly plain", "tools/call count-slowly as a task"], "{calls:?}");
}
