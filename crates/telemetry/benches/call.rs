//! What one traced MCP call costs the thread that makes it, in the SDK: the spans and the
//! measurements the engine and the pool make for one step of a loop that calls one tool
//! (an iteration span, a step span, a client span; the step's and the call's durations and
//! the requests in flight), against a collector that is down (refusing connections) and
//! one that is up; and 4,000 spans then the shutdown with the collector down (what the
//! export tests only check for a hang). `cargo bench -p mcpflow-telemetry --bench call`.
//!
//! The whole-engine ratios the issue asks for are `crates/app/benches/engine.rs` case (d);
//! this bench says which part of the SDK's share is spans and which is metrics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use mcpflow_engine::telemetry::{Attr, Measure, SpanKind, SpanName, SpanStart, SpanStatus, Telemetry, TraceContext};
use mcpflow_telemetry::{Config, Flags, Otel};
use mcpflow_testkit::otlp::Receiver;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An exporter as `mcpflow run --otlp URL` configures it (defaults, no export retries);
/// without `metrics`, as with `OTEL_METRICS_EXPORTER=none`.
fn otel(base: &str, metrics: bool) -> Otel {
    let flags = Flags { otlp: Some(base.to_owned()), capture_payloads: false };
    let env = |var: &str| (var == "OTEL_METRICS_EXPORTER" && !metrics).then(|| "none".to_owned());
    let mut config = Config::resolve(&flags, None, env).unwrap().unwrap();
    config.retries = false;
    Otel::start(&config, Arc::new(|_: &str| {})).unwrap()
}

/// The attributes and names the engine (`run_trace.rs`) and the pool (`pool/trace.rs`)
/// give one call's spans and measurements.
struct Call {
    blueprint: Arc<str>,
    step: Arc<str>,
    step_name: Arc<str>,
    iteration_name: Arc<str>,
    tool: Arc<str>,
    server: Arc<str>,
    protocol: Arc<str>,
    path: Arc<[i64]>,
}

impl Call {
    fn new() -> Call {
        Call {
            blueprint: "bench-loop".into(),
            step: "call".into(),
            step_name: "step call".into(),
            iteration_name: "iteration each".into(),
            tool: "get_node".into(),
            server: "cluster".into(),
            protocol: "2025-11-25".into(),
            path: Arc::from(vec![0_i64]),
        }
    }

    fn one(&self, telemetry: &dyn Telemetry, root: &TraceContext, index: i64) {
        let iteration = telemetry.start(SpanStart {
            name: SpanName::Shared(self.iteration_name.clone()),
            kind: SpanKind::Internal,
            parent: Some(root),
            attrs: vec![("mcpflow.loop.index", Attr::Int(index))],
        });
        let started = Instant::now();
        let mut step = telemetry.start(SpanStart {
            name: SpanName::Shared(self.step_name.clone()),
            kind: SpanKind::Internal,
            parent: Some(iteration.context()),
            attrs: vec![
                ("mcpflow.step.id", Attr::Str(self.step.clone())),
                ("mcpflow.step.kind", Attr::Static("tool")),
                ("mcpflow.step.attempt", Attr::Int(1)),
                ("mcpflow.loop.index", Attr::Int(index)),
                ("mcpflow.step.path", Attr::IntArray(self.path.clone())),
            ],
        });
        let metric = vec![
            ("mcp.method.name", Attr::Static("tools/call")),
            ("gen_ai.tool.name", Attr::Str(self.tool.clone())),
            ("gen_ai.operation.name", Attr::Static("execute_tool")),
            ("mcp.protocol.version", Attr::Str(self.protocol.clone())),
            ("network.transport", Attr::Static("pipe")),
        ];
        let mut attrs = metric.clone();
        attrs.push(("mcpflow.server.name", Attr::Str(self.server.clone())));
        let mut client = telemetry.start(SpanStart {
            name: SpanName::Owned(format!("tools/call {}", self.tool)),
            kind: SpanKind::Client,
            parent: Some(step.context()),
            attrs,
        });
        telemetry.measure(Measure::InFlight { method: "tools/call", server: self.server.clone(), delta: 1 });
        black_box(client.context().traceparent());
        client.set("jsonrpc.request.id", Attr::Str(index.to_string().into()));
        client.end(SpanStatus::Unset);
        telemetry.measure(Measure::McpCall { duration: started.elapsed(), attrs: metric });
        telemetry.measure(Measure::InFlight { method: "tools/call", server: self.server.clone(), delta: -1 });
        step.set("mcpflow.step.outcome", Attr::Static("succeeded"));
        step.end(SpanStatus::Ok);
        telemetry.measure(Measure::StepEnded {
            blueprint: self.blueprint.clone(),
            step: self.step.clone(),
            kind: "tool",
            outcome: "succeeded",
            error: None,
            duration: started.elapsed(),
        });
        iteration.end(SpanStatus::Unset);
    }
}

fn calls(c: &mut Criterion) {
    let mut up = Receiver::start(0).unwrap();
    let mut closed = Receiver::start(0).unwrap();
    let down = closed.url();
    closed.stop();
    let call = Call::new();
    let mut group = c.benchmark_group("one traced call");
    for (name, base, metrics) in [
        ("collector down, spans and metrics", down.as_str(), true),
        ("collector down, spans only", down.as_str(), false),
        ("collector up, spans and metrics", up.url().as_str(), true),
    ] {
        let base = base.to_owned();
        group.bench_function(name, |b| {
            // A fresh exporter per sample batch, as each `mcpflow run` makes its own.
            let otel = otel(&base, metrics);
            let root = otel.start(SpanStart {
                name: SpanName::Static("run bench"),
                kind: SpanKind::Internal,
                parent: None,
                attrs: Vec::new(),
            });
            let root_context = root.context().clone();
            let mut index = 0;
            b.iter(|| {
                index += 1;
                call.one(&otel, &root_context, index);
            });
            root.end(SpanStatus::Unset);
            otel.shutdown();
        });
    }
    group.finish();
    up.stop();
}

/// What `tests/it/export.rs` once bounded with a wall clock (5 s each): 2,000 runs of two
/// spans against a collector that is down, then the shutdown that counts them dropped.
fn collector_down(c: &mut Criterion) {
    let mut closed = Receiver::start(0).unwrap();
    let down = closed.url();
    closed.stop();
    let mut group = c.benchmark_group("collector down");
    group.sample_size(10);
    group.bench_function("4,000 spans, then the shutdown", |b| {
        b.iter(|| {
            let otel = otel(&down, false);
            for i in 0..2_000_i64 {
                let root = otel.start(SpanStart {
                    name: SpanName::Static("run bench"),
                    kind: SpanKind::Internal,
                    parent: None,
                    attrs: vec![("i", Attr::Int(i))],
                });
                let child = otel.start(SpanStart {
                    name: SpanName::Static("step a"),
                    kind: SpanKind::Internal,
                    parent: Some(root.context()),
                    attrs: Vec::new(),
                });
                child.end(SpanStatus::Unset);
                root.end(SpanStatus::Ok);
            }
            otel.shutdown();
            black_box(otel.dropped())
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = calls, collector_down
}
criterion_main!(benches);
