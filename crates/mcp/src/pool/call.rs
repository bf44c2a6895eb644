//! One call: find the server, start it if needed, send `tools/call`, `resources/read` or
//! `prompts/get`, forward progress, enforce the timeout and the caller's cancellation
//! (both send `notifications/cancelled`), and return the raw result as camelCase JSON. A
//! tool the server runs as a task is followed by `pool/tasks.rs`.

use super::connection::Connection;
use super::http::{JSON_BODY_LIMIT, is_size_error};
use super::http_errors::HttpError;
use super::lines::MARKER;
use super::server::Server;
use super::tasks::{self, TaskCall};
use super::trace::{ClientSpan, MaybeSpan, Op};
use super::weigh::WEIGHT_FACTOR;
use super::{Context, Inner, Pool};
use crate::error::{Error, Result};
use mcpflow_config::Error as ConfigError;
use mcpflow_engine::people::{Answer, Asking, Question};
use mcpflow_engine::{
    AskSink, CallAsk, CallRequest, CallTarget, CallTrace, ProgressSink, SampleSink, TaskHooks, TaskSink,
};
use rmcp::model::InputResponses;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, CustomRequest,
    GetPromptRequest, GetPromptRequestParams, GetPromptResult, ReadResourceRequest, ReadResourceRequestParams,
    ReadResourceResult, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::error::Error as _;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The `_meta` key of a tool call that names the workflows it is made for, outermost
/// first (read by `mcpflow serve` to refuse a workflow that reaches itself).
pub const STACK_META: &str = "mcpflow/stack";

/// What to ask the server.
#[derive(Debug)]
pub(super) enum Method {
    /// `stack`: the workflows the call is made for, sent as `_meta["mcpflow/stack"]`.
    Tool {
        name: String,
        args: Map<String, Value>,
        stack: Vec<String>,
    },
    Resource {
        uri: String,
    },
    Prompt {
        name: String,
        args: Map<String, Value>,
    },
}

impl Pool {
    /// Runs one call and returns the raw MCP result (`CallToolResult`,
    /// `ReadResourceResult` or `GetPromptResult`) as JSON. A tool result with
    /// `isError: true` is a success here: the caller decides what it means.
    pub async fn call(&self, request: CallRequest) -> Result<Value> {
        let CallRequest { target, timeout, cancel, progress, stack, tasks, ask, sample, trace } = request;
        let inner = &*self.inner;
        // Resuming a task: the server that runs it, whatever the step names.
        let target = match (&tasks.resume, target) {
            (Some(handle), CallTarget::Tool { server: None, tool, args }) => {
                CallTarget::Tool { server: Some(handle.server.clone()), tool, args }
            }
            (_, target) => target,
        };
        let named = match &target {
            CallTarget::Tool { server, .. } => server.clone(),
            CallTarget::Resource { server, .. } | CallTarget::Prompt { server, .. } => Some(server.clone()),
        };
        let outcome = async {
            let (server, method) = until_cancelled(&cancel, named.clone(), self.target(target, stack)).await?;
            let connection = until_cancelled(&cancel, Some(server.name.clone()), server.connection(&inner.cx)).await?;
            if let Method::Tool { name, args, .. } = &method
                && tasks.resume.is_none()
            {
                until_cancelled(&cancel, Some(server.name.clone()), has_tool(&server, &connection, name)).await?;
                check_args(&server, &connection, name, args)?;
                if let Some(ask) = ask.as_ref().filter(|a| a.confirm_destructive) {
                    approve_destructive(&server, &connection, name, args, ask).await?;
                }
            }
            let timeout = timeout.or(server.timeout).unwrap_or(inner.cx.options.default_timeout);
            let call = Call {
                inner,
                server: &server,
                connection: &connection,
                method: &method,
                timeout,
                cancel: &cancel,
                trace: trace.as_ref(),
            };
            execute(call, progress, tasks, ask.map(|a| a.sink), sample).await
        }
        .await;
        match outcome {
            Err(_) if inner.cx.closing.is_cancelled() => Err(Error::ShutDown),
            outcome => outcome,
        }
    }

