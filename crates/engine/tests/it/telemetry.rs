//! Spans of a run, recorded by [`Recorder`]: the tree (root, attempts, iterations,
//! sub-workflows), the trace id in the envelope and `RunStarted`, the span each call is
//! given as its parent, and every span ended once, whatever way the run ends. Also the
//! scheduler's `IterationClosed`, which only a traced run gets.

use crate::sim::{Sim, bp, config};
use futures::future::BoxFuture;
use mcpflow_engine::run_trace::ENDED_WITH_THE_RUN;
use mcpflow_engine::telemetry::{Measure, RecordedSpan};
use mcpflow_engine::{
    Attr, BlueprintSource, CallError, CallRequest, CallTarget, Control, Engine, Envelope, EventKind, Recorder,
    RunEvent, RunOrigin, RunRequest, RunStatus, Servers, SpanStatus, Telemetry, TraceContext,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Tools named after their steps. `retried` fails its first call (transient), `slow`
/// answers only when cancelled, `boom` always fails; the others answer at once. Records
/// each call's tool and the span it was given as its parent.
#[derive(Default)]
struct Tools {
    calls: Mutex<Vec<(String, Option<TraceContext>)>>,
    retried: AtomicUsize,
}

impl Servers for Tools {
    fn call(&self, request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        let tool = match &request.target {
            CallTarget::Tool { tool, .. } => tool.clone(),
            other => format!("{other:?}"),
        };
        self.calls.lock().unwrap().push((tool.clone(), request.trace.as_ref().map(|t| t.parent.clone())));
        Box::pin(async move {
            match tool.as_str() {
                "retried" if self.retried.fetch_add(1, Ordering::SeqCst) == 0 => {
                    Err(CallError::new("SERVER_CRASHED", "the server fell over", true))
                }
                "slow" => {
                    request.cancel.cancelled().await;
                    Err(CallError::cancelled())
                }
                "boom" => Err(CallError::new("BOOM", "it broke", false)),
                _ => Ok(json!({ "structuredContent": { "tool": tool } })),
            }
        })
    }
}

/// Blueprints for `workflow` steps, by id.
struct Blueprints(HashMap<String, Value>);

impl BlueprintSource for Blueprints {
    fn load(&self, id: &str) -> Result<Vec<u8>, String> {
        self.0.get(id).map(|doc| doc.to_string().into_bytes()).ok_or_else(|| format!("no blueprint `{id}`"))
    }
}

fn tool(id: &str, after: &[&str]) -> Value {
    json!({ "id": id, "kind": "tool", "server": "s", "tool": id, "after": after })
}

/// A loop over 3 items (concurrency 2), a fan-out of 3, a step retried once, and a
/// sub-workflow of 2 steps.
fn everything() -> Value {
    json!({ "blueprint": 1, "id": "bp", "steps": [
        { "id": "items", "kind": "transform", "value": [1, 2, 3] },
        { "id": "each", "kind": "loop", "for_each": "{{ items }}", "concurrency": 2,
          "steps": [ { "id": "work", "kind": "tool", "server": "s", "tool": "work" } ] },
        tool("a", &["each"]),
        tool("b", &["each"]),
        tool("c", &["each"]),
        { "id": "retried", "kind": "tool", "server": "s", "tool": "retried", "after": ["a", "b", "c"],
          "retry": { "attempts": 2, "delay_ms": 1 } },
        { "id": "call", "kind": "workflow", "workflow": "callee", "after": ["retried"] }
    ] })
}

fn callee() -> Value {
    json!({ "blueprint": 1, "id": "callee", "steps": [
        { "id": "inner", "kind": "tool", "server": "s", "tool": "inner" },
        { "id": "after_inner", "kind": "transform", "value": "{{ inner.tool }}" }
    ] })
}

struct Ran {
    envelope: Envelope,
    events: Vec<RunEvent>,
    tools: Arc<Tools>,
}

/// Runs `doc` through the driver with `telemetry` (the callee blueprint in its source),
/// cancelling `cancel` once `cancel_after` calls have started.
async fn run(
    doc: Value,
    telemetry: Option<Arc<dyn Telemetry>>,
    origin: RunOrigin,
    pinned: &[(&str, Value)],
    cancel_after: Option<usize>,
) -> Ran {
    let report = mcpflow_blueprint::check_value(doc, &mcpflow_blueprint::Options::default());
    assert!(!report.has_errors(), "{:?}", report.diagnostics);
    let (bp, plan) = (report.blueprint.unwrap(), report.plan.unwrap());
    let tools = Arc::new(Tools::default());
    let mut engine = Engine::new(tools.clone());
    engine.source = Some(Arc::new(Blueprints(HashMap::from([("callee".to_owned(), callee())]))));
    engine.telemetry = telemetry;
    let mut config = engine.config(&bp, "run-1".into(), json!({})).unwrap();
    config.pinned = pinned.iter().map(|(id, v)| ((*id).to_owned(), v.clone())).collect();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let request = RunRequest { blueprint: Arc::new(bp), plan: Arc::new(plan), config, stack: Vec::new(), origin };
    let cancel = CancellationToken::new();
    if let Some(n) = cancel_after {
        let (tools, cancel) = (tools.clone(), cancel.clone());
        tokio::spawn(async move {
            while tools.calls.lock().unwrap().len() < n {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            cancel.cancel();
        });
    }
    let envelope = engine.run(request, Arc::new(move |e| sink.lock().unwrap().push(e.clone())), None, cancel).await;
    let events = events.lock().unwrap().clone();
    Ran { envelope, events, tools }
}

fn recorder() -> (Arc<Recorder>, Option<Arc<dyn Telemetry>>) {
    let recorder = Arc::new(Recorder::new(false));
    let telemetry: Arc<dyn Telemetry> = recorder.clone();
    (recorder, Some(telemetry))
}

fn named<'a>(spans: &'a [RecordedSpan], name: &str) -> Vec<&'a RecordedSpan> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [RecordedSpan], name: &str) -> &'a RecordedSpan {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one span `{name}`: {:#?}", names(spans));
    found[0]
}

fn by_id(spans: &[RecordedSpan], id: Option<[u8; 8]>) -> Option<&RecordedSpan> {
    spans.iter().find(|s| Some(s.span_id) == id)
}

/// The name of each span's parent (`-` for a root).
fn parent_name<'a>(spans: &'a [RecordedSpan], span: &RecordedSpan) -> &'a str {
    by_id(spans, span.parent).map_or("-", |p| p.name.as_str())
}

