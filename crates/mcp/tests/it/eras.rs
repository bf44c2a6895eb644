//! The two protocol eras side by side: a server of 2026-07-28 (`server/discover`, no
//! session, per-request `_meta`) and servers of 2025-11-25 (the `initialize` handshake)
//! in one pool, each reached in its own era, and the era recorded in the discovery.

use crate::support::{node, pool, python_server, testkit, text, tool};
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
    let added = pool.call(tool(Some("modern"), "add_whisper", json!({}))).await.unwrap();
    assert_eq!(text(&added), "added");
    // At 2026-07-28 `notifications/tools/list_changed` rides only a `subscriptions/listen`
    // stream the client opened: without it the pool would never list again.
    let started = Instant::now();
    while pool.discover("modern").await.unwrap().tool("whisper").is_none() {
        assert!(started.elapsed() < Duration::from_secs(5), "the pool never listed the announced tool");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let routed = pool.call(tool(None, "whisper", json!({"text": "QUIET"}))).await.unwrap();
    assert_eq!(text(&routed), "quiet");
    assert_eq!(pool.pid("modern").await, pid, "the same process, not a restart");
    pool.shutdown().await;
}