    /// The server that will answer, and the request for it.
    async fn target(&self, target: CallTarget, stack: Vec<String>) -> Result<(Arc<Server>, Method)> {
        Ok(match target {
            CallTarget::Tool { server: Some(server), tool, args } => {
                (self.server(&server)?.clone(), Method::Tool { name: tool, args, stack })
            }
            CallTarget::Tool { server: None, tool, args } => {
                (Box::pin(self.route(&tool)).await?, Method::Tool { name: tool, args, stack })
            }
            CallTarget::Resource { server, uri } => (self.server(&server)?.clone(), Method::Resource { uri }),
            CallTarget::Prompt { server, prompt, args } => {
                (self.server(&server)?.clone(), Method::Prompt { name: prompt, args })
            }
        })
    }
}

async fn until_cancelled<T>(
    cancel: &CancellationToken,
    server: Option<String>,
    work: impl Future<Output = Result<T>>,
) -> Result<T> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Error::Cancelled { server }),
        result = work => result,
    }
}

/// `TOOL_NOT_FOUND` with the nearest names unless the server lists the tool (listing
/// again once, in case a `list_changed` was missed).
async fn has_tool(server: &Server, connection: &Connection, tool: &str) -> Result<()> {
    if connection.discovery.get().tool(tool).is_some() {
        return Ok(());
    }
    Box::pin(connection.discovery.refresh(connection.peer(), super::discovery::List::Tools)).await;
    let discovery = connection.discovery.get();
    if discovery.tool(tool).is_some() {
        return Ok(());
    }
    let names = discovery.tools.iter().map(|t| (server.name.as_str(), t.name.as_ref()));
    Err(Error::ToolNotFound {
        tool: tool.to_owned(),
        server: Some(server.name.clone()),
        nearest: super::routing::nearest(tool, names),
        unreachable: Vec::new(),
    })
}

/// `confirm: "destructive"`: a tool annotated `destructiveHint: true` (and not
/// `readOnlyHint`) is called only once a person approved this call, its arguments shown;
/// otherwise `INPUT_REJECTED` and nothing is sent. Tools without such annotations are not
/// asked about (MCP's default for `destructiveHint` is true, but a server that says
/// nothing about a tool is not taken to have said it destroys).
async fn approve_destructive(
    server: &Server,
    connection: &Connection,
    tool: &str,
    args: &Map<String, Value>,
    ask: &CallAsk,
) -> Result<()> {
    let destructive = {
        let discovery = connection.discovery.get();
        discovery
            .tool(tool)
            .and_then(|t| t.annotations.as_ref())
            .is_some_and(|a| a.destructive_hint == Some(true) && a.read_only_hint != Some(true))
    };
    if !destructive {
        return Ok(());
    }
    let form = mcpflow_blueprint::ask::input_form(None, true, "Approve this call")
        .map_err(|message| ConfigError::ServerConfigInvalid { server: server.name.clone(), message })?;
    let question = Question {
        id: String::new(),
        step: String::new(),
        path: Vec::new(),
        asking: Asking::Approval,
        server: Some(server.name.clone()),
        message: format!("`{tool}` on server `{}` is marked destructive. Call it with these arguments?", server.name),
        schema: Some(form.schema),
        default: None,
        url: None,
        call: Some(serde_json::json!({ "server": server.name, "tool": tool, "arguments": args })),
    };
    match (ask.sink)(question).await {
        Ok(Answer::Accept { content }) if content.get("approve").and_then(Value::as_bool) == Some(true) => Ok(()),
        Ok(_) => Err(Error::NotApproved { server: server.name.clone(), tool: tool.to_owned() }),
        // Nobody could answer: the engine ends the call with why (`INPUT_REQUIRED`).
        Err(_) => Err(Error::Cancelled { server: Some(server.name.clone()) }),
    }
}

/// `ARGS_INVALID` when the arguments break the tool's input schema: nothing is sent.
fn check_args(server: &Server, connection: &Connection, tool: &str, args: &Map<String, Value>) -> Result<()> {
    let discovery = connection.discovery.get();
    let Some(listed) = discovery.tool(tool) else { return Ok(()) };
    connection.args.check(&connection.notes, listed, args).map_err(|problems| Error::ArgsInvalid {
        server: server.name.clone(),
        tool: tool.to_owned(),
        problems,
    })
}

