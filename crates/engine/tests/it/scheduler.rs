//! The scheduler state machine, kind by kind and field by field.

use crate::sim::{Sim, bp, config, text};
use mcpflow_engine::{CallError, Control, EventKind, Invocation, RunStatus};
use serde_json::{Value, json};

fn tool(id: &str) -> Value {
    json!({ "id": id, "kind": "tool", "server": "s", "tool": id })
}

#[test]
fn a_pipeline_runs_in_order_and_pipes_prev_into_args() {
    let mut sim = Sim::new(bp(json!([
        tool("a"),
        { "id": "b", "kind": "tool", "server": "s", "tool": "b", "args": { "n": "{{ prev.count }}", "all": "{{ a }}" } },
        { "id": "c", "kind": "transform", "value": "{{ b.doubled }}" }
    ])))
    .start();
    assert_eq!(sim.inflight_steps(), ["a"]);
    sim.ok("a", json!({"count": 21}));
    assert_eq!(sim.inflight_steps(), ["b"]);
    assert_eq!(sim.tool_args("b"), json!({"n": 21, "all": {"count": 21}}));
    sim.ok("b", json!({"doubled": 42}));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded);
    assert_eq!(env.output, json!(42));
    assert_eq!((env.summary.steps, env.summary.succeeded, env.summary.tool_calls), (3, 3, 2));
    let seqs: Vec<u64> = sim.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "seq is gapless and ordered");
}

#[test]
fn fan_out_runs_concurrently_and_the_join_waits_for_all() {
    let mut sim = Sim::new(bp(json!([
        { "id": "a", "kind": "tool", "server": "s", "tool": "a", "after": [] },
        { "id": "b", "kind": "tool", "server": "s", "tool": "b", "after": [] },
        { "id": "j", "kind": "transform", "after": ["a", "b"], "value": ["{{ a }}", "{{ b }}"] }
    ])))
    .start();
    assert_eq!(sim.inflight_steps(), ["a", "b"]);
    sim.ok("b", json!(2));
    assert!(sim.envelope.is_none());
    sim.ok("a", json!(1));
    assert_eq!(sim.envelope().output, json!([1, 2]));
}

#[test]
fn an_if_else_diamond_after_a_switch_rejoins() {
    let doc = bp(json!([
        { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ inputs.hot }}", "to": ["hot"] }], "default": ["cold"] },
        { "id": "hot", "kind": "transform", "value": "H" },
        { "id": "cold", "kind": "transform", "value": "C" },
        { "id": "join", "kind": "transform", "after": ["hot", "cold"], "value": "{{ hot || cold }}" },
        { "id": "after_join", "kind": "transform", "value": "{{ prev }}!" }
    ]));
    for (hot, want, skipped) in [(true, "H", "cold"), (false, "C", "hot")] {
        let mut cfg = config();
        cfg.inputs = json!({ "hot": hot });
        let sim = Sim::with(doc.clone(), cfg).start();
        let env = sim.envelope();
        assert_eq!(env.status, RunStatus::Succeeded);
        assert_eq!(env.output, json!(format!("{want}!")));
        assert!(sim.trace().contains(&format!("skip {skipped}")), "{:?}", sim.trace());
        assert_eq!((env.summary.succeeded, env.summary.skipped), (4, 1));
    }
}

#[test]
fn a_step_whose_dependencies_were_all_skipped_is_skipped() {
    let sim = Sim::new(bp(json!([
        { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ `false` }}", "to": ["x"] }] },
        { "id": "x", "kind": "transform", "value": 1 },
        { "id": "y", "kind": "transform", "value": 2 }
    ])))
    .start();
    assert_eq!(sim.trace(), ["start sw", "succeeded sw", "skip x", "skip y"]);
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
}

