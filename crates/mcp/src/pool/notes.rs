//! What the pool notices about a server besides its MCP messages: stderr lines, stray text
//! on stdout, and a transport failure that ended the connection. Lines go to the log
//! channel; the recent ones explain errors ("last stderr: …").

use super::{LogStream, ServerLog};
use crate::error::Error;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use tokio::sync::mpsc::UnboundedSender;

/// Stderr lines kept for error messages.
const STDERR_TAIL: usize = 8;
/// Characters of one line quoted in an error message.
const QUOTE_CHARS: usize = 300;

#[derive(Debug)]
pub(crate) struct ServerNotes {
    server: String,
    log: Option<UnboundedSender<ServerLog>>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    stderr_tail: VecDeque<String>,
    stdout_noise: Option<String>,
    fatal: Option<Error>,
}

impl ServerNotes {
    pub fn new(server: &str, log: Option<UnboundedSender<ServerLog>>) -> Self {
        ServerNotes { server: server.to_owned(), log, inner: Mutex::default() }
    }

    pub fn server(&self) -> &str {
        &self.server
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends a line to the log channel, or to `tracing` when there is none.
    pub fn log(&self, stream: LogStream, line: String) {
        match &self.log {
            Some(log) => {
                // A closed channel only means nobody listens any more.
                let _ =
                    log.send(ServerLog { server: self.server.clone(), stream, line, at: std::time::Instant::now() });
            }
            None => tracing::debug!(server = %self.server, ?stream, "{line}"),
        }
    }

    pub fn stderr_line(&self, line: String) {
        {
            let mut inner = self.inner();
            if inner.stderr_tail.len() == STDERR_TAIL {
                inner.stderr_tail.pop_front();
            }
            inner.stderr_tail.push_back(quote(&line));
        }
        self.log(LogStream::Stderr, line);
    }

    /// A line on stdout that is not an MCP message.
    pub fn stdout_noise(&self, line: String) {
        self.inner().stdout_noise = Some(quote(&line));
        self.log(LogStream::Stdout, line);
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
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
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
