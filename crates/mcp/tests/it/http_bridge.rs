//! A testkit fixture reached over streamable HTTP: a small HTTP/1.1 bridge in front of an
//! in-process fixture. Each POSTed JSON-RPC message goes to the fixture; a request's answer
//! comes back as one `application/json` body or as one SSE event, with a Content-Length.
//! Stateless (no session id) unless started with one ([`serve_over_http_with_session`]:
//! given with the answer to `initialize`), no standalone SSE stream (GET is 405), as
//! servers may be. [`serve_as_lenient_2025_server`] plays a 2025-11-25 server that answers
//! methods it does not know with an empty result, `server/discover` included;
//! [`serve_resumable`] one that ends its SSE streams early for the client to resume
//! (`resume.rs`).

mod resume;

use mcpflow_testkit::Fixture;
pub use resume::Replay;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// How the bridge answers a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    Json,
    Sse,
}

/// A running bridge; it stops when dropped.
pub struct HttpFixture {
    pub url: String,
    /// Answers whose body the client stopped reading before its end.
    pub cut_short: Arc<AtomicUsize>,
    /// Openings received (`server/discover` of 2026-07-28 or `initialize` of 2025-11-25):
    /// more than one means the client started over.
    pub openings: Arc<AtomicUsize>,
    /// What a resumable bridge kept and saw ([`serve_resumable`]).
    pub replay: Option<Arc<Replay>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[derive(Clone)]
struct Counts {
    cut_short: Arc<AtomicUsize>,
    openings: Arc<AtomicUsize>,
    /// The `Mcp-Session-Id` the answer to `initialize` assigns, if any.
    session: Option<&'static str>,
    /// `server/discover` is answered here with `{}` (a server of 2025-11-25 that answers
    /// every method it does not know with an empty result) instead of by the fixture.
    empty_discover: bool,
    /// SSE streams end early and are resumed (`resume.rs`).
    replay: Option<Arc<Replay>>,
}

type Waiting = Arc<Mutex<HashMap<String, oneshot::Sender<String>>>>;
type ToFixture = Arc<tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

pub async fn serve_over_http(fixture: Fixture, answers: Answers) -> HttpFixture {
    serve_over_http_with_session(fixture, answers, None).await
}

/// [`serve_over_http`], assigning `session` (`Mcp-Session-Id`) in the answer to
/// `initialize` when it is `Some` (2025-11-25; `server/discover` gets none).
pub async fn serve_over_http_with_session(
    fixture: Fixture,
    answers: Answers,
    session: Option<&'static str>,
) -> HttpFixture {
    start(fixture, answers, session, false, None).await
}

/// [`serve_over_http`] as a 2025-11-25 server that answers `server/discover`, a method it
/// does not know, with an empty result `{}` (many small servers answer unknown methods so).
pub async fn serve_as_lenient_2025_server(fixture: Fixture, answers: Answers) -> HttpFixture {
    start(fixture, answers, None, true, None).await
}

/// [`serve_over_http`] in a session, with a standalone SSE stream (GET), as a server that
/// ends its SSE streams right after their priming event (`retry` set to `retry`) and
/// expects the client to resume them with GET and `Last-Event-ID`: a `tools/call`'s answer
/// and the fixture's notifications come only on a resumed stream. Other answers are JSON.
pub async fn serve_resumable(fixture: Fixture, retry: Duration) -> HttpFixture {
    start(fixture, Answers::Json, Some("resumable"), false, Some(Arc::new(Replay::new(retry)))).await
}

async fn start(
    fixture: Fixture,
    answers: Answers,
    session: Option<&'static str>,
    empty_discover: bool,
    replay: Option<Arc<Replay>>,
) -> HttpFixture {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (from_fixture, to_fixture) = tokio::io::split(mcpflow_testkit::spawn_in_process(fixture));
    let to_fixture: ToFixture = Arc::new(tokio::sync::Mutex::new(Box::new(to_fixture)));
    let waiting: Waiting = Arc::default();
    let cut_short = Arc::new(AtomicUsize::new(0));
    let openings = Arc::new(AtomicUsize::new(0));
    let answers_task = {
        let waiting = waiting.clone();
        let replay = replay.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(from_fixture).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                // Answers go to the POST waiting for them; notifications are dropped, or
                // kept for the standalone stream of a resumable bridge.
                let waiter = answer_id(&line).and_then(|id| waiting.lock().unwrap().remove(&id));
                match (waiter, &replay) {
                    (Some(waiter), _) => {
                        let _ = waiter.send(line);
                    }
                    (None, Some(replay)) if answer_id(&line).is_none() => replay.notify(line),
                    (None, _) => {}
                }
            }
        })
    };
    let accept_task = {
        let counts = Counts {
            cut_short: cut_short.clone(),
            openings: openings.clone(),
            session,
            empty_discover,
            replay: replay.clone(),
        };
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(connection(stream, answers, waiting.clone(), to_fixture.clone(), counts.clone()));
            }
        })
    };
    HttpFixture { url, cut_short, openings, replay, tasks: vec![answers_task, accept_task] }
}

