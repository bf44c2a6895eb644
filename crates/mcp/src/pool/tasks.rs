//! Tool calls a server runs as tasks (MCP `io.modelcontextprotocol/tasks`): the handle
//! reported (and recorded by the run's journal) before anything relies on it, `tasks/get`
//! polled at the server's `pollInterval` (clamped to 100 ms…30 s), each new status or
//! status message passed on as progress, the result fetched with `tasks/result` (or read
//! inline, as the 2026-07-28 extension gives it) — at once when the task is
//! `input_required`: the server sends its elicitation or sampling request while that
//! `tasks/result` is open, and answers it when the task ends —, `tasks/cancel` sent when the step is
//! cancelled, and an interrupted run's task polled again instead of calling the tool twice.
//!
//! Spoken in the 2025-11-25 shape (`tools/call` with `task: {ttl}`, `CreateTaskResult`
//! as `{task: {…}}`) that the servers in use speak; a `CreateTaskResult` with
//! `resultType: "task"` and a `tasks/get` answer with the result inline (the 2026-07-28
//! extension, SEP-2663) are read as well. Messages are read as JSON here, not through
//! rmcp's task types, which know only the 2026-07-28 shape.

use super::call::{Method, send_cancelled, service_error};
use super::connection::Connection;
use super::server::Server;
use super::trace::{ClientSpan, MaybeSpan, Op, TraceInfo};
use crate::error::{Error, Result};
use mcpflow_engine::{CallTrace, Progress, ProgressSink, TaskHandle, TaskSink};
use rmcp::model::{ClientRequest, CustomRequest, ServerResult};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Polling faster than this would only load the server.
pub(crate) const MIN_POLL: Duration = Duration::from_millis(100);
/// A server's longer interval is not waited for: the step would look stuck.
pub(crate) const MAX_POLL: Duration = Duration::from_secs(30);
/// When the server suggests none.
pub(crate) const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The task lifetime asked for (the server may grant another): long enough for a run
/// interrupted mid-task to be resumed the same day.
pub(crate) const REQUESTED_TTL_MS: u64 = 24 * 60 * 60 * 1000;
/// How long `tasks/cancel` is given to reach the server (a shutdown waits this long).
const CANCEL_GRACE: Duration = Duration::from_secs(2);
/// Longest status message passed on as progress (a server controls it).
const MESSAGE_LIMIT: usize = 1024;
/// Longest task id accepted: it is recorded in the run's journal and shown.
const TASK_ID_LIMIT: usize = 256;

/// A task as the server last described it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskState {
    pub id: String,
    pub status: String,
    pub message: Option<String>,
    pub poll: Option<Duration>,
    /// The 2026-07-28 extension: the result (or the error) inline in `tasks/get`.
    pub result: Option<Value>,
    pub error: Option<Value>,
}

/// Reads a task from a `CreateTaskResult` (`{task: {…}}`, or flattened with
/// `resultType: "task"`) or a `tasks/get` answer; `None` when it is none of those.
pub(crate) fn read_task(value: &Value) -> Option<TaskState> {
    let task = value.get("task").filter(|t| t.is_object()).unwrap_or(value);
    let id = task.get("taskId")?.as_str().filter(|id| !id.is_empty() && id.len() <= TASK_ID_LIMIT)?.to_owned();
    let status = task.get("status")?.as_str()?.to_owned();
    let message = task.get("statusMessage").and_then(Value::as_str).map(|m| cut(m, MESSAGE_LIMIT));
    let poll = task
        .get("pollInterval")
        .or_else(|| task.get("pollIntervalMs"))
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    let inline = |key: &str| task.get(key).or_else(|| value.get(key)).filter(|v| v.is_object()).cloned();
    Some(TaskState { id, status, message, poll, result: inline("result"), error: inline("error") })
}

/// The interval to wait before the next `tasks/get`.
pub(crate) fn poll_interval(suggested: Option<Duration>) -> Duration {
    suggested.unwrap_or(DEFAULT_POLL).clamp(MIN_POLL, MAX_POLL)
}

fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The current time as RFC 3339 (UTC, milliseconds).
fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// One task-mode tool call on one session.
pub(crate) struct TaskCall<'a> {
    /// A person or the model answering the server (its `tasks/result` waits for them).
    pub waits: super::call::Waits<'a>,
    pub server: &'a Server,
    pub connection: &'a Connection,
    pub method: &'a Method,
    /// Bounds each request (the create, each poll, the result); the step's `timeout_ms`
    /// bounds the whole task through `cancel`.
    pub timeout: Duration,
    pub deadlines: &'a super::deadlines::Deadlines,
    pub progress: Option<ProgressSink>,
    pub cancel: &'a CancellationToken,
    pub started: Option<TaskSink>,
    /// The pool's options: the message limit, the sign-ins.
    pub cx: &'a super::Context,
    pub cancels: &'a Cancels,
    /// Telemetry on: each request (the create, each poll, the result, the cancel) gets a
    /// client span (`trace.rs`).
    pub trace: Option<&'a CallTrace>,
}

/// The `tasks/cancel` requests on their way, so that shutting the pool down waits for them
/// (each for [`CANCEL_GRACE`] at most) before it closes the sessions.
#[derive(Debug, Default)]
pub(crate) struct Cancels {
    sent: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Cancels {
    /// Sends `tasks/cancel` for task `id`, in its client span if any.
    fn send(&self, peer: Peer<RoleClient>, id: String, span: Option<ClientSpan>) {
        let mut request = custom("tasks/cancel", json!({ "taskId": id }));
        span.stamp(&mut request);
        let sending = tokio::spawn(async move {
            tracing::debug!(task = %id, "cancelling the task");
            let mut span = span;
            let traced = &mut span;
            let sent = async move {
                let handle = match peer.send_request_with_option(request, PeerRequestOptions::no_options()).await {
                    Ok(handle) => handle,
                    Err(_) => return traced.failed_with("SERVER_DISCONNECTED", "sending `tasks/cancel` failed"),
                };
                traced.sent(&handle.id);
                match handle.rx.await {
                    Ok(Ok(answer)) => traced.answered(&answer),
                    Ok(Err(ServiceError::McpError(error))) => traced.rejected(&error),
                    Ok(Err(_)) | Err(_) => traced.failed_with("SERVER_DISCONNECTED", "no answer to `tasks/cancel`"),
                }
            };
            if tokio::time::timeout(CANCEL_GRACE, sent).await.is_err() {
                span.failed_with("CALL_TIMEOUT", "no answer to `tasks/cancel` within 2 s");
            }
        });
        let mut sent = self.sent.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        sent.retain(|s| !s.is_finished());
        sent.push(sending);
    }

    /// Waits for the cancellations on their way.
    pub async fn settle(&self) {
        let sent = std::mem::take(&mut *self.sent.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for sending in sent {
            let _ = sending.await;
        }
    }
}

/// A task in flight for a call: dropped armed (the call went away before the task ended),
/// it sends `tasks/cancel`.
struct Live<'a> {
    cancels: &'a Cancels,
    peer: Peer<RoleClient>,
    id: String,
    armed: bool,
    /// Telemetry on: the `tasks/cancel` gets a client span, about this tool.
    trace: Option<&'a CallTrace>,
    info: &'a Arc<TraceInfo>,
    tool: Option<&'a str>,
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        if self.armed {
            let op = Op::Task { method: "tasks/cancel", tool: self.tool };
            let span = self.trace.map(|trace| ClientSpan::start(trace, self.info, op));
            self.cancels.send(self.peer.clone(), std::mem::take(&mut self.id), span);
        }
    }
}

/// What ended a wait on the server.
enum Stop {
    Cancelled,
    TimedOut,
}