fn names(spans: &[RecordedSpan]) -> Vec<String> {
    spans.iter().map(|s| format!("{} <- {} {:?}", s.name, parent_name(spans, s), s.status)).collect()
}

fn started_trace_id(events: &[RunEvent]) -> Option<String> {
    events.iter().find_map(|e| match &e.kind {
        EventKind::RunStarted { trace_id, .. } => Some(trace_id.clone()),
        _ => None,
    })?
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn int(span: &RecordedSpan, key: &str) -> Option<i64> {
    match span.attr(key) {
        Some(Attr::Int(i)) => Some(*i),
        _ => None,
    }
}

fn text<'a>(span: &'a RecordedSpan, key: &str) -> Option<&'a str> {
    match span.attr(key) {
        Some(Attr::Static(s)) => Some(s),
        Some(Attr::Str(s)) => Some(s),
        _ => None,
    }
}

/// Every span has ended exactly once: the recorder keeps `status: None` for a span that
/// was never ended, and a second end of the same span cannot be written (`end` consumes it).
fn assert_all_ended(spans: &[RecordedSpan]) {
    let open: Vec<_> = spans.iter().filter(|s| s.status.is_none()).map(|s| s.name.as_str()).collect();
    assert!(open.is_empty(), "spans never ended: {open:?}");
}

