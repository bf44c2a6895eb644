//! The pool against the testkit fixtures: calls, routing, resources, prompts, progress,
//! cancellation, timeouts from config, concurrency limits, the catalog, the engine trait.

use crate::support::{configs, eventually, in_process, pool, progress_events, request, testkit, text, tool};
use mcpflow_blueprint::{ServerStatus, ToolCatalog};
use mcpflow_engine::{CallTarget, Progress, Servers};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use mcpflow_testkit::{ClusterConfig, Fixture};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn in_process_pool(servers: Vec<(&str, Fixture)>) -> Pool {
    let mut configs = ServerConfigs::new();
    for (name, fixture) in servers {
        in_process(&mut configs, name, fixture);
    }
    Pool::new(configs, Approvals::new(), PoolOptions::default())
}

#[tokio::test]
async fn an_in_process_fixture_answers_with_the_raw_camel_case_result() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo)]);
    let result = pool.call(tool(Some("echo"), "add", json!({"a": 2, "b": 3}))).await.unwrap();
    assert_eq!(result["structuredContent"], json!({"sum": 5.0}));
    let echoed = pool.call(tool(Some("echo"), "echo", json!({"message": "hi"}))).await.unwrap();
    assert_eq!(text(&echoed), "hi");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_child_process_fixture_answers_and_is_reaped_on_shutdown() {
    let pool = pool(vec![("echo", testkit("echo"))]);
    let result = pool.call(tool(Some("echo"), "echo", json!({"message": "over stdio"}))).await.unwrap();
    assert_eq!(text(&result), "over stdio");
    let pid = pool.pid("echo").await.expect("a running process");
    assert!(crate::support::process_state(pid).is_some());
    pool.shutdown().await;
    assert_eq!(crate::support::process_state(pid), None, "the process must be gone, not a zombie");
    let after = pool.call(tool(Some("echo"), "echo", json!({"message": "x"}))).await.unwrap_err();
    assert_eq!(after.code(), "POOL_SHUT_DOWN");
}

#[tokio::test]
async fn a_tool_without_a_server_is_routed_to_the_one_server_that_has_it() {
    let pool =
        in_process_pool(vec![("echo", Fixture::Echo), ("cluster", Fixture::ClusterSim(ClusterConfig::default()))]);
    let nodes = pool.call(tool(None, "list_nodes", json!({}))).await.unwrap();
    assert_eq!(nodes["structuredContent"]["items"].as_array().map(Vec::len), Some(13));
    let sum = pool.call(tool(None, "add", json!({"a": 1, "b": 1}))).await.unwrap();
    assert_eq!(sum["structuredContent"]["sum"], json!(2.0));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_tool_offered_by_two_servers_is_ambiguous_naming_both() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo), ("faulty", Fixture::Faulty)]);
    let err = pool.call(tool(None, "echo", json!({"message": "?"}))).await.unwrap_err();
    assert_eq!(err.code(), "TOOL_AMBIGUOUS");
    let message = err.to_string();
    assert!(message.contains("`echo`, `faulty`"), "{message}");
    // Naming the server settles it.
    let result = pool.call(tool(Some("faulty"), "echo", json!({"message": "!"}))).await.unwrap();
    assert_eq!(text(&result), "!");
    pool.shutdown().await;
}

#[tokio::test]
async fn an_unknown_tool_is_not_found_with_the_nearest_names() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo)]);
    let err = pool.call(tool(None, "ecoh", json!({}))).await.unwrap_err();
    assert_eq!(err.code(), "TOOL_NOT_FOUND");
    assert!(err.to_string().contains("did you mean `echo` (server `echo`)"), "{err}");
    let named = pool.call(tool(Some("echo"), "multiplyy", json!({}))).await.unwrap_err();
    assert_eq!(named.code(), "TOOL_NOT_FOUND");
    assert!(named.to_string().starts_with("server `echo` has no tool `multiplyy`; did you mean `multiply`"), "{named}");
    let server = pool.call(tool(Some("nope"), "echo", json!({}))).await.unwrap_err();
    assert_eq!(server.code(), "SERVER_NOT_CONFIGURED");
    assert!(server.to_string().contains("(configured: `echo`)"), "{server}");
    pool.shutdown().await;
}

