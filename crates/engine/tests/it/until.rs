//! `until` loops: `last` (the previous iteration's collected value) in the body, in `until`
//! and in `collect`, and what happens when `max_iterations` is reached first.

use crate::sim::{Sim, bp, text};
use mcpflow_engine::{CallTarget, EventKind, Invocation, RunStatus, UntilExhausted};
use serde_json::{Value, json};

fn cursor(inv: &Invocation) -> Value {
    match inv {
        Invocation::Server(CallTarget::Tool { args, .. }) => args.get("cursor").cloned().unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

#[test]
fn last_in_the_body_is_the_previous_iterations_output_and_null_at_first() {
    let mut sim = Sim::new(bp(json!([
        { "id": "pages", "kind": "loop", "until": "{{ page.next == `null` }}", "max_iterations": 10,
          "steps": [ { "id": "page", "kind": "tool", "server": "s", "tool": "page", "args": { "cursor": "{{ last.next || `null` }}" } } ] }
    ])))
    .start();
    let mut seen = Vec::new();
    sim.drive(|_, _, inv| {
        let c = cursor(inv);
        seen.push(c.clone());
        let next = match c.as_str() {
            None => json!("b"),
            Some("b") => json!("c"),
            _ => Value::Null,
        };
        text(json!({ "items": [c], "next": next }))
    });
    assert_eq!(seen, [Value::Null, json!("b"), json!("c")], "each call is built from the previous page");
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output.as_array().map(Vec::len), Some(3));
}

#[test]
fn last_in_collect_is_the_previous_collected_value() {
    let sim = Sim::new(bp(json!([
        { "id": "sum", "kind": "loop", "until": "{{ index >= `3` }}",
          "collect": "{{ sum([t, last || `0`]) }}",
          "steps": [ { "id": "t", "kind": "transform", "value": "{{ index }}" } ] }
    ])))
    .start();
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!([0.0, 1.0, 3.0, 6.0]), "a running total: each collect adds to the last");
}

#[test]
fn last_in_until_is_the_value_before_this_iterations() {
    // Stops once two iterations in a row return the same value: `until` compares the
    // body's output with `last` (the previous iteration's).
    let mut sim = Sim::new(bp(json!([
        { "id": "settle", "kind": "loop", "until": "{{ check == last }}", "max_iterations": 10,
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check" } ] }
    ])))
    .start();
    let answers = [1, 2, 3, 3, 4];
    let mut n = 0;
    sim.drive(|_, _, _| {
        n += 1;
        text(json!(answers[n - 1]))
    });
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!([1, 2, 3, 3]));
}

#[test]
fn last_is_the_innermost_until_loops() {
    let sim = Sim::new(bp(json!([
        { "id": "outer", "kind": "loop", "until": "{{ index >= `1` }}",
          "collect": "{{ inner }}",
          "steps": [
            { "id": "inner", "kind": "loop", "until": "{{ index >= `2` }}",
              "steps": [ { "id": "t", "kind": "transform", "value": { "i": "{{ index }}", "before": "{{ last.i || `null` }}" } } ] }
          ] }
    ])))
    .start();
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    let inner = json!([{ "i": 0, "before": null }, { "i": 1, "before": 0 }, { "i": 2, "before": 1 }]);
    assert_eq!(env.output, json!([inner, inner]), "the inner loop's `last` starts at null in each outer iteration");
}

#[test]
fn an_until_loop_that_reaches_max_iterations_fails_naming_the_loop_the_iterations_and_the_last_value() {
    let mut sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ check.state == 'done' }}", "max_iterations": 3,
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check" } ] },
        { "id": "after", "kind": "transform", "value": "{{ poll }}" }
    ])))
    .start();
    sim.drive(|_, _, _| text(json!({ "state": "running" })));
    assert_eq!(sim.invokes.len(), 3);
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    let e = &env.errors[0];
    assert_eq!((e.step.as_str(), e.code.as_str()), ("poll", "LOOP_UNTIL_EXHAUSTED"));
    for part in ["loop `poll`", "ran 3 iterations", "last value was false", "on_exhausted"] {
        assert!(e.message.contains(part), "{part:?} in {}", e.message);
    }
    assert!(sim.trace().iter().any(|t| t == "skip after"), "{:?}", sim.trace());
}

#[test]
fn an_exhausted_until_loop_s_error_carries_the_iterations_and_the_last_value_as_data() {
    let mut sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ check.ready }}", "max_iterations": 2,
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check" } ] }
    ])))
    .start();
    sim.drive(|_, _, _| text(json!({ "ready": [] })));
    let error = sim
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::StepFinished { step, error: Some(error), .. } if step == "poll" => Some(error.clone()),
            _ => None,
        })
        .expect("poll failed");
    assert_eq!(error.code, "LOOP_UNTIL_EXHAUSTED");
    assert_eq!(error.exhausted.as_deref(), Some(&UntilExhausted { iterations: 2, max_iterations: 2, last: json!([]) }));
    let wire = serde_json::to_value(&error).unwrap();
    assert_eq!(wire["exhausted"], json!({ "iterations": 2, "max_iterations": 2, "last": [] }), "{wire}");
}

#[test]
fn an_exhausted_until_loop_s_fallback_stands_in_for_it() {
    let mut sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ check.ready }}", "max_iterations": 2, "fallback": "gave_up",
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check" } ] },
        { "id": "use", "kind": "transform", "value": "{{ poll }}" },
        { "id": "gave_up", "kind": "transform", "value": "{{ error.code }}" }
    ])))
    .start();
    sim.drive(|_, _, _| text(json!({ "ready": false })));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!("LOOP_UNTIL_EXHAUSTED"));
}

#[test]
fn on_exhausted_succeed_keeps_what_the_loop_collected() {
    let mut sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ check.ready }}", "max_iterations": 2, "on_exhausted": "succeed",
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check" } ] }
    ])))
    .start();
    sim.drive(|_, _, _| text(json!({ "ready": false })));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!([{ "ready": false }, { "ready": false }]));
}
