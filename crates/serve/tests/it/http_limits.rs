//! `serve --http` against slow and idle clients: headers sent a byte at a time and
//! bodies that never finish are cut off after their read timeouts, an idle kept-alive
//! connection is closed, past the connection cap a new connection is closed at once —
//! and none of it cuts a long answer streamed back. The timeouts are shortened through
//! [`HttpLimits`] so each test takes a few seconds.

use crate::serve::{TOKEN, app, call, client, status};
use crate::setup;
use mcpflow_engine::{Progress, ProgressSink};
use mcpflow_serve::http::{HttpLimits, HttpOptions, HttpServer, serve_http};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

async fn serve_with(app: mcpflow_app::App, limits: HttpLimits) -> HttpServer {
    let options = HttpOptions { addr: "127.0.0.1:0".parse().unwrap(), token: TOKEN.into(), hosts: Vec::new(), limits };
    serve_http(app, options).await.unwrap()
}

fn limits(header: Duration, body: Duration, connections: usize) -> HttpLimits {
    HttpLimits {
        header_read_timeout: header,
        body_read_timeout: body,
        max_connections: connections,
        ..HttpLimits::default()
    }
}

/// Reads until the server closes the connection (or resets it), at most `limit`; returns
/// what was read and when it closed, or `None` if it was still open at `limit`.
async fn closed_within(stream: &mut tokio::net::tcp::OwnedReadHalf, limit: Duration) -> Option<(String, Duration)> {
    let start = Instant::now();
    let mut seen = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    };
    let closed = tokio::time::timeout(limit, read).await.is_ok();
    closed.then(|| (String::from_utf8_lossy(&seen).into_owned(), start.elapsed()))
}

