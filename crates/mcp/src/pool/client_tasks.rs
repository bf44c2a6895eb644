//! Client-side tasks (MCP 2025-11-25): a server may ask that its question for a person
//! (`elicitation/create`) or its request for a model completion (`sampling/createMessage`)
//! run as a task on the client — `params.task` in the request — and then polls the
//! client with `tasks/get` and fetches the answer with `tasks/result`, instead of holding
//! one request open while a person thinks.
//!
//! rmcp's typed requests drop `params.task` and its handler can only answer in kind, so
//! this is done where the raw line is seen (the stdio transport, `lines.rs`):
//!
//! 1. the `initialize` request declares `tasks` (list, cancel, and both request kinds);
//! 2. a task-augmented request is answered at once with a `CreateTaskResult` (status
//!    `input_required` for a question, `working` for a completion), and goes on to rmcp's
//!    handler under a request id of our own ([`TASK_ID_PREFIX`]) — so it is routed to the
//!    step whose call it belongs to exactly like a plain request;
//! 3. the handler's answer to that id is kept as the task's result instead of being sent;
//! 4. the server's `tasks/get`, `tasks/list`, `tasks/result` (held until the result is
//!    there) and `tasks/cancel` are answered here and never reach rmcp. A cancelled task
//!    tells rmcp (`notifications/cancelled` for our id), and its answer, when it comes, is
//!    dropped.
//!
//! Streamable HTTP servers are not offered tasks: their messages reach the pool already
//! parsed by rmcp, without `params.task`; they get plain requests, which every server that
//! supports tasks must also accept (a client that does not declare a capability gets the
//! plain form).
//!
//! Bounds: at most [`MAX_TASKS`] tasks per connection (past it a request is answered the
//! plain way, which the spec allows any server to expect), finished ones forgotten oldest
//! first or when their `ttl` ends, and at most [`MAX_WAITING`] `tasks/result` requests held.

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage, ServerRequest};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Tasks remembered per connection, running or finished.
const MAX_TASKS: usize = 64;
/// `tasks/result` requests held per connection until their task ends.
const MAX_WAITING: usize = 64;
/// How long a finished task is kept when the server asked for no `ttl`.
const DEFAULT_TTL: Duration = Duration::from_secs(10 * 60);
/// Longest `ttl` honoured: a server cannot make us hold results for ever.
const MAX_TTL: Duration = Duration::from_secs(60 * 60);
/// Suggested to the server between two `tasks/get`.
const POLL_INTERVAL_MS: u64 = 500;
/// Our own request ids for task-augmented requests handed to rmcp start with this.
pub(crate) const TASK_ID_PREFIX: &str = "mcpflow-client-task:";
/// JSON-RPC "invalid params".
const INVALID_PARAMS: i64 = -32602;

/// The tasks capability declared in `initialize` (2025-11-25 `ClientCapabilities.tasks`).
pub(crate) fn capability() -> Value {
    json!({
        "list": {},
        "cancel": {},
        "requests": {
            "elicitation": { "create": {} },
            "sampling": { "createMessage": {} }
        }
    })
}

/// Adds the tasks capability to an `initialize` request about to be written.
pub(crate) fn declare(message: &ClientJsonRpcMessage) -> Option<Value> {
    let JsonRpcMessage::Request(request) = message else { return None };
    if !matches!(request.request, rmcp::model::ClientRequest::InitializeRequest(_)) {
        return None;
    }
    let mut value = serde_json::to_value(message).ok()?;
    let capabilities = value.pointer_mut("/params/capabilities")?.as_object_mut()?;
    capabilities.insert("tasks".into(), capability());
    Some(value)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }

    fn finished(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

#[derive(Debug)]
struct Task {
    status: Status,
    created_at: String,
    updated_at: String,
    ttl: Duration,
    /// When it finished, for its `ttl`.
    finished: Option<Instant>,
    /// The handler's answer: a result, or an error object.
    outcome: Option<Result<Value, Value>>,
    status_message: Option<String>,
    /// Order of creation, to forget the oldest first.
    order: u64,
}

impl Task {
    fn view(&self, id: &str) -> Value {
        let mut view = json!({
            "taskId": id,
            "status": self.status.as_str(),
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX),
            "pollInterval": POLL_INTERVAL_MS,
        });
        if let Some(message) = &self.status_message {
            view["statusMessage"] = json!(message);
        }
        view
    }

    fn finish(&mut self, status: Status, outcome: Option<Result<Value, Value>>, message: Option<String>) {
        self.status = status;
        self.outcome = outcome;
        self.status_message = message;
        self.updated_at = now();
        self.finished = Some(Instant::now());
    }
}

