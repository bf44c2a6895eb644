//! Newline-delimited JSON-RPC over a byte stream (a child's stdin/stdout, an in-process
//! pipe), with every incoming message bounded.
//!
//! Why not rmcp's own stdio transport: `TokioChildProcess` reads with a fixed 16 MiB line
//! limit and *silently drops* a longer line, and it skips lines that are not JSON; either
//! way the call that waits for that answer never hears of it and hangs until its timeout.
//! This reader enforces the pool's limit while reading (a longer line is never buffered:
//! only its first 4 KiB and last 256 bytes are kept), then answers the waiting call
//! itself: it finds the JSON-RPC `id` in those bytes and hands rmcp an error response for
//! it (`OUTPUT_TOO_LARGE`, or `PROTOCOL_ERROR` for a broken answer). An oversized message
//! whose id cannot be found ends the connection, so the calls in flight fail instead of
//! hanging. Stray text lines are logged and skipped, as every MCP SDK does.
//!
//! The stream is read inside rmcp's session loop (in [`Transport::receive`]), as rmcp's
//! own transports do: no reader task and no channel hop between an answer arriving and
//! its call hearing of it. `receive` is polled in a `select!` and may be dropped at any
//! await; the partly read line lives in the transport, so the next `receive` resumes it.
//!
//! The answers to `tools/list` are also read raw for the tools that run only as tasks
//! (`execution.taskSupport`, which rmcp's `Tool` drops: see [`TaskTools`]).
//!
//! A line within the limit but of so many tiny values that parsing it would take more
//! than a few times the limit (`weigh.rs`) is answered the same way, unparsed.
//!
//! A server's own requests (`ping`, questions) are answered through [`Transport::send`];
//! a server that sends them and never reads its stdin would make the answers pile up
//! waiting for the pipe. At most [`MAX_OWED_ANSWERS`] answers wait to be written; past
//! that the connection is closed as misbehaving (`ANSWER_QUEUE_FULL` for the calls on
//! it): writes waiting give up, and the reader ends the stream.
//!
//! Memory per connection: one line buffer of at most the limit, and the answers waiting.

use super::answers::ToolCalls;
use super::client_tasks::{self, ClientTasks};
use super::discovery::TaskTools;
use super::notes::{ServerNotes, Throttle};
use super::weigh;
use crate::error::Error;
use indexmap::IndexSet;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, JsonRpcRequest, NumberOrString,
    RequestId, ServerJsonRpcMessage,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::Value;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// Bytes kept from the start and the end of an oversized line, to find its id.
const HEAD: usize = 4096;
const TAIL: usize = 256;
/// Read buffer of the incoming stream.
const READ_BUFFER: usize = 64 * 1024;
/// A line buffer grown past this by a large answer is given back once the answer is read.
const KEEP_LINE_CAPACITY: usize = 1024 * 1024;
/// Answers to the server's own requests waiting to be written, at most.
pub(crate) const MAX_OWED_ANSWERS: usize = 1024;
/// Key in `ErrorData::data` marking an error response made up by this transport.
pub(crate) const MARKER: &str = "mcpflowTransport";

type BoxReader = Box<dyn AsyncRead + Send + Unpin>;
type BoxWriter = Box<dyn AsyncWrite + Send + Unpin>;

/// An rmcp client transport over a reader and a writer.
pub(crate) struct LineTransport {
    read: BufReader<BoxReader>,
    lines: Lines,
    notes: Arc<ServerNotes>,
    max_message: usize,
    /// The stream ended (EOF, a read error, an oversized message without an id).
    ended: bool,
    /// `tools/call` requests in flight, whose answers are read directly as tool results.
    tool_calls: ToolCalls,
    /// Slows reading while stray lines are being dropped.
    throttle: Throttle,
    writer: Arc<Mutex<Option<BoxWriter>>>,
    /// `tools/list` requests in flight, whose raw answers tell the task-only tools.
    tool_lists: Option<ToolLists>,
    /// The server's requests run as tasks on this side (`client_tasks.rs`).
    client_tasks: ClientTasks,
    /// Answers to the server waiting to be written, and what ends the connection when
    /// there are too many.
    owed: Owed,
}

