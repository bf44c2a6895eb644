//! The faulty fixture: counted failures, tool errors, hangs, crashes, garbage on the wire, huge and slow
//! results.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use mcpflow_testkit::{Fixture, spawn_in_process};
use rmcp::{
    model::{CallToolRequestParams, ClientRequest, Request},
    service::{PeerRequestOptions, ServiceError},
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::support::{
    BOTH, Client, TIMEOUT, Via, call, connect, connect_child_with_max_line, structured, text, tool_names, try_call,
};

const MIB: usize = 1024 * 1024;

#[tokio::test]
async fn lists_its_tools() {
    for via in BOTH {
        let client = connect(via, Fixture::Faulty).await;
        assert_eq!(
            tool_names(&client).await,
            [
                "ask_with_defaults",
                "crash",
                "crash_once",
                "drip",
                "echo",
                "fail_n_times",
                "flood_pings",
                "flood_progress",
                "flood_questions",
                "garbage",
                "hang",
                "heavy",
                "huge",
                "is_error",
                "many",
                "shout_env"
            ],
            "{via:?}"
        );
    }
}

#[tokio::test]
async fn fail_n_times_fails_n_calls_per_key_then_succeeds() {
    for via in BOTH {
        let client = connect(via, Fixture::Faulty).await;
        for i in 1..=2 {
            let failed = call(&client, "fail_n_times", json!({ "key": "a", "n": 2 })).await;
            assert_eq!(failed.is_error, Some(true), "{via:?}");
            assert_eq!(text(&failed), format!("failure {i} of 2 for a"));
        }
        // Another key has its own counter.
        let other = call(&client, "fail_n_times", json!({ "key": "b", "n": 1 })).await;
        assert_eq!(text(&other), "failure 1 of 1 for b");
        let ok = call(&client, "fail_n_times", json!({ "key": "a", "n": 2 })).await;
        assert_eq!(structured(&ok), &json!({ "key": "a", "attempts": 3 }), "{via:?}");
    }
}

#[tokio::test]
async fn is_error_sets_the_flag_and_echo_does_not() {
    for via in BOTH {
        let client = connect(via, Fixture::Faulty).await;
        let failed = call(&client, "is_error", json!({ "message": "boom" })).await;
        assert_eq!(failed.is_error, Some(true), "{via:?}");
        assert_eq!(text(&failed), "boom");
        let echoed = call(&client, "echo", json!({ "message": "fine" })).await;
        assert_ne!(echoed.is_error, Some(true));
        assert_eq!(text(&echoed), "fine");
    }
}

async fn start_hang(client: &Client, options: PeerRequestOptions) -> rmcp::service::RequestHandle<rmcp::RoleClient> {
    let request = ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("hang")));
    let handle = client.send_cancellable_request(request, options).await.unwrap();
    // The server has begun the call once it says so (a progress notification).
    let begun = tokio::time::timeout(TIMEOUT, async { while client.service().progress(1).await.is_empty() {} });
    begun.await.expect("`hang` never said it began");
    handle
}

#[tokio::test]
async fn hang_is_cancelled_by_the_client_promptly_and_the_server_goes_on() {
    for via in BOTH {
        let client = connect(via, Fixture::Faulty).await;
        let handle = start_hang(&client, PeerRequestOptions::no_options()).await;
        handle.cancel(Some("test".into())).await.unwrap();
        assert_eq!(text(&call(&client, "echo", json!({ "message": "still here" })).await), "still here");
    }
}

#[tokio::test]
async fn hang_with_a_request_timeout_fails_at_the_timeout() {
    let client = connect(Via::InProcess, Fixture::Faulty).await;
    let handle = start_hang(&client, PeerRequestOptions::with_timeout(Duration::from_millis(200))).await;
    let outcome = tokio::time::timeout(TIMEOUT, handle.await_response()).await.unwrap();
    assert!(matches!(outcome, Err(ServiceError::Timeout { .. })), "{outcome:?}");
    assert_eq!(text(&call(&client, "echo", json!({ "message": "x" })).await), "x");
}

/// rmcp waits up to 5 s for in-flight handlers when stdin closes; a prompt exit proves `hang` ended on
/// cancellation rather than running on.
#[tokio::test]
async fn cancelled_hang_does_not_hold_the_binary_open() {
    let (client, mut child) = connect_child_with_max_line(Fixture::Faulty, 16 * MIB).await;
    let handle = start_hang(&client, PeerRequestOptions::no_options()).await;
    handle.cancel(None).await.unwrap();
    let closed = Instant::now();
    client.cancel().await.unwrap();
    let status = tokio::time::timeout(TIMEOUT, child.wait()).await.unwrap().unwrap();
    assert!(status.success(), "{status}");
    assert!(closed.elapsed() < Duration::from_secs(3), "exit took {:?}", closed.elapsed());
}