#[test]
fn abort_cancels_running_siblings_and_skips_pending_steps() {
    let mut sim = Sim::new(bp(json!([
        { "id": "a", "kind": "tool", "server": "s", "tool": "a", "after": [] },
        { "id": "b", "kind": "tool", "server": "s", "tool": "b", "after": [] },
        { "id": "c", "kind": "transform", "after": ["a", "b"], "value": 1 }
    ])))
    .start();
    sim.tool_error("a", "boom");
    assert_eq!(sim.cancelled.len(), 1, "b's call is cancelled");
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].step, "a");
    assert_eq!(env.errors[0].code, "TOOL_ERROR");
    assert_eq!(env.errors[0].message, "boom");
    let trace = sim.trace();
    assert!(trace.contains(&"failed b".to_owned()) && trace.contains(&"skip c".to_owned()), "{trace:?}");
}

#[test]
fn continue_yields_partial_with_the_errors_listed_and_dependents_run() {
    let mut sim = Sim::new(bp(json!([
        { "id": "a", "kind": "tool", "server": "s", "tool": "a", "on_error": "continue" },
        { "id": "b", "kind": "transform", "value": { "status": "{{ steps.a.status }}", "out": "{{ a }}", "msg": "{{ steps.a.error.message }}" } }
    ])))
    .start();
    sim.tool_error("a", "nope");
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Partial);
    assert_eq!(env.output, json!({ "status": "failed", "out": null, "msg": "nope" }));
    assert_eq!(env.errors.len(), 1);
}

#[test]
fn a_fallbacks_output_stands_in_for_the_failed_step() {
    let mut sim = Sim::new(bp(json!([
        { "id": "fetch", "kind": "tool", "server": "s", "tool": "fetch", "fallback": "cached" },
        { "id": "use", "kind": "transform", "value": "{{ fetch.value }}" },
        { "id": "cached", "kind": "transform", "value": { "value": "cached", "why": "{{ error.message }}", "who": "{{ error.step }}" } }
    ])))
    .start();
    sim.tool_error("fetch", "down");
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded);
    assert_eq!(env.output, json!("cached"));
    let recovered = sim.events.iter().any(|e| matches!(&e.kind, EventKind::StepFinished { step, recovered_by: Some(by), .. } if step == "fetch" && by == "cached"));
    assert!(recovered);
    let out = sim.events.iter().find_map(|e| match &e.kind {
        EventKind::StepFinished { step, output, .. } if step == "cached" => output.clone(),
        _ => None,
    });
    assert_eq!(out, Some(json!({ "value": "cached", "why": "down", "who": "fetch" })));
}

#[test]
fn retry_timing_follows_exponential_backoff_capped_by_max_delay() {
    let mut sim = Sim::new(bp(json!([
        { "id": "a", "kind": "tool", "server": "s", "tool": "a",
          "retry": { "attempts": 4, "delay_ms": 100, "backoff": "exponential", "max_delay_ms": 300 } }
    ])))
    .start();
    let mut starts = vec![sim.now];
    for _ in 0..3 {
        sim.tool_error("a", "flaky");
        let due = *sim.timers.keys().next().map(|(at, _)| at).unwrap();
        sim.advance_to(due);
        starts.push(sim.now);
    }
    assert_eq!(starts, [0, 100, 300, 600], "delays 100, 200, then 400 capped to 300");
    sim.ok("a", json!("finally"));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded);
    assert!(sim.trace().contains(&"retry a #2 +100".to_owned()));
}

#[test]
fn fixed_backoff_keeps_the_delay_and_exhausted_retries_fail() {
    let mut sim = Sim::new(
        json!({ "blueprint": 1, "id": "t", "retry": { "attempts": 3, "delay_ms": 50 }, "steps": [tool("a")] }),
    )
    .start();
    for t in [50, 100] {
        sim.tool_error("a", "x");
        sim.advance_to(t);
    }
    sim.tool_error("a", "x");
    assert_eq!(sim.envelope().status, RunStatus::Failed);
    assert_eq!(sim.invokes.iter().map(|i| i.0).collect::<Vec<_>>(), [0, 50, 100]);
}