/// What to do with a message read from the server.
#[derive(Debug, Default)]
pub(crate) struct Incoming {
    /// Handed to rmcp (possibly changed), if anything.
    pub pass: Option<ServerJsonRpcMessage>,
    /// Answers to write to the server now.
    pub replies: Vec<Value>,
}

/// The client-side tasks of one connection.
#[derive(Debug, Default)]
pub(crate) struct ClientTasks {
    tasks: HashMap<String, Task>,
    /// Held `tasks/result` requests: the server's request id and the task it waits for.
    waiting: Vec<(RequestId, String)>,
    created: u64,
}

impl ClientTasks {
    /// `message` was read as `line`: a task-augmented request becomes a task, a `tasks/*`
    /// request is answered, anything else passes.
    pub fn incoming(&mut self, line: &[u8], message: ServerJsonRpcMessage) -> Incoming {
        let JsonRpcMessage::Request(mut request) = message else {
            return Incoming { pass: Some(message), replies: Vec::new() };
        };
        match &request.request {
            ServerRequest::ElicitRequest(_) | ServerRequest::CreateMessageRequest(_) => {
                let Some(ttl) = task_params(line) else {
                    return Incoming { pass: Some(JsonRpcMessage::Request(request)), replies: Vec::new() };
                };
                self.forget_expired();
                if self.tasks.len() >= MAX_TASKS && !self.forget_oldest_finished() {
                    // Too many at once: answered the plain way.
                    return Incoming { pass: Some(JsonRpcMessage::Request(request)), replies: Vec::new() };
                }
                let question = matches!(request.request, ServerRequest::ElicitRequest(_));
                self.created += 1;
                let id = uuid::Uuid::new_v4().to_string();
                let task = Task {
                    status: if question { Status::InputRequired } else { Status::Working },
                    created_at: now(),
                    updated_at: now(),
                    ttl,
                    finished: None,
                    outcome: None,
                    status_message: question.then(|| "waiting for a person to answer".to_owned()),
                    order: self.created,
                };
                let reply = response(&request.id, json!({ "task": task.view(&id) }));
                self.tasks.insert(id.clone(), task);
                request.id = RequestId::String(format!("{TASK_ID_PREFIX}{id}").into());
                Incoming { pass: Some(JsonRpcMessage::Request(request)), replies: vec![reply] }
            }
            ServerRequest::CustomRequest(custom) if custom.method.starts_with("tasks/") => {
                let method = custom.method.clone();
                let task_id = custom.params.as_ref().and_then(|p| p.get("taskId")).and_then(Value::as_str);
                let task_id = task_id.map(str::to_owned);
                self.tasks_request(&request.id, &method, task_id)
            }
            _ => Incoming { pass: Some(JsonRpcMessage::Request(request)), replies: Vec::new() },
        }
    }