/// One call on one session, with what bounds it.
struct Call<'a> {
    inner: &'a Inner,
    server: &'a Server,
    connection: &'a Connection,
    method: &'a Method,
    timeout: Duration,
    cancel: &'a CancellationToken,
    /// Telemetry on: each request gets a client span (`trace.rs`).
    trace: Option<&'a CallTrace>,
}

/// What a call waits on that is not the server: a person answering the server's question,
/// the model its sampling request. While either is open (or was answered less than the
/// call's timeout ago), the call's deadline waits.
#[derive(Clone, Copy, Default)]
pub(super) struct Waits<'a> {
    asked: Option<&'a super::asks::Asked>,
    sampled: Option<&'a super::sampling::Sampling>,
}

impl Waits<'_> {
    pub fn extends(&self, timeout: Duration) -> Option<Instant> {
        self.asked.and_then(|a| a.extends(timeout)).or_else(|| self.sampled.and_then(|s| s.extends(timeout)))
    }
}

impl Call<'_> {
    fn task<'w>(&'w self, progress: Option<ProgressSink>, started: Option<TaskSink>, waits: Waits<'w>) -> TaskCall<'w> {
        TaskCall {
            waits,
            server: self.server,
            connection: self.connection,
            method: self.method,
            timeout: self.timeout,
            deadlines: &self.inner.cx.deadlines,
            progress,
            cancel: self.cancel,
            started,
            cx: &self.inner.cx,
            cancels: &self.inner.cx.cancels,
            trace: self.trace,
        }
    }
}

