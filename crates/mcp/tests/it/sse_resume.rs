//! SSE streams a server ends early are resumed (SEP-1699; rmcp's streamable HTTP client
//! transport under the pool does it): after a graceful end the client waits the `retry` the
//! server set, then GETs with `Last-Event-ID`, and what the server kept for that stream
//! arrives — a call's answer on its answer stream (in both eras), the server's
//! notifications on the standalone stream (2025-11-25). The server is the echo fixture
//! behind `http_bridge/resume.rs`, which sends those only on a resumed stream.

use crate::http_bridge::{HttpFixture, serve_resumable};
use crate::support::{config, pool, text, tool};
use mcpflow_mcp::Pool;
use mcpflow_testkit::Fixture;
use serde_json::json;
use std::time::{Duration, Instant};

/// The server's `retry`: longer than rmcp's own first reconnection delay (1 s), so a
/// client that ignored it would come back before it.
const RETRY: Duration = Duration::from_millis(1_200);

fn resumable_pool(server: &HttpFixture, protocol: Option<&str>) -> Pool {
    let mut entry = json!({ "url": server.url });
    if let Some(era) = protocol {
        entry["protocol"] = json!(era);
    }
    pool(vec![("resumable", config(entry))])
}

/// How long after the stream of kind `what` ended the client came back for it.
fn came_back(server: &HttpFixture, what: &str) -> Duration {
    let seen = server.replay.as_ref().unwrap().seen();
    let (_, id, _) = seen.ended.iter().find(|(kind, ..)| *kind == what).unwrap_or_else(|| panic!("{seen:?}"));
    seen.came_back_after(id).unwrap_or_else(|| panic!("no GET with `Last-Event-ID: {id}`: {seen:?}"))
}

#[tokio::test]
async fn a_calls_answer_stream_ended_early_is_resumed_with_last_event_id_after_the_servers_retry() {
    for era in [None, Some("2025-11-25")] {
        let server = serve_resumable(Fixture::Echo, RETRY).await;
        let pool = resumable_pool(&server, era);
        let answer = pool.call(tool(Some("resumable"), "echo", json!({ "message": "resumed" }))).await.unwrap();
        assert_eq!(text(&answer), "resumed", "{era:?}");
        let waited = came_back(&server, "answer");
        assert!(waited >= RETRY, "{era:?}: came back {waited:?} after the end, before the server's retry");
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn the_standalone_stream_ended_early_is_resumed_and_brings_the_servers_notifications() {
    let server = serve_resumable(Fixture::Echo, RETRY).await;
    let pool = resumable_pool(&server, Some("2025-11-25"));
    assert!(pool.discover("resumable").await.unwrap().tool("shout").is_none());
    let added = pool.call(tool(Some("resumable"), "add_tool", json!({ "name": "shout" }))).await.unwrap();
    assert_eq!(added["structuredContent"], json!({ "added": "shout" }));
    // `notifications/tools/list_changed` comes only on the resumed standalone stream.
    let started = Instant::now();
    while pool.discover("resumable").await.unwrap().tool("shout").is_none() {
        assert!(started.elapsed() < Duration::from_secs(30), "the announcement never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let waited = came_back(&server, "standalone");
    assert!(waited >= RETRY, "came back {waited:?} after the end, before the server's retry");
    pool.shutdown().await;
}