/// The answers a server is owed and has not read; past [`MAX_OWED_ANSWERS`] the
/// connection is closed (`flooded`): writes waiting give up, the reader ends.
#[derive(Clone)]
struct Owed {
    waiting: Arc<AtomicUsize>,
    flooded: CancellationToken,
    notes: Arc<ServerNotes>,
}

impl Owed {
    /// One more answer to write; false (and the connection closed) past the bound.
    fn take(&self) -> bool {
        if self.flooded.is_cancelled() {
            return false;
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= MAX_OWED_ANSWERS {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            let server = self.notes.server().to_owned();
            tracing::warn!(server, limit = MAX_OWED_ANSWERS, "the server does not read its answers; closing");
            self.notes.set_fatal(Error::AnswerQueueFull { server, limit: MAX_OWED_ANSWERS });
            self.flooded.cancel();
            return false;
        }
        true
    }

    fn written(&self) {
        self.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Ids remembered at most of `tools/list` requests not answered yet.
const LISTS_REMEMBERED: usize = 64;

/// The `tools/list` requests sent and not answered yet, and where their answers' task
/// support goes.
struct ToolLists {
    tap: Arc<TaskTools>,
    ids: IndexSet<RequestId>,
}

impl ToolLists {
    fn sent(&mut self, message: &ClientJsonRpcMessage) {
        if let JsonRpcMessage::Request(JsonRpcRequest { id, request: ClientRequest::ListToolsRequest(_), .. }) = message
        {
            if self.ids.len() >= LISTS_REMEMBERED {
                self.ids.shift_remove_index(0);
            }
            self.ids.insert(id.clone());
        }
    }

    /// `line` was read as `message`: when it answers a `tools/list`, its raw tools are read.
    fn read(&mut self, message: &ServerJsonRpcMessage, line: &[u8]) {
        let id = match message {
            JsonRpcMessage::Response(response) => &response.id,
            JsonRpcMessage::Error(error) => match &error.id {
                Some(id) => id,
                None => return,
            },
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => return,
        };
        if self.ids.swap_remove(id) && matches!(message, JsonRpcMessage::Response(_)) {
            self.tap.read_list(line);
        }
    }
}

impl LineTransport {
    /// A transport over `read` and `write`; `max_message` bounds one incoming message.
    pub fn new<R, W>(read: R, write: W, notes: Arc<ServerNotes>, max_message: usize) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        LineTransport {
            read: BufReader::with_capacity(READ_BUFFER, Box::new(read)),
            lines: Lines::default(),
            notes: notes.clone(),
            max_message,
            ended: false,
            tool_calls: ToolCalls::default(),
            throttle: Throttle::default(),
            writer: Arc::new(Mutex::new(Some(Box::new(write)))),
            tool_lists: None,
            client_tasks: ClientTasks::default(),
            owed: Owed { waiting: Arc::default(), flooded: CancellationToken::new(), notes },
        }
    }

    /// Reads the answers to `tools/list` for the tools that run only as tasks, into `tap`.
    pub fn reading_tool_lists(mut self, tap: Arc<TaskTools>) -> Self {
        self.tool_lists = Some(ToolLists { tap, ids: IndexSet::new() });
        self
    }

    /// `message`, an error this transport made up for an answer it could not read (too
    /// long, too heavy), marked answered; a `tools/list` it answers is forgotten, nothing
    /// read.
    fn made_up(&mut self, message: Option<ServerJsonRpcMessage>) -> Option<ServerJsonRpcMessage> {
        if let Some(message) = &message {
            self.tool_calls.answered(message);
            if let Some(lists) = &mut self.tool_lists {
                lists.read(message, &[]);
            }
        }
        message
    }

    /// The next message for rmcp; `None` once the stream ended.
    async fn next_message(&mut self) -> Option<ServerJsonRpcMessage> {
        let flooded = self.owed.flooded.clone();
        while !self.ended {
            let read = tokio::select! {
                biased;
                // Closed as misbehaving: the calls in flight hear why (`notes.fatal`).
                () = flooded.cancelled() => {
                    self.ended = true;
                    return None;
                }
                read = self.lines.next(&mut self.read, self.max_message) => read,
            };
            // From here to the return nothing awaits: a message read is never lost to a
            // dropped `receive`.
            let message = match read {
                Ok(LineRead::Line) if weigh::too_heavy(trim(&self.lines.line), self.max_message) => {
                    let message = weigh::heavy_answer(trim(&self.lines.line), &self.notes);
                    self.lines.done_with_line();
                    self.made_up(message)
                }
                Ok(LineRead::Line) => {
                    let line = trim(&self.lines.line);
                    let message = match self.tool_calls.read(line) {
                        Some(answer) => Some(answer),
                        None => {
                            let message = decode(line, &self.notes);
                            if let Some(message) = &message {
                                self.tool_calls.answered(message);
                                if let Some(lists) = &mut self.tool_lists {
                                    lists.read(message, line);
                                }
                            }
                            message.and_then(|message| {
                                let incoming = self.client_tasks.incoming(line, message);
                                reply(&self.writer, &self.owed, incoming.replies);
                                incoming.pass
                            })
                        }
                    };
                    self.lines.done_with_line();
                    message
                }
                Ok(LineRead::TooLong { head, tail, size }) => {
                    match too_long(&head, &tail, size, self.max_message, &self.notes) {
                        Ok(message) => self.made_up(message),
                        Err(error) => {
                            // No id to answer: end the connection so the calls in flight fail now.
                            self.notes.set_fatal(error);
                            self.ended = true;
                            None
                        }
                    }
                }
                Ok(LineRead::Eof) => {
                    self.ended = true;
                    None
                }
                Err(error) => {
                    tracing::debug!(server = self.notes.server(), %error, "reading from the server failed");
                    self.ended = true;
                    None
                }
            };
            if message.is_some() {
                return message;
            }
            // The line is consumed: a `receive` dropped during this pause loses nothing.
            self.throttle.after(self.notes.dropping()).await;
        }
        None
    }
}

impl Transport<RoleClient> for LineTransport {
    type Error = io::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        self.tool_calls.sent(&item);
        if let Some(lists) = &mut self.tool_lists {
            lists.sent(&item);
        }
        let lines = match self.client_tasks.outgoing(&item) {
            // The answer to a request run as a task: kept, and given to `tasks/result`.
            Some(replies) => replies.iter().map(serde_json::to_vec).collect(),
            None => match client_tasks::declare(&item) {
                Some(initialize) => serde_json::to_vec(&initialize).map(|line| vec![line]),
                None => serde_json::to_vec(&item).map(|line| vec![line]),
            },
        };
        let writer = self.writer.clone();
        let owed = self.owed.clone();
        // An answer to the server's own request waits in the bounded queue.
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let taken = !answer || owed.take();
        async move {
            if !taken {
                return Err(flooded_error());
            }
            let written = write_lines(writer, &owed.flooded, lines.map_err(io::Error::other)?).await;
            if answer {
                owed.written();
            }
            written
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        // Cancellation-safe: see the module documentation.
        self.next_message()
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // Dropping the writer closes the server's stdin: the MCP way to ask it to exit.
        // A server closed as flooded does not read: its stdin is dropped, not flushed.
        if let Some(mut writer) = self.writer.lock().await.take()
            && !self.owed.flooded.is_cancelled()
        {
            let _ = writer.shutdown().await;
        }
        Ok(())
    }
}

/// Writes `replies` to the server without waiting (the reader must not await between a
/// read and its return); each goes whole, never interleaved with another line.
fn reply(writer: &Arc<Mutex<Option<BoxWriter>>>, owed: &Owed, replies: Vec<Value>) {
    if replies.is_empty() || !owed.take() {
        return;
    }
    let lines = replies.iter().filter_map(|reply| serde_json::to_vec(reply).ok()).collect();
    let (writer, owed) = (writer.clone(), owed.clone());
    tokio::spawn(async move {
        let _ = write_lines(writer, &owed.flooded, lines).await;
        owed.written();
    });
}

fn flooded_error() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the server does not read its answers; the connection was closed")
}

/// Writes each of `lines` with its `\n`, holding the writer for all of them; gives up
/// (releasing the writer) when the connection is closed as `flooded`.
async fn write_lines(
    writer: Arc<Mutex<Option<BoxWriter>>>,
    flooded: &CancellationToken,
    lines: Vec<Vec<u8>>,
) -> io::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let write = async {
        let mut writer = writer.lock().await;
        let Some(writer) = writer.as_mut() else {
            return Err(io::Error::new(io::ErrorKind::NotConnected, "the transport is closed"));
        };
        for mut line in lines {
            line.push(b'\n');
            writer.write_all(&line).await?;
        }
        writer.flush().await
    };
    tokio::select! {
        biased;
        () = flooded.cancelled() => Err(flooded_error()),
        written = write => written,
    }
}