impl TaskCall<'_> {
    fn name(&self) -> String {
        self.server.name.clone()
    }

    /// Sends `tools/call` with task metadata and follows the task it creates.
    pub async fn start(&self) -> Result<Value> {
        let answer = self.request(self.method.task_request(REQUESTED_TTL_MS), self.method.op()).await?;
        let value = super::call::to_json(&self.server.name, &answer)?;
        match read_task(&value) {
            Some(state) => self.created(state).await,
            // A server may run a call at once even when asked for a task.
            None => self.method.output(&self.server.name, answer),
        }
    }

    /// Follows a task the server created for this call: its handle reported first.
    pub async fn created(&self, state: TaskState) -> Result<Value> {
        let handle = TaskHandle { server: self.name(), task_id: state.id.clone(), started_at: now_rfc3339() };
        tracing::debug!(server = %self.server.name, task = %state.id, "the call runs as a task");
        // From here until the task ends, a call that goes away (cancelled, timed out, its
        // future dropped) cancels the task on the server.
        let live = self.live(&state.id);
        if let Some(started) = &self.started {
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(Error::Cancelled { server: Some(self.name()) }),
                () = started(handle) => {}
            }
        }
        self.follow(state, live).await
    }

    /// Resuming an interrupted run: polls the task it started instead of calling again.
    pub async fn resume(&self, handle: &TaskHandle) -> Result<Value> {
        tracing::debug!(server = %self.server.name, task = %handle.task_id, "resuming a task");
        let state = self.get(&handle.task_id).await?;
        let live = self.live(&state.id);
        self.follow(state, live).await
    }

    fn live(&self, id: &str) -> Live<'_> {
        Live {
            cancels: self.cancels,
            peer: self.connection.peer().clone(),
            id: id.to_owned(),
            armed: true,
            trace: self.trace,
            info: &self.connection.trace,
            tool: self.method.tool(),
        }
    }

    /// Follows the task to its end. Returning early (an error, cancelled) leaves `live`
    /// armed, so the task is cancelled on the server; a task that ended is not.
    async fn follow(&self, mut state: TaskState, mut live: Live<'_>) -> Result<Value> {
        let (_registration, mut notified) = self.connection.tasks.register(&state.id);
        let mut seen: Option<(String, Option<String>)> = None;
        let mut changes = 0u32;
        let mut poll = poll_interval(state.poll);
        loop {
            let now = (state.status.clone(), state.message.clone());
            if seen.as_ref() != Some(&now) {
                changes += 1;
                if let Some(sink) = &self.progress {
                    let message = state.message.clone().unwrap_or_else(|| format!("task {}", state.status));
                    sink(Progress { progress: f64::from(changes), total: None, message: Some(message) });
                }
                seen = Some(now);
            }
            let id = state.id.clone();
            if matches!(state.status.as_str(), "completed" | "failed" | "cancelled") {
                live.armed = false;
            }
            match state.status.as_str() {
                "completed" => return self.result(state).await,
                "failed" => {
                    let message = state
                        .error
                        .as_ref()
                        .and_then(|e| e.get("message"))
                        .and_then(Value::as_str)
                        .map(|m| cut(m, MESSAGE_LIMIT))
                        .or(state.message)
                        .unwrap_or_else(|| "the server gave no reason".to_owned());
                    return Err(Error::TaskFailed { server: self.name(), task_id: id, message });
                }
                "cancelled" => {
                    return Err(Error::TaskCancelled { server: self.name(), task_id: id, message: state.message });
                }
                // The server waits for something of ours (an elicitation, a sampling
                // request): 2025-11-25 sends it while `tasks/result` is open, which then
                // answers once the task ends (the TypeScript SDK's `simpleTaskInteractive`).
                "input_required" => {
                    let result = self.result(state).await;
                    if result.is_ok() {
                        live.armed = false;
                    }
                    return result;
                }
                _ => {}
            }
            if let Some(suggested) = state.poll {
                poll = poll_interval(Some(suggested));
            }
            // A status notification is as good as a poll; a poll is still made every
            // interval (notifications are not promised).
            let told = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return Err(Error::Cancelled { server: Some(self.name()) }),
                Some(params) = notified.recv() => read_task(&params),
                () = tokio::time::sleep(poll) => None,
            };
            if let Some(told) = told.filter(|t| t.id == id) {
                // Its result is fetched by the poll (`tasks/result`), so a `completed`
                // notification only ends the wait.
                if told.status != "completed" || told.result.is_some() {
                    state = TaskState { poll: told.poll.or(state.poll), ..told };
                    continue;
                }
            }
            let next = match self.get(&id).await {
                Ok(next) => next,
                Err(error) => {
                    if matches!(error, Error::TaskLost { .. }) {
                        live.armed = false;
                    }
                    return Err(error);
                }
            };
            // A server that answers about another task is not followed.
            if next.id != id {
                return Err(Error::ProtocolError {
                    server: self.name(),
                    message: format!("asked `tasks/get` about task `{id}`, the server answered about `{}`", next.id),
                });
            }
            state = next;
        }
    }

    /// `tasks/get`; a JSON-RPC error means the server does not know the task.
    async fn get(&self, id: &str) -> Result<TaskState> {
        let request = custom("tasks/get", json!({ "taskId": id }));
        let answer = match self.send(request, self.task_op("tasks/get")).await {
            Ok(answer) => answer,
            Err(Ok(ServiceError::McpError(data))) => {
                return Err(Error::TaskLost {
                    server: self.name(),
                    task_id: id.to_owned(),
                    message: format!("`tasks/get` answered error {}: {}", data.code.0, cut(&data.message, 512)),
                });
            }
            Err(Ok(error)) => return Err(Box::pin(self.service_error(error)).await),
            Err(Err(error)) => return Err(error),
        };
        let value = super::call::to_json(&self.server.name, &answer)?;
        read_task(&value).ok_or_else(|| Error::ProtocolError {
            server: self.name(),
            message: "the answer to `tasks/get` is not a task (no `taskId` and `status`)".to_owned(),
        })
    }

    /// The result of a completed task: inline (2026-07-28), else `tasks/result`.
    async fn result(&self, state: TaskState) -> Result<Value> {
        if let Some(result) = state.result {
            let answer: ServerResult = serde_json::from_value(result).map_err(|e| Error::ProtocolError {
                server: self.name(),
                message: format!("the result of task `{}` is not a valid result: {e}", state.id),
            })?;
            return self.method.output(&self.server.name, answer);
        }
        let request = custom("tasks/result", json!({ "taskId": state.id }));
        let answer = self.request(request, self.task_op("tasks/result")).await?;
        self.method.output(&self.server.name, answer)
    }

    fn task_op(&self, method: &'static str) -> Op<'_> {
        Op::Task { method, tool: self.method.tool() }
    }

    /// One request with the per-request timeout and the call's cancellation.
    async fn request(&self, request: ClientRequest, op: Op<'_>) -> Result<ServerResult> {
        match self.send(request, op).await {
            Ok(answer) => Ok(answer),
            Err(Ok(error)) => Err(Box::pin(self.service_error(error)).await),
            Err(Err(error)) => Err(error),
        }
    }

    /// The answer, or the server's JSON-RPC error (`Err(Ok)`) or ours (`Err(Err)`:
    /// cancelled, timed out, disconnected), in a client span when tracing.
    async fn send(
        &self,
        request: ClientRequest,
        op: Op<'_>,
    ) -> std::result::Result<ServerResult, std::result::Result<ServiceError, Error>> {
        let mut span = self.trace.map(|trace| ClientSpan::start(trace, &self.connection.trace, op));
        let outcome = match self.exchange(request, &mut span).await {
            Err(Ok(error)) if !matches!(error, ServiceError::McpError(_)) => {
                Err(Err(Box::pin(self.service_error(error)).await))
            }
            outcome => outcome,
        };
        match &outcome {
            Ok(answer) => span.answered(answer),
            Err(Ok(ServiceError::McpError(error))) => span.rejected(error),
            Err(Ok(_)) => {}
            Err(Err(error)) => span.failed(error),
        }
        outcome
    }

    /// [`Self::send`] without the span's end.
    async fn exchange(
        &self,
        mut request: ClientRequest,
        span: &mut Option<ClientSpan>,
    ) -> std::result::Result<ServerResult, std::result::Result<ServiceError, Error>> {
        let mut deadline = self.deadlines.watch(Instant::now() + self.timeout);
        span.stamp(&mut request);
        let handle = self.connection.peer().send_request_with_option(request, PeerRequestOptions::no_options()).await;
        let RequestHandle { mut rx, id, progress_token, .. } = handle.map_err(Ok)?;
        span.sent(&id);
        let _progress = self.progress.clone().map(|sink| self.connection.progress.register(progress_token, sink));
        let stop = loop {
            tokio::select! {
                biased;
                answer = &mut rx => return match answer {
                    Ok(answer) => answer.map_err(Ok),
                    Err(_) => Err(Ok(ServiceError::TransportClosed)),
                },
                () = self.cancel.cancelled() => break Stop::Cancelled,
                () = deadline.expired() => {
                    // A person or the model is answering the server (`tasks/result` is open
                    // while they do): the time left is counted from the answer.
                    if let Some(until) = self.waits.extends(self.timeout) {
                        deadline = self.deadlines.watch(until);
                        continue;
                    }
                    break Stop::TimedOut;
                }
            }
        };
        match stop {
            Stop::Cancelled => {
                send_cancelled(self.connection, id, "cancelled by the workflow");
                Err(Err(Error::Cancelled { server: Some(self.name()) }))
            }
            Stop::TimedOut => {
                send_cancelled(self.connection, id, "timed out");
                Err(Err(Error::CallTimeout { server: self.name(), after: self.timeout }))
            }
        }
    }

    async fn service_error(&self, error: ServiceError) -> Error {
        service_error(self.cx, self.server, self.connection, error).await
    }
}