async fn execute(
    call: Call<'_>,
    progress: Option<ProgressSink>,
    tasks: TaskHooks,
    ask: Option<AskSink>,
    sample: Option<SampleSink>,
) -> Result<Value> {
    let Call { inner, server, connection, method, timeout, cancel, trace } = call;
    // The server's questions during this call go to its step.
    let asking = ask.map(|sink| connection.asks.register(sink));
    // So do its requests for a model completion.
    let sampling = sample.map(|sink| connection.samples.register(sink));
    let waits = Waits { asked: asking.as_ref().map(|a| &*a.asked), sampled: sampling.as_ref().map(|s| &*s.sampling) };
    let name = || server.name.clone();
    let deadline = inner.cx.deadlines.watch(Instant::now() + timeout);
    let _permit = tokio::select! {
        biased;
        () = cancel.cancelled() => return Err(Error::Cancelled { server: Some(name()) }),
        () = deadline.expired() => return Err(Error::CallTimeout { server: name(), after: timeout }),
        permit = server.permit() => permit,
    };
    drop(deadline);
    let TaskHooks { started, resume } = tasks;
    if let Some(handle) = &resume {
        return call.task(progress, None, waits).resume(handle).await;
    }
    if let Method::Tool { name: tool, .. } = method
        && connection.runs_as_task(tool)
    {
        return call.task(progress, started, waits).start().await;
    }
    // A 2026-07-28 server may answer `input_required` (multi round-trip): its questions
    // are answered on this step and the request is sent again with the answers and the
    // server's echoed state, at most `MRTR_ROUNDS` times.
    let mut retry: Option<(InputResponses, Option<String>)> = None;
    let mut round = 0;
    let (answer, registration, mut span) = loop {
        let deadline = inner.cx.deadlines.watch(Instant::now() + timeout);
        tracing::debug!(server = %server.name, ?method, round, "calling");
        let mut request = method.request_with(retry.take());
        // Each request (each JSON-RPC id) is one client span; its context goes in `_meta`.
        let mut span = trace.map(|trace| ClientSpan::start(trace, &connection.trace, method.op()));
        span.stamp(&mut request);
        let handle = connection.peer().send_request_with_option(request, PeerRequestOptions::no_options()).await;
        let handle = match handle {
            Ok(handle) => handle,
            Err(error) => {
                let error = Box::pin(service_error(&inner.cx, server, connection, error)).await;
                span.failed(&error);
                return Err(error);
            }
        };
        let RequestHandle { rx, id, progress_token, .. } = handle;
        span.sent(&id);
        let registration = progress.clone().map(|sink| connection.progress.register(progress_token, sink));
        let mut deadline = deadline;
        let mut rx = rx;
        let answer = loop {
            tokio::select! {
                biased;
                answer = &mut rx => break answer,
                () = cancel.cancelled() => {
                    send_cancelled(connection, id, "cancelled by the workflow");
                    let error = Error::Cancelled { server: Some(name()) };
                    span.failed(&error);
                    return Err(error);
                }
                () = deadline.expired() => {
                    // A person is answering the server's question, or the model its
                    // sampling request (or just did): the time left is counted from the answer.
                    if let Some(until) = waits.extends(timeout) {
                        deadline = inner.cx.deadlines.watch(until);
                        continue;
                    }
                    send_cancelled(connection, id, "timed out");
                    let error = Error::CallTimeout { server: name(), after: timeout };
                    span.failed(&error);
                    return Err(error);
                }
            }
        };
        if let Ok(Ok(result)) = &answer {
            span.answered(result);
        }
        match answer {
            Ok(Ok(ServerResult::InputRequiredResult(asked))) => {
                round += 1;
                if round > MRTR_ROUNDS {
                    return Err(Error::ProtocolError {
                        server: name(),
                        message: format!(
                            "the server still asked for input after {MRTR_ROUNDS} rounds of answers (`input_required`); \
                             the call was given up"
                        ),
                    });
                }
                drop(registration);
                retry = Some(super::asks::fulfil(server, connection, asking.as_ref(), sampling.as_ref(), asked).await?);
            }
            answer => break (answer, registration, span),
        }
    };
    drop(registration);
    match answer {
        Ok(Ok(result)) => {
            // The same refusal, as the TypeScript SDK gives it (a tool result).
            if let Method::Tool { name: tool, .. } = method
                && needs_task(&result)
            {
                tracing::debug!(server = %server.name, tool, "the tool runs only as a task");
                connection.set_runs_as_task(tool);
                return call.task(progress, started, waits).start().await;
            }
            // A server may run any call as a task (the 2026-07-28 extension): follow it.
            if let Method::Tool { .. } = method
                && !matches!(result, ServerResult::CallToolResult(_))
                && let Some(state) = to_json(&server.name, &result).ok().as_ref().and_then(tasks::read_task)
            {
                return call.task(progress, started, waits).created(state).await;
            }
            method.output(&server.name, result)
        }
        Ok(Err(error)) => {
            // 2025-11-25: a tool whose `execution.taskSupport` is `required` answers a plain
            // call with "method not found" (-32601), before running anything. Such a tool is
            // called as a task from the first call when its listing says so (read raw by the
            // transport: `discovery::TaskTools`); a server whose listing does not say so (or
            // an HTTP answer rmcp parsed from a JSON body) is caught here: that tool runs as
            // a task on this session from now on.
            if let (ServiceError::McpError(data), Method::Tool { name: tool, .. }) = (&error, method)
                && data.code.0 == METHOD_NOT_FOUND
            {
                tracing::debug!(server = %server.name, tool, message = %data.message, "the tool runs as a task");
                span.refused(data.code.0, &data.message);
                connection.set_runs_as_task(tool);
                return call.task(progress, started, waits).start().await;
            }
            let error = Box::pin(service_error(&inner.cx, server, connection, error)).await;
            span.failed(&error);
            Err(error)
        }
        // The session ended with the call in flight.
        Err(_) => {
            let error = Box::pin(connection.ended("the connection closed during the call")).await;
            span.failed(&error);
            Err(error)
        }
    }
}

/// Whether a tool result is the refusal of a task-only tool called without a task, as the
/// TypeScript SDK words it (`isError` with "MCP error -32601: Tool … requires task
/// augmentation (taskSupport: 'required')"): nothing ran, so calling it as a task is safe.
fn needs_task(result: &ServerResult) -> bool {
    let ServerResult::CallToolResult(result) = result else { return false };
    if result.is_error != Some(true) || result.content.len() != 1 {
        return false;
    }
    result.content[0].as_text().is_some_and(|t| {
        t.text.len() < 1024 && t.text.contains("-32601") && t.text.contains("requires task augmentation")
    })
}