/// What one read produced.
#[derive(Debug, PartialEq)]
enum LineRead {
    /// A whole line (without its `\n`) is in [`Lines::line`].
    Line,
    /// The line was longer than the limit and was not kept.
    TooLong {
        head: Vec<u8>,
        tail: Vec<u8>,
        size: usize,
    },
    Eof,
}

/// The line being read. It lives outside the read future, so a read dropped halfway (a
/// `select!` that took another branch) resumes where it stopped.
#[derive(Debug, Default)]
struct Lines {
    line: Vec<u8>,
    /// Set while an oversized line is skipped: its head, its tail so far, its size so far.
    overflow: Option<(Vec<u8>, Vec<u8>, usize)>,
    /// `line` holds a whole line that was returned; the next read starts afresh.
    returned: bool,
}

impl Lines {
    /// Gives back the buffer of a large answer instead of keeping it for the connection's life.
    fn done_with_line(&mut self) {
        if self.line.capacity() > KEEP_LINE_CAPACITY {
            self.line = Vec::new();
        }
        self.line.clear();
        self.returned = false;
    }

    /// Reads one `\n`-terminated line into `self.line`, never letting it grow past `max`.
    /// Copying a chunk and consuming it happen with no await between them.
    async fn next<R: AsyncBufRead + Unpin>(&mut self, read: &mut R, max: usize) -> io::Result<LineRead> {
        if self.returned {
            self.done_with_line();
        }
        loop {
            let available = read.fill_buf().await?;
            if available.is_empty() {
                return Ok(match self.overflow.take() {
                    Some((head, tail, size)) => LineRead::TooLong { head, tail, size },
                    // A last line without `\n` still counts.
                    None if !self.line.is_empty() => {
                        self.returned = true;
                        LineRead::Line
                    }
                    None => LineRead::Eof,
                });
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..newline.unwrap_or(take)];
            match &mut self.overflow {
                Some((_, tail, size)) => {
                    *size += chunk.len();
                    keep_tail(tail, chunk);
                }
                None if self.line.len() + chunk.len() > max => {
                    let size = self.line.len() + chunk.len();
                    let mut head = self.line[..self.line.len().min(HEAD)].to_vec();
                    // Give the buffer back: the rest of this line is only counted.
                    self.line = Vec::new();
                    let room = HEAD - head.len();
                    head.extend_from_slice(&chunk[..room.min(chunk.len())]);
                    let mut tail = Vec::with_capacity(TAIL);
                    keep_tail(&mut tail, chunk);
                    self.overflow = Some((head, tail, size));
                }
                None => self.line.extend_from_slice(chunk),
            }
            read.consume(take);
            if newline.is_some() {
                return Ok(match self.overflow.take() {
                    Some((head, tail, size)) => LineRead::TooLong { head, tail, size },
                    None => {
                        self.returned = true;
                        LineRead::Line
                    }
                });
            }
        }
    }
}