#[tokio::test]
async fn a_run_is_one_trace_whose_tree_follows_loops_retries_fan_outs_and_sub_workflows() {
    let (recorder, telemetry) = recorder();
    let ran = run(everything(), telemetry, RunOrigin { trigger: "studio", parent: None }, &[], None).await;
    let env = &ran.envelope;
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    let recorded = recorder.recorded();
    let spans = &recorded.spans;
    assert_all_ended(spans);

    // One trace, the one the envelope and RunStarted name.
    let roots: Vec<_> = spans.iter().filter(|s| s.parent.is_none()).collect();
    assert_eq!(roots.len(), 1, "{:#?}", names(spans));
    let root = roots[0];
    assert_eq!(root.name, "run bp");
    let trace_id = hex(&root.trace_id);
    assert!(spans.iter().all(|s| s.trace_id == root.trace_id), "every span is in the run's trace");
    assert_eq!(env.trace_id.as_deref(), Some(trace_id.as_str()));
    assert_eq!(started_trace_id(&ran.events).as_deref(), Some(trace_id.as_str()));
    assert_eq!(text(root, "mcpflow.blueprint.id"), Some("bp"));
    assert_eq!(text(root, "mcpflow.run.id"), Some("run-1"));
    assert_eq!(text(root, "mcpflow.run.trigger"), Some("studio"));
    assert_eq!(text(root, "mcpflow.run.status"), Some("succeeded"));
    assert_eq!(int(root, "mcpflow.run.tool_calls"), Some(8), "3 loop calls, 3 fan-out calls, 2 attempts");
    assert_eq!(root.status, Some(SpanStatus::Ok));

    // The loop: each body attempt under its iteration, each iteration under the loop's
    // attempt, which is under the root.
    let each = one(spans, "step each");
    assert_eq!(each.parent, Some(root.span_id));
    let iterations = named(spans, "iteration each");
    assert_eq!(iterations.len(), 3);
    let mut indexes: Vec<_> = iterations.iter().map(|i| int(i, "mcpflow.loop.index").unwrap()).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [0, 1, 2]);
    assert!(iterations.iter().all(|i| i.parent == Some(each.span_id)));
    assert!(
        iterations.iter().all(|i| i.status == Some(SpanStatus::Unset)),
        "each iteration ends as the scheduler closes it, not swept up with the run"
    );
    let work = named(spans, "step work");
    assert_eq!(work.len(), 3);
    for w in &work {
        let iteration = by_id(spans, w.parent).unwrap();
        assert_eq!(iteration.name, "iteration each");
        let index = int(w, "mcpflow.loop.index").unwrap();
        assert_eq!(int(iteration, "mcpflow.loop.index"), Some(index), "the attempt sits in its own iteration");
        assert_eq!(w.attr("mcpflow.step.path"), Some(&Attr::IntArray(Arc::from(vec![index]))));
        assert_eq!(text(w, "mcpflow.step.kind"), Some("tool"));
        assert_eq!(text(w, "mcpflow.step.outcome"), Some("succeeded"));
    }

    // The fan-out: siblings under the root.
    for id in ["items", "a", "b", "c"] {
        assert_eq!(one(spans, &format!("step {id}")).parent, Some(root.span_id), "{id}");
    }
    assert_eq!(int(one(spans, "step a"), "mcpflow.loop.index"), None, "no loop index outside a loop");

    // The retry: two attempts, the first ended as retrying with the error's code.
    let retried = named(spans, "step retried");
    assert_eq!(retried.len(), 2, "{:#?}", names(spans));
    assert_eq!(int(retried[0], "mcpflow.step.attempt"), Some(1));
    assert_eq!(text(retried[0], "mcpflow.step.outcome"), Some("retrying"));
    assert_eq!(text(retried[0], "error.type"), Some("SERVER_CRASHED"));
    assert_eq!(retried[0].status, Some(SpanStatus::Error("SERVER_CRASHED".into())));
    assert_eq!(int(retried[1], "mcpflow.step.attempt"), Some(2));
    assert_eq!(text(retried[1], "mcpflow.step.outcome"), Some("succeeded"));
    assert_eq!(retried[1].attr("error.type"), None);
    assert_eq!(retried[1].status, Some(SpanStatus::Ok));

    // The sub-workflow: its run under the calling step, its steps under its run.
    let call = one(spans, "step call");
    let sub = one(spans, "run callee");
    assert_eq!(sub.parent, Some(call.span_id));
    assert_eq!(text(sub, "mcpflow.run.trigger"), Some("workflow"));
    assert_eq!(one(spans, "step inner").parent, Some(sub.span_id));
    assert_eq!(one(spans, "step after_inner").parent, Some(sub.span_id));

    // Each call is given its attempt's span as parent: 3 loop calls, 3 fan-out calls, 2
    // attempts of `retried`, the callee's `inner`.
    let calls = ran.tools.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 9);
    for (tool, parent) in &calls {
        let parent = parent.as_ref().unwrap_or_else(|| panic!("the call of `{tool}` has no trace"));
        let span = by_id(spans, Some(parent.span_id)).unwrap();
        assert_eq!(span.name, format!("step {tool}"), "the call's parent is its step's attempt");
        assert_eq!(parent.trace_id, root.trace_id);
    }
    let retried_parents: Vec<_> =
        calls.iter().filter(|(t, _)| t == "retried").map(|(_, p)| p.as_ref().unwrap().span_id).collect();
    assert_eq!(retried_parents, [retried[0].span_id, retried[1].span_id], "each attempt's call under that attempt");
    let mut work_parents: Vec<_> =
        calls.iter().filter(|(t, _)| t == "work").map(|(_, p)| p.as_ref().unwrap().span_id).collect();
    work_parents.dedup();
    assert_eq!(work_parents.len(), 3, "each iteration's call under its own attempt");

    // Measurements: a run's end for each run, a step's end for each attempt, one retry.
    let measures = &recorded.measures;
    let runs: Vec<_> = measures
        .iter()
        .filter_map(|m| match m {
            Measure::RunEnded { blueprint, trigger, status, .. } => Some((&**blueprint, *trigger, *status)),
            _ => None,
        })
        .collect();
    assert_eq!(runs, [("callee", "workflow", RunStatus::Succeeded), ("bp", "studio", RunStatus::Succeeded)]);
    let attempts = spans.iter().filter(|s| s.name.starts_with("step ")).count();
    let step_ends = measures.iter().filter(|m| matches!(m, Measure::StepEnded { .. })).count();
    assert_eq!(step_ends, attempts);
    let retries: Vec<_> = measures
        .iter()
        .filter_map(|m| match m {
            Measure::Retry { blueprint, kind, error } => Some((&**blueprint, *kind, &**error)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [("bp", "tool", "SERVER_CRASHED")]);
    assert!(measures.iter().any(|m| matches!(
        m,
        Measure::StepEnded { step, outcome: "retrying", error: Some(e), .. } if &**step == "retried" && &**e == "SERVER_CRASHED"
    )));
}

#[tokio::test]
async fn without_telemetry_nothing_carries_a_trace() {
    let ran = run(everything(), None, RunOrigin::default(), &[], None).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.trace_id, None);
    assert_eq!(started_trace_id(&ran.events), None);
    assert!(ran.tools.calls.lock().unwrap().iter().all(|(_, trace)| trace.is_none()));
}

