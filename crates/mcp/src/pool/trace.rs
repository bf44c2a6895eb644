//! Client spans: one per MCP request a call makes (`tools/call`, `prompts/get`,
//! `resources/read`, and the `tasks/get`, `tasks/result`, `tasks/cancel` of a tool run as
//! a task), made only when the call brings a [`CallTrace`] (telemetry on). Each span is a
//! child of the caller's span (the step attempt), named and described as the OpenTelemetry
//! semantic conventions for MCP say (`{mcp.method.name} {target}`, `mcp.method.name`,
//! `gen_ai.tool.name`, `mcp.session.id`, `jsonrpc.request.id`, …), and its W3C context goes
//! to the server in the request's `params._meta` (`traceparent`, `tracestate`), so a
//! server that traces joins the run's trace. No HTTP `traceparent` header is sent: the
//! MCP context and the transport's are independent.
//!
//! Each request also records `mcp.client.operation.duration` ([`Measure::McpCall`]) and
//! the requests in flight ([`Measure::InFlight`]). Arguments and results go on the span
//! (`gen_ai.tool.call.arguments` / `.result`) only when the telemetry captures payloads,
//! cut to [`PAYLOAD_LIMIT`] bytes and with the server's `${env:NAME}` secrets hidden.
//!
//! Not traced: the connect-time `initialize` / `server/discover` / `tools/list` (they
//! belong to the shared pool, not to a run), and the re-issue of a request whose answer
//! stream broke (`reissue.rs`: the same request, sent again below rmcp).

use super::notes::ServerNotes;
use crate::error::Error;
use mcpflow_engine::{Attr, CallTrace, Measure, OpenSpan, SpanKind, SpanName, SpanStart, SpanStatus, Telemetry};
use rmcp::model::{ClientRequest, ErrorData, GetMeta as _, RequestId, ServerResult};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// The longest payload (arguments, result) put on a span, in bytes.
pub(crate) const PAYLOAD_LIMIT: usize = 8 * 1024;

/// The `_meta` keys of the W3C trace context (unprefixed, as SEP-414 and the semantic
/// conventions say).
pub(crate) const TRACEPARENT_META: &str = "traceparent";
pub(crate) const TRACESTATE_META: &str = "tracestate";

/// What the spans of one session say about where they go: fixed when the session opens,
/// but for the HTTP session id, which the server assigns.
#[derive(Debug)]
pub(crate) struct TraceInfo {
    /// `mcpflow.server.name`.
    pub server: Arc<str>,
    /// `network.transport`: `pipe` (stdio, in process) or `tcp` (streamable HTTP).
    pub transport: &'static str,
    /// Over streamable HTTP: `network.protocol.name=http`, `server.address`, `server.port`
    /// and the session id.
    pub http: Option<HttpTarget>,
    /// `mcp.protocol.version`: the version the session negotiated.
    pub protocol: Option<Arc<str>>,
    /// Hides the launch's secrets from what is captured.
    pub notes: Arc<ServerNotes>,
}

/// Where an HTTP server is: its host and port, never the path or the query (they may
/// hold a token).
#[derive(Debug)]
pub(crate) struct HttpTarget {
    pub address: Option<Arc<str>>,
    pub port: Option<u16>,
    pub session: Arc<SessionId>,
}

impl HttpTarget {
    /// The host and port of `url` (the port the scheme implies when none is written).
    pub fn new(url: &str, session: Arc<SessionId>) -> HttpTarget {
        let parsed = url::Url::parse(url).ok();
        let address = parsed.as_ref().and_then(|u| u.host_str()).map(|h| Arc::from(h.trim_matches(['[', ']'])));
        let port = parsed.as_ref().and_then(url::Url::port_or_known_default);
        HttpTarget { address, port, session }
    }
}

/// The session id a streamable HTTP server assigned (`Mcp-Session-Id`), as the
/// transport last sent it; none before the server assigned one, nor in the 2026-07-28
/// era, which has no sessions.
#[derive(Debug, Default)]
pub(crate) struct SessionId(Mutex<Option<Arc<str>>>);

impl SessionId {
    /// Notes the id a request is sent with (a cheap compare when it is the same).
    pub fn set(&self, id: &Arc<str>) {
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if held.as_ref() != Some(id) {
            *held = Some(id.clone());
        }
    }

