//! Issue 19's span tree: a run with a loop, a parallel fan-out, a retry and a
//! sub-workflow, exported by the real OpenTelemetry SDK over OTLP/HTTP to a receiver on
//! loopback that decodes with the official `opentelemetry-proto` definitions.

use super::{Setup, Spec as _, run_as, setup};
use mcpflow_app::headless::HeadlessRun;
use mcpflow_engine::{EventKind, RunEvent, RunStatus, Telemetry};
use mcpflow_telemetry::{Config, Flags, Otel};
use mcpflow_testkit::otlp::{Receiver, SpanRec};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// An exporter to `receiver` as `--otlp URL` and the standard variables configure it
/// (a short batch delay, a service name of its own), without export retries.
fn otel(receiver: &Receiver) -> Arc<Otel> {
    let flags = Flags { otlp: Some(receiver.url()), capture_payloads: false };
    let env = |var: &str| match var {
        "OTEL_SERVICE_NAME" => Some("mcpflow-it".to_owned()),
        "OTEL_BSP_SCHEDULE_DELAY" => Some("50".to_owned()),
        "OTEL_EXPORTER_OTLP_TIMEOUT" => Some("5000".to_owned()),
        _ => None,
    };
    let mut config = Config::resolve(&flags, None, env).unwrap().unwrap();
    config.retries = false;
    Arc::new(Otel::start(&config, Arc::new(|line: &str| panic!("telemetry reported: {line}"))).unwrap())
}

/// Runs `blueprint` headless with `telemetry`; returns the envelope and the events.
async fn traced(
    s: &Setup,
    blueprint: Value,
    telemetry: Arc<dyn Telemetry>,
) -> (mcpflow_engine::Envelope, Vec<RunEvent>) {
    let ran = run_as(blueprint, &HeadlessRun { telemetry: Some(telemetry), ..s.spec() }).await;
    (ran.envelope, ran.events)
}

fn named<'a>(spans: &'a [SpanRec], name: &str) -> Vec<&'a SpanRec> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [SpanRec], name: &str) -> &'a SpanRec {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "expected one span `{name}`:\n{}", mcpflow_testkit::otlp::tree(spans));
    found[0]
}

fn parent_of<'a>(spans: &'a [SpanRec], span: &SpanRec) -> &'a SpanRec {
    let id = span.parent_span_id.as_deref().unwrap_or_else(|| panic!("`{}` has no parent", span.name));
    spans.iter().find(|s| s.span_id == id).unwrap_or_else(|| panic!("the parent of `{}` was not exported", span.name))
}