#[tokio::test]
async fn a_callers_span_is_the_roots_parent_and_its_trace_the_runs() {
    let (recorder, telemetry) = recorder();
    let caller = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None).unwrap();
    let origin = RunOrigin { trigger: "mcp", parent: Some(caller.clone()) };
    let ran = run(bp(json!([tool("a", &[])])), telemetry, origin, &[], None).await;
    let spans = recorder.recorded().spans;
    let root = one(&spans, "run t");
    assert_eq!(root.parent, Some(caller.span_id));
    assert_eq!(root.trace_id, caller.trace_id);
    assert_eq!(ran.envelope.trace_id.as_deref(), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
    assert_eq!(started_trace_id(&ran.events).as_deref(), Some("4bf92f3577b34da6a3ce929d0e0e4736"));
    assert!(spans.iter().all(|s| s.trace_id == caller.trace_id));
    assert_eq!(text(root, "mcpflow.run.trigger"), Some("mcp"));
}

#[tokio::test]
async fn a_cancelled_run_ends_every_span_and_its_root_says_cancelled() {
    let (recorder, telemetry) = recorder();
    let doc = bp(json!([
        { "id": "items", "kind": "transform", "value": [1, 2] },
        { "id": "each", "kind": "loop", "for_each": "{{ items }}", "concurrency": 2,
          "steps": [ { "id": "slow", "kind": "tool", "server": "s", "tool": "slow" } ] },
        { "id": "side", "kind": "tool", "server": "s", "tool": "slow", "after": [] },
        tool("never", &["each", "side"])
    ]));
    let ran = run(doc, telemetry, RunOrigin::default(), &[], Some(3)).await;
    assert_eq!(ran.envelope.status, RunStatus::Cancelled, "{:?}", ran.envelope.errors);
    let spans = recorder.recorded().spans;
    assert_all_ended(&spans);
    assert_eq!(named(&spans, "step slow").len(), 2);
    let iterations = named(&spans, "iteration each");
    assert_eq!(iterations.len(), 2);
    assert!(iterations.iter().all(|i| i.status == Some(SpanStatus::Unset)), "closed by the scheduler's cancel");
    assert!(named(&spans, "step never").is_empty(), "a skipped step has no span");
    for s in named(&spans, "step slow").into_iter().chain(named(&spans, "step side")) {
        assert_eq!(s.status, Some(SpanStatus::Error("CANCELLED".into())), "{}", s.name);
        assert_eq!(text(s, "error.type"), Some("CANCELLED"));
    }
    let root = one(&spans, "run t");
    assert_eq!(text(root, "mcpflow.run.status"), Some("cancelled"));
    assert_eq!(root.status, Some(SpanStatus::Error("CANCELLED".into())));
}

