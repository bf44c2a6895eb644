//! The bridge as a server that closes its SSE streams gracefully and expects the client to
//! resume them (SEP-1699): every SSE stream opens with a priming event (an `id`, the
//! `retry` the client must wait, no data), and
//!
//! - a `tools/call` is answered with a stream that ends right after its priming event; the
//!   answer, when the fixture gives it, is kept for that stream;
//! - a GET without `Last-Event-ID` opens the standalone stream, which also ends right
//!   after its priming event; the fixture's notifications are kept for it;
//! - a GET with `Last-Event-ID: ID` resumes the stream `ID` belongs to: what was kept for
//!   it after `ID` is sent, then what comes, and the stream stays open.
//!
//! [`Replay::seen`] says when each stream was ended and when each GET arrived, with its
//! `Last-Event-ID`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, oneshot};

/// Which stream an event belongs to: the standalone one, or the answer stream of the
/// request whose priming event had this id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Standalone,
    Answer(u64),
}

/// What the client did, for the tests.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Streams ended by the server: which (`"answer"` or `"standalone"`), the id of their
    /// last event, and when.
    pub ended: Vec<(&'static str, String, Instant)>,
    /// GET requests: their `Last-Event-ID`, and when they arrived.
    pub gets: Vec<(Option<String>, Instant)>,
}

impl Seen {
    /// How long after the stream whose last event was `id` ended the client came back
    /// for it with `Last-Event-ID: id`, if it did.
    pub fn came_back_after(&self, id: &str) -> Option<Duration> {
        let (_, _, ended) = self.ended.iter().find(|(_, last, _)| last == id)?;
        let (_, at) = self.gets.iter().find(|(last, _)| last.as_deref() == Some(id))?;
        Some(at.saturating_duration_since(*ended))
    }
}

#[derive(Default)]
struct State {
    next_id: u64,
    /// Each event id given out, and its stream.
    streams: HashMap<u64, Stream>,
    /// Messages kept for their stream: (id, stream, JSON-RPC line).
    kept: Vec<(u64, Stream, String)>,
    seen: Seen,
}

impl State {
    fn new_id(&mut self, stream: Stream) -> u64 {
        self.next_id += 1;
        self.streams.insert(self.next_id, stream);
        self.next_id
    }
}

/// The kept messages of a resumable bridge and what the client did.
pub struct Replay {
    retry: Duration,
    state: Mutex<State>,
    changed: Notify,
}

impl Replay {
    pub fn new(retry: Duration) -> Self {
        Replay { retry, state: Mutex::default(), changed: Notify::new() }
    }

    pub fn seen(&self) -> Seen {
        self.state.lock().unwrap().seen.clone()
    }

    /// A message from the fixture that answers no POST: kept for the standalone stream.
    pub fn notify(&self, line: String) {
        self.keep(Stream::Standalone, line);
    }

    fn keep(&self, stream: Stream, line: String) {
        let mut state = self.state.lock().unwrap();
        let id = state.new_id(stream);
        state.kept.push((id, stream, line));
        drop(state);
        self.changed.notify_waiters();
    }

    /// The priming event of a new stream, `what` ended at once: its id is kept with `stream`
    /// (or the answer stream it opens) and the end recorded before it happens.
    fn prime_and_end(&self, what: &'static str, stream: Option<Stream>) -> (u64, String) {
        let mut state = self.state.lock().unwrap();
        let id = state.next_id + 1;
        state.new_id(stream.unwrap_or(Stream::Answer(id)));
        state.seen.ended.push((what, format!("e{id}"), Instant::now()));
        (id, format!("id: e{id}\nretry: {}\ndata: \n\n", self.retry.as_millis()))
    }

    /// Answers a request with a stream that ends after its priming event; the fixture's
    /// answer (`answer`) is kept for that stream when it comes.
    pub async fn answer_later(
        self: &std::sync::Arc<Self>,
        write: &mut (impl AsyncWrite + Unpin),
        session: Option<&str>,
        answer: oneshot::Receiver<String>,
    ) -> std::io::Result<()> {
        let (id, priming) = self.prime_and_end("answer", None);
        let replay = self.clone();
        tokio::spawn(async move {
            if let Ok(line) = answer.await {
                replay.keep(Stream::Answer(id), line);
            }
        });
        write_head(write, session).await?;
        write_chunk(write, priming.as_bytes()).await?;
        write_chunk(write, b"").await
    }

    /// Answers a GET: a new standalone stream that ends after its priming event, or the
    /// stream `last_event_id` belongs to, resumed after it and kept open.
    pub async fn get(
        &self,
        write: &mut (impl AsyncWrite + Unpin),
        session: Option<&str>,
        last_event_id: Option<String>,
    ) -> std::io::Result<()> {
        self.state.lock().unwrap().seen.gets.push((last_event_id.clone(), Instant::now()));
        let Some(last) = last_event_id else {
            let (_, priming) = self.prime_and_end("standalone", Some(Stream::Standalone));
            write_head(write, session).await?;
            write_chunk(write, priming.as_bytes()).await?;
            return write_chunk(write, b"").await;
        };
        let mut cursor: u64 = last.trim_start_matches('e').parse().unwrap_or(0);
        let Some(stream) = self.state.lock().unwrap().streams.get(&cursor).copied() else {
            let body = format!("no stream has the event {last}");
            let head = format!("HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\n\r\n{body}", body.len());
            return write.write_all(head.as_bytes()).await;
        };
        write_head(write, session).await?;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let due: Vec<(u64, String)> = {
                let state = self.state.lock().unwrap();
                let kept = state.kept.iter().filter(|(id, s, _)| *s == stream && *id > cursor);
                kept.map(|(id, _, line)| (*id, line.clone())).collect()
            };
            for (id, line) in due {
                write_chunk(write, format!("event: message\nid: e{id}\ndata: {line}\n\n").as_bytes()).await?;
                cursor = id;
            }
            changed.await;
        }
    }
}

async fn write_head(write: &mut (impl AsyncWrite + Unpin), session: Option<&str>) -> std::io::Result<()> {
    let session = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
    let head =
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n{session}\r\n");
    write.write_all(head.as_bytes()).await
}

/// One chunk of a chunked body; an empty one ends the body (the stream ends gracefully).
async fn write_chunk(write: &mut (impl AsyncWrite + Unpin), bytes: &[u8]) -> std::io::Result<()> {
    write.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await?;
    write.write_all(bytes).await?;
    write.write_all(b"\r\n").await?;
    write.flush().await
}
