//! HTTP failures in words (`pool/http_errors.rs`): a closed port, a plain HTTP server
//! answering 404, 500 or a web page, and `https` against a plain server each fail with
//! what happened at the URL as configured and what to do — no Rust type names, no
//! resolved secret.

use crate::support::{config, pool};
use mcpflow_mcp::{Approvals, Pool, PoolOptions};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

/// A plain HTTP responder on loopback (not our code: std's listener and a fixed answer),
/// answering every request with `status`, `content_type` and `body`; at most 32 requests.
pub fn responder(status: &'static str, content_type: &'static str, body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(32) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 16 * 1024];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("127.0.0.1:{port}")
}

fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("127.0.0.1:{port}")
}

/// The message of the error that starting `url`'s server fails with.
async fn failure(url: &str) -> String {
    let pool = pool(vec![("web", config(json!({ "url": url })))]);
    let error = pool.discover("web").await.unwrap_err();
    pool.shutdown().await;
    assert_eq!(error.code(), "SERVER_START_FAILED", "{error}");
    let message = error.to_string();
    for type_name in ["StreamableHttpError", "reqwest", "rmcp::", "Transport [", "Client error"] {
        assert!(!message.contains(type_name), "a Rust type name in `{message}`");
    }
    message
}

#[tokio::test]
async fn a_closed_port_says_connection_refused_and_to_check_the_server_runs() {
    let url = format!("http://{}/mcp", closed_port());
    let message = failure(&url).await;
    assert!(message.contains(&format!("connection refused at {url}")), "{message}");
    assert!(message.contains("is the server running"), "{message}");
}

#[tokio::test]
async fn http_404_says_the_path_is_wrong_and_names_mcp() {
    let url = format!("http://{}/wrong", responder("404 Not Found", "text/html", "<html>no such page</html>"));
    let message = failure(&url).await;
    assert!(message.contains(&format!("nothing at {url} (HTTP 404)")), "{message}");
    assert!(message.contains("usually end in `/mcp`"), "{message}");
    assert!(!message.contains("<html>"), "no page in the message: {message}");
}

#[tokio::test]
async fn http_500_says_the_server_failed_with_its_code() {
    let url = format!("http://{}/mcp", responder("500 Internal Server Error", "text/plain", "boom"));
    let message = failure(&url).await;
    assert!(message.contains("(HTTP 500)") && message.contains("its logs say why"), "{message}");
}

#[tokio::test]
async fn a_web_page_says_it_is_not_the_mcp_endpoint() {
    let url = format!("http://{}/", responder("200 OK", "text/html; charset=utf-8", "<html><h1>Welcome</h1></html>"));
    let message = failure(&url).await;
    assert!(message.contains("a web page (text/html), not MCP"), "{message}");
    assert!(message.contains("`/mcp`"), "{message}");
}

#[tokio::test]
async fn https_against_a_plain_server_says_tls_and_to_check_the_scheme() {
    let url = format!("https://{}/mcp", responder("200 OK", "text/plain", "plain"));
    let message = failure(&url).await;
    assert!(message.contains("a secure connection to") && message.contains("TLS"), "{message}");
    assert!(message.contains("`https` against `http`"), "{message}");
}

#[tokio::test]
async fn a_401_is_a_sign_in_and_the_secret_of_the_url_stays_hidden() {
    let lookup: mcpflow_mcp::EnvLookup = Arc::new(|name: &str| (name == "KEY").then(|| "k3y-hidden-77".to_owned()));
    let url = format!("http://{}/mcp?key=${{env:KEY}}", responder("401 Unauthorized", "text/plain", "who are you"));
    let pool = Pool::new(
        crate::support::configs(vec![("web", config(json!({ "url": url })))]),
        Approvals::allow_all(),
        PoolOptions::default().with_env(lookup),
    );
    let error = pool.discover("web").await.unwrap_err();
    pool.shutdown().await;
    // A 401 is a sign-in: `AUTH_REQUIRED`, naming what to do (OAuth, `pool/http.rs`).
    let message = error.to_string();
    assert_eq!(error.code(), "AUTH_REQUIRED", "{message}");
    assert!(message.contains("needs a sign-in") && message.contains("mcpflow auth login web"), "{message}");
    assert!(!message.contains("k3y-hidden-77"), "{message}");
}
