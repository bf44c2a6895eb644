//! The pool against servers that misbehave on purpose (the faulty fixture, a command that
//! does not exist, a server that writes broken answers): clear error codes, restarts,
//! bounded memory, and no process left behind.

use crate::http_bridge::{Answers, HttpFixture, serve_over_http};
use crate::support::{config, configs, eventually, in_process, pool, process_state, testkit, text, tool};
use mcpflow_blueprint::{ServerStatus, ToolCatalog};
use mcpflow_mcp::{Approvals, LogStream, Pool, PoolOptions};
use mcpflow_testkit::Fixture;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

#[tokio::test]
async fn a_crash_mid_call_fails_the_call_and_the_next_call_restarts_the_server() {
    let pool = pool(vec![("faulty", testkit("faulty"))]);
    pool.call(tool(Some("faulty"), "echo", json!({"message": "up"}))).await.unwrap();
    let first = pool.pid("faulty").await.unwrap();
    let err = pool.call(tool(Some("faulty"), "crash", json!({}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_DISCONNECTED");
    assert!(err.is_transient(), "a retry should be allowed");
    assert!(err.to_string().contains("exit status: 3"), "{err}");
    let retried = pool.call(tool(Some("faulty"), "echo", json!({"message": "again"}))).await.unwrap();
    assert_eq!(text(&retried), "again");
    let second = pool.pid("faulty").await.unwrap();
    assert_ne!(first, second, "a new process serves the retry");
    assert_eq!(process_state(first), None, "the crashed process was reaped");
    pool.shutdown().await;
    assert_eq!(process_state(second), None);
}

#[tokio::test]
async fn an_in_process_server_that_drops_the_connection_is_reconnected() {
    let mut configs = configs(Vec::new());
    in_process(&mut configs, "faulty", Fixture::Faulty);
    let pool = Pool::new(configs, Approvals::new(), PoolOptions::default());
    let err = pool.call(tool(Some("faulty"), "crash", json!({}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_DISCONNECTED");
    let retried = pool.call(tool(Some("faulty"), "echo", json!({"message": "back"}))).await.unwrap();
    assert_eq!(text(&retried), "back");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_hanging_call_times_out_the_server_stays_usable_and_shutdown_leaves_no_process() {
    let mut faulty = testkit("faulty");
    // At info level rmcp logs the `notifications/cancelled` it receives.
    faulty.env.insert("RUST_LOG".to_owned(), json!("info"));
    let (log, mut lines) = tokio::sync::mpsc::channel(1024);
    let pool =
        Pool::new(configs(vec![("faulty", faulty)]), Approvals::allow_all(), PoolOptions::default().with_log(log));
    pool.call(tool(Some("faulty"), "echo", json!({"message": "up"}))).await.unwrap();
    let pid = pool.pid("faulty").await.unwrap();
    let mut hang = tool(Some("faulty"), "hang", json!({}));
    hang.timeout = Some(Duration::from_millis(300));
    let err = pool.call(hang).await.unwrap_err();
    assert_eq!(err.code(), "CALL_TIMEOUT");
    // The call's own 300 ms ended it, not the pool's default of a minute.
    assert!(err.to_string().contains("within 300 ms"), "{err}");
    assert!(err.is_transient());
    assert!(matches!(process_state(pid), Some(s) if s != 'Z'), "the server is still alive");
    let mut seen = Vec::new();
    let cancelled = eventually(Duration::from_secs(30), || {
        seen.extend(std::iter::from_fn(|| lines.try_recv().ok()));
        seen.iter()
            .any(|l| l.stream == LogStream::Stderr && l.line.contains("cancelled") && l.line.contains("timed out"))
    })
    .await;
    assert!(cancelled, "the server never heard of the cancellation: {seen:?}");
    let after = pool.call(tool(Some("faulty"), "echo", json!({"message": "usable"}))).await.unwrap();
    assert_eq!(text(&after), "usable");
    assert_eq!(pool.pid("faulty").await, Some(pid), "the same process answered");
    pool.shutdown().await;
    assert_eq!(process_state(pid), None, "no process (and no zombie) after shutdown");
}

#[tokio::test]
async fn a_garbage_line_on_stdout_is_logged_and_the_answer_still_arrives() {
    let (log, mut lines) = tokio::sync::mpsc::channel(1024);
    let pool = Pool::new(
        configs(vec![("faulty", testkit("faulty"))]),
        Approvals::allow_all(),
        PoolOptions::default().with_log(log),
    );
    let result = pool.call(tool(Some("faulty"), "garbage", json!({}))).await.unwrap();
    assert_eq!(result["structuredContent"]["garbage"], "this line is not JSON-RPC }{");
    pool.shutdown().await;
    let logged: Vec<_> = std::iter::from_fn(|| lines.try_recv().ok()).collect();
    assert!(
        logged.iter().any(|l| l.stream == LogStream::Stdout && l.line == "this line is not JSON-RPC }{"),
        "{logged:?}"
    );
}

/// A stdio server scripted in `sh`, of the 2025-11-25 era: refuses `server/discover` as an
/// unknown method, answers `initialize` and `tools/list`, then answers the first
/// `tools/call` (request id 3) with a line that is not JSON.
fn broken_answer_server() -> mcpflow_blueprint::ServerConfig {
    let script = r#"
read -r discover
printf '%s\n' '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}'
read -r init
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"1"}}}'
read -r initialized
read -r list
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"answer","inputSchema":{"type":"object"}}]}}'
read -r call
printf '%s\n' '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"cut off'
read -r rest
"#;
    config(json!({"command": "sh", "args": ["-c", script]}))
}

