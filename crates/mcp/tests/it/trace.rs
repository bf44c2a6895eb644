//! Client spans and W3C trace propagation (issue 19): a call that brings a `CallTrace`
//! gets one CLIENT span per MCP request, a child of the given parent, with the
//! OpenTelemetry MCP semantic-convention attributes, and the server receives that span's
//! context in `params._meta` (`traceparent`, `tracestate`) beside the `_meta` keys the
//! pool sends anyway. Checked against the testkit `echo` fixture's `meta` tool (stdio and
//! streamable HTTP) and the TypeScript SDK server `tests/servers/meta_ts.mjs`, with the
//! engine's in-memory `Recorder` as the telemetry.

use crate::http_bridge::{Answers, serve_over_http_with_session};
use crate::support::{config, configs, pool, request, start_listening, testkit, tool};
use mcpflow_engine::telemetry::RecordedSpan;
use mcpflow_engine::{Attr, CallRequest, CallTarget, CallTrace, Measure, Recorder, SpanKind, SpanStatus, TraceContext};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, STACK_META};
use mcpflow_testkit::Fixture;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const STATE: &str = "rojo=00f067aa0ba902b7";

fn parent() -> TraceContext {
    TraceContext::parse(PARENT, Some(STATE)).unwrap()
}

/// `request`, traced into `recorder` under [`PARENT`].
fn traced(mut request: CallRequest, recorder: &Arc<Recorder>) -> CallRequest {
    request.trace = Some(CallTrace { telemetry: recorder.clone(), parent: parent() });
    request
}