fn attr<'a>(span: &'a SpanRec, key: &str) -> &'a Value {
    span.attrs.get(key).unwrap_or_else(|| panic!("`{}` has no attribute {key}: {:?}", span.name, span.attrs))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_one_trace_with_a_span_per_step_attempt_and_a_client_span_per_mcp_call() {
    let s = setup(json!({}));
    std::fs::write(
        s.dir.path().join("child.blueprint.json"),
        json!({ "blueprint": 1, "id": "child", "steps": [
            { "id": "c1", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": 1, "b": 2 } },
            { "id": "c2", "kind": "tool", "server": "echo", "tool": "multiply", "args": { "a": "{{ c1.sum }}", "b": 2 } }
        ] })
        .to_string(),
    )
    .unwrap();
    let blueprint = json!({ "blueprint": 1, "id": "traced", "steps": [
        { "id": "each", "kind": "loop", "after": [], "for_each": [1, 2, 3], "concurrency": 2,
          "steps": [{ "id": "sq", "kind": "tool", "server": "echo", "tool": "multiply", "args": { "a": "{{ item }}", "b": "{{ item }}" } }],
          "collect": "{{ sq.product }}" },
        { "id": "left", "kind": "tool", "after": [], "server": "echo", "tool": "echo", "args": { "message": "left" } },
        { "id": "right", "kind": "tool", "after": [], "server": "echo", "tool": "echo", "args": { "message": "right" } },
        { "id": "flaky", "kind": "tool", "after": [], "server": "faulty", "tool": "fail_n_times", "args": { "key": "k", "n": 1 },
          "retry": { "attempts": 2, "delay_ms": 10 } },
        { "id": "call", "kind": "workflow", "after": ["each", "left", "right", "flaky"], "workflow": "child" },
        { "id": "probe", "kind": "tool", "after": ["call"], "server": "echo", "tool": "meta" }
    ] });
    let receiver = Receiver::start(0).unwrap();
    let otel = otel(&receiver);
    let (envelope, events) = traced(&s, blueprint, otel.clone()).await;
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:?}", envelope.errors);
    let shut = otel.clone();
    tokio::task::spawn_blocking(move || shut.shutdown()).await.unwrap();

    // 3 loop iterations + 2 fan-out + 2 attempts + call + 2 child steps + probe = 11
    // attempts; 10 tool calls; the roots, the iterations: all ended and exported.
    let spans = receiver.wait_for(1 + 11 + 3 + 1 + 10, Duration::from_secs(10));
    let tree = mcpflow_testkit::otlp::tree(&spans);

    // One trace, the envelope's and the RunStarted event's.
    let trace_id = envelope.trace_id.clone().expect("the envelope carries the trace id");
    assert!(spans.iter().all(|s| s.trace_id == trace_id), "{tree}");
    let started = events.iter().find_map(|e| match &e.kind {
        EventKind::RunStarted { trace_id, .. } => Some(trace_id.clone()),
        _ => None,
    });
    assert_eq!(started, Some(Some(trace_id.clone())));

    // One root: the run.
    let roots: Vec<_> = spans.iter().filter(|s| s.parent_span_id.is_none()).collect();
    assert_eq!(roots.len(), 1, "{tree}");
    let root = roots[0];
    assert_eq!(root.name, "run traced");
    assert_eq!(attr(root, "mcpflow.blueprint.id"), "traced");
    assert_eq!(attr(root, "mcpflow.run.id"), &json!(envelope.run_id));
    assert_eq!(attr(root, "mcpflow.run.status"), "succeeded");
    assert_eq!(root.service, "mcpflow-it");

    // The loop: step each → iteration each (×3) → step sq.
    let each = one(&spans, "step each");
    assert_eq!(parent_of(&spans, each).span_id, root.span_id, "{tree}");
    let iterations = named(&spans, "iteration each");
    assert_eq!(iterations.len(), 3, "{tree}");
    for it in &iterations {
        assert_eq!(parent_of(&spans, it).span_id, each.span_id, "{tree}");
    }
    let sq = named(&spans, "step sq");
    assert_eq!(sq.len(), 3, "{tree}");
    let mut indexes: Vec<i64> = sq
        .iter()
        .map(|s| {
            let it = parent_of(&spans, s);
            assert_eq!(it.name, "iteration each", "{tree}");
            assert_eq!(attr(s, "mcpflow.loop.index"), attr(it, "mcpflow.loop.index"));
            attr(s, "mcpflow.loop.index").as_i64().unwrap()
        })
        .collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [0, 1, 2]);

    // The fan-out: both under the root.
    for id in ["left", "right"] {
        assert_eq!(parent_of(&spans, one(&spans, &format!("step {id}"))).span_id, root.span_id, "{tree}");
    }

    // The retry: two attempts; the first failed and says so.
    let mut flaky = named(&spans, "step flaky");
    flaky.sort_by_key(|s| attr(s, "mcpflow.step.attempt").as_i64());
    assert_eq!(flaky.len(), 2, "{tree}");
    assert_eq!(attr(flaky[0], "mcpflow.step.attempt"), 1);
    assert_eq!(attr(flaky[0], "mcpflow.step.outcome"), "retrying");
    assert!(attr(flaky[0], "error.type").is_string());
    assert_eq!(flaky[0].status, "error");
    assert_eq!(attr(flaky[1], "mcpflow.step.attempt"), 2);
    assert_eq!(attr(flaky[1], "mcpflow.step.outcome"), "succeeded");
    assert_ne!(flaky[1].status, "error");

    // The sub-workflow: run child under step call, its steps under it.
    let call = one(&spans, "step call");
    let child = one(&spans, "run child");
    assert_eq!(parent_of(&spans, child).span_id, call.span_id, "{tree}");
    assert_eq!(attr(child, "mcpflow.run.trigger"), "workflow");
    for id in ["c1", "c2"] {
        assert_eq!(parent_of(&spans, one(&spans, &format!("step {id}"))).span_id, child.span_id, "{tree}");
    }

    // A CLIENT span per MCP request, under its attempt, with the MCP conventions.
    // (The envelope counts the run's own 8 calls; the sub-workflow's 2 are its own.)
    let clients: Vec<_> = spans.iter().filter(|s| s.kind == "client").collect();
    assert_eq!(envelope.summary.tool_calls, 8);
    assert_eq!(clients.len(), 10, "{tree}");
    for attempt in
        spans.iter().filter(|s| s.name.starts_with("step ") && s.name != "step each" && s.name != "step call")
    {
        let calls = clients.iter().filter(|c| c.parent_span_id.as_deref() == Some(attempt.span_id.as_str())).count();
        assert_eq!(calls, 1, "one request per attempt of `{}`\n{tree}", attempt.name);
    }
    for c in &clients {
        let attempt = parent_of(&spans, c);
        assert!(attempt.name.starts_with("step "), "{} under {}\n{tree}", c.name, attempt.name);
        let tool = attr(c, "gen_ai.tool.name").as_str().unwrap();
        assert_eq!(c.name, format!("tools/call {tool}"));
        assert_eq!(attr(c, "mcp.method.name"), "tools/call");
        assert_eq!(attr(c, "network.transport"), "pipe");
        assert!(attr(c, "mcp.protocol.version").is_string());
        assert!(c.attrs.contains_key("jsonrpc.request.id"), "{:?}", c.attrs);
        assert!(!c.attrs.contains_key("gen_ai.tool.call.arguments"), "payloads are off by default");
    }
    let failed: Vec<_> = clients.iter().filter(|c| c.attrs.contains_key("error.type")).collect();
    assert_eq!(failed.len(), 1, "only the first flaky call failed\n{tree}");
    assert_eq!(attr(failed[0], "error.type"), "tool_error");
    assert_eq!(parent_of(&spans, failed[0]).span_id, flaky[0].span_id);

    // The server saw the traceparent of the client span that called it.
    let probe_client = clients.iter().find(|c| attr(c, "gen_ai.tool.name") == "meta").unwrap();
    let seen = envelope.output["traceparent"].as_str().unwrap_or_else(|| panic!("{}", envelope.output));
    assert_eq!(seen, format!("00-{trace_id}-{}-01", probe_client.span_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_telemetry_the_envelope_has_no_trace_and_no_traceparent_reaches_the_server() {
    let s = setup(json!({}));
    let ran = super::run(
        &s,
        json!({ "blueprint": 1, "id": "plain", "steps": [{ "id": "probe", "kind": "tool", "server": "echo", "tool": "meta" }] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.trace_id, None);
    assert!(ran.envelope.output.get("traceparent").is_none_or(Value::is_null), "{}", ran.envelope.output);
    let json = serde_json::to_value(&ran.envelope).unwrap();
    assert!(json.get("trace_id").is_none(), "{json}");
}