#[test]
fn a_transient_call_error_is_retried_but_a_configuration_error_is_not() {
    let mut sim =
        Sim::new(bp(json!([{ "id": "a", "kind": "tool", "server": "s", "tool": "a", "retry": { "attempts": 3 } }])))
            .start();
    sim.answer("a", Err(CallError::new("SERVER_NOT_APPROVED", "not approved", false)));
    assert_eq!(sim.envelope().errors[0].code, "SERVER_NOT_APPROVED");
    assert_eq!(sim.invokes.len(), 1);
    let mut sim =
        Sim::new(bp(json!([{ "id": "a", "kind": "tool", "server": "s", "tool": "a", "retry": { "attempts": 3 } }])))
            .start();
    sim.answer("a", Err(CallError::new("SERVER_CRASHED", "crashed", true)));
    sim.advance_to(0);
    sim.ok("a", json!(1));
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
    assert_eq!(sim.invokes.len(), 2);
}

#[test]
fn loop_concurrency_never_exceeds_its_limit_and_results_keep_iteration_order() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": (0..10).collect::<Vec<_>>() });
    let doc = bp(json!([
        { "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 3, "as": "x",
          "steps": [ { "id": "work", "kind": "tool", "server": "s", "tool": "work", "args": { "x": "{{ x }}", "i": "{{ index }}" } } ],
          "collect": "{{ work.y }}" }
    ]));
    let mut sim = Sim::with(doc, cfg).start();
    assert_eq!(sim.inflight.len(), 3);
    // Answer in reverse order of start, to show results keep iteration order.
    while sim.envelope.is_none() {
        let (inv, _, path, invocation) = sim.inflight.pop().unwrap();
        let x = match invocation {
            Invocation::Server(mcpflow_engine::CallTarget::Tool { args, .. }) => args["x"].as_i64().unwrap(),
            _ => unreachable!(),
        };
        assert_eq!(path, [x as u32]);
        sim.feed(mcpflow_engine::Input::Completed { inv, result: Ok(text(json!({ "y": x * 10 }))) });
        assert!(sim.inflight.len() <= 3);
    }
    assert_eq!(sim.max_inflight, 3);
    assert_eq!(sim.envelope().output, json!((0..10).map(|x| x * 10).collect::<Vec<_>>()));
    assert_eq!(sim.envelope().summary.tool_calls, 10);
}

#[test]
fn the_run_concurrency_limit_caps_calls_in_flight() {
    let steps: Vec<Value> = (0..10)
        .map(|i| json!({ "id": format!("s{i}"), "kind": "tool", "server": "s", "tool": "t", "after": [] }))
        .collect();
    let mut sim =
        Sim::new(json!({ "blueprint": 1, "id": "t", "limits": { "concurrency": 4 }, "steps": steps })).start();
    assert_eq!(sim.inflight.len(), 4);
    sim.drive(|_, _, _| text(json!(1)));
    assert_eq!(sim.max_inflight, 4);
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
}

#[test]
fn until_stops_at_its_condition() {
    let mut sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ check.ready }}", "max_iterations": 10, "delay_ms": 1000,
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check", "args": { "i": "{{ index }}" } } ] }
    ])))
    .start();
    let mut n = 0;
    sim.drive(|_, _, _| {
        n += 1;
        text(json!({ "ready": n == 3 }))
    });
    let env = sim.envelope();
    assert_eq!(env.output, json!([{ "ready": false }, { "ready": false }, { "ready": true }]));
    assert_eq!(sim.invokes.iter().map(|i| i.0).collect::<Vec<_>>(), [0, 1000, 2000], "delay_ms between iterations");
}

