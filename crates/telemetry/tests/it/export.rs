use mcpflow_engine::RunStatus;
use mcpflow_engine::telemetry::{Attr, Measure, SpanKind, SpanStart, SpanStatus, Telemetry, TraceContext};
use mcpflow_telemetry::{Config, Otel, Protocol, Reporter};
use mcpflow_testkit::otlp::Receiver;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn config(base: &str, max_queue: usize) -> Config {
    Config {
        traces_endpoint: Some(format!("{base}/v1/traces")),
        metrics_endpoint: Some(format!("{base}/v1/metrics")),
        metric_interval: Duration::from_secs(60),
        protocol: Protocol::HttpProtobuf,
        ..grpc_config(base, max_queue)
    }
}

/// Over gRPC the base URL is the endpoint of both signals.
fn grpc_config(base: &str, max_queue: usize) -> Config {
    Config {
        traces_endpoint: Some(base.to_owned()),
        metrics_endpoint: Some(base.to_owned()),
        metric_interval: Duration::from_secs(60),
        protocol: Protocol::Grpc,
        headers: Vec::new(),
        capture_payloads: false,
        service_name: "mcpflow-test".into(),
        timeout: Duration::from_secs(5),
        max_queue,
        scheduled_delay: Duration::from_millis(50),
        retries: false,
    }
}

/// Runs `work` on a thread of its own and fails if it has not returned within a minute: a
/// guard against a hang (an exporter waiting for a collector that is down), not a speed
/// check. What the spans cost with the collector down is `benches/call.rs`.
fn within_a_minute<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(work());
    });
    result.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|e| panic!("{what} did not return: {e}"))
}

fn reporter() -> (Reporter, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    (Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned())), lines)
}

fn span<'a>(
    name: &'static str,
    kind: SpanKind,
    parent: Option<&'a TraceContext>,
    attrs: Vec<(&'static str, Attr)>,
) -> SpanStart<'a> {
    SpanStart { name: name.into(), kind, parent, attrs }
}

#[test]
fn a_span_tree_arrives_with_its_parents_kinds_attributes_and_status() {
    let receiver = Receiver::start(0).unwrap();
    a_span_tree_arrives(&receiver, &config(&receiver.url(), 2048));
}

#[cfg(feature = "otlp-grpc")]
#[test]
fn over_grpc_a_span_tree_arrives_with_its_parents_kinds_attributes_and_status() {
    let receiver = Receiver::start_grpc(0).unwrap();
    a_span_tree_arrives(&receiver, &grpc_config(&receiver.url(), 2048));
    assert!(receiver.other_requests().is_empty(), "{:?}", receiver.other_requests());
}