    fn tasks_request(&mut self, id: &RequestId, method: &str, task_id: Option<String>) -> Incoming {
        self.forget_expired();
        let reply = |value| Incoming { pass: None, replies: vec![value] };
        if method == "tasks/list" {
            let mut tasks: Vec<(&String, &Task)> = self.tasks.iter().collect();
            tasks.sort_by_key(|(_, task)| task.order);
            let tasks: Vec<Value> = tasks.into_iter().map(|(id, task)| task.view(id)).collect();
            return reply(response(id, json!({ "tasks": tasks })));
        }
        let Some(task_id) = task_id else {
            return reply(error(id, INVALID_PARAMS, format!("{method} needs params.taskId")));
        };
        let Some(task) = self.tasks.get_mut(&task_id) else {
            return reply(error(
                id,
                INVALID_PARAMS,
                format!("no task {task_id:?} on this client (unknown, or expired)"),
            ));
        };
        match method {
            "tasks/get" => reply(response(id, task.view(&task_id))),
            "tasks/cancel" => {
                if task.status.finished() {
                    let message = format!("task {task_id:?} is already {}", task.status.as_str());
                    return reply(error(id, INVALID_PARAMS, message));
                }
                task.finish(Status::Cancelled, None, Some("cancelled by the server".into()));
                let view = task.view(&task_id);
                let mut replies = vec![response(id, view)];
                replies.extend(self.answer_waiting(&task_id));
                let ours = format!("{TASK_ID_PREFIX}{task_id}");
                let cancelled = serde_json::from_value(json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": { "requestId": ours, "reason": "the server cancelled the task" }
                }))
                .ok();
                Incoming { pass: cancelled, replies }
            }
            "tasks/result" => {
                if task.status.finished() {
                    return reply(result_of(id, &task_id, task));
                }
                if self.waiting.len() >= MAX_WAITING {
                    let message = format!("too many tasks/result requests held at once (at most {MAX_WAITING})");
                    return reply(error(id, INVALID_PARAMS, message));
                }
                self.waiting.push((id.clone(), task_id));
                Incoming::default()
            }
            other => reply(error(id, -32601, format!("method {other:?} is not supported by this client"))),
        }
    }

    /// A message rmcp is about to send: the answer to one of our task ids is kept as that
    /// task's result (and answers the `tasks/result` waiting for it) instead of being sent.
    /// `None`: send `message` as it is.
    pub fn outgoing(&mut self, message: &ClientJsonRpcMessage) -> Option<Vec<Value>> {
        let (id, outcome) = match message {
            JsonRpcMessage::Response(response) => {
                (&response.id, Ok(serde_json::to_value(&response.result).unwrap_or(Value::Null)))
            }
            JsonRpcMessage::Error(error) => {
                (error.id.as_ref()?, Err(serde_json::to_value(&error.error).unwrap_or(Value::Null)))
            }
            _ => return None,
        };
        let RequestId::String(id) = id else { return None };
        let task_id = id.strip_prefix(TASK_ID_PREFIX)?.to_owned();
        // Ours even when the task is gone (expired, cancelled): never sent to the server.
        let Some(task) = self.tasks.get_mut(&task_id) else { return Some(Vec::new()) };
        if task.status.finished() {
            return Some(Vec::new());
        }
        let status = if outcome.is_ok() { Status::Completed } else { Status::Failed };
        let message = match &outcome {
            Err(error) => error.get("message").and_then(Value::as_str).map(str::to_owned),
            Ok(_) => None,
        };
        task.finish(status, Some(outcome), message);
        Some(self.answer_waiting(&task_id))
    }

    /// The answers to the held `tasks/result` requests for `task_id`, now that it ended.
    fn answer_waiting(&mut self, task_id: &str) -> Vec<Value> {
        let Some(task) = self.tasks.get(task_id) else { return Vec::new() };
        let mut replies = Vec::new();
        self.waiting.retain(|(id, waits_for)| {
            if waits_for != task_id {
                return true;
            }
            replies.push(result_of(id, task_id, task));
            false
        });
        replies
    }

    fn forget_expired(&mut self) {
        let waiting = &self.waiting;
        self.tasks.retain(|id, task| {
            let expired = task.finished.is_some_and(|at| at.elapsed() > task.ttl);
            !expired || waiting.iter().any(|(_, w)| w == id)
        });
    }

    /// Forgets the oldest finished task; false when none has finished.
    fn forget_oldest_finished(&mut self) -> bool {
        let oldest = self.tasks.iter().filter(|(_, t)| t.status.finished()).min_by_key(|(_, t)| t.order);
        let Some(id) = oldest.map(|(id, _)| id.clone()) else { return false };
        self.tasks.remove(&id);
        true
    }
}

/// The `ttl` of a task-augmented request (`params.task`), `None` when it is not one.
fn task_params(line: &[u8]) -> Option<Duration> {
    let value: Value = serde_json::from_slice(line).ok()?;
    let task = value.pointer("/params/task")?.as_object()?;
    let ttl = task.get("ttl").and_then(Value::as_u64).map(Duration::from_millis).unwrap_or(DEFAULT_TTL);
    Some(ttl.min(MAX_TTL))
}

/// The answer to `tasks/result` for a finished task.
fn result_of(id: &RequestId, task_id: &str, task: &Task) -> Value {
    let related = json!({ "io.modelcontextprotocol/related-task": { "taskId": task_id } });
    match &task.outcome {
        Some(Ok(result)) => {
            let mut result = result.clone();
            if let Some(object) = result.as_object_mut() {
                object.insert("_meta".into(), related);
            }
            response(id, result)
        }
        Some(Err(failure)) => json!({ "jsonrpc": "2.0", "id": id, "error": failure }),
        None => error(id, -32800, format!("task {task_id:?} was {}", task.status.as_str())),
    }
}