/// JSON-RPC's "method not found".
const METHOD_NOT_FOUND: i32 = -32601;

/// Rounds of `input_required` answers one request may take (rmcp's default, as other SDKs).
const MRTR_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// `notifications/cancelled` for request `id`, without waiting: the call returns now.
pub(super) fn send_cancelled(connection: &Connection, id: RequestId, reason: &str) {
    let peer = connection.peer().clone();
    let params = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
    tokio::spawn(async move {
        let _ = tokio::time::timeout(Duration::from_secs(5), peer.notify_cancelled(params)).await;
    });
}

/// rmcp's error for a request of `server`'s, as ours.
pub(super) async fn service_error(
    cx: &Context,
    server: &Server,
    connection: &Connection,
    error: ServiceError,
) -> Error {
    if let Some(refused) = scope_refusal(cx, server, &error).await {
        return refused;
    }
    let max_message_bytes = cx.options.max_message_bytes;
    let server = || connection.notes.server().to_owned();
    match error {
        ServiceError::McpError(data) => match data.data.as_ref().and_then(|d| d.get(MARKER)) {
            Some(made_up) if made_up["code"] == "OUTPUT_TOO_LARGE" => Error::OutputTooLarge {
                server: server(),
                limit: max_message_bytes,
                size: made_up["size"].as_u64().and_then(|s| usize::try_from(s).ok()),
            },
            Some(made_up) if made_up["code"] == "OUTPUT_TOO_HEAVY" => Error::OutputTooHeavy {
                server: server(),
                limit: max_message_bytes.saturating_mul(WEIGHT_FACTOR),
                size: made_up["size"].as_u64().and_then(|s| usize::try_from(s).ok()).unwrap_or_default(),
            },
            Some(_) => Error::ProtocolError { server: server(), message: data.message.into_owned() },
            None => Error::ServerError { server: server(), code: data.code.0, message: data.message.into_owned() },
        },
        // Only rmcp's HTTP client says this: a JSON answer body over its own fixed limit.
        ServiceError::TransportSend(error) if is_size_error(error.error.as_ref()) => {
            Error::OutputTooLarge { server: server(), limit: max_message_bytes.min(JSON_BODY_LIMIT), size: None }
        }
        ServiceError::TransportSend(error) => connection.ended(&format!("sending the request failed: {error}")).await,
        ServiceError::TransportClosed => connection.ended("the connection closed during the call").await,
        ServiceError::Cancelled { reason } => {
            tracing::debug!(server = %server(), ?reason, "the request was cancelled");
            Error::Cancelled { server: Some(server()) }
        }
        ServiceError::Timeout { timeout } => Error::CallTimeout { server: server(), after: timeout },
        other => Error::ProtocolError { server: server(), message: other.to_string() },
    }
}

/// A request an HTTP server refused for want of a permission (HTTP 403 with
/// `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"`) after the session
/// opened — a tool that needs more than the sign-in grants: `AUTH_REQUIRED` naming the
/// scope, which is remembered with the sign-in (the step-up, as when a connection is
/// refused: `pool/http.rs`), so the next sign-in asks for it. `None` for other errors.
async fn scope_refusal(cx: &Context, server: &Server, error: &ServiceError) -> Option<Error> {
    let ServiceError::TransportSend(sent) = error else { return None };
    let http = sent.error.downcast_ref::<HttpError>()?;
    let StreamableHttpError::InsufficientScope(refused) =
        http.source()?.downcast_ref::<StreamableHttpError<reqwest::Error>>()?
    else {
        return None;
    };
    let challenge = mcpflow_auth::flow::parse_challenge(403, &refused.www_authenticate_header)
        .filter(mcpflow_auth::flow::Challenge::is_insufficient_scope)?;
    let name = server.name.as_str();
    tracing::debug!(server = name, scope = ?challenge.scope, "the server refused a request for want of a scope");
    let Some(auth) = &cx.options.auth else {
        // A pool without sign-ins (a library user's): what happened all the same.
        return Some(Error::Auth(mcpflow_auth::Error::AuthRequired {
            server: name.to_owned(),
            reason: "it refused the request: the sign-in lacks a permission it asks for".to_owned(),
            scope: challenge.scope,
            advice: format!("run `mcpflow auth login {name}`"),
        }));
    };
    let config = mcpflow_auth::http_config(name, server.entry());
    let url = config.map(|config| mcpflow_auth::resolved_url(name, config, &cx.options.env));
    let oauth = config.and_then(|config| config.oauth.as_ref());
    Some(Error::from(match url {
        Some(Ok(url)) => match auth.unauthorized(name, &url, oauth, &cx.options.env, None, &challenge).await {
            Err(error) => error,
            Ok(_) => auth.required(name, "the server asks for a wider scope", challenge.scope),
        },
        _ => auth.required(name, "the server asks for a wider scope", challenge.scope),
    }))
}

