//! What the pool notices about a server besides its MCP messages: stderr lines, stray text
//! on stdout, MCP log messages, and a transport failure that ended the connection. Lines
//! go to the log channel; the recent ones explain errors ("last stderr: …").
//!
//! A server decides how much it writes, so what reaches the log is bounded here, where
//! the lines arrive: each line is cut at [`MAX_LOG_LINE`] bytes, each server may send
//! [`BURST_LINES`] lines and [`BURST_BYTES`] at once and then [`LINES_PER_SECOND`] and
//! [`BYTES_PER_SECOND`] (a token bucket), and a full channel drops the line rather than
//! wait or grow. Dropped lines are counted and reported in one note ("N lines (M bytes)
//! dropped from server X") before the next line that passes, or when the session ends.

use super::{LogStream, ServerLog};
use crate::error::Error;
use mcpflow_config::launch::Secrets;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;

/// Stderr lines kept for error messages.
const STDERR_TAIL: usize = 8;
/// Characters of one line quoted in an error message.
const QUOTE_CHARS: usize = 300;
/// Longest line forwarded to the log; the rest of a longer one is cut.
pub(crate) const MAX_LOG_LINE: usize = 16 * 1024;
/// Lines one server may log at once, and per second after that.
pub(crate) const BURST_LINES: f64 = 1000.0;
pub(crate) const LINES_PER_SECOND: f64 = 100.0;
/// Shortest time between two notes of dropped lines of one server.
const NOTE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);
/// Bytes one server may log at once, and per second after that.
pub(crate) const BURST_BYTES: f64 = 1024.0 * 1024.0;
pub(crate) const BYTES_PER_SECOND: f64 = 128.0 * 1024.0;

#[derive(Debug)]
pub(crate) struct ServerNotes {
    server: String,
    log: Option<Sender<ServerLog>>,
    inner: Mutex<Inner>,
    /// What no line may show: the `${env:NAME}` and header values the launch resolved, and
    /// the OAuth tokens learnt since (a refresh brings a new one).
    secrets: std::sync::RwLock<Secrets>,
}

#[derive(Debug, Default)]
struct Inner {
    stderr_tail: VecDeque<String>,
    stdout_noise: Option<String>,
    fatal: Option<Error>,
    budget: Budget,
}

/// The token bucket of one server's log lines, and what it dropped since the last note.
#[derive(Debug)]
struct Budget {
    lines: f64,
    bytes: f64,
    at: Instant,
    dropped_lines: u64,
    dropped_bytes: u64,
    last_note: Option<Instant>,
    /// The last line was dropped.
    dropping: bool,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            lines: BURST_LINES,
            bytes: BURST_BYTES,
            at: Instant::now(),
            dropped_lines: 0,
            dropped_bytes: 0,
            last_note: None,
            dropping: false,
        }
    }
}

impl Budget {
    /// Takes one line of `len` bytes from the bucket, or counts it dropped.
    fn take(&mut self, len: usize) -> bool {
        let now = Instant::now();
        let secs = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = now;
        self.lines = (self.lines + secs * LINES_PER_SECOND).min(BURST_LINES);
        self.bytes = (self.bytes + secs * BYTES_PER_SECOND).min(BURST_BYTES);
        #[allow(clippy::cast_precision_loss, reason = "a line is at most MAX_LOG_LINE bytes")]
        let cost = len as f64;
        self.dropping = self.lines < 1.0 || self.bytes < cost;
        if self.dropping {
            self.dropped(len);
        } else {
            self.lines -= 1.0;
            self.bytes -= cost;
        }
        !self.dropping
    }

    fn dropped(&mut self, len: usize) {
        self.dropped_lines += 1;
        self.dropped_bytes += len as u64;
    }

    /// The note for what was dropped since the last one, if anything was and the last
    /// note is [`NOTE_EVERY`] old (`last`: the session ends, say it now).
    fn note(&mut self, server: &str, last: bool) -> Option<String> {
        let now = Instant::now();
        if self.dropped_lines == 0 || (!last && self.last_note.is_some_and(|at| now.duration_since(at) < NOTE_EVERY)) {
            return None;
        }
        self.last_note = Some(now);
        let (lines, bytes) = (std::mem::take(&mut self.dropped_lines), std::mem::take(&mut self.dropped_bytes));
        Some(format!(
            "{lines} lines ({bytes} bytes) dropped from server {server}: it writes more than {LINES_PER_SECOND} lines or {} KiB a second (stderr, stray stdout and log messages together)",
            BYTES_PER_SECOND / 1024.0
        ))
    }
}

impl ServerNotes {
    pub fn new(server: &str, log: Option<Sender<ServerLog>>) -> Self {
        ServerNotes { server: server.to_owned(), log, inner: Mutex::default(), secrets: std::sync::RwLock::default() }
    }

    /// The secrets of the launch: hidden from every line and note from now on.
    pub fn set_secrets(&self, secrets: Secrets) {
        self.secrets.write().unwrap_or_else(PoisonError::into_inner).join(&secrets);
    }

    /// A secret learnt while the session runs (an OAuth token): hidden from now on, shown
    /// as `shown`.
    pub fn add_secret(&self, value: &str, shown: &str) {
        self.secrets.write().unwrap_or_else(PoisonError::into_inner).add(value, shown.to_owned());
    }