fn response(id: &RequestId, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

fn error(id: &RequestId, code: i64, message: String) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(tasks: &mut ClientTasks, value: Value) -> Incoming {
        let line = serde_json::to_vec(&value).unwrap();
        let message: ServerJsonRpcMessage = serde_json::from_slice(&line).unwrap();
        tasks.incoming(&line, message)
    }

    fn elicit(id: i64, task: bool) -> Value {
        let mut request = json!({ "jsonrpc": "2.0", "id": id, "method": "elicitation/create", "params": {
            "message": "name?", "requestedSchema": { "type": "object", "properties": { "name": { "type": "string" } } }
        }});
        if task {
            request["params"]["task"] = json!({ "ttl": 60000 });
        }
        request
    }

    fn ours(incoming: &Incoming) -> RequestId {
        match incoming.pass.as_ref().unwrap() {
            JsonRpcMessage::Request(request) => request.id.clone(),
            other => panic!("not a request: {other:?}"),
        }
    }

    fn answer(id: RequestId, result: Value) -> ClientJsonRpcMessage {
        serde_json::from_value(json!({ "jsonrpc": "2.0", "id": id, "result": result })).unwrap()
    }

    #[test]
    fn a_plain_request_passes_unchanged() {
        let mut tasks = ClientTasks::default();
        let incoming = read(&mut tasks, elicit(7, false));
        assert!(incoming.replies.is_empty());
        assert_eq!(ours(&incoming), RequestId::Number(7));
    }

    #[test]
    fn a_task_augmented_question_is_a_task_whose_answer_waits_for_tasks_result() {
        let mut tasks = ClientTasks::default();
        let incoming = read(&mut tasks, elicit(7, true));
        let created = &incoming.replies[0];
        assert_eq!(created["id"], 7);
        assert_eq!(created["result"]["task"]["status"], "input_required");
        let task_id = created["result"]["task"]["taskId"].as_str().unwrap().to_owned();
        let our_id = ours(&incoming);
        assert_eq!(our_id, RequestId::String(format!("{TASK_ID_PREFIX}{task_id}").into()));

        let get = read(&mut tasks, json!({"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":task_id}}));
        assert!(get.pass.is_none());
        assert_eq!(get.replies[0]["result"]["status"], "input_required");
        let held =
            read(&mut tasks, json!({"jsonrpc":"2.0","id":9,"method":"tasks/result","params":{"taskId":task_id}}));
        assert!(held.pass.is_none() && held.replies.is_empty());

        let answered = tasks.outgoing(&answer(our_id, json!({"action":"accept","content":{"name":"Ada"}}))).unwrap();
        assert_eq!(answered.len(), 1);
        assert_eq!(answered[0]["id"], 9);
        assert_eq!(answered[0]["result"]["content"]["name"], "Ada");
        assert_eq!(answered[0]["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"], task_id);
        let get = read(&mut tasks, json!({"jsonrpc":"2.0","id":10,"method":"tasks/get","params":{"taskId":task_id}}));
        assert_eq!(get.replies[0]["result"]["status"], "completed");
        let list = read(&mut tasks, json!({"jsonrpc":"2.0","id":11,"method":"tasks/list"}));
        assert_eq!(list.replies[0]["result"]["tasks"][0]["taskId"], task_id);
    }

    #[test]
    fn a_cancelled_task_tells_rmcp_and_drops_its_late_answer() {
        let mut tasks = ClientTasks::default();
        let incoming = read(&mut tasks, elicit(1, true));
        let task_id = incoming.replies[0]["result"]["task"]["taskId"].as_str().unwrap().to_owned();
        let our_id = ours(&incoming);
        let cancel =
            read(&mut tasks, json!({"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":task_id}}));
        assert_eq!(cancel.replies[0]["result"]["status"], "cancelled");
        assert!(matches!(cancel.pass, Some(JsonRpcMessage::Notification(_))));
        assert_eq!(tasks.outgoing(&answer(our_id, json!({"action":"cancel"}))), Some(Vec::new()));
        let again =
            read(&mut tasks, json!({"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":task_id}}));
        assert_eq!(again.replies[0]["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn unknown_tasks_and_missing_ids_are_errors_naming_them() {
        let mut tasks = ClientTasks::default();
        let get = read(&mut tasks, json!({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"nope"}}));
        assert!(get.replies[0]["error"]["message"].as_str().unwrap().contains("\"nope\""));
        let get = read(&mut tasks, json!({"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{}}));
        assert!(get.replies[0]["error"]["message"].as_str().unwrap().contains("taskId"));
    }

    #[test]
    fn past_the_cap_a_request_is_answered_the_plain_way() {
        let mut tasks = ClientTasks::default();
        for id in 0..MAX_TASKS {
            let incoming = read(&mut tasks, elicit(i64::try_from(id).unwrap(), true));
            assert_eq!(incoming.replies.len(), 1);
        }
        let plain = read(&mut tasks, elicit(1000, true));
        assert!(plain.replies.is_empty());
        assert_eq!(ours(&plain), RequestId::Number(1000));
    }

    #[test]
    fn initialize_declares_tasks() {
        let message: ClientJsonRpcMessage = serde_json::from_value(json!({"jsonrpc":"2.0","id":0,"method":"initialize",
            "params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}))
        .unwrap();
        let declared = declare(&message).unwrap();
        assert_eq!(declared["params"]["capabilities"]["tasks"]["requests"]["elicitation"]["create"], json!({}));
        assert_eq!(declared["params"]["capabilities"]["roots"], json!({}));
    }
}