#[tokio::test]
async fn an_answer_that_is_not_json_is_a_protocol_error_at_once() {
    let pool = pool(vec![("broken", broken_answer_server())]);
    let mut call = tool(Some("broken"), "answer", json!({}));
    // Far longer than a test may take: only the broken answer can end this call.
    call.timeout = Some(Duration::from_secs(600));
    let err = pool.call(call).await.unwrap_err();
    assert_eq!(err.code(), "PROTOCOL_ERROR", "{err}");
    assert!(err.to_string().contains("not valid JSON"), "{err}");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_50_mib_answer_arrives_within_the_default_bound() {
    let pool = pool(vec![("faulty", testkit("faulty"))]);
    let mut call = tool(Some("faulty"), "huge", json!({"mb": 50}));
    call.timeout = Some(Duration::from_secs(120));
    let result = pool.call(call).await.unwrap();
    assert_eq!(text(&result).len(), 50 * 1024 * 1024);
    pool.shutdown().await;
}

#[tokio::test]
async fn an_answer_over_the_bound_is_output_too_large_and_the_server_stays_usable() {
    let pool = Pool::new(
        configs(vec![("faulty", testkit("faulty"))]),
        Approvals::allow_all(),
        PoolOptions::default().with_max_message_bytes(4 * 1024 * 1024),
    );
    let pid_before = {
        pool.call(tool(Some("faulty"), "echo", json!({"message": "up"}))).await.unwrap();
        pool.pid("faulty").await
    };
    let mut call = tool(Some("faulty"), "huge", json!({"mb": 50}));
    call.timeout = Some(Duration::from_secs(120));
    let err = pool.call(call).await.unwrap_err();
    assert_eq!(err.code(), "OUTPUT_TOO_LARGE");
    assert!(err.to_string().contains("4 MiB limit"), "{err}");
    // The oversized line was skipped, not the connection.
    let after = pool.call(tool(Some("faulty"), "echo", json!({"message": "fine"}))).await.unwrap();
    assert_eq!(text(&after), "fine");
    assert_eq!(pool.pid("faulty").await, pid_before);
    pool.shutdown().await;
}

/// The pool over streamable HTTP with a 4 MiB bound, in front of the faulty fixture.
async fn faulty_over_http(answers: Answers) -> (HttpFixture, Pool) {
    let server = serve_over_http(Fixture::Faulty, answers).await;
    let pool = Pool::new(
        configs(vec![("web", config(json!({ "url": server.url })))]),
        Approvals::new(),
        PoolOptions::default().with_max_message_bytes(4 * 1024 * 1024),
    );
    pool.call(tool(Some("web"), "echo", json!({"message": "up"}))).await.unwrap();
    (server, pool)
}

#[tokio::test]
async fn an_answer_over_the_bound_over_http_is_output_too_large_and_the_session_goes_on() {
    let (server, pool) = faulty_over_http(Answers::Json).await;
    // 8 MiB: under rmcp's own 16 MiB cap on a JSON body, over the pool's bound.
    // 50 MiB: refused by its Content-Length before it is read.
    for mb in [8, 50] {
        let mut call = tool(Some("web"), "huge", json!({"mb": mb}));
        call.timeout = Some(Duration::from_secs(60));
        let err = pool.call(call).await.unwrap_err();
        assert_eq!(err.code(), "OUTPUT_TOO_LARGE", "{mb} MiB: {err}");
        assert!(err.to_string().contains("larger than the 4 MiB limit"), "{err}");
        let after = pool.call(tool(Some("web"), "echo", json!({"message": "fine"}))).await.unwrap();
        assert_eq!(text(&after), "fine");
    }
    assert_eq!(server.openings.load(Ordering::SeqCst), 1, "the same session answered throughout");
    // The 50 MiB body was not read through: the client hung up on it.
    assert!(eventually(Duration::from_secs(30), || server.cut_short.load(Ordering::SeqCst) == 1).await);
    pool.shutdown().await;
}

#[tokio::test]
async fn an_sse_answer_over_the_bound_is_cut_off_while_read_and_the_server_stays_usable() {
    let (server, pool) = faulty_over_http(Answers::Sse).await;
    let mut call = tool(Some("web"), "huge", json!({"mb": 50}));
    call.timeout = Some(Duration::from_secs(60));
    let err = pool.call(call).await.unwrap_err();
    // rmcp stops reading the event at the bound but reports only that the answer's stream
    // closed, without the cause (see pool/http.rs).
    assert_eq!(err.code(), "SERVER_DISCONNECTED", "{err}");
    assert!(eventually(Duration::from_secs(30), || server.cut_short.load(Ordering::SeqCst) == 1).await);
    let after = pool.call(tool(Some("web"), "echo", json!({"message": "fine"}))).await.unwrap();
    assert_eq!(text(&after), "fine");
    pool.shutdown().await;
}

#[tokio::test]
async fn an_sse_answer_of_many_tiny_values_is_refused_before_it_is_parsed() {
    // 600,000 `[]` (the answer carries them twice, as structured content and as its
    // text: 3.6 MB): under the 4 MiB bound, but 48 MB of values once parsed, past 4 ×
    // the bound. Weighed on its way, the event becomes an error for its call.
    let (_server, pool) = faulty_over_http(Answers::Sse).await;
    let mut call = tool(Some("web"), "many", json!({"count": 600_000}));
    call.timeout = Some(Duration::from_secs(60));
    let err = match pool.call(call).await {
        Ok(read) => panic!("the heavy answer was read whole ({} bytes as JSON)", read.to_string().len()),
        Err(err) => err,
    };
    assert_eq!(err.code(), "OUTPUT_TOO_LARGE", "{err}");
    assert!(err.to_string().contains("so many values"), "{err}");
    let after = pool.call(tool(Some("web"), "echo", json!({"message": "fine"}))).await.unwrap();
    assert_eq!(text(&after), "fine");
    // A few values are read as before.
    let small = pool.call(tool(Some("web"), "many", json!({"count": 3}))).await.unwrap();
    assert_eq!(small["structuredContent"], json!({ "v": [[], [], []] }));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_server_that_cannot_start_leaves_the_others_working() {
    let pool = pool(vec![
        ("broken", config(json!({"command": "/nonexistent/mcp-server", "args": ["--x"]}))),
        ("echo", testkit("echo")),
    ]);
    let err = pool.call(tool(Some("broken"), "anything", json!({}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_START_FAILED");
    assert!(err.to_string().contains("cannot run `/nonexistent/mcp-server`"), "{err}");
    let ok = pool.call(tool(Some("echo"), "echo", json!({"message": "fine"}))).await.unwrap();
    assert_eq!(text(&ok), "fine");
    // Routing by tool name skips the broken server and says so only when nothing is found.
    assert_eq!(text(&pool.call(tool(None, "echo", json!({"message": "routed"}))).await.unwrap()), "routed");
    let missing = pool.call(tool(None, "nothing_like_it", json!({}))).await.unwrap_err();
    assert!(missing.to_string().contains("server `broken` could not be searched: SERVER_START_FAILED"), "{missing}");
    let catalog = pool.catalog().await;
    assert!(matches!(catalog.server("broken"), ServerStatus::Unreachable { .. }));
    assert!(matches!(catalog.server("echo"), ServerStatus::Ready(_)));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_server_that_exits_at_start_reports_its_stderr() {
    let pool =
        pool(vec![("dies", config(json!({"command": "sh", "args": ["-c", "echo 'fatal: no config' >&2; exit 7"]})))]);
    let err = pool.call(tool(Some("dies"), "anything", json!({}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_START_FAILED");
    let message = err.to_string();
    assert!(message.contains("fatal: no config"), "{message}");
    pool.shutdown().await;
}

#[tokio::test]
async fn stderr_lines_reach_the_log_channel() {
    let (log, mut lines) = tokio::sync::mpsc::channel(1024);
    let binary = mcpflow_testkit::binary();
    let wrapped = config(json!({
        "command": "sh",
        "args": ["-c", "echo 'booting the echo fixture' >&2; exec \"$0\" echo", binary],
    }));
    let pool =
        Pool::new(configs(vec![("echo", wrapped)]), Approvals::allow_all(), PoolOptions::default().with_log(log));
    pool.call(tool(Some("echo"), "echo", json!({"message": "x"}))).await.unwrap();
    let mut seen = Vec::new();
    let found = eventually(Duration::from_secs(30), || {
        seen.extend(std::iter::from_fn(|| lines.try_recv().ok()));
        seen.iter().any(|l| l.server == "echo" && l.stream == LogStream::Stderr && l.line == "booting the echo fixture")
    })
    .await;
    assert!(found, "{seen:?}");
    pool.shutdown().await;
}

#[tokio::test]
async fn dropping_the_pool_kills_its_processes() {
    let pool = pool(vec![("faulty", testkit("faulty"))]);
    pool.call(tool(Some("faulty"), "echo", json!({"message": "up"}))).await.unwrap();
    let pid = pool.pid("faulty").await.unwrap();
    drop(pool);
    assert!(
        eventually(Duration::from_secs(30), || process_state(pid).is_none()).await,
        "process {pid} is still there: {:?}",
        process_state(pid)
    );
}
