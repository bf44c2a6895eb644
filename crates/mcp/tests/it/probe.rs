//! The era probe within a short connect timeout (`pool/probe.rs`): `server/discover` gets
//! half of it (at most rmcp's fixed 10 s), so a 2025-11-25 server that drops the probe is
//! still reached within a connect timeout shorter than rmcp's wait, and a server that
//! answers nothing fails with the connect timeout's error — over stdio and over HTTP. An answer to the probe that is not a
//! `server/discover` result (`{}` from a server that answers unknown methods so) is not
//! believed: `initialize` follows.

use crate::http_bridge::{Answers, serve_as_lenient_2025_server};
use crate::support::{config, configs, pool, text, tool};
use mcpflow_mcp::{Approvals, Pool, PoolOptions};
use mcpflow_testkit::Fixture;
use serde_json::json;
use std::time::{Duration, Instant};

/// A 2025-11-25 server scripted in `sh` that never answers `server/discover`; with
/// `late`, it answers the probe after `initialize` arrived (the pool must drop that).
fn dropping_discover(late: bool) -> mcpflow_blueprint::ServerConfig {
    let late_answer = if late {
        r#"printf '%s\n' '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"late: no such method"}}'"#
    } else {
        ""
    };
    let script = format!(
        r#"
read -r discover
read -r init
{late_answer}
printf '%s\n' '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"silent","version":"1"}}}}}}'
read -r initialized
read -r list
printf '%s\n' '{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{{"name":"answer","inputSchema":{{"type":"object"}}}}]}}}}'
read -r call
printf '%s\n' '{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":"reached"}}]}}}}'
read -r rest
"#
    );
    config(json!({"command": "sh", "args": ["-c", script]}))
}

/// `opening`, failing the test if it hangs (a guard far longer than the timeouts under test).
async fn guarded<T>(opening: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), opening).await.expect("the opening never ended")
}

fn pool_with_timeout(name: &str, server: mcpflow_blueprint::ServerConfig, timeout: Duration) -> Pool {
    Pool::new(
        configs(vec![(name, server)]),
        Approvals::allow_all(),
        PoolOptions::default().with_connect_timeout(timeout),
    )
}

#[tokio::test]
async fn a_server_that_drops_server_discover_is_reached_within_a_short_connect_timeout() {
    for late in [false, true] {
        // 4 s: shorter than rmcp's own 10 s wait for the probe, so the server is reached
        // only if the probe gives up at half of it (2 s) and `initialize` follows; the other
        // half leaves a loaded machine room for the rest of the opening.
        let pool = pool_with_timeout("silent", dropping_discover(late), Duration::from_secs(4));
        let started = Instant::now();
        let answer = pool.call(tool(Some("silent"), "answer", json!({}))).await.unwrap();
        let waited = started.elapsed();
        assert_eq!(text(&answer), "reached");
        // A lower bound only: the probe had its half of the connect timeout. That the
        // server was reached at all shows it had no more.
        assert!(waited >= Duration::from_millis(2000), "{waited:?}");
        assert_eq!(pool.discover("silent").await.unwrap().protocol_version.as_deref(), Some("2025-11-25"));
        pool.shutdown().await;
    }
}

#[tokio::test]
async fn a_stdio_server_that_answers_nothing_fails_within_the_1_s_connect_timeout() {
    let pool = pool_with_timeout(
        "mute",
        config(json!({"command": "sh", "args": ["-c", "cat > /dev/null"]})),
        Duration::from_secs(1),
    );
    let error = guarded(pool.discover("mute")).await.unwrap_err();
    pool.shutdown().await;
    assert_eq!(error.code(), "SERVER_START_FAILED", "{error}");
    // The connect timeout ended it, not rmcp's 10 s wait for the probe.
    assert!(error.to_string().contains("`initialize` within 1000 ms"), "{error}");
}

#[tokio::test]
async fn an_http_server_that_accepts_and_answers_nothing_fails_within_the_1_s_connect_timeout() {
    // A TCP listener that accepts connections and never answers (std, not our code).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().take(8) {
            held.push(stream);
        }
    });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let pool = pool_with_timeout("mute", config(json!({ "url": url })), Duration::from_secs(1));
    let error = guarded(pool.discover("mute")).await.unwrap_err();
    pool.shutdown().await;
    assert_eq!(error.code(), "SERVER_START_FAILED", "{error}");
    // The connect timeout ended it, not rmcp's 10 s wait for the probe.
    assert!(error.to_string().contains("`initialize` within 1000 ms"), "{error}");
}

#[tokio::test]
async fn a_server_answering_server_discover_with_an_empty_result_is_reached_with_initialize() {
    for answers in [Answers::Json, Answers::Sse] {
        let server = serve_as_lenient_2025_server(Fixture::Echo, answers).await;
        let pool = pool(vec![("lenient", config(json!({ "url": server.url })))]);
        let answer = pool.call(tool(Some("lenient"), "echo", json!({ "message": "reached" }))).await.unwrap();
        assert_eq!(text(&answer), "reached", "{answers:?}");
        let discovered = pool.discover("lenient").await.unwrap();
        assert_eq!(discovered.protocol_version.as_deref(), Some("2025-11-25"), "{answers:?}");
        // The probe, then `initialize` on the same connection: no second start.
        assert_eq!(server.openings.load(std::sync::atomic::Ordering::SeqCst), 2, "{answers:?}");
        pool.shutdown().await;
    }
}