/// The id of an answer (a message with `id` and no `method`), read from its first bytes: an
/// answer's line starts `{"jsonrpc":"2.0","id":…`, and may be far too long to parse whole here.
fn answer_id(line: &str) -> Option<String> {
    let head = &line[..line.len().min(200)];
    if head.contains("\"method\"") {
        return None;
    }
    let rest = &head[head.find("\"id\":")? + 5..];
    Some(rest[..rest.find([',', '}'])?].trim().to_owned())
}

async fn connection(stream: TcpStream, answers: Answers, waiting: Waiting, to_fixture: ToFixture, counts: Counts) {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    loop {
        let mut request_line = String::new();
        if read.read_line(&mut request_line).await.unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        let mut last_event_id = None;
        loop {
            let mut header = String::new();
            if read.read_line(&mut header).await.unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap();
                } else if name.eq_ignore_ascii_case("last-event-id") {
                    last_event_id = Some(value.trim().to_owned());
                }
            }
        }
        let mut body = vec![0; length];
        read.read_exact(&mut body).await.unwrap();
        if let (true, Some(replay)) = (request_line.starts_with("GET "), &counts.replay) {
            if replay.get(&mut write, counts.session, last_event_id).await.is_err() {
                return;
            }
            continue;
        }
        if !request_line.starts_with("POST ") {
            respond(&mut write, "405 Method Not Allowed", None, b"").await.ok();
            continue;
        }
        let message: Value = serde_json::from_slice(&body).unwrap();
        if message["method"] == "initialize" || message["method"] == "server/discover" {
            counts.openings.fetch_add(1, Ordering::SeqCst);
        }
        let session = counts.session.filter(|_| message["method"] == "initialize");
        if counts.empty_discover && message["method"] == "server/discover" {
            let empty = serde_json::json!({ "jsonrpc": "2.0", "id": message["id"], "result": {} }).to_string();
            respond(&mut write, "200 OK", Some("application/json"), empty.as_bytes()).await.ok();
            continue;
        }
        let answer = match (message.get("id"), message.get("method")) {
            (Some(id), Some(_)) => {
                let (tx, rx) = oneshot::channel();
                waiting.lock().unwrap().insert(id.to_string(), tx);
                Some(rx)
            }
            _ => None,
        };
        body.push(b'\n');
        to_fixture.lock().await.write_all(&body).await.unwrap();
        let Some(answer) = answer else {
            respond(&mut write, "202 Accepted", None, b"").await.ok();
            continue;
        };
        if let (Some(replay), true) = (&counts.replay, message["method"] == "tools/call") {
            if replay.answer_later(&mut write, counts.session, answer).await.is_err() {
                return;
            }
            continue;
        }
        let Ok(line) = answer.await else { return };
        let sent = match answers {
            Answers::Json => respond_in(&mut write, "200 OK", Some("application/json"), session, line.as_bytes()).await,
            Answers::Sse => {
                let event = format!("event: message\ndata: {line}\n\n");
                respond_in(&mut write, "200 OK", Some("text/event-stream"), session, event.as_bytes()).await
            }
        };
        if sent.is_err() {
            counts.cut_short.fetch_add(1, Ordering::SeqCst);
            return;
        }
    }
}

async fn respond(
    write: &mut (impl AsyncWrite + Unpin),
    status: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> std::io::Result<()> {
    respond_in(write, status, content_type, None, body).await
}

/// [`respond`], in session `session` (an `Mcp-Session-Id` header) if any.
async fn respond_in(
    write: &mut (impl AsyncWrite + Unpin),
    status: &str,
    content_type: Option<&str>,
    session: Option<&str>,
    body: &[u8],
) -> std::io::Result<()> {
    let content_type = content_type.map(|t| format!("Content-Type: {t}\r\n")).unwrap_or_default();
    let session = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
    let head = format!("HTTP/1.1 {status}\r\n{content_type}{session}Content-Length: {}\r\n\r\n", body.len());
    write.write_all(head.as_bytes()).await?;
    // In pieces, so a client that stops reading is noticed before the whole body is handed over.
    for piece in body.chunks(64 * 1024) {
        write.write_all(piece).await?;
    }
    write.flush().await
}