#[tokio::test]
async fn crash_in_process_drops_the_connection() {
    let client = connect(Via::InProcess, Fixture::Faulty).await;
    let outcome = try_call(&client, "crash", json!({})).await;
    assert!(outcome.is_err(), "{outcome:?}");
    assert!(try_call(&client, "echo", json!({ "message": "x" })).await.is_err());
}

#[tokio::test]
async fn crash_exits_the_binary_with_status_3() {
    let (client, mut child) = connect_child_with_max_line(Fixture::Faulty, 16 * MIB).await;
    let outcome = try_call(&client, "crash", json!({})).await;
    assert!(outcome.is_err(), "{outcome:?}");
    let status = tokio::time::timeout(TIMEOUT, child.wait()).await.unwrap().unwrap();
    assert_eq!(status.code(), Some(3));
}

#[tokio::test]
async fn garbage_is_survived_by_the_client() {
    for via in BOTH {
        let client = connect(via, Fixture::Faulty).await;
        let result = call(&client, "garbage", json!({})).await;
        assert!(structured(&result)["garbage"].is_string(), "{via:?}");
        assert_eq!(text(&call(&client, "echo", json!({ "message": "after" })).await), "after", "{via:?}");
    }
}

/// Speaks raw JSON-RPC to a faulty server and returns the lines up to the reply to `id` 2.
async fn raw_lines_of_garbage_call(read: impl AsyncRead + Unpin, mut write: impl AsyncWrite + Unpin) -> Vec<String> {
    let mut lines = BufReader::new(read).lines();
    let send = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "garbage", "arguments": {} } }),
    ];
    for message in send {
        write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout(TIMEOUT, lines.next_line()).await.unwrap().unwrap().expect("a line");
        let is_reply = serde_json::from_str::<Value>(&line).is_ok_and(|m| m["id"] == 2);
        seen.push(line);
        if is_reply {
            return seen;
        }
    }
}

fn assert_one_bad_line_then_reply(lines: &[String]) {
    let reply = lines.last().unwrap();
    assert!(serde_json::from_str::<Value>(reply).unwrap()["result"]["structuredContent"]["garbage"].is_string());
    let bad: Vec<&String> = lines.iter().filter(|l| serde_json::from_str::<Value>(l).is_err()).collect();
    assert_eq!(bad.len(), 1, "{lines:?}");
}

#[tokio::test]
async fn garbage_writes_a_non_json_line_before_its_reply_in_process() {
    let (read, write) = tokio::io::split(spawn_in_process(Fixture::Faulty));
    assert_one_bad_line_then_reply(&raw_lines_of_garbage_call(read, write).await);
}

#[tokio::test]
async fn garbage_writes_a_non_json_line_to_the_binarys_stdout() {
    let mut child = tokio::process::Command::new(mcpflow_testkit::binary())
        .arg("faulty")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let (read, write) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    assert_one_bad_line_then_reply(&raw_lines_of_garbage_call(read, write).await);
}

#[tokio::test]
async fn huge_50_mb_arrives_through_the_binary() {
    let (client, _child) = connect_child_with_max_line(Fixture::Faulty, 64 * MIB).await;
    let result = call(&client, "huge", json!({ "mb": 50 })).await;
    assert_eq!(text(&result).len(), 50 * MIB);
}

#[tokio::test]
async fn huge_1_mb_arrives_in_process() {
    let client = connect(Via::InProcess, Fixture::Faulty).await;
    let result = call(&client, "huge", json!({ "mb": 1 })).await;
    assert_eq!(text(&result).len(), MIB);
}

#[tokio::test]
async fn drip_sends_progress_slowly_then_returns() {
    for via in BOTH {
        let client = connect(via, Fixture::Faulty).await;
        let started = Instant::now();
        let result = call(&client, "drip", json!({ "chunks": 3, "interval_ms": 40 })).await;
        assert!(started.elapsed() >= Duration::from_millis(120), "{via:?}");
        assert_eq!(structured(&result), &json!({ "chunks": 3 }));
        let progress = client.service().progress(3).await;
        assert_eq!(progress.iter().map(|p| p.progress).collect::<Vec<_>>(), [1.0, 2.0, 3.0], "{via:?}");
    }
}

#[tokio::test]
async fn crash_once_crashes_the_first_time_and_succeeds_after() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed").display().to_string();
    let (client, mut child) = connect_child_with_max_line(Fixture::Faulty, 16 * MIB).await;
    assert!(try_call(&client, "crash_once", json!({ "marker": marker })).await.is_err());
    let status = tokio::time::timeout(TIMEOUT, child.wait()).await.unwrap().unwrap();
    assert_eq!(status.code(), Some(3));
    let (client, _child) = connect_child_with_max_line(Fixture::Faulty, 16 * MIB).await;
    let result = call(&client, "crash_once", json!({ "marker": marker })).await;
    assert_eq!(result.structured_content.unwrap()["crashed_before"], json!(true));
}