    pub fn get(&self) -> Option<Arc<str>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// What a request asks, for its span's name and attributes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op<'a> {
    /// `tools/call` (plain, or asking for a task); `args` for `gen_ai.tool.call.arguments`.
    Tool {
        name: &'a str,
        args: &'a Map<String, Value>,
    },
    Prompt {
        name: &'a str,
    },
    Resource {
        uri: &'a str,
    },
    /// `tasks/get`, `tasks/result`, `tasks/cancel` of the task a tool call runs as.
    Task {
        method: &'static str,
        tool: Option<&'a str>,
    },
}

impl Op<'_> {
    fn method(&self) -> &'static str {
        match self {
            Op::Tool { .. } => "tools/call",
            Op::Prompt { .. } => "prompts/get",
            Op::Resource { .. } => "resources/read",
            Op::Task { method, .. } => method,
        }
    }
}

/// One client span, open while its request is: ended with the request's outcome, or
/// when dropped (the call went away before the answer) as cancelled.
pub(crate) struct ClientSpan {
    span: Option<Box<dyn OpenSpan>>,
    telemetry: Arc<dyn Telemetry>,
    info: Arc<TraceInfo>,
    method: &'static str,
    /// The attributes `mcp.client.operation.duration` is recorded with.
    metric: Vec<(&'static str, Attr)>,
    started: Instant,
    /// The answer is a tool's result (`gen_ai.tool.call.result` when capturing).
    tool_result: bool,
}

impl ClientSpan {
    /// Starts the span of a request about to be sent, a child of the call's parent span.
    pub fn start(trace: &CallTrace, info: &Arc<TraceInfo>, op: Op<'_>) -> ClientSpan {
        let method = op.method();
        // The metric's attributes first; the span has them and more (`attrs`, below).
        let mut metric: Vec<(&'static str, Attr)> = Vec::with_capacity(8);
        metric.push(("mcp.method.name", Attr::Static(method)));
        let mut resource = None;
        let name = match op {
            Op::Tool { name, .. } => {
                metric.push(("gen_ai.tool.name", Attr::Str(Arc::from(name))));
                metric.push(("gen_ai.operation.name", Attr::Static("execute_tool")));
                SpanName::Owned(["tools/call ", name].concat())
            }
            Op::Prompt { name } => {
                metric.push(("gen_ai.prompt.name", Attr::Str(Arc::from(name))));
                SpanName::Owned(["prompts/get ", name].concat())
            }
            Op::Resource { uri } => {
                // Not on the metric: one series per resource would be too many.
                resource = Some(("mcp.resource.uri", Attr::Str(Arc::from(uri))));
                SpanName::Static(method)
            }
            Op::Task { tool, .. } => {
                if let Some(tool) = tool {
                    metric.push(("gen_ai.tool.name", Attr::Str(Arc::from(tool))));
                }
                SpanName::Static(method)
            }
        };
        if let Some(protocol) = &info.protocol {
            metric.push(("mcp.protocol.version", Attr::Str(protocol.clone())));
        }
        metric.push(("network.transport", Attr::Static(info.transport)));
        if let Some(http) = &info.http {
            if let Some(address) = &http.address {
                metric.push(("server.address", Attr::Str(address.clone())));
            }
            if let Some(port) = http.port {
                metric.push(("server.port", Attr::Int(i64::from(port))));
            }
        }
        let mut attrs = Vec::with_capacity(metric.len() + 5);
        attrs.extend(metric.iter().cloned());
        attrs.extend(resource);
        if let Some(http) = &info.http {
            attrs.push(("network.protocol.name", Attr::Static("http")));
            if let Some(session) = http.session.get() {
                attrs.push(("mcp.session.id", Attr::Str(session)));
            }
        }
        attrs.push(("mcpflow.server.name", Attr::Str(info.server.clone())));
        let telemetry = trace.telemetry.clone();
        if let Op::Tool { args, .. } = op
            && telemetry.capture_payloads()
        {
            attrs.push(("gen_ai.tool.call.arguments", payload(&info.notes, args)));
        }
        let span = telemetry.start(SpanStart { name, kind: SpanKind::Client, parent: Some(&trace.parent), attrs });
        telemetry.measure(Measure::InFlight { method, server: info.server.clone(), delta: 1 });
        let tool_result = matches!(op, Op::Tool { .. } | Op::Task { method: "tasks/result", tool: Some(_) });
        ClientSpan {
            span: Some(span),
            telemetry,
            info: info.clone(),
            method,
            metric,
            started: Instant::now(),
            tool_result,
        }
    }

    /// Puts this span's context in the request's own `_meta` (`traceparent`,
    /// `tracestate`), beside `mcpflow/stack` and what rmcp adds (`progressToken`, …).
    /// Written into the request rather than passed as rmcp's request options, which rmcp
    /// clones and merges per request (about 6,000 instructions a call, callgrind).
    pub fn stamp(&self, request: &mut ClientRequest) {
        let Some(span) = &self.span else { return };
        let context = span.context();
        let meta = &mut request.get_meta_mut().0.0;
        meta.insert(TRACEPARENT_META.to_owned(), Value::String(context.traceparent()));
        if let Some(state) = context.tracestate() {
            meta.insert(TRACESTATE_META.to_owned(), Value::String(state.to_owned()));
        }
    }

    /// The request went out with this JSON-RPC id (a string attribute, as the semantic
    /// conventions type it).
    pub fn sent(&mut self, id: &RequestId) {
        if let Some(span) = &mut self.span {
            span.set("jsonrpc.request.id", Attr::Str(request_id(id)));
        }
    }

    /// The server answered with a result: a tool result with `isError: true` is a
    /// `tool_error`; any other result a success.
    pub fn answered(mut self, result: &ServerResult) {
        if self.tool_result
            && self.telemetry.capture_payloads()
            && let Some(span) = &mut self.span
        {
            span.set("gen_ai.tool.call.result", payload(&self.info.notes, result));
        }
        match result {
            ServerResult::CallToolResult(r) if r.is_error == Some(true) => self.end(
                Attr::Static("tool_error"),
                None,
                Cow::Borrowed("the tool reported an error (`isError: true`)"),
            ),
            _ => self.end_ok(),
        }
    }

    /// The server answered with a JSON-RPC error (its message already hidden of the
    /// launch's secrets by `hidden.rs`; hidden again here in case the error was made
    /// elsewhere).
    pub fn refused(self, code: i32, message: &str) {
        let text = self.info.notes.hide(message.to_owned());
        let code: Arc<str> = code.to_string().into();
        self.end(Attr::Str(code.clone()), Some(code), Cow::Owned(text));
    }

    /// The answer was a JSON-RPC error: the server's, or one the transport made up for
    /// an answer it could not pass on (`OUTPUT_TOO_LARGE`, `PROTOCOL_ERROR`: our code).
    pub fn rejected(self, error: &ErrorData) {
        let made_up = error.data.as_ref().and_then(|d| d.get(super::lines::MARKER)).and_then(|m| m.get("code"));
        match made_up.and_then(Value::as_str) {
            Some(code) => {
                let message = Cow::Owned(self.info.notes.hide(error.message.to_string()));
                self.end(Attr::Str(Arc::from(code)), None, message);
            }
            None => self.refused(error.code.0, &error.message),
        }
    }

    /// The request failed on our side or the transport's (timed out, cancelled,
    /// disconnected, …), or the server answered with an error: `error.type` is our code,
    /// or for a server's JSON-RPC error ([`Error::ServerError`]) its code.
    pub fn failed(self, error: &Error) {
        match error {
            Error::ServerError { code, message, .. } => self.refused(*code, message),
            other => {
                let message = Cow::Owned(other.to_string());
                self.end(Attr::Static(other.code()), None, message)
            }
        }
    }

    /// Failed with one of our codes, without an [`Error`] at hand.
    pub fn failed_with(self, code: &'static str, message: &'static str) {
        self.end(Attr::Static(code), None, Cow::Borrowed(message));
    }

    fn end_ok(mut self) {
        if let Some(span) = self.span.take() {
            span.end(SpanStatus::Unset);
            self.measured();
        }
    }

    fn end(mut self, error_type: Attr, status_code: Option<Arc<str>>, message: Cow<'static, str>) {
        let Some(mut span) = self.span.take() else { return };
        span.set("error.type", error_type.clone());
        self.metric.push(("error.type", error_type));
        if let Some(code) = status_code {
            span.set("rpc.response.status_code", Attr::Str(code.clone()));
            self.metric.push(("rpc.response.status_code", Attr::Str(code)));
        }
        span.end(SpanStatus::Error(message));
        self.measured();
    }

    fn measured(&mut self) {
        let duration = self.started.elapsed();
        let attrs = std::mem::take(&mut self.metric);
        self.telemetry.measure(Measure::McpCall { duration, attrs });
        self.telemetry.measure(Measure::InFlight { method: self.method, server: self.info.server.clone(), delta: -1 });
    }
}

impl Drop for ClientSpan {
    fn drop(&mut self) {
        if let Some(mut span) = self.span.take() {
            span.set("error.type", Attr::Static("CANCELLED"));
            self.metric.push(("error.type", Attr::Static("CANCELLED")));
            span.end(SpanStatus::Error(Cow::Borrowed("the call went away before the server answered")));
            self.measured();
        }
    }
}

/// A span that may not be there (telemetry off): each step is one branch then.
pub(crate) trait MaybeSpan {
    fn stamp(&self, request: &mut ClientRequest);
    fn sent(&mut self, id: &RequestId);
    fn answered(&mut self, result: &ServerResult);
    fn refused(&mut self, code: i32, message: &str);
    fn rejected(&mut self, error: &ErrorData);
    fn failed(&mut self, error: &Error);
    fn failed_with(&mut self, code: &'static str, message: &'static str);
}

impl MaybeSpan for Option<ClientSpan> {
    fn stamp(&self, request: &mut ClientRequest) {
        if let Some(span) = self {
            span.stamp(request);
        }
    }