fn a_span_tree_arrives(receiver: &Receiver, config: &Config) {
    let (report, lines) = reporter();
    let otel = Otel::start(config, report).unwrap();

    let root = otel.start(span("run bp", SpanKind::Internal, None, vec![("mcpflow.blueprint.id", "bp".into())]));
    let mut step = otel.start(span(
        "step fetch",
        SpanKind::Internal,
        Some(root.context()),
        vec![("mcpflow.step.id", "fetch".into()), ("mcpflow.step.attempt", 1u32.into())],
    ));
    let call = otel.start(span(
        "tools/call echo",
        SpanKind::Client,
        Some(step.context()),
        vec![("mcp.method.name", "tools/call".into()), ("gen_ai.tool.name", Attr::Str("echo".into()))],
    ));
    assert_eq!(call.context().trace_id, root.context().trace_id);
    let trace_id = root.context().trace_id_hex();
    let (root_id, step_id, call_id) =
        (root.context().span_id_hex(), step.context().span_id_hex(), call.context().span_id_hex());
    call.end(SpanStatus::Error("CALL_TIMEOUT".into()));
    step.set("mcpflow.step.path", Attr::IntArray(Arc::from([0i64, 2])));
    step.end(SpanStatus::Unset);
    root.end(SpanStatus::Ok);

    // A run that continues a caller's trace: its root's parent is the caller's span.
    let caller =
        TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Some("vendor=x")).unwrap();
    let joined = otel.start(span("run callee", SpanKind::Internal, Some(&caller), Vec::new()));
    assert_eq!(joined.context().trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(joined.context().tracestate(), Some("vendor=x"));
    joined.end(SpanStatus::Unset);

    otel.shutdown();
    let spans = receiver.wait_for(4, Duration::from_secs(10));
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let by_name =
        |name: &str| spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no span {name}: {spans:#?}"));

    let run = by_name("run bp");
    assert_eq!((run.trace_id.as_str(), run.span_id.as_str()), (trace_id.as_str(), root_id.as_str()));
    assert_eq!(run.parent_span_id, None);
    assert_eq!((run.kind, run.status), ("internal", "ok"));
    assert_eq!(run.attrs["mcpflow.blueprint.id"], "bp");
    assert_eq!(run.service, "mcpflow-test");

    let step = by_name("step fetch");
    assert_eq!(step.span_id, step_id);
    assert_eq!(step.parent_span_id.as_deref(), Some(root_id.as_str()));
    assert_eq!(step.attrs["mcpflow.step.attempt"], 1);
    assert_eq!(step.attrs["mcpflow.step.path"], serde_json::json!([0, 2]));
    assert_eq!(step.status, "unset");

    let call = by_name("tools/call echo");
    assert_eq!(call.span_id, call_id);
    assert_eq!(call.parent_span_id.as_deref(), Some(step_id.as_str()));
    assert_eq!(call.kind, "client");
    assert_eq!(call.attrs["mcp.method.name"], "tools/call");
    assert_eq!(call.attrs["gen_ai.tool.name"], "echo");
    assert_eq!((call.status, call.status_message.as_str()), ("error", "CALL_TIMEOUT"));

    let joined = by_name("run callee");
    assert_eq!(joined.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(joined.parent_span_id.as_deref(), Some("00f067aa0ba902b7"));

    assert_eq!(receiver.undecodable(), 0);
    assert_eq!(otel.dropped(), 0);
    assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock().unwrap());
}

#[test]
fn with_the_collector_down_spans_are_dropped_counted_and_told_once_without_blocking() {
    // A port that was just free: nothing listens, connections are refused.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (report, lines) = reporter();
    let otel = Otel::start(&config(&format!("http://127.0.0.1:{port}"), 8), report).unwrap();

    let otel = within_a_minute("starting and ending 4,000 spans", move || {
        for i in 0..2_000i64 {
            let root = otel.start(span("run bp", SpanKind::Internal, None, vec![("i", i.into())]));
            let child = otel.start(span("step a", SpanKind::Internal, Some(root.context()), Vec::new()));
            child.end(SpanStatus::Unset);
            root.end(SpanStatus::Ok);
        }
        otel
    });
    let otel = within_a_minute("the shutdown", move || {
        otel.shutdown();
        otel
    });
    // Spans are ended (and so dropped) on the exporter's worker: counted by the shutdown.
    // Dropped, not waited for: the queue holds 8 and nothing took them.
    assert!(otel.dropped() > 0);

    let lines = lines.lock().unwrap();
    let told = lines.iter().filter(|l| l.contains("spans are being dropped")).count();
    assert_eq!(told, 1, "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(&format!("127.0.0.1:{port}/v1/traces"))), "{lines:?}");
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("telemetry: {} spans dropped", otel.dropped()).as_str()),
        "{lines:?}"
    );
    assert!(lines.iter().filter(|l| l.contains("failed")).count() <= 1, "{lines:?}");
}