#[tokio::test]
async fn a_failed_run_ends_every_span_with_the_first_errors_code() {
    let (recorder, telemetry) = recorder();
    let doc = bp(json!([
        { "id": "items", "kind": "transform", "value": [1, 2, 3] },
        { "id": "each", "kind": "loop", "for_each": "{{ items }}", "concurrency": 3,
          "steps": [ { "id": "boom", "kind": "tool", "server": "s", "tool": "boom" } ] }
    ]));
    let ran = run(doc, telemetry, RunOrigin::default(), &[], None).await;
    assert_eq!(ran.envelope.status, RunStatus::Failed);
    let spans = recorder.recorded().spans;
    assert_all_ended(&spans);
    let root = one(&spans, "run t");
    assert_eq!(root.status, Some(SpanStatus::Error("BOOM".into())));
    assert_eq!(text(root, "mcpflow.run.status"), Some("failed"));
    let each = one(&spans, "step each");
    assert_eq!(text(each, "mcpflow.step.outcome"), Some("failed"));
    assert_eq!(text(each, "error.type"), Some("BOOM"));
    assert!(named(&spans, "step boom").iter().all(|s| matches!(s.status, Some(SpanStatus::Error(_)))));
    let iterations = named(&spans, "iteration each");
    assert_eq!(iterations.len(), 3);
    assert!(
        iterations.iter().all(|i| i.status == Some(SpanStatus::Unset)),
        "the failed iteration and the siblings it cancelled are closed by the scheduler"
    );
}

#[tokio::test]
async fn a_run_whose_driver_goes_away_ends_its_open_spans_as_interrupted() {
    let (recorder, telemetry) = recorder();
    let doc = bp(json!([tool("slow", &[])]));
    let dropped =
        tokio::time::timeout(Duration::from_millis(50), run(doc, telemetry, RunOrigin::default(), &[], None)).await;
    assert!(dropped.is_err(), "the run waits on its call until it is dropped");
    let recorded = recorder.recorded();
    let spans = &recorded.spans;
    assert_all_ended(spans);
    let root = one(spans, "run t");
    assert_eq!(root.status, Some(SpanStatus::Error(ENDED_WITH_THE_RUN.into())));
    assert_eq!(text(root, "mcpflow.run.status"), Some("interrupted"));
    assert_eq!(one(spans, "step slow").status, Some(SpanStatus::Error(ENDED_WITH_THE_RUN.into())));
    assert!(recorded.measures.iter().any(|m| matches!(m, Measure::RunEnded { status: RunStatus::Interrupted, .. })));
}