fn keep_tail(tail: &mut Vec<u8>, chunk: &[u8]) {
    if chunk.len() >= TAIL {
        tail.clear();
        tail.extend_from_slice(&chunk[chunk.len() - TAIL..]);
    } else {
        tail.extend_from_slice(chunk);
        if tail.len() > TAIL {
            tail.drain(..tail.len() - TAIL);
        }
    }
}

/// A line without its `\r` and byte order mark.
fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

/// One complete (trimmed) line → a message for rmcp, or nothing (blank, noise).
fn decode(line: &[u8], notes: &ServerNotes) -> Option<ServerJsonRpcMessage> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let error = match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(message) => return Some(message),
        Err(error) => error,
    };
    let text = String::from_utf8_lossy(line);
    if error.is_syntax() || error.is_eof() {
        // Not JSON. If it starts like an answer we can still tell its call what happened.
        if let Some(id) = members_in_head(line).id {
            return Some(made_up_error(id, "PROTOCOL_ERROR", format!("its answer is not valid JSON: {error}"), None));
        }
        notes.stdout_noise(text.into_owned());
        return None;
    }
    // JSON, but not an MCP message rmcp understands.
    match serde_json::from_slice::<Value>(line).ok().as_ref().and_then(|v| v.get("id")).and_then(request_id) {
        Some(id) => {
            Some(made_up_error(id, "PROTOCOL_ERROR", format!("its answer is not a valid MCP message: {error}"), None))
        }
        None => {
            // An unknown notification: ignored, as rmcp and the other SDKs do.
            tracing::debug!(server = notes.server(), %error, "ignoring an unparsable message: {text}");
            None
        }
    }
}

