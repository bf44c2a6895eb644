//! The two protocol eras side by side: a server of 2026-07-28 (`server/discover`, no
//! session, per-request `_meta`) and servers of 2025-11-25 (the `initialize` handshake)
//! in one pool, each reached in its own era, and the era recorded in the discovery.

use crate::support::{config, configs, node, pool, python_server, start_listening, testkit, text, tool};
use mcpflow_mcp::{Approvals, Pool, PoolOptions};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn a_2026_07_28_server_and_a_2025_11_25_server_each_answer_in_their_own_era() {
    // `modern`: the Python MCP SDK 2.3.0, whose newest revision is 2026-07-28 (it would
    // also accept an `initialize`). `legacy`: server-everything on the TypeScript SDK 1.x,
    // which answers `server/discover` with "method not found".
    let pool = pool(vec![
        ("modern", python_server("modern_py.py")),
        ("legacy", node("server-everything", &["stdio"])),
        ("echo", testkit("echo")),
    ]);
    let shouted = pool.call(tool(Some("modern"), "shout", json!({"text": "both eras"}))).await.unwrap();
    assert_eq!(text(&shouted), "BOTH ERAS");
    let echoed = pool.call(tool(Some("legacy"), "echo", json!({"message": "hi"}))).await.unwrap();
    assert_eq!(text(&echoed), "Echo: hi");
    // Routed by name across both eras.
    let routed = pool.call(tool(None, "shout", json!({"text": "routed"}))).await.unwrap();
    assert_eq!(text(&routed), "ROUTED");

    let era = |discovery: &mcpflow_mcp::Discovery| discovery.protocol_version.clone();
    assert_eq!(era(&pool.discover("modern").await.unwrap()).as_deref(), Some("2026-07-28"));
    assert_eq!(era(&pool.discover("legacy").await.unwrap()).as_deref(), Some("2025-11-25"));
    // The testkit fixtures are rmcp 3.9 servers: they answer `server/discover` too.
    assert_eq!(era(&pool.discover("echo").await.unwrap()).as_deref(), Some("2026-07-28"));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_tool_a_2026_07_28_server_announces_on_the_listen_stream_is_listed_and_routed() {
    let pool = pool(vec![("modern", python_server("modern_py.py"))]);
    assert!(pool.discover("modern").await.unwrap().tool("whisper").is_none());
    let pid = pool.pid("modern").await;
    // A flood of announcements first: more than rmcp's 64-notification buffer. The stream
    // must survive it (a full buffer would end it and no later change would be seen).
    let flood = pool.call(tool(Some("modern"), "announce", json!({"times": 1000}))).await.unwrap();
    assert_eq!(text(&flood), "announced");
    let added = pool.call(tool(Some("modern"), "add_whisper", json!({}))).await.unwrap();
    assert_eq!(text(&added), "added");
    // At 2026-07-28 `notifications/tools/list_changed` rides only a `subscriptions/listen`
    // stream the client opened: without it the pool would never list again.
    let started = Instant::now();
    while pool.discover("modern").await.unwrap().tool("whisper").is_none() {
        assert!(started.elapsed() < Duration::from_secs(30), "the pool never listed the announced tool");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let routed = pool.call(tool(None, "whisper", json!({"text": "QUIET"}))).await.unwrap();
    assert_eq!(text(&routed), "quiet");
    assert_eq!(pool.pid("modern").await, pid, "the same process, not a restart");
    pool.shutdown().await;
}

/// `modern_py.py` serving streamable HTTP on a free port, once it says it listens.
async fn modern_over_http() -> (tokio::process::Child, u16) {
    let stdio = python_server("modern_py.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = tokio::process::Command::new(stdio.command.unwrap());
    command.args(stdio.args).args(["http", &port.to_string()]);
    (start_listening(command, "Uvicorn running on").await, port)
}

#[tokio::test]
async fn a_2026_07_28_server_over_streamable_http_is_reached_without_a_session() {
    let (mut server, port) = modern_over_http().await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let pool =
        Pool::new(configs(vec![("web", config(json!({ "url": url })))]), Approvals::new(), PoolOptions::default());
    let shouted = pool.call(tool(Some("web"), "shout", json!({"text": "over http"}))).await.unwrap();
    assert_eq!(text(&shouted), "OVER HTTP");
    // The server reads the era from the request itself (`_meta` and the MCP-Protocol-Version
    // header); a request in the 2025-11-25 era would name that one.
    let era = pool.call(tool(Some("web"), "era", json!({}))).await.unwrap();
    assert_eq!(text(&era), "2026-07-28");
    assert_eq!(pool.discover("web").await.unwrap().protocol_version.as_deref(), Some("2026-07-28"));
    pool.shutdown().await;
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_server_that_never_answers_server_discover_gets_the_initialize_handshake_after_10_s() {
    // A 2025-11-25 server scripted in `sh` that drops `server/discover` without a word
    // (a JSON-RPC server should answer "method not found"; some do not).
    let script = r#"
read -r discover
# Each answer carries the id of the request it answers, and waits for that request
# whatever comes before it: under load a notification (the discover's cancellation)
# can come first, and a hard-coded id then answers the wrong request.
answer() {
  id=$(printf '%s\n' "$1" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\),.*/\1/p')
  [ -n "$id" ] || id=$(printf '%s\n' "$1" | sed -n 's/.*"id":\([0-9][0-9]*\)[,}].*/\1/p')
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$2"
}
on() { while read -r line; do case $line in *"\"$1\""*) answer "$line" "$2"; return;; esac; done; }
on initialize '{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}'
on tools/list '{"tools":[{"name":"answer","inputSchema":{"type":"object"}}]}'
on tools/call '{"content":[{"type":"text","text":"late but fine"}]}'
read -r rest
"#;
    let pool = pool(vec![("silent", config(json!({"command": "sh", "args": ["-c", script]})))]);
    let started = Instant::now();
    let answer = pool.call(tool(Some("silent"), "answer", json!({}))).await.unwrap();
    assert_eq!(text(&answer), "late but fine");
    let waited = started.elapsed();
    // A lower bound only: rmcp's 10 s wait for the probe was honoured. That the answer
    // came at all, within the default 30 s connect timeout, shows `initialize` followed.
    assert!(waited >= Duration::from_secs(10), "{waited:?}");
    assert_eq!(pool.discover("silent").await.unwrap().protocol_version.as_deref(), Some("2025-11-25"));
    pool.shutdown().await;
}