fn custom(method: &str, params: Value) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_read_in_both_shapes() {
        let legacy = json!({"task": {"taskId": "t1", "status": "working", "statusMessage": "Gathering sources...",
            "createdAt": "x", "lastUpdatedAt": "x", "ttl": 300000, "pollInterval": 1000}});
        let state = read_task(&legacy).unwrap();
        assert_eq!(
            (state.id.as_str(), state.status.as_str(), state.message.as_deref()),
            ("t1", "working", Some("Gathering sources..."))
        );
        assert_eq!(state.poll, Some(Duration::from_secs(1)));
        let modern = json!({"resultType": "complete", "taskId": "t2", "status": "completed", "createdAt": "x",
            "lastUpdatedAt": "x", "ttlMs": null, "pollIntervalMs": 50, "result": {"content": []}});
        let state = read_task(&modern).unwrap();
        assert_eq!((state.id.as_str(), state.poll), ("t2", Some(Duration::from_millis(50))));
        assert_eq!(state.result, Some(json!({"content": []})));
        assert!(read_task(&json!({"content": []})).is_none());
        assert!(read_task(&json!({"task": {"taskId": 3, "status": "working"}})).is_none());
        // An id too long to record is not accepted.
        assert!(read_task(&json!({"taskId": "x".repeat(TASK_ID_LIMIT + 1), "status": "working"})).is_none());
    }

    #[test]
    fn the_poll_interval_is_clamped() {
        assert_eq!(poll_interval(None), DEFAULT_POLL);
        assert_eq!(poll_interval(Some(Duration::ZERO)), MIN_POLL);
        assert_eq!(poll_interval(Some(Duration::from_secs(3600))), MAX_POLL);
        assert_eq!(poll_interval(Some(Duration::from_millis(700))), Duration::from_millis(700));
    }

    #[test]
    fn long_status_messages_are_cut_on_a_char_boundary() {
        let long = "é".repeat(MESSAGE_LIMIT);
        let state = read_task(&json!({"taskId": "t", "status": "working", "statusMessage": long})).unwrap();
        let message = state.message.unwrap();
        assert!(message.len() <= MESSAGE_LIMIT + '…'.len_utf8() && message.ends_with('…'));
    }
}
