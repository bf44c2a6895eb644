//! `mcpflow serve` with telemetry on: a `run_workflow` call joins the caller's trace, from
//! the request's `_meta` or its `traceparent` header, exported by the real OpenTelemetry
//! SDK to a receiver on loopback.

use super::{Setup, setup};
use mcpflow_telemetry::Flags;
use mcpflow_testkit::otlp::{Receiver, SpanRec};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn attr<'a>(span: &'a SpanRec, key: &str) -> &'a Value {
    span.attrs.get(key).unwrap_or_else(|| panic!("`{}` has no attribute {key}: {:?}", span.name, span.attrs))
}

/// `mcpflow serve` over streamable HTTP with telemetry on, and an rmcp client (our pool)
/// whose server entry sends `headers`.
async fn traced_serve(
    s: &Setup,
    receiver: &Receiver,
    headers: Value,
) -> (mcpflow_app::App, mcpflow_serve::http::HttpServer, mcpflow_mcp::Pool) {
    use mcpflow_serve::http::{HttpOptions, serve_http};
    let store = mcpflow_store::Store::open_temporary().unwrap();
    let telemetry = mcpflow_app::telemetry::TelemetryOptions {
        flags: Flags { otlp: Some(receiver.url()), capture_payloads: false },
        report: Some(Arc::new(|line: &str| panic!("telemetry reported: {line}"))),
    };
    let options = mcpflow_app::AppOptions {
        server_files: vec![s.servers.clone()],
        allow_all: true,
        telemetry,
        ..mcpflow_app::AppOptions::default()
    };
    let app = mcpflow_app::App::with_store(store, Vec::new(), options).unwrap();
    assert!(app.telemetry().is_some(), "telemetry is on");
    let token = super::serve::TOKEN;
    let options = HttpOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        token: token.into(),
        hosts: Vec::new(),
        limits: Default::default(),
    };
    let server = serve_http(app.clone(), options).await.unwrap();
    let mut headers = headers;
    headers["Authorization"] = json!(format!("Bearer {token}"));
    let doc =
        json!({ "mcpServers": { "mcpflow": { "url": format!("http://{}/mcp", server.addr), "headers": headers } } });
    let configs = mcpflow_mcp::ServerConfigs::parse(&doc.to_string(), "test").unwrap();
    let pool = mcpflow_mcp::Pool::new(configs, mcpflow_mcp::Approvals::new(), mcpflow_mcp::PoolOptions::default());
    (app, server, pool)
}

fn run_workflow(trace: Option<mcpflow_engine::CallTrace>) -> mcpflow_engine::CallRequest {
    let blueprint = json!({ "blueprint": 1, "id": "served", "steps": [
        { "id": "hello", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi" } }
    ] });
    mcpflow_engine::CallRequest {
        target: mcpflow_engine::CallTarget::Tool {
            server: Some("mcpflow".into()),
            tool: "run_workflow".into(),
            args: json!({ "blueprint": blueprint }).as_object().cloned().unwrap(),
        },
        timeout: None,
        cancel: CancellationToken::new(),
        progress: None,
        stack: Vec::new(),
        tasks: Default::default(),
        ask: None,
        sample: None,
        trace,
    }
}

/// Checks that the run `envelope` reports sits in trace `trace`, under a SERVER span
/// `tools/call run_workflow` whose parent is `caller_span`.
fn assert_joined(spans: &[SpanRec], envelope: &Value, trace: &str, caller_span: &str) {
    let tree = mcpflow_testkit::otlp::tree(spans);
    assert_eq!(envelope["trace_id"], trace, "{envelope}");
    let server = spans
        .iter()
        .find(|s| s.trace_id == trace && s.kind == "server")
        .unwrap_or_else(|| panic!("no server span in trace {trace}:\n{tree}"));
    assert_eq!(server.name, "tools/call run_workflow");
    assert_eq!(server.parent_span_id.as_deref(), Some(caller_span), "{tree}");
    assert_eq!(attr(server, "mcp.method.name"), "tools/call");
    assert_eq!(attr(server, "network.transport"), "tcp");
    // (A 2026-07-28 session has no `Mcp-Session-Id`, so no `mcp.session.id`.)
    let root = spans.iter().find(|s| s.trace_id == trace && s.name == "run served").unwrap();
    assert_eq!(root.parent_span_id.as_deref(), Some(server.span_id.as_str()), "{tree}");
    assert_eq!(attr(root, "mcpflow.run.trigger"), "mcp");
    let hello = spans.iter().find(|s| s.trace_id == trace && s.name == "step hello").unwrap();
    assert_eq!(hello.parent_span_id.as_deref(), Some(root.span_id.as_str()), "{tree}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_workflow_through_serve_joins_the_callers_trace_from_meta() {
    let s = setup(json!({}));
    let receiver = Receiver::start(0).unwrap();
    let (app, server, pool) = traced_serve(&s, &receiver, json!({})).await;
    // The agent: a pool that traces into a recorder, its call's span under the agent's.
    let agent = Arc::new(mcpflow_engine::Recorder::new(false));
    let caller =
        mcpflow_engine::TraceContext::parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None).unwrap();
    let trace = mcpflow_engine::CallTrace { telemetry: agent.clone(), parent: caller };
    let answer = pool.call(run_workflow(Some(trace))).await.unwrap();
    let envelope = &answer["structuredContent"];
    assert_eq!(envelope["status"], "succeeded", "{answer}");
    // The agent's client span is the parent of serve's server span.
    let recorded = agent.recorded();
    let client = recorded.spans.iter().find(|s| s.name == "tools/call run_workflow").unwrap();
    let client_id: String = client.span_id.iter().map(|b| format!("{b:02x}")).collect();
    pool.shutdown().await;
    server.stop().await.unwrap();
    app.shutdown().await;
    let spans = receiver.wait_for(4, Duration::from_secs(10));
    assert_joined(&spans, envelope, "0af7651916cd43dd8448eb211c80319c", &client_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_workflow_through_serve_joins_the_callers_trace_from_the_http_header() {
    let s = setup(json!({}));
    let receiver = Receiver::start(0).unwrap();
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (app, server, pool) = traced_serve(&s, &receiver, json!({ "traceparent": traceparent })).await;
    let answer = pool.call(run_workflow(None)).await.unwrap();
    let envelope = answer["structuredContent"].clone();
    assert_eq!(envelope["status"], "succeeded", "{answer}");
    pool.shutdown().await;
    server.stop().await.unwrap();
    app.shutdown().await;
    let spans = receiver.wait_for(4, Duration::from_secs(10));
    assert_joined(&spans, &envelope, "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
}