impl Method {
    /// What the request asks, for its client span.
    pub(super) fn op(&self) -> Op<'_> {
        match self {
            Method::Tool { name, args, .. } => Op::Tool { name, args },
            Method::Resource { uri } => Op::Resource { uri },
            Method::Prompt { name, .. } => Op::Prompt { name },
        }
    }

    /// The tool a `tools/call` is for.
    pub(super) fn tool(&self) -> Option<&str> {
        match self {
            Method::Tool { name, .. } => Some(name),
            _ => None,
        }
    }

    /// `tools/call` asking the server to run it as a task (the 2025-11-25 `task` field,
    /// with the lifetime asked for); other methods as they are.
    pub(super) fn task_request(&self, ttl_ms: u64) -> ClientRequest {
        let request = self.request();
        let ClientRequest::CallToolRequest(call) = &request else { return request };
        let Ok(Value::Object(mut params)) = serde_json::to_value(&call.params) else { return request };
        params.insert("task".to_owned(), serde_json::json!({ "ttl": ttl_ms }));
        ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(Value::Object(params))))
    }

    fn request(&self) -> ClientRequest {
        self.request_with(None)
    }

    /// The request, carrying the answers to an `input_required` result and the server's
    /// state when it is sent again (2026-07-28 multi round-trip).
    fn request_with(&self, retry: Option<(InputResponses, Option<String>)>) -> ClientRequest {
        let (responses, state) = match retry {
            Some((responses, state)) => (Some(responses), state),
            None => (None, None),
        };
        match self {
            Method::Tool { name, args, stack } => {
                let mut params = CallToolRequestParams::new(name.clone()).with_arguments(args.clone());
                if !stack.is_empty() {
                    let mut meta = RequestMetaObject::new();
                    meta.0.0.insert(STACK_META.to_owned(), Value::from(stack.clone()));
                    params.meta = Some(meta);
                }
                params.input_responses = responses;
                params.request_state = state;
                ClientRequest::CallToolRequest(CallToolRequest::new(params))
            }
            Method::Resource { uri } => {
                let mut params = ReadResourceRequestParams::new(uri.clone());
                params.input_responses = responses;
                params.request_state = state;
                ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
            }
            Method::Prompt { name, args } => {
                let mut params = GetPromptRequestParams::new(name.clone()).with_arguments(prompt_arguments(args));
                params.input_responses = responses;
                params.request_state = state;
                ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
            }
        }
    }

    /// The result as camelCase JSON, checked to be the result this method expects.
    pub(super) fn output(&self, server: &str, result: ServerResult) -> Result<Value> {
        let protocol = |message: String| Error::ProtocolError { server: server.to_owned(), message };
        match (self, result) {
            (Method::Tool { .. }, ServerResult::CallToolResult(r)) => tool_json(server, r),
            (Method::Resource { .. }, ServerResult::ReadResourceResult(r)) => to_json(server, &r),
            (Method::Prompt { .. }, ServerResult::GetPromptResult(r)) => to_json(server, &r),
            (_, ServerResult::InputRequiredResult(_)) => Err(protocol(
                "the server asked for more input (`input_required`), which a workflow step cannot give".to_owned(),
            )),
            (_, ServerResult::CreateTaskResult(_)) => {
                Err(protocol("the server answered with a task where it may not (not a `tools/call`)".to_owned()))
            }
            // rmcp reads answers as an untagged union, so an answer may arrive as another
            // shape: accept it when it reads as the expected one.
            (method, other) => {
                let value = to_json(server, &other)?;
                match method {
                    Method::Tool { .. } => reshape::<CallToolResult>(server, value, "tools/call"),
                    Method::Resource { .. } => reshape::<ReadResourceResult>(server, value, "resources/read"),
                    Method::Prompt { .. } => reshape::<GetPromptResult>(server, value, "prompts/get"),
                }
            }
        }
    }
}