/// An attribute as text (static and shared strings alike, numbers in decimal).
fn attr(span: &RecordedSpan, key: &str) -> Option<String> {
    span.attr(key).map(|value| match value {
        Attr::Static(s) => (*s).to_owned(),
        Attr::Str(s) => s.to_string(),
        Attr::Int(n) => n.to_string(),
        other => format!("{other:?}"),
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The one span the recorder holds.
fn only_span(recorder: &Recorder) -> RecordedSpan {
    let spans = recorder.recorded().spans;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    spans.into_iter().next().unwrap()
}

/// The span is a CLIENT child of [`PARENT`] in its trace, and the server received its
/// context as `_meta.traceparent` (and the parent's `tracestate`).
fn assert_propagated(span: &RecordedSpan, result: &Value) {
    assert_eq!(span.kind, SpanKind::Client);
    assert_eq!(hex(&span.trace_id), TRACE_ID);
    assert_eq!(span.parent, Some(parent().span_id));
    let sent = &result["structuredContent"];
    assert_eq!(sent["traceparent"], format!("00-{TRACE_ID}-{}-01", hex(&span.span_id)), "{result}");
    assert_eq!(sent["tracestate"], STATE, "{result}");
}

/// Waits until a span named `name` has its request sent (it carries the request's id), or
/// fails after 30 s (a guard against a hang only).
async fn until_sent(recorder: &Recorder, name: &str) {
    let sent = crate::support::eventually(Duration::from_secs(30), || {
        recorder.recorded().spans.iter().any(|s| s.name == name && attr(s, "jsonrpc.request.id").is_some())
    })
    .await;
    assert!(sent, "no `{name}` request was sent: {:#?}", recorder.recorded().spans);
}

/// One `McpCall` per request, and the requests in flight back to 0.
fn assert_measured(recorder: &Recorder, requests: usize) -> Vec<Vec<(&'static str, Attr)>> {
    let measures = recorder.recorded().measures;
    let calls: Vec<_> = measures
        .iter()
        .filter_map(|m| match m {
            Measure::McpCall { attrs, .. } => Some(attrs.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), requests, "{measures:#?}");
    let deltas: Vec<i64> = measures
        .iter()
        .filter_map(|m| match m {
            Measure::InFlight { delta, .. } => Some(*delta),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.len(), 2 * requests, "{measures:#?}");
    assert_eq!(deltas.iter().sum::<i64>(), 0, "{measures:#?}");
    calls
}

fn metric_attr(attrs: &[(&'static str, Attr)], key: &str) -> Option<Attr> {
    attrs.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| v.clone())
}

#[tokio::test]
async fn a_stdio_call_is_a_client_span_whose_context_reaches_the_server_with_the_other_meta_keys() {
    let pool = pool(vec![("echo", testkit("echo"))]);
    let recorder = Arc::new(Recorder::new(false));
    let mut call = traced(tool(Some("echo"), "meta", json!({})), &recorder);
    call.stack = vec!["outer".to_owned()];
    call.progress = Some(Arc::new(|_| {}));
    let result = pool.call(call).await.unwrap();
    let span = only_span(&recorder);
    assert_propagated(&span, &result);
    // What the pool puts in `_meta` anyway is still there.
    let meta = &result["structuredContent"]["meta"];
    assert_eq!(meta[STACK_META], json!(["outer"]), "{meta}");
    assert!(meta.get("progressToken").is_some(), "{meta}");

    assert_eq!(span.name, "tools/call meta");
    assert_eq!(span.status, Some(SpanStatus::Unset));
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "meta"),
        ("gen_ai.operation.name", "execute_tool"),
        ("network.transport", "pipe"),
        ("mcpflow.server.name", "echo"),
        // The fixture is an rmcp 3.9 server: it answers `server/discover`.
        ("mcp.protocol.version", "2026-07-28"),
    ] {
        assert_eq!(attr(&span, key).as_deref(), Some(value), "{key}: {span:#?}");
    }
    let id = attr(&span, "jsonrpc.request.id").unwrap();
    assert!(id.parse::<u64>().is_ok(), "{id}");
    for absent in
        ["mcp.session.id", "server.address", "network.protocol.name", "error.type", "gen_ai.tool.call.arguments"]
    {
        assert_eq!(span.attr(absent), None, "{absent}: {span:#?}");
    }

    let calls = assert_measured(&recorder, 1);
    let attrs = &calls[0];
    assert_eq!(metric_attr(attrs, "mcp.method.name"), Some(Attr::Static("tools/call")));
    assert_eq!(metric_attr(attrs, "gen_ai.tool.name"), Some(Attr::Str("meta".into())));
    assert_eq!(metric_attr(attrs, "network.transport"), Some(Attr::Static("pipe")));
    // No ids on metrics.
    assert_eq!(metric_attr(attrs, "jsonrpc.request.id"), None);
    assert_eq!(metric_attr(attrs, "mcpflow.server.name"), None);

    // Untraced, nothing about a trace is sent (and nothing recorded).
    let untraced = pool.call(tool(Some("echo"), "meta", json!({}))).await.unwrap();
    assert_eq!(untraced["structuredContent"]["traceparent"], Value::Null, "{untraced}");
    assert_eq!(untraced["structuredContent"]["tracestate"], Value::Null, "{untraced}");
    assert_eq!(recorder.recorded().spans.len(), 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn over_streamable_http_the_span_has_the_session_the_host_and_the_port() {
    let server = serve_over_http_with_session(Fixture::Echo, Answers::Sse, Some("bridge-session-7")).await;
    let port = server.url.rsplit_once(':').unwrap().1.trim_end_matches("/mcp").to_owned();
    // 2025-11-25 (`initialize`) has sessions; 2026-07-28 has none.
    let url = format!("{}?token=not-on-spans", server.url);
    for (era, session) in [("2025-11-25", Some("bridge-session-7")), ("2026-07-28", None)] {
        let pool = pool(vec![("web", config(json!({ "url": url, "protocol": era })))]);
        let recorder = Arc::new(Recorder::new(false));
        let result = pool.call(traced(tool(Some("web"), "meta", json!({})), &recorder)).await.unwrap();
        let span = only_span(&recorder);
        assert_propagated(&span, &result);
        assert_eq!(attr(&span, "mcp.session.id").as_deref(), session, "{era}: {span:#?}");
        assert_eq!(attr(&span, "mcp.protocol.version").as_deref(), Some(era));
        assert_eq!(attr(&span, "network.transport").as_deref(), Some("tcp"));
        assert_eq!(attr(&span, "network.protocol.name").as_deref(), Some("http"));
        assert_eq!(attr(&span, "server.address").as_deref(), Some("127.0.0.1"));
        assert_eq!(attr(&span, "server.port"), Some(port.clone()));
        assert!(span.attrs.iter().all(|(_, v)| !format!("{v:?}").contains("not-on-spans")), "{span:#?}");
        let calls = assert_measured(&recorder, 1);
        assert_eq!(metric_attr(&calls[0], "server.port"), Some(Attr::Int(port.parse().unwrap())));
        assert_eq!(metric_attr(&calls[0], "mcp.session.id"), None);
        pool.shutdown().await;
    }
}

/// `crates/mcp/tests/servers/meta_ts.mjs` (the TypeScript SDK), with `args` after it.
fn meta_ts(args: &[&str]) -> (PathBuf, Vec<String>) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/meta_ts.mjs");
    (
        script.clone(),
        std::iter::once(script.display().to_string()).chain(args.iter().map(|a| (*a).to_owned())).collect(),
    )
}

#[tokio::test]
async fn the_typescript_sdk_server_reads_the_trace_context_from_meta_over_stdio_and_http() {
    let (_, stdio) = meta_ts(&[]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (script, _) = meta_ts(&[]);
    let mut command = tokio::process::Command::new("node");
    command.arg(&script).arg("--http").env("PORT", port.to_string());
    let mut http = start_listening(command, "listening on").await;
    let pool = pool(vec![
        ("ts", config(json!({ "command": "node", "args": stdio }))),
        ("ts-http", config(json!({ "url": format!("http://127.0.0.1:{port}/mcp") }))),
    ]);
    for server in ["ts", "ts-http"] {
        let recorder = Arc::new(Recorder::new(false));
        let mut call = traced(tool(Some(server), "meta", json!({})), &recorder);
        call.stack = vec!["outer".to_owned()];
        let result = pool.call(call).await.unwrap();
        let span = only_span(&recorder);
        assert_propagated(&span, &result);
        assert_eq!(result["structuredContent"]["meta"][STACK_META], json!(["outer"]), "{result}");
        // The SDK speaks 2025-11-25: `server/discover` is refused, `initialize` follows.
        assert_eq!(attr(&span, "mcp.protocol.version").as_deref(), Some("2025-11-25"), "{server}");
        let session = attr(&span, "mcp.session.id");
        if server == "ts-http" {
            // A UUID the server assigned.
            assert_eq!(session.as_ref().map(String::len), Some(36), "{span:#?}");
        } else {
            assert_eq!(session, None);
        }
        assert_measured(&recorder, 1);
    }
    pool.shutdown().await;
    http.kill().await.unwrap();
}

#[tokio::test]
async fn errors_set_error_type_a_json_rpc_code_a_tool_error_or_our_code() {
    let pool = pool(vec![("echo", testkit("echo")), ("faulty", testkit("faulty"))]);

    // A JSON-RPC error: its code, and the server's message as the status.
    let recorder = Arc::new(Recorder::new(false));
    let read = request(CallTarget::Resource { server: "echo".into(), uri: "echo://nope".into() });
    let error = pool.call(traced(read, &recorder)).await.unwrap_err();
    assert_eq!(error.code(), "SERVER_ERROR", "{error}");
    let span = only_span(&recorder);
    assert_eq!(span.name, "resources/read");
    assert_eq!(attr(&span, "mcp.resource.uri").as_deref(), Some("echo://nope"));
    let code = attr(&span, "error.type").unwrap();
    assert!(code.parse::<i32>().is_ok_and(|c| c < 0), "{span:#?}");
    assert_eq!(attr(&span, "rpc.response.status_code"), Some(code.clone()));
    let Some(SpanStatus::Error(message)) = &span.status else { panic!("{span:#?}") };
    assert!(message.contains("no resource echo://nope"), "{message}");
    let calls = assert_measured(&recorder, 1);
    assert_eq!(metric_attr(&calls[0], "error.type"), Some(Attr::Str(code.as_str().into())));
    // Resource URIs are not on the metric.
    assert_eq!(metric_attr(&calls[0], "mcp.resource.uri"), None);

    // A tool result with `isError: true`: the call succeeds, its span is a `tool_error`.
    let recorder = Arc::new(Recorder::new(false));
    let result =
        pool.call(traced(tool(Some("faulty"), "is_error", json!({"message": "no"})), &recorder)).await.unwrap();
    assert_eq!(result["isError"], true);
    let span = only_span(&recorder);
    assert_eq!(attr(&span, "error.type").as_deref(), Some("tool_error"));
    assert!(matches!(span.status, Some(SpanStatus::Error(_))), "{span:#?}");
    assert_eq!(attr(&span, "rpc.response.status_code"), None);
    assert_measured(&recorder, 1);

    // Timed out: our code.
    let recorder = Arc::new(Recorder::new(false));
    let mut sleep = traced(tool(Some("echo"), "sleep", json!({"ms": 5000})), &recorder);
    sleep.timeout = Some(Duration::from_millis(200));
    let error = pool.call(sleep).await.unwrap_err();
    assert_eq!(error.code(), "CALL_TIMEOUT");
    let span = only_span(&recorder);
    assert_eq!(attr(&span, "error.type").as_deref(), Some("CALL_TIMEOUT"));
    assert!(matches!(span.status, Some(SpanStatus::Error(_))), "{span:#?}");
    assert!(attr(&span, "jsonrpc.request.id").is_some());
    assert_measured(&recorder, 1);

    // Cancelled by the caller: our code too.
    let recorder = Arc::new(Recorder::new(false));
    let sleep = traced(tool(Some("echo"), "sleep", json!({"ms": 600_000})), &recorder);
    let cancel = sleep.cancel.clone();
    let cancelling = tokio::spawn({
        let recorder = recorder.clone();
        async move {
            until_sent(&recorder, "tools/call sleep").await;
            cancel.cancel();
        }
    });
    assert_eq!(pool.call(sleep).await.unwrap_err().code(), "CANCELLED");
    cancelling.await.unwrap();
    assert_eq!(attr(&only_span(&recorder), "error.type").as_deref(), Some("CANCELLED"));
    assert_measured(&recorder, 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_dropped_call_ends_its_span_and_its_request_in_flight() {
    let pool = pool(vec![("echo", testkit("echo"))]);
    pool.call(tool(Some("echo"), "echo", json!({"message": "up"}))).await.unwrap();
    let recorder = Arc::new(Recorder::new(false));
    let sleep = traced(tool(Some("echo"), "sleep", json!({"ms": 600_000})), &recorder);
    // Dropped once its request is on its way.
    tokio::select! {
        done = pool.call(sleep) => panic!("the call ended before it was dropped: {done:?}"),
        () = until_sent(&recorder, "tools/call sleep") => {}
    }
    let span = only_span(&recorder);
    assert_eq!(attr(&span, "error.type").as_deref(), Some("CANCELLED"));
    assert!(span.status.is_some(), "{span:#?}");
    assert_measured(&recorder, 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn payloads_are_captured_only_when_asked_with_the_launch_secrets_hidden() {
    let env: mcpflow_mcp::EnvLookup = Arc::new(|name: &str| (name == "TOKEN").then(|| "tok-4711-secret".to_owned()));
    let mut echo = testkit("echo");
    echo.env.insert("TOKEN".to_owned(), Value::from("${env:TOKEN}"));
    let pool = Pool::new(configs(vec![("echo", echo)]), Approvals::allow_all(), PoolOptions::default().with_env(env));
    let message = json!({"message": "use tok-4711-secret please"});

    let off = Arc::new(Recorder::new(false));
    pool.call(traced(tool(Some("echo"), "echo", message.clone()), &off)).await.unwrap();
    let span = only_span(&off);
    assert_eq!(span.attr("gen_ai.tool.call.arguments"), None);
    assert_eq!(span.attr("gen_ai.tool.call.result"), None);

    let on = Arc::new(Recorder::new(true));
    let result = pool.call(traced(tool(Some("echo"), "echo", message), &on)).await.unwrap();
    // The tool's data is the caller's: the result itself is not rewritten.
    assert!(result.to_string().contains("tok-4711-secret"), "{result}");
    let span = only_span(&on);
    let arguments = attr(&span, "gen_ai.tool.call.arguments").unwrap();
    let parsed: Value = serde_json::from_str(&arguments).unwrap();
    assert_eq!(parsed, json!({"message": "use ${env:TOKEN} please"}));
    let captured = attr(&span, "gen_ai.tool.call.result").unwrap();
    assert!(captured.contains("use ${env:TOKEN} please"), "{captured}");
    assert!(!captured.contains("tok-4711-secret") && !arguments.contains("tok-4711-secret"));
    // Never on the metric.
    let calls = assert_measured(&on, 1);
    assert_eq!(metric_attr(&calls[0], "gen_ai.tool.call.arguments"), None);

    // Cut to 8 KiB.
    let on = Arc::new(Recorder::new(true));
    let long = "x".repeat(20_000);
    pool.call(traced(tool(Some("echo"), "echo", json!({ "message": long })), &on)).await.unwrap();
    let span = only_span(&on);
    for key in ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"] {
        let text = attr(&span, key).unwrap();
        assert!(text.len() <= 8 * 1024 && text.ends_with('…'), "{key}: {}", text.len());
    }
    pool.shutdown().await;
}

#[tokio::test]
async fn a_prompt_is_named_after_it() {
    let pool = pool(vec![("echo", testkit("echo"))]);
    let recorder = Arc::new(Recorder::new(false));
    let greet = request(CallTarget::Prompt {
        server: "echo".into(),
        prompt: "greet".into(),
        args: crate::support::args(json!({"name": "Ada"})),
    });
    pool.call(traced(greet, &recorder)).await.unwrap();
    let span = only_span(&recorder);
    assert_eq!(span.name, "prompts/get greet");
    assert_eq!(attr(&span, "mcp.method.name").as_deref(), Some("prompts/get"));
    assert_eq!(attr(&span, "gen_ai.prompt.name").as_deref(), Some("greet"));
    assert_eq!(span.attr("gen_ai.tool.name"), None);
    assert_measured(&recorder, 1);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_task_has_a_span_per_request_the_create_each_poll_the_result_and_the_cancel() {
    let pool = pool(vec![("everything", crate::support::node("server-everything", &["stdio"]))]);
    let recorder = Arc::new(Recorder::new(true));
    let call = traced(tool(Some("everything"), "simulate-research-query", json!({"topic": "tides"})), &recorder);
    let result = pool.call(call).await.unwrap();
    assert!(crate::support::text(&result).contains("# Research Report: tides"), "{result}");
    let spans = recorder.recorded().spans;
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.first(), Some(&"tools/call simulate-research-query"), "{names:?}");
    assert_eq!(names.last(), Some(&"tasks/result"), "{names:?}");
    assert!(names[1..names.len() - 1].iter().all(|n| *n == "tasks/get") && names.len() > 2, "{names:?}");
    let mut ids = Vec::new();
    for span in &spans {
        assert_eq!(span.parent, Some(parent().span_id), "{span:#?}");
        assert_eq!(span.status, Some(SpanStatus::Unset), "{span:#?}");
        assert_eq!(attr(span, "gen_ai.tool.name").as_deref(), Some("simulate-research-query"));
        ids.push(attr(span, "jsonrpc.request.id").unwrap());
    }
    ids.dedup();
    assert_eq!(ids.len(), spans.len(), "each request its own id: {ids:?}");
    assert_eq!(attr(&spans[0], "mcp.method.name").as_deref(), Some("tools/call"));
    assert!(attr(&spans[0], "gen_ai.tool.call.arguments").unwrap().contains("tides"));
    assert_eq!(attr(&spans[1], "mcp.method.name").as_deref(), Some("tasks/get"));
    // The tool's result is the answer to `tasks/result`.
    assert!(attr(spans.last().unwrap(), "gen_ai.tool.call.result").unwrap().contains("Research Report"));
    assert_measured(&recorder, spans.len());

    // Cancelled: `tasks/cancel` in a span of its own, sent after the call returned.
    let recorder = Arc::new(Recorder::new(false));
    let call = traced(tool(Some("everything"), "simulate-research-query", json!({"topic": "stop"})), &recorder);
    let cancel = call.cancel.clone();
    let cancelling = tokio::spawn({
        let recorder = recorder.clone();
        async move {
            // Once the task exists on the server and is being polled.
            until_sent(&recorder, "tasks/get").await;
            cancel.cancel();
        }
    });
    assert_eq!(pool.call(call).await.unwrap_err().code(), "CANCELLED");
    cancelling.await.unwrap();
    let ended = crate::support::eventually(Duration::from_secs(30), || {
        recorder.recorded().spans.iter().any(|s| s.name == "tasks/cancel" && s.status.is_some())
    })
    .await;
    let spans = recorder.recorded().spans;
    assert!(ended, "{spans:#?}");
    assert!(spans.iter().all(|s| s.parent == Some(parent().span_id) && s.status.is_some()), "{spans:#?}");
    let cancelled = spans.iter().find(|s| s.name == "tasks/cancel").unwrap();
    assert_eq!(attr(cancelled, "mcp.method.name").as_deref(), Some("tasks/cancel"));
    assert_eq!(attr(cancelled, "gen_ai.tool.name").as_deref(), Some("simulate-research-query"));
    assert!(attr(cancelled, "jsonrpc.request.id").is_some(), "{cancelled:#?}");
    assert_measured(&recorder, spans.len());
    pool.shutdown().await;
}

#[tokio::test]
async fn each_round_of_an_input_required_call_is_a_request_of_its_own() {
    use mcpflow_engine::CallAsk;
    use mcpflow_engine::people::Answer;
    // The Python SDK at 2026-07-28 answers `deploy` with `input_required`; the answered
    // request is sent again (a new JSON-RPC id).
    let pool = pool(vec![("ask", crate::support::python_server("ask_py.py"))]);
    let recorder = Arc::new(Recorder::new(false));
    let mut call = traced(tool(Some("ask"), "deploy", json!({"service": "web"})), &recorder);
    call.ask = Some(CallAsk {
        sink: Arc::new(|_| Box::pin(async { Ok(Answer::Accept { content: json!({"cluster": "c1", "replicas": 2}) }) })),
        confirm_destructive: false,
    });
    let result = pool.call(call).await.unwrap();
    assert!(result.to_string().contains("c1"), "{result}");
    let spans = recorder.recorded().spans;
    assert_eq!(spans.len(), 2, "{spans:#?}");
    assert!(spans.iter().all(|s| s.name == "tools/call deploy" && s.parent == Some(parent().span_id)));
    assert!(spans.iter().all(|s| s.status == Some(SpanStatus::Unset)), "{spans:#?}");
    assert_ne!(attr(&spans[0], "jsonrpc.request.id"), attr(&spans[1], "jsonrpc.request.id"));
    assert_eq!(attr(&spans[0], "mcp.protocol.version").as_deref(), Some("2026-07-28"));
    assert_measured(&recorder, 2);
    pool.shutdown().await;
}