#[tokio::test]
async fn resources_and_prompts_come_back_as_raw_results() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo)]);
    let resource =
        pool.call(request(CallTarget::Resource { server: "echo".into(), uri: "echo://hello".into() })).await.unwrap();
    assert_eq!(resource["contents"][0]["uri"], "echo://hello");
    assert!(resource["contents"][0]["text"].is_string(), "{resource}");
    let prompt = pool
        .call(request(CallTarget::Prompt {
            server: "echo".into(),
            prompt: "greet".into(),
            args: crate::support::args(json!({"name": "Ada"})),
        }))
        .await
        .unwrap();
    assert_eq!(prompt["messages"][0]["content"]["text"], "Hello, Ada! How are you today?");
    pool.shutdown().await;
}

#[tokio::test]
async fn progress_notifications_reach_the_calls_sink() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo)]);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let mut call = tool(Some("echo"), "progress", json!({"steps": 4, "interval_ms": 5}));
    let sink = seen.clone();
    call.progress = Some(Arc::new(move |p| sink.lock().unwrap().push(p)));
    let result = pool.call(call).await.unwrap();
    assert_eq!(result["structuredContent"]["steps"], 4);
    // Notifications are handled on their own tasks: the last may land just after the result.
    assert!(eventually(Duration::from_secs(30), || seen.lock().unwrap().len() == 4).await);
    let mut progress: Vec<f64> = seen.lock().unwrap().iter().map(|p| p.progress).collect();
    progress.sort_by(f64::total_cmp);
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0]);
    assert!(seen.lock().unwrap().iter().all(|p| p.total == Some(4.0)));
    pool.shutdown().await;
}