/// An oversized line: an error response for its id, nothing for a notification, or an
/// error that ends the connection.
fn too_long(
    head: &[u8],
    tail: &[u8],
    size: usize,
    max: usize,
    notes: &ServerNotes,
) -> Result<Option<ServerJsonRpcMessage>, Error> {
    let size = size.max(max + 1);
    let members = members_in_head(head);
    let too_large = || Error::OutputTooLarge { server: notes.server().to_owned(), limit: max, size: Some(size) };
    tracing::warn!(server = notes.server(), size, max, "discarded an incoming message over the size limit");
    match members.id.or_else(|| id_in_tail(tail)) {
        Some(id) => Ok(Some(made_up_error(id, "OUTPUT_TOO_LARGE", too_large().to_string(), Some(size)))),
        None if members.method => {
            notes
                .log(super::LogStream::Stdout, format!("dropped a notification of {size} bytes or more (limit {max})"));
            Ok(None)
        }
        None => Err(too_large()),
    }
}

pub(crate) fn made_up_error(id: RequestId, code: &str, message: String, size: Option<usize>) -> ServerJsonRpcMessage {
    let data = serde_json::json!({ MARKER: { "code": code, "size": size } });
    ServerJsonRpcMessage::error(ErrorData::new(ErrorCode::INTERNAL_ERROR, message, Some(data)), Some(id))
}

fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

/// Top-level members seen in the first bytes of a JSON object.
#[derive(Debug, Default, PartialEq)]
struct HeadMembers {
    id: Option<RequestId>,
    method: bool,
}

/// Walks the top-level members of a (possibly cut) JSON object, noting `id` and `method`.
fn members_in_head(text: &[u8]) -> HeadMembers {
    let mut found = HeadMembers::default();
    let mut at = skip_ws(text, 0);
    if text.get(at) != Some(&b'{') {
        return found;
    }
    at += 1;
    loop {
        at = skip_ws(text, at);
        let Some(key_end) = string_end(text, at) else { return found };
        let key = &text[at + 1..key_end - 1];
        at = skip_ws(text, key_end);
        if text.get(at) != Some(&b':') {
            return found;
        }
        at = skip_ws(text, at + 1);
        let Some(value_end) = value_end(text, at) else { return found };
        match key {
            b"id" => {
                found.id = serde_json::from_slice::<Value>(&text[at..value_end]).ok().as_ref().and_then(request_id);
            }
            b"method" => found.method = true,
            _ => {}
        }
        at = skip_ws(text, value_end);
        if text.get(at) != Some(&b',') {
            return found;
        }
        at += 1;
    }
}