/// Sends `text` a byte every `pace` (a slowloris client) until the connection fails.
fn trickle(mut write: tokio::net::tcp::OwnedWriteHalf, text: String, pace: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for byte in text.bytes().cycle() {
            if write.write_all(&[byte]).await.is_err() {
                return;
            }
            tokio::time::sleep(pace).await;
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_sent_a_byte_at_a_time_are_cut_off_after_the_header_timeout() {
    let server = serve_with(app(Vec::new(), None), limits(Duration::from_secs(1), Duration::from_secs(30), 16)).await;
    let mut clients = Vec::new();
    for _ in 0..3 {
        let (mut read, write) = TcpStream::connect(server.addr).await.unwrap().into_split();
        let sender = trickle(write, "POST /mcp HTTP/1.1\r\nX-Slow: ".to_owned(), Duration::from_millis(200));
        clients.push(tokio::spawn(async move {
            let closed = closed_within(&mut read, Duration::from_secs(8)).await;
            sender.abort();
            closed
        }));
    }
    for client in clients {
        let closed = client.await.unwrap();
        let (_, after) = closed.expect("a client trickling its headers was still connected after 8 s");
        assert!(after < Duration::from_secs(5), "closed only after {after:?} (header timeout 1 s)");
    }
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_finishes_is_answered_408_and_closed_after_the_body_timeout() {
    let server = serve_with(app(Vec::new(), None), limits(Duration::from_secs(30), Duration::from_secs(1), 16)).await;
    let (mut read, mut write) = TcpStream::connect(server.addr).await.unwrap().into_split();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\":",
        server.addr.port()
    );
    write.write_all(head.as_bytes()).await.unwrap();
    let (answer, after) =
        closed_within(&mut read, Duration::from_secs(8)).await.expect("the half-sent request was still open after 8 s");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("BODY_TIMEOUT"), "{answer}");
    assert!(after < Duration::from_secs(5), "closed only after {after:?} (body timeout 1 s)");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed_after_the_header_timeout() {
    let server = serve_with(app(Vec::new(), None), limits(Duration::from_secs(1), Duration::from_secs(30), 16)).await;
    let (mut read, mut write) = TcpStream::connect(server.addr).await.unwrap().into_split();
    // One whole request, kept alive (no `Connection: close`), then nothing.
    let request = format!("GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n", server.addr.port());
    write.write_all(request.as_bytes()).await.unwrap();
    let (answer, after) =
        closed_within(&mut read, Duration::from_secs(8)).await.expect("an idle connection was still open after 8 s");
    assert!(answer.starts_with("HTTP/1.1 401"), "the request was answered first: {answer}");
    assert!(after < Duration::from_secs(5), "closed only after {after:?} (header timeout 1 s)");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_connection_cap_a_new_connection_is_closed_at_once_and_honest_ones_pass_later() {
    let header = Duration::from_secs(2);
    let server = serve_with(app(Vec::new(), None), limits(header, Duration::from_secs(30), 4)).await;
    let addr: SocketAddr = server.addr;
    let mut slow = Vec::new();
    for _ in 0..4 {
        slow.push(TcpStream::connect(addr).await.unwrap());
    }
    // Connections are accepted in the order they came, each taking its place among the
    // four as it is accepted: the fifth finds them taken.
    let (mut read, _write) = TcpStream::connect(addr).await.unwrap().into_split();
    // Closed at once, not by the header timeout that closes the slow ones: before it.
    let (answer, after) = closed_within(&mut read, header).await.expect("a connection past the cap was held open");
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.is_empty() || answer.contains("TOO_MANY_CONNECTIONS"), "{answer}");
    assert!(after < header, "{after:?}");
    // The slow ones are closed after the header timeout; then an honest request passes.
    for mut s in slow {
        let mut buf = [0u8; 64];
        let n = tokio::time::timeout(Duration::from_secs(8), s.read(&mut buf)).await;
        assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "a silent connection was not closed: {n:?}");
    }
    let host = format!("127.0.0.1:{}", addr.port());
    let code = status(addr, &host, &format!("Authorization: Bearer {TOKEN}\r\n")).await;
    assert!(code != 0 && code != 503 && code != 401, "an honest request after the slow ones got {code}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_streamed_back_for_longer_than_the_read_timeouts_is_not_cut() {
    let s = setup(json!({}));
    let short = limits(Duration::from_millis(700), Duration::from_millis(700), 16);
    let server = serve_with(app(vec![s.servers.clone()], None), short).await;
    let pool = client(server.addr, TOKEN);
    let bp = json!({ "blueprint": 1, "id": "slow",
        "steps": [
            { "id": "first", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "a" } },
            { "id": "pause", "kind": "wait", "ms": 2000 },
            { "id": "last", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "b" } }
        ],
        "output": "{{ first }}{{ last }}" });
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink: ProgressSink = {
        let seen = seen.clone();
        Arc::new(move |p| seen.lock().unwrap().push(p))
    };
    let started = Instant::now();
    let ran = call(&pool, "run_workflow", json!({ "blueprint": bp }), Some(sink)).await;
    assert!(started.elapsed() >= Duration::from_secs(2), "the run should have lasted past the timeouts");
    assert_eq!(ran["structuredContent"]["status"], "succeeded", "{ran}");
    assert_eq!(ran["structuredContent"]["output"], "ab");
    assert_eq!(seen.lock().unwrap().len(), 3, "progress streamed for every step");
    pool.shutdown().await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_two_host_headers_is_refused_400_with_a_clear_body() {
    let server = serve_with(app(Vec::new(), None), HttpLimits::default()).await;
    let port = server.addr.port();
    // Sends a `ping` with these `Host` lines and the right token; the whole answer.
    let send = |hosts: String| async move {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\n{hosts}Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let (mut read, mut write) = TcpStream::connect(("127.0.0.1", port)).await.unwrap().into_split();
        write.write_all(request.as_bytes()).await.unwrap();
        closed_within(&mut read, Duration::from_secs(10)).await.expect("the answer never ended").0
    };
    // Both names are ours: only the second `Host` is wrong.
    let answer = send(format!("Host: 127.0.0.1:{port}\r\nHost: localhost:{port}\r\n")).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("HOST_REPEATED") && answer.contains("2 `Host` headers"), "{answer}");
    // One `Host` passes the guard (the MCP service answers, whatever it says).
    let answer = send(format!("Host: 127.0.0.1:{port}\r\n")).await;
    assert!(!answer.contains("HOST_REPEATED"), "{answer}");
    assert!(!answer.starts_with("HTTP/1.1 401") && !answer.starts_with("HTTP/1.1 403"), "{answer}");
    server.stop().await.unwrap();
}
