//! Re-running part of a recorded run ("run this step", "run from here") against the
//! testkit fixtures: the steps that run again reach the server, the pinned ones do not.

use crate::{Setup, setup};
use mcpflow_app::runs::{Rerun, StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::{Envelope, EventKind, RunStatus};
use mcpflow_store::Store;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn app(s: &Setup) -> App {
    let options = AppOptions { server_files: vec![s.servers.clone()], allow_all: true, ..AppOptions::default() };
    App::with_store(Store::open_temporary().unwrap(), Vec::new(), options).unwrap()
}

/// a → b → c, each appending a line to `inputs.file` with the echo fixture's `record`
/// (so the file lists the calls that reached the server) and piping the line on.
fn pipeline() -> Value {
    let record = |id: &str, line: &str| json!({ "id": id, "kind": "tool", "server": "echo", "tool": "record", "args": { "file": "{{ inputs.file }}", "line": line } });
    json!({ "blueprint": 1, "id": "pipe",
        "inputs": { "type": "object", "properties": { "file": { "type": "string" }, "x": { "type": "integer" } } },
        "steps": [
            record("a", "a {{ inputs.x }}"),
            record("b", "b got {{ a.recorded }}"),
            record("c", "c got {{ b.recorded }}")
        ] })
}

/// The lines the server recorded since the last call, which empties the file.
fn calls(file: &PathBuf) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    std::fs::write(file, "").unwrap();
    text.lines().map(str::to_owned).collect()
}

fn ids(ids: &[&str]) -> Option<BTreeSet<String>> {
    Some(ids.iter().map(|s| (*s).to_owned()).collect())
}