#[test]
fn until_with_on_exhausted_succeed_stops_at_max_iterations_with_a_warning() {
    let mut sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ check.ready }}", "max_iterations": 4, "on_exhausted": "succeed",
          "steps": [ { "id": "check", "kind": "tool", "server": "s", "tool": "check" } ] }
    ])))
    .start();
    sim.drive(|_, _, _| text(json!({ "ready": false })));
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
    assert_eq!(sim.invokes.len(), 4);
    assert!(
        sim.events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::Log { message, .. } if message.contains("max_iterations (4)")))
    );
}

#[test]
fn for_each_over_more_items_than_max_iterations_fails_before_starting() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": [1, 2, 3] });
    let sim = Sim::with(
        bp(json!([{ "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "max_iterations": 2,
            "steps": [{ "id": "w", "kind": "transform", "value": "{{ item }}" }] }])),
        cfg,
    )
    .start();
    assert_eq!(sim.envelope().errors[0].code, "LOOP_TOO_MANY_ITEMS");
}

#[test]
fn a_for_each_has_no_default_max_iterations_and_runs_over_its_whole_list() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": (0..2_500).collect::<Vec<_>>() });
    let sim = Sim::with(
        bp(json!([{ "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 4,
            "steps": [{ "id": "w", "kind": "transform", "value": "{{ item }}" }] }])),
        cfg,
    )
    .start();
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!((0..2_500).collect::<Vec<_>>()));
}

#[test]
fn a_loop_runs_at_most_1000_iterations_at_once_whatever_its_concurrency() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": (0..3_000).collect::<Vec<_>>() });
    let mut sim = Sim::with(
        bp(json!([{ "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 1_000_000,
            "steps": [{ "id": "w", "kind": "wait", "ms": 1000 }] }])),
        cfg,
    )
    .start();
    let started = |sim: &Sim| {
        sim.events.iter().filter(|e| matches!(&e.kind, EventKind::StepStarted { step, .. } if step == "w")).count()
    };
    assert_eq!(started(&sim), 1_000, "the first thousand wait; the others have no frame yet");
    sim.advance_to(1000);
    assert_eq!(started(&sim), 2_000);
    sim.advance_to(2000);
    sim.advance_to(3000);
    assert_eq!(sim.envelope().output.as_array().map(Vec::len), Some(3_000));
}

#[test]
fn until_without_max_iterations_fails_at_1000() {
    let sim = Sim::new(bp(json!([
        { "id": "poll", "kind": "loop", "until": "{{ `false` }}",
          "steps": [ { "id": "t", "kind": "transform", "value": "{{ index }}" } ] }
    ])))
    .start();
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].code, "LOOP_UNTIL_EXHAUSTED");
    assert!(env.errors[0].message.contains("ran 1000 iterations"), "{}", env.errors[0].message);
}

#[test]
fn the_run_timeout_cancels_calls_and_fails_the_run() {
    let mut sim =
        Sim::new(json!({ "blueprint": 1, "id": "t", "limits": { "timeout_ms": 5000 }, "steps": [tool("slow")] }))
            .start();
    sim.advance_to(4999);
    assert!(sim.envelope.is_none());
    sim.advance_to(5000);
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].code, "RUN_TIMEOUT");
    assert_eq!(sim.cancelled.len(), 1);
    assert_eq!(env.duration_ms, 5000);
}

#[test]
fn a_step_timeout_cancels_the_call_and_counts_as_a_retryable_failure() {
    let mut sim = Sim::new(bp(json!([{ "id": "a", "kind": "tool", "server": "s", "tool": "a", "timeout_ms": 200, "retry": { "attempts": 2 } }]))).start();
    sim.advance_to(200);
    assert_eq!(sim.cancelled.len(), 1);
    assert!(sim.trace().iter().any(|t| t.starts_with("retry a #2")));
    sim.advance_to(200);
    sim.advance_to(400);
    assert_eq!(sim.envelope().errors[0].code, "STEP_TIMEOUT");
    assert_eq!(sim.cancelled.len(), 2);
}

