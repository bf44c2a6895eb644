//! Re-running part of an earlier run: `pinned` steps finish at once with their earlier
//! outputs, steps outside `only` are skipped, and the rest runs as usual.

use crate::sim::{Sim, bp, config};
use mcpflow_blueprint::{Options, check_value};
use mcpflow_engine::{Control, EventKind, RunConfig, RunStatus, StartError};
use serde_json::{Value, json};

fn tool(id: &str, args: Value) -> Value {
    json!({ "id": id, "kind": "tool", "server": "s", "tool": id, "args": args })
}

fn rerun(pinned: Value, only: &[&str]) -> RunConfig {
    let mut cfg = config();
    cfg.pinned = pinned.as_object().cloned().unwrap_or_default().into_iter().collect();
    cfg.only = Some(only.iter().map(|s| (*s).to_owned()).collect());
    cfg
}

/// a → b → c, each reading the one before.
fn pipeline() -> Value {
    bp(json!([
        tool("a", json!({})),
        tool("b", json!({ "n": "{{ prev.count }}", "all": "{{ a }}" })),
        tool("c", json!({ "doubled": "{{ b.doubled }}" }))
    ]))
}

fn finished(sim: &Sim, step: &str) -> Option<(String, Option<Value>, u32, u64)> {
    sim.events.iter().find_map(|e| match &e.kind {
        EventKind::StepFinished { step: s, status, output, attempts, duration_ms, .. } if s == step => {
            Some((status.as_str().to_owned(), output.clone(), *attempts, *duration_ms))
        }
        _ => None,
    })
}

#[test]
fn run_this_step_runs_only_it_with_the_pinned_upstream_output_in_its_arguments() {
    let mut sim = Sim::with(pipeline(), rerun(json!({ "a": { "count": 21 } }), &["b"])).start();
    assert_eq!(sim.inflight_steps(), ["b"], "a is pinned, not called");
    assert_eq!(sim.tool_args("b"), json!({ "n": 21, "all": { "count": 21 } }));
    assert_eq!(finished(&sim, "a"), Some(("succeeded".into(), Some(json!({ "count": 21 })), 0, 0)));
    let pinned_log = sim.events.iter().any(|e| {
        matches!(&e.kind, EventKind::Log { message, step: Some(s), .. }
            if s == "a" && message == "step `a` pinned from an earlier run")
    });
    assert!(pinned_log, "a viewer can tell a pinned step from one that ran");
    sim.ok("b", json!({ "doubled": 42 }));
    assert_eq!(sim.trace(), ["succeeded a", "start b", "succeeded b", "skip c"]);
    assert_eq!(sim.invokes.len(), 1);
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(
        (env.summary.steps, env.summary.succeeded, env.summary.skipped, env.summary.tool_calls),
        (3, 2, 1, 1),
        "the pinned step counts as succeeded; only b called a tool"
    );
    let seqs: Vec<u64> = sim.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>(), "seq is gapless and ordered");
}

#[test]
fn run_from_here_runs_the_step_and_its_downstream_and_pins_the_others() {
    let doc = bp(json!([
        tool("a", json!({})),
        tool("b", json!({ "n": "{{ a.count }}" })),
        { "id": "c", "kind": "transform", "value": {
            "b": "{{ b }}", "a": "{{ a.count }}", "a_attempts": "{{ steps.a.attempts }}", "a_status": "{{ steps.a.status }}" } },
        { "id": "side", "kind": "tool", "server": "s", "tool": "side", "after": [] },
        { "id": "join", "kind": "transform", "after": ["c", "side"], "value": ["{{ c }}", "{{ side }}"] }
    ]));
    let pinned = json!({ "a": { "count": 1 }, "side": "old side" });
    let mut sim = Sim::with(doc, rerun(pinned, &["b", "c", "join"])).start();
    assert_eq!(sim.inflight_steps(), ["b"]);
    assert_eq!(sim.tool_args("b"), json!({ "n": 1 }));
    sim.ok("b", json!("new b"));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(
        env.output,
        json!([{ "b": "new b", "a": 1, "a_attempts": 0, "a_status": "succeeded" }, "old side"]),
        "pinned outputs are read as if the steps had run"
    );
    assert_eq!(sim.invokes.iter().map(|i| i.1.as_str()).collect::<Vec<_>>(), ["b"]);
    assert_eq!((env.summary.succeeded, env.summary.skipped, env.summary.tool_calls), (5, 0, 1));
}