#[tokio::test]
async fn cancelling_a_call_sends_cancelled_returns_promptly_and_the_server_stays_usable() {
    let mut echo = testkit("echo");
    // At info level rmcp logs the `notifications/cancelled` it receives.
    echo.env.insert("RUST_LOG".to_owned(), json!("info"));
    let (log, mut lines) = tokio::sync::mpsc::channel(1024);
    let pool = Pool::new(configs(vec![("echo", echo)]), Approvals::allow_all(), PoolOptions::default().with_log(log));
    pool.call(tool(Some("echo"), "echo", json!({"message": "warm up"}))).await.unwrap();
    // Ten minutes of progress: only the cancellation can end this call in a test.
    let mut call = tool(Some("echo"), "progress", json!({"steps": 6_000, "interval_ms": 100}));
    let (sink, mut first_step) = progress_events();
    call.progress = Some(sink);
    let cancel = call.cancel.clone();
    tokio::spawn(async move {
        // Cancelled once the server works on it (its first progress notification).
        first_step.recv().await;
        cancel.cancel();
    });
    let err = pool.call(call).await.unwrap_err();
    assert_eq!(err.code(), "CANCELLED");
    let mut seen = Vec::new();
    let heard = eventually(Duration::from_secs(30), || {
        seen.extend(std::iter::from_fn(|| lines.try_recv().ok()));
        seen.iter().any(|l| l.line.contains("cancelled") && l.line.contains("cancelled by the workflow"))
    })
    .await;
    assert!(heard, "the server never heard of the cancellation: {seen:?}");
    let after = pool.call(tool(Some("echo"), "echo", json!({"message": "still here"}))).await.unwrap();
    assert_eq!(text(&after), "still here");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_servers_timeout_ms_applies_when_the_call_sets_none() {
    let mut echo = testkit("echo");
    echo.timeout_ms = Some(200);
    let pool = pool(vec![("echo", echo)]);
    pool.call(tool(Some("echo"), "echo", json!({"message": "warm up"}))).await.unwrap();
    // Ten minutes, far past the pool's default timeout (a minute): only the server's
    // 200 ms can end it with that error.
    let err = pool.call(tool(Some("echo"), "sleep", json!({"ms": 600_000}))).await.unwrap_err();
    assert_eq!(err.code(), "CALL_TIMEOUT");
    assert!(err.to_string().contains("within 200 ms"), "{err}");
    // The call's own timeout wins over the server's.
    let mut long = tool(Some("echo"), "sleep", json!({"ms": 300}));
    long.timeout = Some(Duration::from_secs(60));
    assert_eq!(pool.call(long).await.unwrap()["structuredContent"]["slept_ms"], 300);
    pool.shutdown().await;
}

#[tokio::test]
async fn max_concurrency_queues_calls_beyond_the_limit() {
    let mut limited = testkit("echo");
    limited.max_concurrency = Some(1);
    let pool = pool(vec![("limited", limited), ("free", testkit("echo"))]);
    for server in ["limited", "free"] {
        pool.call(tool(Some(server), "echo", json!({"message": "warm up"}))).await.unwrap();
    }
    // Limited: three calls of 200 ms one after the other. A lower bound only (it holds
    // however loaded the machine is); overlapping calls would end sooner.
    let started = Instant::now();
    let calls = (0..3).map(|_| pool.call(tool(Some("limited"), "sleep", json!({"ms": 200}))));
    for result in futures::future::join_all(calls).await {
        result.unwrap();
    }
    let serial = started.elapsed();
    assert!(serial >= Duration::from_millis(600), "limited to one at a time: {serial:?}");

    // Unlimited: a call the server is working on (its first progress notification came)
    // and that only a cancellation ends; a second call is answered meanwhile.
    let mut held = tool(Some("free"), "progress", json!({"steps": 6_000, "interval_ms": 100}));
    held.timeout = Some(Duration::from_secs(900));
    let (sink, mut first_step) = progress_events();
    held.progress = Some(sink);
    let cancel = held.cancel.clone();
    let held = tokio::spawn({
        let pool = pool.clone();
        async move { pool.call(held).await }
    });
    first_step.recv().await.expect("the held call never started");
    // A guard against a hang only: calls that queued would wait the held one's ten minutes.
    let meanwhile = pool.call(tool(Some("free"), "echo", json!({"message": "meanwhile"})));
    let meanwhile = tokio::time::timeout(Duration::from_secs(60), meanwhile)
        .await
        .expect("the second call waited for the first: unlimited calls do not overlap")
        .unwrap();
    assert_eq!(text(&meanwhile), "meanwhile");
    assert!(!held.is_finished(), "unlimited calls overlap: the held call is still running");
    cancel.cancel();
    assert_eq!(held.await.unwrap().unwrap_err().code(), "CANCELLED");
    pool.shutdown().await;
}

#[tokio::test]
async fn the_catalog_lists_tools_and_prompts_and_reports_unapproved_servers_without_starting_them() {
    let marker = tempfile::tempdir().unwrap();
    let touched = marker.path().join("started");
    let mut configs = configs(vec![(
        "unapproved",
        crate::support::config(json!({"command": "sh", "args": ["-c", format!("touch {}", touched.display())]})),
    )]);
    in_process(&mut configs, "echo", Fixture::Echo);
    let pool = Pool::new(configs, Approvals::new(), PoolOptions::default());
    let catalog = pool.catalog().await;
    assert_eq!(catalog.server_names(), ["unapproved", "echo"]);
    let ServerStatus::Ready(echo) = catalog.server("echo") else { panic!("echo is not ready") };
    let mut tools: Vec<&str> = echo.tools.iter().map(|t| t.name.as_str()).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["add", "add_tool", "echo", "meta", "multiply", "progress", "record", "sleep"]);
    let add = echo.tools.iter().find(|t| t.name == "add").unwrap();
    assert_eq!(add.input_schema["type"], "object");
    assert!(add.input_schema["properties"]["a"].is_object(), "{}", add.input_schema);
    let output = add.output_schema.as_ref().expect("add declares an outputSchema");
    assert_eq!(output["properties"]["sum"]["type"], "number", "{output}");
    assert_eq!(echo.prompts[0].name, "greet");
    assert!(echo.prompts[0].arguments.iter().any(|a| a.name == "name" && a.required));
    let ServerStatus::Unreachable { reason } = catalog.server("unapproved") else { panic!("should be unreachable") };
    assert!(reason.starts_with("SERVER_NOT_APPROVED: "), "{reason}");
    assert!(matches!(catalog.server("other"), ServerStatus::NotConfigured));
    assert!(!touched.exists(), "an unapproved command must not run");
    pool.shutdown().await;
}