#[test]
fn max_step_runs_ends_the_run_with_its_code() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": (0..50).collect::<Vec<_>>() });
    let mut sim = Sim::with(
        json!({ "blueprint": 1, "id": "t", "limits": { "max_step_runs": 20 }, "steps": [
            { "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "steps": [tool("w")] }
        ]}),
        cfg,
    )
    .start();
    sim.drive(|_, _, _| text(json!(1)));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors.last().unwrap().code, "MAX_STEP_RUNS");
    assert_eq!(sim.invokes.len(), 20, "a top-level loop starts once and is not one of the 20 runs");
}

#[test]
fn a_for_each_over_exactly_max_step_runs_items_of_one_step_fits_and_a_nested_loop_counts() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": (0..20).collect::<Vec<_>>() });
    let each = |body: Value| {
        json!({ "blueprint": 1, "id": "t", "limits": { "max_step_runs": 20 }, "steps": [
            { "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "steps": [body] }
        ]})
    };
    let mut sim = Sim::with(each(tool("w")), cfg.clone()).start();
    sim.drive(|_, _, _| text(json!(1)));
    assert_eq!(sim.envelope().status, RunStatus::Succeeded, "{:?}", sim.envelope().errors);
    assert_eq!(sim.invokes.len(), 20);
    // Inside an iteration a loop is a step like any other: 20 inner loops and their
    // calls are 40 runs.
    let inner = json!({ "id": "m", "kind": "loop", "for_each": "{{ [item] }}", "steps": [tool("w")] });
    let mut sim = Sim::with(each(inner), cfg).start();
    sim.drive(|_, _, _| text(json!(1)));
    assert_eq!(sim.envelope().errors.last().unwrap().code, "MAX_STEP_RUNS");
    assert_eq!(sim.invokes.len(), 10);
}

#[test]
fn a_loop_collecting_past_the_value_limit_fails_at_the_iteration_that_passes_it() {
    let mut sim = Sim::with(
        json!({ "blueprint": 1, "id": "t", "limits": { "max_value_bytes": 1024 }, "steps": [
            { "id": "l", "kind": "loop", "for_each": (0..100).collect::<Vec<_>>(), "steps": [tool("w")] }
        ]}),
        config(),
    )
    .start();
    // Each iteration collects a 100-character string: 118 bytes as the limit counts it
    // (the text with its quotes and 16 per scalar), the list itself 112.
    sim.drive(|_, _, _| text(json!("x".repeat(100))));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    let error = env.errors.last().unwrap();
    assert_eq!((error.code.as_str(), error.step.as_str()), ("OUTPUT_TOO_LARGE", "l"), "{error:?}");
    assert_eq!(sim.invokes.len(), 8, "a list of 7 values fits in 1,024 bytes; the 8th takes it past them");
}

#[test]
fn a_breakpoint_pauses_before_the_step_with_its_resolved_arguments() {
    let mut cfg = config();
    cfg.breakpoints = ["b".to_owned()].into();
    let mut sim = Sim::with(
        bp(json!([tool("a"), { "id": "b", "kind": "tool", "server": "s", "tool": "b", "args": { "v": "{{ a.n }}" } }, tool("c")])),
        cfg,
    )
    .start();
    sim.ok("a", json!({ "n": 7 }));
    assert!(sim.inflight.is_empty(), "b has not started");
    let paused = sim.events.iter().rev().find_map(|e| match &e.kind {
        EventKind::RunPaused { step, args, .. } => Some((step.clone(), args.clone())),
        _ => None,
    });
    assert_eq!(paused, Some((Some("b".into()), Some(json!({ "v": 7 })))));
    sim.control(Control::Resume);
    assert_eq!(sim.inflight_steps(), ["b"]);
    sim.ok("b", json!(1));
    sim.ok("c", json!(2));
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
}