    fn sent(&mut self, id: &RequestId) {
        if let Some(span) = self {
            span.sent(id);
        }
    }

    fn answered(&mut self, result: &ServerResult) {
        if let Some(span) = self.take() {
            span.answered(result);
        }
    }

    fn refused(&mut self, code: i32, message: &str) {
        if let Some(span) = self.take() {
            span.refused(code, message);
        }
    }

    fn rejected(&mut self, error: &ErrorData) {
        if let Some(span) = self.take() {
            span.rejected(error);
        }
    }

    fn failed(&mut self, error: &Error) {
        if let Some(span) = self.take() {
            span.failed(error);
        }
    }

    fn failed_with(&mut self, code: &'static str, message: &'static str) {
        if let Some(span) = self.take() {
            span.failed_with(code, message);
        }
    }
}

/// A JSON-RPC id as its string form, in one allocation (a number's without `to_string`'s
/// formatter and copy; a string's shared).
fn request_id(id: &RequestId) -> Arc<str> {
    match id {
        RequestId::String(s) => s.clone(),
        RequestId::Number(n) => Arc::from(itoa::Buffer::new().format(*n)),
    }
}

/// `value` as JSON for a span: the launch's secrets hidden, then cut to
/// [`PAYLOAD_LIMIT`] bytes on a character boundary (`…` marks the cut).
fn payload(notes: &ServerNotes, value: &impl Serialize) -> Attr {
    let text = serde_json::to_string(value).unwrap_or_else(|e| format!("(not serializable: {e})"));
    let mut text = notes.hide(text);
    if text.len() > PAYLOAD_LIMIT {
        let mut end = PAYLOAD_LIMIT - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    Attr::Str(text.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_cut_on_a_char_boundary_within_the_limit() {
        let notes = ServerNotes::new("s", None);
        let Attr::Str(short) = payload(&notes, &serde_json::json!({"a": 1})) else { panic!() };
        assert_eq!(&*short, r#"{"a":1}"#);
        let Attr::Str(long) = payload(&notes, &"é".repeat(PAYLOAD_LIMIT)) else { panic!() };
        assert!(long.len() <= PAYLOAD_LIMIT && long.ends_with('…'), "{}", long.len());
    }

    #[test]
    fn request_ids_are_written_as_the_id_serializes() {
        for n in [0, 7, 10, 12_345, -1, -907, i64::MAX, i64::MIN] {
            assert_eq!(&*request_id(&RequestId::Number(n)), RequestId::Number(n).to_string(), "{n}");
        }
        let named = RequestId::String("req-7".into());
        assert_eq!(&*request_id(&named), named.to_string());
    }

    #[test]
    fn an_http_target_is_its_host_and_port_only() {
        let session = Arc::new(SessionId::default());
        let target = HttpTarget::new("https://user:pw@example.com/mcp?token=x", session.clone());
        assert_eq!((target.address.as_deref(), target.port), (Some("example.com"), Some(443)));
        let target = HttpTarget::new("http://[::1]:8080/mcp", session.clone());
        assert_eq!((target.address.as_deref(), target.port), (Some("::1"), Some(8080)));
        let target = HttpTarget::new("not a url", session);
        assert_eq!((target.address, target.port), (None, None));
    }
}
