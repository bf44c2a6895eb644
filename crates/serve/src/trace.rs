//! The trace a `tools/call` to `mcpflow serve` continues. An agent that traces sends its
//! span as a W3C `traceparent` (and `tracestate`) in the request's `_meta` (SEP-414, the
//! OpenTelemetry MCP conventions) or, over streamable HTTP, in the HTTP headers; `_meta`
//! wins. With telemetry on, the call gets a SERVER span under the caller's, and the run it
//! starts is a child of that span, so the agent's trace holds the whole workflow.

use axum::http::request::Parts;
use mcpflow_engine::telemetry::{Attr, OpenSpan, SpanKind, SpanStart, SpanStatus, Telemetry, TraceContext};
use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, NumberOrString, RequestMetaObject};
use rmcp::service::RequestContext;
use serde_json::Value;
use std::sync::Arc;

/// The caller's trace context, if it sent a valid one. A malformed `traceparent` is
/// ignored (the W3C rule: the receiver starts a new trace), and logged at debug level.
pub(super) fn incoming(request: &CallToolRequestParams, context: &RequestContext<RoleServer>) -> Option<TraceContext> {
    let from_meta = |meta: &RequestMetaObject| {
        let parent = meta.0.0.get("traceparent").and_then(Value::as_str)?;
        let state = meta.0.0.get("tracestate").and_then(Value::as_str);
        Some((parent.to_owned(), state.map(str::to_owned)))
    };
    let from_headers = || {
        let parts = context.extensions.get::<Parts>()?;
        let parent = parts.headers.get("traceparent")?.to_str().ok()?;
        let state = parts.headers.get("tracestate").and_then(|v| v.to_str().ok());
        Some((parent.to_owned(), state.map(str::to_owned)))
    };
    let (parent, state) =
        request.meta.as_ref().and_then(from_meta).or_else(|| from_meta(&context.meta)).or_else(from_headers)?;
    match TraceContext::parse(&parent, state.as_deref()) {
        Ok(mut ctx) => {
            ctx.remote = true;
            Some(ctx)
        }
        Err(e) => {
            tracing::debug!(error = %e, "ignored the caller's traceparent");
            None
        }
    }
}

/// The SERVER span of one `tools/call` (none when telemetry is off).
pub(super) struct ServerSpan(Option<Box<dyn OpenSpan>>);

impl ServerSpan {
    /// Starts `tools/call {tool}` under the caller's `parent` (a new trace without one).
    pub(super) fn start(
        telemetry: Option<&Arc<dyn Telemetry>>,
        tool: &str,
        parent: Option<&TraceContext>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let Some(telemetry) = telemetry else { return ServerSpan(None) };
        let parts = context.extensions.get::<Parts>();
        let mut attrs: Vec<(&'static str, Attr)> = vec![
            ("mcp.method.name", Attr::Static("tools/call")),
            ("gen_ai.tool.name", Attr::from(tool.to_owned())),
            ("gen_ai.operation.name", Attr::Static("execute_tool")),
            ("network.transport", Attr::Static(if parts.is_some() { "tcp" } else { "pipe" })),
        ];
        attrs.push((
            "jsonrpc.request.id",
            match &context.id {
                NumberOrString::Number(n) => Attr::from(n.to_string()),
                NumberOrString::String(s) => Attr::Str(s.clone()),
            },
        ));
        if let Some(parts) = parts {
            attrs.push(("network.protocol.name", Attr::Static("http")));
            // Ids the client is given by the server (ours); cut so a client cannot make it big.
            if let Some(session) = parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
                attrs.push(("mcp.session.id", Attr::from(session.chars().take(128).collect::<String>())));
            }
        }
        if let Some(version) = context.peer.peer_info().map(|info| info.protocol_version.to_string()) {
            attrs.push(("mcp.protocol.version", Attr::from(version)));
        }
        ServerSpan(Some(telemetry.start(SpanStart {
            name: format!("tools/call {tool}").into(),
            kind: SpanKind::Server,
            parent,
            attrs,
        })))
    }

    /// The span the run is to continue: this one, else the caller's.
    pub(super) fn context(&self) -> Option<&TraceContext> {
        self.0.as_ref().map(|span| span.context())
    }

    /// Ends it: `error` is the code of a failed call.
    pub(super) fn end(self, error: Option<&str>) {
        let Some(mut span) = self.0 else { return };
        match error {
            None => span.end(SpanStatus::Unset),
            Some(code) => {
                span.set("error.type", Attr::from(code.to_owned()));
                span.end(SpanStatus::Error(code.to_owned().into()));
            }
        }
    }
}