#[test]
fn a_pinned_switch_routes_by_its_pinned_output_not_by_evaluating_again() {
    let doc = bp(json!([
        { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ inputs.hot }}", "to": ["hot"] }], "default": ["cold"] },
        { "id": "hot", "kind": "transform", "value": "H" },
        { "id": "cold", "kind": "transform", "value": "C" },
        { "id": "join", "kind": "transform", "after": ["hot", "cold"], "value": "{{ hot || cold }}" }
    ]));
    for (pinned, want, skipped) in [(json!({ "case": "default" }), "C", "hot"), (json!({ "case": 0 }), "H", "cold")] {
        let mut cfg = rerun(json!({ "sw": pinned }), &["hot", "cold", "join"]);
        // Evaluated again, the switch would choose the other way for one of the two.
        cfg.inputs = json!({ "hot": want == "C" });
        let sim = Sim::with(doc.clone(), cfg).start();
        let env = sim.envelope();
        assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
        assert_eq!(env.output, json!(want));
        assert!(sim.trace().contains(&format!("skip {skipped}")), "{:?}", sim.trace());
        assert!(!sim.trace().contains(&"start sw".to_owned()));
    }
}

#[test]
fn a_switch_that_runs_again_skips_a_pinned_target_it_does_not_choose() {
    let doc = bp(json!([
        { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ inputs.hot }}", "to": ["hot"] }], "default": ["cold"] },
        { "id": "hot", "kind": "transform", "value": "H" },
        { "id": "cold", "kind": "transform", "value": "C" },
        { "id": "join", "kind": "transform", "after": ["hot", "cold"], "value": "{{ hot || cold }}" }
    ]));
    let mut cfg = rerun(json!({ "hot": "old H", "cold": "old C" }), &["sw", "join"]);
    cfg.inputs = json!({ "hot": false });
    let sim = Sim::with(doc, cfg).start();
    assert_eq!(sim.trace(), ["start sw", "succeeded sw", "skip hot", "succeeded cold", "start join", "succeeded join"]);
    assert_eq!(sim.envelope().output, json!("old C"));
}

#[test]
fn a_pinned_loop_does_not_iterate_and_downstream_reads_its_output() {
    let doc = bp(json!([
        { "id": "l", "kind": "loop", "for_each": "{{ `[1, 2, 3]` }}", "steps": [tool("work", json!({}))] },
        { "id": "n", "kind": "transform", "value": "{{ length(l) }}" }
    ]));
    let sim = Sim::with(doc, rerun(json!({ "l": [10, 20] }), &["n"])).start();
    assert!(sim.invokes.is_empty());
    assert_eq!(sim.envelope().output, json!(2));
}

#[test]
fn pause_and_breakpoints_apply_to_the_steps_that_run_not_to_pinned_ones() {
    let mut cfg = rerun(json!({ "a": { "count": 3 } }), &["b", "c"]);
    cfg.start_paused = true;
    cfg.breakpoints = ["a".to_owned(), "c".to_owned()].into();
    let mut sim = Sim::with(pipeline(), cfg).start();
    assert!(sim.inflight.is_empty(), "paused");
    sim.control(Control::Step);
    assert_eq!(sim.inflight_steps(), ["b"], "stepping starts the first step that runs");
    sim.ok("b", json!({ "doubled": 6 }));
    sim.control(Control::Resume);
    assert!(sim.inflight.is_empty(), "c's breakpoint holds it");
    sim.control(Control::Resume);
    sim.ok("c", json!(1));
    assert_eq!(
        sim.trace(),
        [
            "paused Requested ",
            "succeeded a",
            "resumed",
            "start b",
            "paused Stepped b",
            "succeeded b",
            "resumed",
            "paused Breakpoint c",
            "resumed",
            "start c",
            "succeeded c"
        ]
    );
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
}

#[test]
fn an_output_that_reads_a_step_the_re_run_skipped_gives_null_not_a_failure() {
    let mut doc = pipeline();
    doc["output"] = json!("{{ c.total }}");
    let mut sim = Sim::with(doc, rerun(json!({ "a": { "count": 1 } }), &["b"])).start();
    sim.ok("b", json!({ "doubled": 2 }));
    let env = sim.envelope();
    assert_eq!((env.status, &env.output), (RunStatus::Succeeded, &Value::Null), "{:?}", env.errors);
    let warned = sim
        .events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Log { message, .. } if message.contains("output could not be computed")));
    assert!(warned);
}