/// The `preview` of every breakpoint pause, by step, in order.
fn previews(sim: &Sim) -> Vec<(String, Option<Value>)> {
    sim.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunPaused { step: Some(step), preview, .. } => Some((step.clone(), preview.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_breakpoint_before_a_transform_or_switch_previews_what_it_would_give() {
    let mut cfg = config();
    cfg.breakpoints = ["shape".to_owned(), "pick".to_owned(), "bad".to_owned(), "c".to_owned()].into();
    let mut sim = Sim::with(
        json!({ "blueprint": 1, "id": "t", "steps": [
            tool("a"),
            { "id": "shape", "kind": "transform", "value": { "said": "{{ a.n }}", "both": "{{ [a.n, a.n] }}" } },
            { "id": "pick", "kind": "switch", "cases": [
                { "when": "{{ shape.said > `10` }}", "to": [] },
                { "when": "{{ shape.said > `5` }}", "to": ["c"] }
            ] },
            tool("c"),
            { "id": "bad", "kind": "switch", "after": ["pick"], "cases": [{ "when": "{{ length(a.n) > `1` }}", "to": [] }] }
        ]}),
        cfg,
    )
    .start();
    sim.ok("a", json!({ "n": 7 }));
    // Paused before the transform: its value, computed from the scope; nothing ran.
    assert_eq!(previews(&sim), [("shape".to_owned(), Some(json!({ "value": { "said": 7, "both": [7, 7] } })))]);
    assert!(!sim.events.iter().any(|e| matches!(&e.kind, EventKind::StepStarted { step, .. } if step == "shape")));
    sim.control(Control::Resume);
    // Before the switch: the case it will take (7 > 5: case 1).
    assert_eq!(previews(&sim)[1], ("pick".to_owned(), Some(json!({ "case": 1 }))));
    sim.control(Control::Resume);
    // A tool step has no preview (it would have to be called).
    assert_eq!(previews(&sim)[2], ("c".to_owned(), None));
    sim.control(Control::Resume);
    // A `when` that fails to evaluate is shown as an error, not a case.
    let (step, preview) = previews(&sim).pop().unwrap();
    assert_eq!(step, "bad");
    let preview = preview.unwrap();
    assert_eq!(preview["error"]["code"], "TEMPLATE_EVAL", "{preview}");
    assert!(preview["error"]["message"].as_str().unwrap().starts_with("case 0:"), "{preview}");
}

#[test]
fn pause_step_and_resume_happen_in_order() {
    let mut cfg = config();
    cfg.start_paused = true;
    let mut sim = Sim::with(bp(json!([tool("a"), tool("b"), tool("c")])), cfg).start();
    assert!(sim.inflight.is_empty());
    sim.control(Control::Step);
    assert_eq!(sim.inflight_steps(), ["a"]);
    sim.ok("a", json!(1));
    assert!(sim.inflight.is_empty(), "stepping runs one step");
    sim.control(Control::Step);
    sim.ok("b", json!(2));
    sim.control(Control::Resume);
    sim.ok("c", json!(3));
    assert_eq!(
        sim.trace(),
        [
            "paused Requested ",
            "resumed",
            "start a",
            "paused Stepped a",
            "succeeded a",
            "resumed",
            "start b",
            "paused Stepped b",
            "succeeded b",
            "resumed",
            "start c",
            "succeeded c"
        ]
    );
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
}

#[test]
fn pausing_lets_running_calls_finish_but_starts_nothing_new() {
    let mut sim = Sim::new(bp(json!([tool("a"), tool("b")]))).start();
    sim.control(Control::Pause);
    sim.ok("a", json!(1));
    assert!(sim.inflight.is_empty());
    sim.control(Control::Resume);
    assert_eq!(sim.inflight_steps(), ["b"]);
}

#[test]
fn cancelling_in_the_middle_of_a_loop_cancels_its_calls_and_ends_cancelled() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": [1, 2, 3, 4, 5, 6] });
    let mut sim = Sim::with(
        bp(json!([{ "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 2, "steps": [tool("w")] }, tool("after")])),
        cfg,
    )
    .start();
    sim.ok("w", json!(1));
    sim.ok("w", json!(2));
    assert_eq!(sim.inflight.len(), 2);
    sim.control(Control::Cancel);
    assert_eq!(sim.cancelled.len(), 2);
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Cancelled);
    assert!(sim.trace().contains(&"skip after".to_owned()));
    assert_eq!(sim.invokes.len(), 4);
}

#[test]
fn a_failed_iteration_fails_the_loop_and_cancels_its_siblings() {
    let mut cfg = config();
    cfg.inputs = json!({ "items": [1, 2, 3] });
    let mut sim = Sim::with(
        bp(json!([{ "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 3, "steps": [tool("w")] }])),
        cfg,
    )
    .start();
    sim.tool_error("w", "bad item");
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(sim.cancelled.len(), 2);
    assert!(
        env.errors.iter().any(|e| e.step == "l" && e.message.contains("iteration 0: bad item")),
        "{:?}",
        env.errors
    );
}

#[test]
fn a_template_that_cannot_resolve_fails_the_step_before_anything_is_called() {
    let mut sim = Sim::new(bp(
        json!([tool("a"), { "id": "b", "kind": "tool", "server": "s", "tool": "b", "args": { "v": "{{ a.itmes }}" } }]),
    ))
    .start();
    sim.ok("a", json!({ "items": [] }));
    let env = sim.envelope();
    assert_eq!(env.errors[0].code, "TEMPLATE_UNRESOLVED");
    assert!(env.errors[0].message.contains("did you mean `items`?"));
    assert_eq!(sim.invokes.len(), 1);
}

#[test]
fn wait_sleeps_on_the_clock_and_save_emits_the_value() {
    let mut sim = Sim::new(bp(json!([{ "id": "w", "kind": "wait", "ms": 250 }, { "id": "v", "kind": "transform", "value": 5, "save": "cursor" }]))).start();
    assert!(sim.envelope.is_none());
    sim.advance_to(250);
    assert_eq!(sim.saves, [("cursor".to_owned(), json!(5))]);
    assert_eq!(sim.envelope().duration_ms, 250);
}

#[test]
fn saved_values_and_run_metadata_are_in_scope() {
    let mut cfg = config();
    cfg.saved = json!({ "cursor": 41 });
    let sim = Sim::with(bp(json!([{ "id": "v", "kind": "transform", "value": { "next": "{{ sum([saved.cursor, `1`]) }}", "run": "{{ run.id }}", "bp": "{{ run.blueprint }}" } }])), cfg).start();
    assert_eq!(sim.envelope().output, json!({ "next": 42.0, "run": "run-1", "bp": "t" }));
}

#[test]
fn workflow_steps_invoke_the_sub_blueprint_with_resolved_inputs() {
    let mut sim =
        Sim::new(bp(json!([{ "id": "sub", "kind": "workflow", "workflow": "child", "args": { "n": 3 } }]))).start();
    let (_, step, _, inv) = sim.inflight[0].clone();
    assert_eq!(step, "sub");
    assert_eq!(inv, Invocation::Workflow { id: "child".into(), inputs: json!({ "n": 3 }) });
    sim.answer("sub", Ok(json!({ "from": "child" })));
    assert_eq!(sim.envelope().output, json!({ "from": "child" }));
}

#[test]
fn resources_and_prompts_map_their_results() {
    let mut sim = Sim::new(bp(json!([
        { "id": "r", "kind": "resource", "server": "s", "uri": "x://{{ inputs.k || 'doc' }}" },
        { "id": "p", "kind": "prompt", "server": "s", "prompt": "greet", "args": { "n": 5 } }
    ])))
    .start();
    assert_eq!(sim.tool_args("r"), json!("x://doc"));
    sim.answer("r", Ok(json!({ "contents": [{ "uri": "x://doc", "text": "{\"a\":1}" }] })));
    match &sim.inflight[0].3 {
        Invocation::Server(mcpflow_engine::CallTarget::Prompt { args, .. }) => {
            assert_eq!(args["n"], json!("5"), "prompt args are strings")
        }
        other => panic!("{other:?}"),
    }
    sim.answer("p", Ok(json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "hi" } }] })));
    assert_eq!(sim.envelope().output[0]["role"], json!("user"));
    let r_out = sim.events.iter().find_map(|e| match &e.kind {
        EventKind::StepFinished { step, output, raw, .. } if step == "r" => Some((output.clone(), raw.is_some())),
        _ => None,
    });
    assert_eq!(r_out, Some((Some(json!({ "a": 1 })), true)));
}

#[test]
fn nested_loops_see_outer_variables_and_collect_per_level() {
    let mut cfg = config();
    cfg.inputs = json!({ "rows": [[1, 2], [3]] });
    let sim = Sim::with(
        bp(json!([{ "id": "outer", "kind": "loop", "for_each": "{{ inputs.rows }}", "as": "row", "steps": [
            { "id": "inner", "kind": "loop", "for_each": "{{ row }}", "as": "cell", "steps": [
                { "id": "cellv", "kind": "transform", "value": "{{ cell }}-{{ index }}" }
            ] }
        ] }])),
        cfg,
    )
    .start();
    assert_eq!(sim.envelope().output, json!([["1-0", "2-1"], ["3-0"]]));
}

#[test]
fn a_long_loop_of_transforms_runs_in_pieces_that_each_hold_a_bounded_number_of_events() {
    let n = 5000;
    let doc = json!({ "blueprint": 1, "id": "t", "limits": { "max_step_runs": 100_000 }, "steps": [
        { "id": "l", "kind": "loop", "until": format!("{{{{ index >= `{}` }}}}", n - 1), "max_iterations": n,
          "steps": [ { "id": "x", "kind": "transform", "value": "{{ index }}" } ] }
    ] });
    let mut sim = Sim::new(doc);
    // One input at a time, as the driver feeds them: each returns a piece of the run.
    let mut pieces = Vec::new();
    let mut input = mcpflow_engine::Input::Start;
    loop {
        let actions = sim.s.apply(0, input);
        pieces.push(actions.len());
        if !sim.s.has_more() {
            assert!(matches!(actions.last(), Some(mcpflow_engine::Action::Finish(_))), "the run ended");
            break;
        }
        input = mcpflow_engine::Input::Continue;
    }
    let biggest = pieces.iter().max().copied().unwrap_or(0);
    assert!(pieces.len() >= 5 && biggest < 4 * 1024, "{} pieces, the largest {biggest} actions", pieces.len());
}

#[test]
fn a_tool_that_refuses_its_arguments_fails_as_args_invalid_with_its_own_text_as_the_detail_and_no_retry() {
    let mut sim = Sim::new(bp(json!([
        { "id": "sum", "kind": "tool", "server": "s", "tool": "get-sum", "args": { "a": "{{ `{}` }}" },
          "retry": { "attempts": 3, "delay_ms": 10 } }
    ])))
    .start();
    let refused = json!({ "isError": true, "content": [{ "type": "text", "text": "failed to deserialize parameters: invalid type: map, expected f64" }] });
    sim.answer("sum", Ok(refused));
    let finished = sim
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::StepFinished { error: Some(error), .. } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished.code, "ARGS_INVALID");
    assert!(finished.message.contains("tool `get-sum` refused its arguments"), "{}", finished.message);
    assert_eq!(finished.detail.as_deref(), Some("failed to deserialize parameters: invalid type: map, expected f64"));
    assert_eq!(sim.envelope().status, RunStatus::Failed);
    assert_eq!(sim.invokes.len(), 1, "the same arguments would fail the same way: not retried");
}