/// The JSON-RPC `id` of a message too large or heavy to parse, found in its first or last
/// bytes.
pub(crate) fn id_of_unparsed(text: &[u8]) -> Option<RequestId> {
    members_in_head(&text[..text.len().min(HEAD)]).id.or_else(|| id_in_tail(&text[text.len().saturating_sub(TAIL)..]))
}

/// The `id` when the object ends with `"id":<value>}` (the TypeScript SDK writes it last).
fn id_in_tail(tail: &[u8]) -> Option<RequestId> {
    let text = tail.trim_ascii_end();
    let text = text.strip_suffix(b"}")?.trim_ascii_end();
    let start = if text.last() == Some(&b'"') {
        text[..text.len() - 1].iter().rposition(|b| *b == b'"')?
    } else {
        text.iter().rposition(|b| !(b.is_ascii_digit() || *b == b'-')).map_or(0, |i| i + 1)
    };
    let id = serde_json::from_slice::<Value>(&text[start..]).ok().as_ref().and_then(request_id)?;
    let before = text[..start].trim_ascii_end().strip_suffix(b":")?.trim_ascii_end().strip_suffix(b"\"id\"")?;
    matches!(before.trim_ascii_end().last(), Some(b',' | b'{')).then_some(id)
}

fn skip_ws(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The index after the closing quote of the string starting at `at`.
fn string_end(text: &[u8], at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while let Some(b) = text.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index after the JSON value starting at `at`, if it ends within `text`.
fn value_end(text: &[u8], at: usize) -> Option<usize> {
    match text.get(at)? {
        b'"' => string_end(text, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            while let Some(b) = text.get(i) {
                match b {
                    b'"' => {
                        i = string_end(text, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = text[at..].iter().position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc;

    fn id(n: i64) -> Option<RequestId> {
        Some(NumberOrString::Number(n))
    }

    #[test]
    fn only_the_answers_to_tools_list_requests_are_read_for_task_support() {
        let tap = Arc::new(TaskTools::default());
        let mut lists = ToolLists { tap: tap.clone(), ids: IndexSet::new() };
        let list = rmcp::model::ListToolsRequest::default();
        lists.sent(&ClientJsonRpcMessage::request(ClientRequest::ListToolsRequest(list), NumberOrString::Number(5)));
        let answer = |n: i64| {
            serde_json::json!({"jsonrpc": "2.0", "id": n, "result": {"tools": [
                {"name": "slow", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "required"}}
            ]}})
            .to_string()
        };
        let read = |lists: &mut ToolLists, line: &str| {
            let message: ServerJsonRpcMessage = serde_json::from_str(line).unwrap();
            lists.read(&message, line.as_bytes());
        };
        // The answer to another request is not a listing, whatever it holds.
        read(&mut lists, &answer(6));
        assert!(!tap.contains("slow"));
        read(&mut lists, &answer(5));
        assert!(tap.contains("slow") && lists.ids.is_empty());
    }

    #[test]
    fn finds_the_id_at_the_start_or_the_end_of_a_cut_message() {
        let rmcp = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"aaaa"#;
        assert_eq!(members_in_head(rmcp), HeadMembers { id: id(7), method: false });
        let nested = br#"{"result":{"a":{"id":1},"b":[1,{"c":"}"}]},"id":"x-9","jsonrpc":"2.0"}"#;
        assert_eq!(members_in_head(nested).id, Some(NumberOrString::String("x-9".into())));
        let typescript_head = br#"{"result":{"content":[{"type":"text","text":"aaaa"#;
        assert_eq!(members_in_head(typescript_head), HeadMembers::default());
        assert_eq!(id_in_tail(br#"aaaa"}]},"jsonrpc":"2.0","id":12}"#), id(12));
        assert_eq!(
            id_in_tail(b"aa\"}]},\"jsonrpc\":\"2.0\",\"id\":\"r-1\"}\n"),
            Some(NumberOrString::String("r-1".into()))
        );
        // A nested `id` at the very end is not the message's id.
        assert_eq!(id_in_tail(br#"aaaa","item":{"id":5}}}"#), None);
        assert_eq!(id_in_tail(br#"aaaa"}"#), None);
        assert!(members_in_head(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xx"#).method);
    }

    async fn read_all(input: Vec<u8>, max: usize) -> Vec<LineRead> {
        let mut read = BufReader::with_capacity(1024, &input[..]);
        let mut lines = Lines::default();
        let mut out = Vec::new();
        loop {
            let r = lines.next(&mut read, max).await.unwrap();
            assert!(lines.line.capacity() <= max + 1024, "buffered {} bytes", lines.line.capacity());
            if r == LineRead::Eof {
                return out;
            }
            out.push(r);
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_never_buffered() {
        let mut input = br#"{"jsonrpc":"2.0","id":3,"result":{"x":""#.to_vec();
        input.extend(std::iter::repeat_n(b'a', 5 * 1024 * 1024));
        input.extend_from_slice(b"\"}}\n{\"ok\":1}\n");
        let reads = read_all(input, 64 * 1024).await;
        let [LineRead::TooLong { head, tail, size }, LineRead::Line] = &reads[..] else { panic!("{reads:?}") };
        assert_eq!(members_in_head(head).id, id(3));
        assert!(tail.ends_with(b"aaa\"}}") && *size >= 64 * 1024, "{size}");
    }

    #[tokio::test]
    async fn a_read_dropped_halfway_resumes_its_line() {
        let (mut server, client) = tokio::io::duplex(64);
        let mut read = BufReader::new(client);
        let mut lines = Lines::default();
        server.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
        // The select! in rmcp's loop drops `receive` when another branch wins.
        let dropped = tokio::time::timeout(std::time::Duration::from_millis(20), lines.next(&mut read, 1024)).await;
        assert!(dropped.is_err());
        server.write_all(b"\"id\":1}\nnext\n").await.unwrap();
        assert_eq!(lines.next(&mut read, 1024).await.unwrap(), LineRead::Line);
        assert_eq!(lines.line, br#"{"jsonrpc":"2.0","id":1}"#);
        assert_eq!(lines.next(&mut read, 1024).await.unwrap(), LineRead::Line);
        assert_eq!(lines.line, b"next");
    }

    #[test]
    fn noise_is_logged_and_broken_answers_are_answered() {
        let (tx, mut rx) = mpsc::channel(64);
        let notes = ServerNotes::new("s", Some(tx));
        assert!(decode(b"Server started on stdio", &notes).is_none());
        assert_eq!(rx.try_recv().unwrap().line, "Server started on stdio");
        let Some(ServerJsonRpcMessage::Error(broken)) = decode(br#"{"jsonrpc":"2.0","id":4,"result":{"#, &notes) else {
            panic!()
        };
        assert_eq!(broken.id, id(4));
        let wrong = decode(br#"{"jsonrpc":"2.0","id":5}"#, &notes);
        let Some(ServerJsonRpcMessage::Error(wrong)) = wrong else { panic!("{wrong:?}") };
        assert_eq!(wrong.error.data.unwrap()[MARKER]["code"], "PROTOCOL_ERROR");
        assert!(decode(trim(b"  \r"), &notes).is_none());
    }

    #[test]
    fn an_oversized_answer_without_an_id_ends_the_connection() {
        let notes = ServerNotes::new("s", None);
        let err = too_long(br#"{"result":{"x":"aaa"#, b"aaaa", 100, 10, &notes).unwrap_err();
        assert_eq!(err.code(), "OUTPUT_TOO_LARGE");
        let answered = too_long(br#"{"jsonrpc":"2.0","id":1,"result":"#, b"", 100, 10, &notes).unwrap();
        assert!(matches!(answered, Some(ServerJsonRpcMessage::Error(_))));
        assert!(too_long(br#"{"method":"notifications/message","params":"#, b"", 100, 10, &notes).unwrap().is_none());
    }
}