#[test]
fn pinned_or_only_ids_that_are_not_top_level_steps_refuse_the_run() {
    let doc = bp(json!([
        tool("fetch", json!({})),
        { "id": "l", "kind": "loop", "for_each": "{{ `[1]` }}", "steps": [tool("inner", json!({}))] },
        { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ `true` }}", "to": ["x"] }] },
        { "id": "x", "kind": "transform", "value": 1, "fallback": "fb" },
        { "id": "fb", "kind": "transform", "value": 2 }
    ]));
    let report = check_value(doc.clone(), &Options::default());
    let plan = report.plan.unwrap();
    let cases: [(Value, &[&str], &str, &[&str]); 5] = [
        (json!({ "fetc": 1 }), &[], "fetc", &["no such step", "did you mean `fetch`?"]),
        (json!({}), &["inner"], "inner", &["inside loop `l`", "name `l` instead"]),
        (json!({ "fb": 1 }), &[], "fb", &["the fallback of `x`", "name `x` instead"]),
        (json!({ "fetch": 1 }), &["fetch"], "fetch", &["both pinned and in `only`"]),
        (json!({ "sw": { "case": 3 } }), &[], "sw", &["pinned output of switch `sw`", "1 case(s)"]),
    ];
    for (pinned, only, id, words) in cases {
        let cfg = rerun(pinned, only);
        let e = cfg.check(&plan).expect_err(id);
        assert_eq!(e.code(), "RERUN_INVALID");
        let StartError::Selection { step, message } = &e else { panic!("{id}: {e:?}") };
        assert_eq!(step, id);
        for w in words {
            assert!(message.contains(w), "{id}: {message}");
        }
        // The scheduler refuses it too, before anything runs.
        let sim = Sim::with(doc.clone(), cfg).start();
        let env = sim.envelope();
        assert_eq!(env.status, RunStatus::Failed);
        assert_eq!((env.errors[0].code.as_str(), env.errors[0].step.as_str()), ("RERUN_INVALID", id));
        assert!(sim.trace().is_empty() && sim.invokes.is_empty(), "{:?}", sim.trace());
    }
    assert!(rerun(json!({ "fetch": 1, "sw": { "case": 0 } }), &["l"]).check(&plan).is_ok());
}

#[test]
fn resuming_hands_each_task_in_flight_to_its_step_instance_once_and_records_new_handles() {
    use mcpflow_engine::{Input, TaskHandle};
    let doc = bp(json!([
        { "id": "a", "kind": "tool", "server": "s", "tool": "a", "args": {} },
        { "id": "each", "kind": "loop", "for_each": "{{ inputs.items }}", "as": "x", "concurrency": 2,
          "steps": [ { "id": "t", "kind": "tool", "server": "s", "tool": "t", "args": { "x": "{{ x }}" } } ] }
    ]));
    let handle = |id: &str| TaskHandle { server: "s".into(), task_id: id.into(), started_at: "then".into() };
    let mut cfg = config();
    cfg.inputs = json!({ "items": [1, 2] });
    cfg.pinned = [("a".to_owned(), json!({}))].into_iter().collect();
    cfg.resume_tasks = [(("t".to_owned(), vec![1]), handle("task-1"))].into_iter().collect();
    let mut sim = Sim::with(doc, cfg).start();
    // Only iteration 1's `t` polls its task; iteration 0 calls as usual.
    assert_eq!(sim.resumed, [("t".to_owned(), vec![1], "task-1".to_owned())]);
    // A new task reported by a call is recorded as an event of its step instance.
    let (inv, ..) = sim.inflight.iter().find(|c| c.2 == [0]).cloned().unwrap();
    sim.feed(Input::TaskStarted { inv, handle: handle("task-0") });
    let recorded: Vec<_> = sim
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::StepTaskStarted { step, path, server, task_id, .. } => {
                Some((step.clone(), path.clone(), server.clone(), task_id.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(recorded, [("t".to_owned(), vec![0], "s".to_owned(), "task-0".to_owned())]);
}