#[test]
fn measures_arrive_as_the_metrics_with_their_units_and_attributes() {
    let receiver = Receiver::start(0).unwrap();
    let (report, _) = reporter();
    let otel = Otel::start(&config(&receiver.url(), 2048), report).unwrap();
    let bp: Arc<str> = Arc::from("bp");
    otel.measure(Measure::RunEnded {
        blueprint: bp.clone(),
        trigger: "cli",
        status: RunStatus::Succeeded,
        duration: Duration::from_millis(1500),
    });
    otel.measure(Measure::StepEnded {
        blueprint: bp.clone(),
        step: Arc::from("fetch"),
        kind: "tool",
        outcome: "failed",
        error: Some(Arc::from("CALL_TIMEOUT")),
        duration: Duration::from_millis(20),
    });
    otel.measure(Measure::Retry { blueprint: bp, kind: "tool", error: Arc::from("CALL_TIMEOUT") });
    otel.measure(Measure::McpCall {
        duration: Duration::from_millis(3),
        attrs: vec![("mcp.method.name", "tools/call".into()), ("gen_ai.tool.name", Attr::Str("echo".into()))],
    });
    otel.measure(Measure::InFlight { method: "tools/call", server: Arc::from("echo"), delta: 1 });
    otel.measure(Measure::InFlight { method: "tools/call", server: Arc::from("echo"), delta: -1 });
    // The interval is a minute: what arrives is the final collection at shutdown.
    otel.shutdown();

    let metrics = receiver.metrics();
    let point = |name: &str| {
        let m = metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no metric {name}: {metrics:#?}"));
        assert_eq!(m.points.len(), 1, "{m:#?}");
        (m.unit.clone(), m.points[0].clone())
    };
    let (unit, runs) = point("mcpflow.runs");
    assert_eq!((unit.as_str(), runs.kind, runs.value), ("{run}", "counter", 1.0));
    assert_eq!(runs.attrs["mcpflow.run.status"], "succeeded");
    assert_eq!(runs.attrs["mcpflow.run.trigger"], "cli");
    assert_eq!(runs.attrs["mcpflow.blueprint.id"], "bp");
    let (unit, run) = point("mcpflow.run.duration");
    assert_eq!((unit.as_str(), run.kind, run.count, run.value), ("s", "histogram", 1, 1.5));
    let (_, step) = point("mcpflow.step.duration");
    assert_eq!(
        (step.attrs["error.type"].as_str(), step.attrs["mcpflow.step.outcome"].as_str()),
        (Some("CALL_TIMEOUT"), Some("failed"))
    );
    let (_, retries) = point("mcpflow.step.retries");
    assert_eq!(retries.value, 1.0);
    let (unit, call) = point("mcp.client.operation.duration");
    assert_eq!((unit.as_str(), call.kind, call.count), ("s", "histogram", 1));
    assert_eq!(call.attrs["gen_ai.tool.name"], "echo");
    let (_, active) = point("mcpflow.client.active_requests");
    assert_eq!((active.kind, active.value), ("up_down_counter", 0.0));
    let (_, dropped) = point("mcpflow.telemetry.spans.dropped");
    assert_eq!(dropped.value, 0.0);
    assert_eq!(receiver.undecodable(), 0);
}

#[cfg(feature = "otlp-grpc")]
#[test]
fn over_grpc_with_the_collector_down_spans_are_dropped_and_told_once_without_blocking() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (report, lines) = reporter();
    let otel = Otel::start(&grpc_config(&format!("http://127.0.0.1:{port}"), 8), report).unwrap();

    let otel = within_a_minute("starting and ending 500 spans", move || {
        for i in 0..500i64 {
            let root = otel.start(span("run bp", SpanKind::Internal, None, vec![("i", i.into())]));
            root.end(SpanStatus::Ok);
        }
        otel
    });
    let otel = within_a_minute("the shutdown", move || {
        otel.shutdown();
        otel
    });

    let lines = lines.lock().unwrap();
    let told = lines.iter().filter(|l| l.contains("spans are being dropped")).count();
    assert_eq!(told, 1, "{lines:?}");
    let failed: Vec<_> = lines.iter().filter(|l| l.contains("failed")).collect();
    assert_eq!(failed.len(), 1, "{lines:?}");
    assert!(
        failed[0].contains(&format!("http://127.0.0.1:{port}")) && failed[0].contains("Connection refused"),
        "{lines:?}"
    );
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("telemetry: {} spans dropped", otel.dropped()).as_str()),
        "{lines:?}"
    );
}

#[cfg(feature = "otlp-grpc")]
#[test]
fn over_grpc_measures_arrive_as_metrics() {
    let receiver = Receiver::start_grpc(0).unwrap();
    let (report, lines) = reporter();
    let otel = Otel::start(&grpc_config(&receiver.url(), 2048), report).unwrap();
    otel.measure(Measure::RunEnded {
        blueprint: Arc::from("bp"),
        trigger: "cli",
        status: RunStatus::Succeeded,
        duration: Duration::from_millis(1500),
    });
    otel.shutdown();
    let metrics = receiver.metrics();
    let runs = metrics.iter().find(|m| m.name == "mcpflow.runs").unwrap_or_else(|| panic!("{metrics:#?}"));
    assert_eq!((runs.points[0].kind, runs.points[0].value), ("counter", 1.0));
    assert_eq!(runs.points[0].attrs["mcpflow.blueprint.id"], "bp");
    assert_eq!(receiver.undecodable(), 0);
    assert!(lines.lock().unwrap().is_empty(), "{:?}", lines.lock().unwrap());
}

/// TLS is in the build: an `https://` gRPC endpoint is set up (with the system's roots),
/// not refused; against a plain-text receiver the handshake fails and that is told.
#[cfg(feature = "otlp-grpc")]
#[test]
fn over_grpc_an_https_endpoint_is_set_up_with_tls() {
    let receiver = Receiver::start_grpc(0).unwrap();
    let (report, lines) = reporter();
    let base = format!("https://localhost:{}", receiver.port());
    let otel = Otel::start(&grpc_config(&base, 2048), report).unwrap();
    let root = otel.start(span("run bp", SpanKind::Internal, None, Vec::new()));
    root.end(SpanStatus::Ok);
    otel.shutdown();
    assert!(receiver.spans().is_empty());
    // rustls got a plain-text HTTP/2 answer where a TLS record was due.
    let lines = lines.lock().unwrap();
    assert!(lines.iter().any(|l| l.contains(&base) && l.contains("InvalidContentType")), "{lines:?}");
}