/// A stored pipeline's first run, with the lines it recorded.
async fn first_run(app: &App, file: &PathBuf) -> Envelope {
    app.save_blueprint(&pipeline()).unwrap();
    let inputs = json!({ "file": file, "x": 5 });
    let env = app.run_to_end(StartRun::new(Target::Stored("pipe".into()), inputs, Trigger::Studio)).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(calls(file), ["a 5", "b got a 5", "c got b got a 5"]);
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_this_step_calls_only_that_step_with_its_upstream_output_pinned() {
    let s = setup(json!({}));
    let app = app(&s);
    let file = s.dir.path().join("calls.txt");
    let past = first_run(&app, &file).await;

    let spec = app.rerun_plan(&past.run_id, "b", Rerun::Step).unwrap();
    assert!(matches!(&spec.target, Target::Stored(id) if id == "pipe"));
    assert_eq!(spec.inputs, json!({ "file": file, "x": 5 }), "the past run's inputs");
    assert_eq!(spec.pinned.keys().collect::<Vec<_>>(), ["a"]);
    assert_eq!(spec.pinned["a"], json!({ "recorded": "a 5" }));
    assert_eq!(spec.only, ids(&["b"]));

    let env = app.run_to_end(spec).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(calls(&file), ["b got a 5"], "a and c did not reach the server");
    assert_eq!((env.summary.succeeded, env.summary.skipped, env.summary.tool_calls), (2, 1, 1));
    let events = app.run_detail(&env.run_id).unwrap().events;
    let b_args = events.iter().find_map(|e| match &e.kind {
        EventKind::StepStarted { step, args, .. } if step == "b" => args.clone(),
        _ => None,
    });
    assert_eq!(b_args.unwrap()["line"], "b got a 5", "b's resolved arguments hold a's pinned output");
    let a = events.iter().find_map(|e| match &e.kind {
        EventKind::StepFinished { step, attempts, output, .. } if step == "a" => Some((*attempts, output.clone())),
        _ => None,
    });
    assert_eq!(a, Some((0, Some(json!({ "recorded": "a 5" })))), "recorded as pinned: no attempt");
    let record = app.run_detail(&env.run_id).unwrap().record;
    let origin = record.rerun_of.expect("the re-run's record names the run it re-ran");
    assert_eq!((origin.run.as_str(), origin.step.as_str(), origin.mode), (past.run_id.as_str(), "b", Rerun::Step));
    assert_eq!(app.run_detail(&past.run_id).unwrap().record.rerun_of, None, "a first run is not a re-run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_from_here_calls_the_step_and_its_downstream_with_the_rest_pinned() {
    let s = setup(json!({}));
    let app = app(&s);
    let file = s.dir.path().join("calls.txt");
    let past = first_run(&app, &file).await;

    let spec = app.rerun_plan(&past.run_id, "b", Rerun::FromHere).unwrap();
    assert_eq!(spec.pinned.keys().collect::<Vec<_>>(), ["a"]);
    assert_eq!(spec.only, ids(&["b", "c"]));
    let env = app.run_to_end(spec).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!({ "recorded": "c got b got a 5" }));
    assert_eq!(calls(&file), ["b got a 5", "c got b got a 5"]);
    assert_eq!((env.summary.succeeded, env.summary.tool_calls), (3, 2));

    let origin = app.run_detail(&env.run_id).unwrap().record.rerun_of.unwrap();
    assert_eq!((origin.run, origin.step, origin.mode), (past.run_id.clone(), "b".to_owned(), Rerun::FromHere));

    // A re-run is a run like any other: it can be re-run in turn, and names its own source.
    let again = app.rerun_plan(&env.run_id, "c", Rerun::Step).unwrap();
    assert_eq!(again.pinned.keys().collect::<Vec<_>>(), ["a", "b"]);
    let third = app.run_to_end(again).await.unwrap();
    assert_eq!(app.run_detail(&third.run_id).unwrap().record.rerun_of.unwrap().run, env.run_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_step_or_an_upstream_step_that_failed_is_refused_and_a_later_step_can_run_from_the_failed_one() {
    let s = setup(json!({}));
    let app = app(&s);
    let file = s.dir.path().join("calls.txt");
    let mut doc = pipeline();
    // b fails its first call, then succeeds (the "fixed, run from here" case).
    doc["steps"][1] = json!({ "id": "b", "kind": "tool", "server": "faulty", "tool": "fail_n_times",
        "args": { "key": "rerun-b", "n": 1 } });
    doc["steps"][2]["args"]["line"] = json!("c got attempt {{ b.attempts }}");
    app.save_blueprint(&doc).unwrap();
    let inputs = json!({ "file": file, "x": 1 });
    let past = app.run_to_end(StartRun::new(Target::Stored("pipe".into()), inputs, Trigger::Studio)).await.unwrap();
    assert_eq!(past.status, RunStatus::Failed);
    assert_eq!(calls(&file), ["a 1"]);

    let unknown = app.rerun_plan(&past.run_id, "bb", Rerun::Step).unwrap_err();
    assert_eq!(unknown.code(), "BAD_REQUEST");
    assert!(unknown.to_string().contains("no step `bb`; did you mean `b`?"), "{unknown}");
    for mode in [Rerun::Step, Rerun::FromHere] {
        let failed = app.rerun_plan(&past.run_id, "c", mode).unwrap_err().to_string();
        let want = format!("step `b` did not succeed in run {} (it failed)", past.run_id);
        assert!(failed.contains(&want) && failed.contains("run from an earlier step"), "{failed}");
    }
    let no_run = app.rerun_plan("0190b7a4-0000-7000-8000-000000000000", "b", Rerun::Step).unwrap_err();
    assert_eq!(no_run.code(), "RUN_NOT_FOUND");

    let spec = app.rerun_plan(&past.run_id, "b", Rerun::FromHere).unwrap();
    let env = app.run_to_end(spec).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(calls(&file), ["c got attempt 2"], "a stayed pinned; c read b's new output");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_an_inline_blueprint_is_re_run_on_the_blueprint_the_caller_holds() {
    let s = setup(json!({}));
    let app = app(&s);
    let file = s.dir.path().join("calls.txt");
    let inputs = json!({ "file": file, "x": 2 });
    let past = app.run_to_end(StartRun::new(Target::Inline(pipeline()), inputs, Trigger::Studio)).await.unwrap();
    assert_eq!(calls(&file).len(), 3);

    let kept = app.rerun_plan(&past.run_id, "c", Rerun::Step).unwrap_err().to_string();
    assert!(kept.contains("as given (not from the store)"), "{kept}");
    let mut other = pipeline();
    other["id"] = json!("other");
    let wrong = app.rerun_plan_on(&past.run_id, Target::Inline(other), "c", Rerun::Step).unwrap_err().to_string();
    assert!(wrong.contains("a run of blueprint `pipe`, not of `other`"), "{wrong}");

    let spec = app.rerun_plan_on(&past.run_id, Target::Inline(pipeline()), "c", Rerun::Step).unwrap();
    let env = app.run_to_end(spec).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(calls(&file), ["c got b got a 2"]);
}