#[tokio::test]
async fn the_listed_catalog_starts_nothing_and_knows_what_was_started() {
    let pool = pool(vec![("echo", testkit("echo")), ("faulty", testkit("faulty"))]);
    let before = pool.listed_catalog();
    assert_eq!(before.server_names(), ["echo", "faulty"]);
    assert!(matches!(before.server("echo"), ServerStatus::NotListed));
    assert!(matches!(before.server("other"), ServerStatus::NotConfigured));
    assert_eq!((pool.pid("echo").await, pool.pid("faulty").await), (None, None), "nothing was started");

    pool.call(tool(Some("echo"), "echo", json!({"message": "hi"}))).await.unwrap();
    let after = pool.listed_catalog();
    let ServerStatus::Ready(echo) = after.server("echo") else { panic!("echo was started, so it is listed") };
    assert!(echo.tools.iter().any(|t| t.name == "record"));
    assert!(matches!(after.server("faulty"), ServerStatus::NotListed));
    assert_eq!(pool.pid("faulty").await, None, "still not started");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_tool_the_server_adds_and_announces_is_listed_and_routed_without_a_restart() {
    let pool = pool(vec![("echo", testkit("echo")), ("faulty", testkit("faulty"))]);
    assert!(pool.discover("echo").await.unwrap().tool("shout").is_none());
    let pid = pool.pid("echo").await;
    // Routing by name reads the lists the pool holds; it does not list again.
    let unknown = pool.call(tool(None, "shout", json!({"message": "?"}))).await.unwrap_err();
    assert_eq!(unknown.code(), "TOOL_NOT_FOUND");
    let added = pool.call(tool(Some("echo"), "add_tool", json!({"name": "shout"}))).await.unwrap();
    assert_eq!(added["structuredContent"], json!({"added": "shout"}));
    // Only `notifications/tools/list_changed` tells the pool to list again.
    let started = Instant::now();
    while pool.discover("echo").await.unwrap().tool("shout").is_none() {
        assert!(started.elapsed() < Duration::from_secs(30), "the pool never listed the announced tool");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ServerStatus::Ready(echo) = pool.catalog().await.server("echo") else { panic!("echo is not ready") };
    assert!(echo.tools.iter().any(|t| t.name == "shout"));
    let routed = pool.call(tool(None, "shout", json!({"message": "routed"}))).await.unwrap();
    assert_eq!(text(&routed), "routed");
    assert_eq!(pool.pid("echo").await, pid, "the same process, not a restart");
    pool.shutdown().await;
}

#[tokio::test]
async fn the_engine_sees_the_pool_through_its_servers_trait() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo)]);
    let servers: &dyn Servers = &pool;
    let ok = servers.call(tool(Some("echo"), "echo", json!({"message": "via trait"}))).await.unwrap();
    assert_eq!(text(&ok), "via trait");
    let err = servers.call(tool(Some("echo"), "nope", json!({}))).await.unwrap_err();
    assert_eq!((err.code.as_str(), err.transient), ("TOOL_NOT_FOUND", false));
    pool.shutdown().await;
}

#[tokio::test]
async fn arguments_that_break_the_input_schema_fail_before_the_call_is_sent_naming_the_argument() {
    let pool = in_process_pool(vec![("echo", Fixture::Echo)]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calls.txt");
    let file_s = file.display().to_string();
    // `record` appends each call it gets to a file: nothing there means nothing was sent.
    let err = pool.call(tool(Some("echo"), "record", json!({"file": file_s, "line": {"x": 1}}))).await.unwrap_err();
    assert_eq!(err.code(), "ARGS_INVALID");
    let message = err.to_string();
    assert!(message.starts_with("/line: expected string, got object"), "{message}");
    assert!(message.contains("tool `record`") && message.contains("not sent"), "{message}");
    assert!(!file.exists(), "the call never reached the server");
    let engine_error = mcpflow_engine::CallError::from(err);
    assert!(!engine_error.transient, "not retried");

    let err = pool.call(tool(Some("echo"), "add", json!({"a": {"n": 1}}))).await.unwrap_err();
    assert!(err.to_string().starts_with("/a: expected number, got object; /b: required, missing"), "{err}");

    // Arguments that fit go out as before.
    pool.call(tool(Some("echo"), "record", json!({"file": file_s, "line": "sent"}))).await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "sent\n");
    pool.shutdown().await;
}
