//! A request whose response stream breaks (streamable HTTP, `pool/reissue.rs`): a request
//! that is safe to repeat is re-issued once under a new id and its answer arrives; a
//! `tools/call` never is. A small proxy in front of the echo fixture's HTTP bridge cuts the
//! answers (SSE events or JSON bodies) of the first requests of one method in half and
//! counts what it forwarded.

use crate::http_bridge::{Answers, HttpFixture, serve_over_http};
use crate::support::{config, pool, text, tool};
use mcpflow_testkit::Fixture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy forwarded, by method, and how many answers of `method` it still cuts.
#[derive(Default)]
struct Seen {
    methods: HashMap<String, usize>,
}

struct Proxy {
    url: String,
    seen: Arc<Mutex<Seen>>,
    _upstream: HttpFixture,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    fn count(&self, method: &str) -> usize {
        self.seen.lock().unwrap().methods.get(method).copied().unwrap_or(0)
    }
}

/// One HTTP/1.1 message with a Content-Length: its head (with the final blank line) and body.
async fn read_message(read: &mut BufReader<impl AsyncReadExt + Unpin>) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if read.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if let Some((name, value)) = line.trim_end().split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some((head, body))
}

/// A proxy in front of the echo fixture (SSE answers) that cuts the answers of the first
/// `cuts` requests of `method`.
async fn proxy(method: &'static str, cuts: usize) -> Proxy {
    proxy_of(Answers::Sse, method, cuts).await
}

/// The same in front of a bridge answering `answers` (SSE events or plain JSON bodies).
async fn proxy_of(answers: Answers, method: &'static str, cuts: usize) -> Proxy {
    let upstream = serve_over_http(Fixture::Echo, answers).await;
    let target = upstream.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let left = Arc::new(Mutex::new(cuts));
    let task = {
        let seen = seen.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (seen, left, target) = (seen.clone(), left.clone(), target.clone());
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(&target).await else { return };
                    let (client_read, mut client_write) = client.into_split();
                    let (server_read, mut server_write) = server.into_split();
                    let (mut client_read, mut server_read) = (BufReader::new(client_read), BufReader::new(server_read));
                    while let Some((head, body)) = read_message(&mut client_read).await {
                        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        let name = message["method"].as_str().unwrap_or("").to_owned();
                        *seen.lock().unwrap().methods.entry(name.clone()).or_default() += 1;
                        server_write.write_all(head.as_bytes()).await.unwrap();
                        server_write.write_all(&body).await.unwrap();
                        let Some((answer_head, answer)) = read_message(&mut server_read).await else { return };
                        let cut = name == method && {
                            let mut left = left.lock().unwrap();
                            let cut = *left > 0;
                            *left = left.saturating_sub(1);
                            cut
                        };
                        client_write.write_all(answer_head.as_bytes()).await.unwrap();
                        if cut {
                            // Half an event, then the connection closes: the stream broke.
                            client_write.write_all(&answer[..answer.len() / 2]).await.unwrap();
                            return;
                        }
                        client_write.write_all(&answer).await.unwrap();
                    }
                });
            }
        })
    };
    Proxy { url, seen, _upstream: upstream, task }
}

#[tokio::test]
async fn a_list_whose_stream_broke_is_re_issued_once_and_answered() {
    let proxy = proxy("tools/list", 1).await;
    let pool = pool(vec![("web", config(json!({ "url": proxy.url })))]);
    let discovery = pool.discover("web").await.unwrap();
    assert!(discovery.tools.iter().any(|t| t.name == "echo"), "the re-issued list arrived");
    assert_eq!(proxy.count("tools/list"), 2, "sent, broken, re-issued once");
    let answer = pool.call(tool(Some("web"), "echo", json!({"message": "after"}))).await.unwrap();
    assert_eq!(text(&answer), "after");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_list_that_breaks_twice_fails_after_one_re_issue() {
    let proxy = proxy("tools/list", 2).await;
    let pool = pool(vec![("web", config(json!({ "url": proxy.url })))]);
    let error = pool.discover("web").await.unwrap_err();
    assert_eq!(error.code(), "SERVER_START_FAILED", "{error}");
    assert_eq!(proxy.count("tools/list"), 2, "one re-issue, not more");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_tool_call_whose_stream_broke_is_never_re_issued() {
    let proxy = proxy("tools/call", 1).await;
    let pool = pool(vec![("web", config(json!({ "url": proxy.url })))]);
    let error = pool.call(tool(Some("web"), "echo", json!({"message": "once"}))).await.unwrap_err();
    assert_eq!(error.code(), "SERVER_DISCONNECTED", "{error}");
    assert_eq!(proxy.count("tools/call"), 1, "the call may have run: it is not sent again");
    // The session goes on.
    let answer = pool.call(tool(Some("web"), "echo", json!({"message": "next"}))).await.unwrap();
    assert_eq!(text(&answer), "next");
    assert_eq!(proxy.count("tools/call"), 2);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_list_whose_json_body_broke_off_is_re_issued_once_and_answered() {
    let proxy = proxy_of(Answers::Json, "tools/list", 1).await;
    let pool = pool(vec![("web", config(json!({ "url": proxy.url })))]);
    let discovery = pool.discover("web").await.unwrap();
    assert!(discovery.tools.iter().any(|t| t.name == "echo"), "the re-issued list arrived");
    assert_eq!(proxy.count("tools/list"), 2);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_tool_call_whose_json_body_broke_off_is_never_re_issued() {
    let proxy = proxy_of(Answers::Json, "tools/call", 1).await;
    let pool = pool(vec![("web", config(json!({ "url": proxy.url })))]);
    let error = pool.call(tool(Some("web"), "echo", json!({"message": "once"}))).await.unwrap_err();
    assert_eq!(error.code(), "SERVER_DISCONNECTED", "{error}");
    assert!(error.to_string().contains("broke off before it was complete"), "{error}");
    assert_eq!(proxy.count("tools/call"), 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_server_discover_whose_json_body_broke_off_fails_at_once_without_waiting() {
    // During the opening rmcp reads nothing until the send returns: the JSON re-issue
    // (done by the reader) is not tried for `server/discover`, so the open fails at once.
    let proxy = proxy_of(Answers::Json, "server/discover", 1).await;
    let pool = pool(vec![("web", config(json!({ "url": proxy.url })))]);
    let error = pool.discover("web").await.unwrap_err();
    assert_eq!(error.code(), "SERVER_START_FAILED", "{error}");
    // The broken body ended the opening, not the connect timeout ("no answer … within").
    assert!(error.to_string().contains("broke off before it was complete"), "{error}");
    assert!(!error.to_string().contains("no answer"), "{error}");
    assert_eq!(proxy.count("server/discover"), 1, "not sent again");
    pool.shutdown().await;
}