    /// The session's secrets as they stand.
    pub fn secrets(&self) -> Secrets {
        self.secrets.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// `text` with the session's secrets hidden.
    pub fn hide(&self, text: String) -> String {
        let secrets = self.secrets.read().unwrap_or_else(PoisonError::into_inner);
        if secrets.is_empty() { text } else { secrets.redact(&text) }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a line to the log channel (or to `tracing` when there is none), within the
    /// server's budget; a line past it is counted for the next note instead (false).
    pub fn log(&self, stream: LogStream, line: String) -> bool {
        let mut line = self.hide(line);
        cut(&mut line, MAX_LOG_LINE);
        let note = {
            let mut inner = self.inner();
            if !inner.budget.take(line.len()) {
                return false;
            }
            inner.budget.note(&self.server, false)
        };
        if let Some(note) = note {
            self.send(LogStream::Notification, note);
        }
        self.send(stream, line);
        true
    }

    fn send(&self, stream: LogStream, line: String) {
        match &self.log {
            Some(log) => {
                let len = line.len();
                let log = log.try_send(ServerLog { server: self.server.clone(), stream, line, at: Instant::now() });
                // Closed: nobody listens any more. Full: the reader is behind; counted.
                if let Err(TrySendError::Full(_)) = log {
                    self.inner().budget.dropped(len);
                }
            }
            None => tracing::debug!(server = %self.server, ?stream, "{line}"),
        }
    }

    /// A stderr line; false when it was dropped (over the budget).
    pub fn stderr_line(&self, line: String) -> bool {
        let quoted = quote(&self.hide(line.clone()));
        {
            let mut inner = self.inner();
            if inner.stderr_tail.len() == STDERR_TAIL {
                inner.stderr_tail.pop_front();
            }
            inner.stderr_tail.push_back(quoted);
        }
        self.log(LogStream::Stderr, line)
    }

    /// A line on stdout that is not an MCP message.
    pub fn stdout_noise(&self, line: String) {
        let quoted = quote(&self.hide(line.clone()));
        self.inner().stdout_noise = Some(quoted);
        self.log(LogStream::Stdout, line);
    }

    /// Lines are being dropped now (the budget is spent).
    pub fn dropping(&self) -> bool {
        self.inner().budget.dropping
    }

    /// The transport failed in a way that ends the connection; calls in flight report this.
    pub fn set_fatal(&self, error: Error) {
        self.inner().fatal.get_or_insert(error);
    }

    pub fn fatal(&self) -> Option<Error> {
        self.inner().fatal.clone()
    }

    /// `; last stderr: …; non-JSON on stdout: …` or nothing, to explain a failure.
    pub fn context(&self) -> String {
        let inner = self.inner();
        let mut out = String::new();
        if let Some(noise) = &inner.stdout_noise {
            out.push_str(&format!("; the server wrote non-JSON to stdout: `{noise}`"));
        }
        if !inner.stderr_tail.is_empty() {
            let lines: Vec<&str> = inner.stderr_tail.iter().map(String::as_str).collect();
            out.push_str(&format!("; last stderr: {}", lines.join(" | ")));
        }
        out
    }
}

impl Drop for ServerNotes {
    /// The session ended: what was dropped since the last note is reported now.
    fn drop(&mut self) {
        let note = self.inner().budget.note(&self.server, true);
        if let Some(note) = note {
            self.send(LogStream::Notification, note);
        }
    }
}

/// Slows down reading a stream whose lines are being dropped: after every
/// [`Throttle::EVERY`] dropped lines it pauses [`Throttle::PAUSE`]. A server writing
/// without pause then fills its pipe and waits, instead of keeping a core busy reading
/// what is thrown away (which also delays every timer of the process). A server that
/// writes within its budget is never slowed; one over it is read at about 25,000 lines a
/// second.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    dropped: u32,
}

impl Throttle {
    const EVERY: u32 = 256;
    const PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

    /// Call after each line; `dropped`: the line was not forwarded.
    pub async fn after(&mut self, dropped: bool) {
        if dropped {
            self.dropped += 1;
            if self.dropped == Self::EVERY {
                self.dropped = 0;
                tokio::time::sleep(Self::PAUSE).await;
            }
        }
    }
}

/// Cuts `line` to at most `max` bytes (on a character boundary), marking the cut with `…`.
pub(super) fn cut(line: &mut String, max: usize) {
    if line.len() > max {
        let mut at = max;
        while !line.is_char_boundary(at) {
            at -= 1;
        }
        line.truncate(at);
        line.push('…');
    }
}

fn quote(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_quotes_the_recent_lines_and_forwards_them() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let notes = ServerNotes::new("s", Some(tx));
        for i in 0..10 {
            notes.stderr_line(format!("line {i}"));
        }
        notes.stdout_noise("hello".to_owned());
        let context = notes.context();
        assert!(
            context.starts_with("; the server wrote non-JSON to stdout: `hello`; last stderr: line 2 |"),
            "{context}"
        );
        assert!(context.ends_with("line 9"), "{context}");
        let first = rx.try_recv().unwrap();
        assert_eq!((first.server.as_str(), first.stream, first.line.as_str()), ("s", LogStream::Stderr, "line 0"));
    }
}