pub(super) fn to_json(server: &str, result: &impl Serialize) -> Result<Value> {
    serde_json::to_value(result).map_err(|e| Error::ProtocolError { server: server.to_owned(), message: e.to_string() })
}

/// A tool result as JSON; its `structuredContent` is moved into place, not copied.
fn tool_json(server: &str, mut result: CallToolResult) -> Result<Value> {
    let structured = result.structured_content.take();
    let mut value = to_json(server, &result)?;
    if let (Some(structured), Value::Object(map)) = (structured, &mut value) {
        // Where serde writes it: right after `content`.
        let at = map.keys().position(|k| k == "content").map_or(map.len(), |i| i + 1);
        map.shift_insert(at, "structuredContent".to_owned(), structured);
    }
    Ok(value)
}

fn reshape<T: DeserializeOwned + Serialize>(server: &str, value: Value, method: &str) -> Result<Value> {
    let parsed: T = serde_json::from_value(value).map_err(|e| Error::ProtocolError {
        server: server.to_owned(),
        message: format!("the answer to `{method}` is not a valid `{method}` result: {e}"),
    })?;
    to_json(server, &parsed)
}

/// MCP prompt arguments are strings: other values are passed as compact JSON.
fn prompt_arguments(args: &Map<String, Value>) -> Map<String, Value> {
    args.iter()
        .map(|(name, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (name.clone(), Value::String(text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prompt_arguments_become_strings() {
        let args = json!({"n": 3, "s": "x", "o": {"a": [1]}, "b": true});
        let Value::Object(args) = args else { panic!() };
        assert_eq!(
            Value::Object(prompt_arguments(&args)),
            json!({"n": "3", "s": "x", "o": "{\"a\":[1]}", "b": "true"})
        );
    }

    #[test]
    fn results_are_camel_case_json_of_the_expected_shape() {
        let tool = Method::Tool { name: "t".into(), args: Map::new(), stack: Vec::new() };
        let result: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": "no"}], "isError": true})).unwrap();
        assert_eq!(
            tool.output("s", ServerResult::CallToolResult(result)).unwrap(),
            json!({"content": [{"type": "text", "text": "no"}], "isError": true})
        );
        let full = json!({"resultType": "complete", "content": [{"type": "text", "text": "t"}],
            "structuredContent": {"b": [1, {"c": null}], "a": 2}, "isError": false, "_meta": {"m": 1}});
        let result: CallToolResult = serde_json::from_value(full).unwrap();
        let moved = tool.output("s", ServerResult::CallToolResult(result.clone())).unwrap();
        assert_eq!(
            serde_json::to_string(&moved).unwrap(),
            serde_json::to_string(&to_json("s", &result).unwrap()).unwrap()
        );
        let null: CallToolResult = serde_json::from_value(json!({"structuredContent": null})).unwrap();
        assert_eq!(
            tool.output("s", ServerResult::CallToolResult(null)).unwrap(),
            json!({"content": [], "structuredContent": null})
        );
        // `content` is required: `{}` is not a tool result.
        assert_eq!(tool.output("s", ServerResult::empty(())).unwrap_err().code(), "PROTOCOL_ERROR");
        let resource = Method::Resource { uri: "u".into() };
        assert_eq!(resource.output("s", ServerResult::empty(())).unwrap_err().code(), "PROTOCOL_ERROR");
    }
}