#[tokio::test]
async fn pinned_and_disabled_steps_get_no_span_and_a_fallback_names_what_it_recovered() {
    let (recorder, telemetry) = recorder();
    let doc = bp(json!([
        tool("pinned", &[]),
        { "id": "off", "kind": "tool", "server": "s", "tool": "off", "disabled": true, "after": [] },
        { "id": "fails", "kind": "tool", "server": "s", "tool": "boom", "after": ["pinned"], "fallback": "rescue" },
        { "id": "rescue", "kind": "transform", "value": "saved" }
    ]));
    let ran = run(doc, telemetry, RunOrigin::default(), &[("pinned", json!({ "tool": "before" }))], None).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    let spans = recorder.recorded().spans;
    assert_all_ended(&spans);
    assert!(named(&spans, "step pinned").is_empty(), "{:#?}", names(&spans));
    assert!(named(&spans, "step off").is_empty(), "{:#?}", names(&spans));
    let fails = one(&spans, "step fails");
    assert_eq!(text(fails, "mcpflow.step.outcome"), Some("succeeded"));
    assert_eq!(text(fails, "mcpflow.step.recovered_by"), Some("rescue"));
    assert_eq!(one(&spans, "step rescue").status, Some(SpanStatus::Ok));
}

/// The loop step ids and paths of the `IterationClosed` actions.
fn closed(sim: &Sim) -> Vec<(String, Vec<u32>)> {
    let mut closed = sim.iterations_closed.clone();
    closed.sort();
    closed
}

fn traced_config() -> mcpflow_engine::RunConfig {
    let mut config = config();
    config.inputs = json!({ "items": [1, 2, 3], "inner": [1, 2] });
    config.trace_id = Some("4bf92f3577b34da6a3ce929d0e0e4736".into());
    config
}

#[test]
fn a_traced_run_hears_of_each_iteration_closing_once_and_an_untraced_run_never() {
    let for_each = bp(json!([
        { "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 2,
          "steps": [ { "id": "w", "kind": "transform", "value": "{{ item }}" } ] },
        { "id": "u", "kind": "loop", "until": "{{ index >= `1` }}",
          "steps": [ { "id": "v", "kind": "transform", "value": "{{ index }}" } ] }
    ]));
    let sim = Sim::with(for_each.clone(), traced_config()).start();
    assert_eq!(sim.envelope().status, RunStatus::Succeeded, "{:?}", sim.envelope().errors);
    let expected: Vec<(String, Vec<u32>)> = vec![
        ("l".into(), vec![0]),
        ("l".into(), vec![1]),
        ("l".into(), vec![2]),
        ("u".into(), vec![0]),
        ("u".into(), vec![1]),
    ];
    assert_eq!(closed(&sim), expected);

    let mut plain = config();
    plain.inputs = json!({ "items": [1, 2, 3] });
    let sim = Sim::with(for_each, plain).start();
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
    assert!(sim.iterations_closed.is_empty());
}

#[test]
fn cancelled_and_nested_iterations_close_once_each() {
    let doc = bp(json!([
        { "id": "outer", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 3, "steps": [
            { "id": "inner", "kind": "loop", "for_each": "{{ inputs.inner }}", "steps": [
                { "id": "w", "kind": "tool", "server": "s", "tool": "w" } ] } ] }
    ]));
    let mut sim = Sim::with(doc, traced_config()).start();
    // Two calls answered (more inner iterations start), then the rest cut by the cancel.
    sim.answer("w", Ok(json!({ "content": [] })));
    sim.answer("w", Ok(json!({ "content": [] })));
    sim.control(Control::Cancel);
    assert_eq!(sim.envelope().status, RunStatus::Cancelled);
    let closed = closed(&sim);
    let mut unique = closed.clone();
    unique.dedup();
    assert_eq!(closed, unique, "no iteration is closed twice: {closed:?}");
    let outer: Vec<_> = closed.iter().filter(|(s, _)| s == "outer").map(|(_, p)| p.clone()).collect();
    assert_eq!(outer, [vec![0], vec![1], vec![2]], "every outer iteration started is closed");
    let started_inner: Vec<Vec<u32>> = sim
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::StepStarted { step, path, .. } if step == "w" => Some(path.clone()),
            _ => None,
        })
        .collect();
    for path in &started_inner {
        assert!(closed.contains(&("inner".to_owned(), path.clone())), "inner iteration {path:?} is closed");
    }
}
