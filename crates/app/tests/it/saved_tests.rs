//! The studio's "Save this run as a test" and its Tests list: a run of the testkit
//! fixtures saved from its record replays with no server, and fails when its
//! expectation or its blueprint changes.

use crate::{Setup, setup};
use mcpflow_app::cassette::suite;
use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::RunStatus;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn app(s: &Setup) -> App {
    let options = AppOptions { server_files: vec![s.servers.clone()], allow_all: true, ..AppOptions::default() };
    App::open(&s.dir.path().join("home"), options).unwrap()
}

/// Calls of every shape a record must give back: a plain call, structured output, a loop
/// at concurrency 2, progress, a retried failure, a failure handed to a fallback.
fn blueprint(key: &str) -> Value {
    json!({ "blueprint": 1, "id": "shapes",
        "inputs": { "type": "object", "properties": { "name": { "type": "string" } } },
        "steps": [
            { "id": "greet", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "Hello, {{ inputs.name }}" } },
            { "id": "sum", "kind": "tool", "tool": "add", "server": "echo", "args": { "a": 1, "b": 2 } },
            { "id": "each", "kind": "loop", "for_each": "{{ [`1`, `2`, `3`] }}", "concurrency": 2,
              "steps": [ { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "item {{ item }}" } } ] },
            { "id": "slow", "kind": "tool", "server": "echo", "tool": "progress", "args": { "steps": 2, "interval_ms": 1 } },
            { "id": "flaky", "kind": "tool", "server": "faulty", "tool": "fail_n_times", "args": { "key": key, "n": 1 },
              "retry": { "attempts": 2 } },
            { "id": "broken", "kind": "tool", "server": "faulty", "tool": "is_error", "args": { "message": "no luck" },
              "fallback": "mend" },
            { "id": "mend", "kind": "transform", "value": "mended {{ error.code }}" },
            { "id": "out", "kind": "transform", "after": ["greet", "sum", "each", "slow", "flaky", "broken"],
              "value": { "greet": "{{ greet }}", "sum": "{{ sum.sum }}", "each": "{{ each }}", "slow": "{{ slow.steps }}",
                         "flaky": "{{ flaky.attempts }}", "broken": "{{ broken }}" } }
        ] })
}

async fn studio_run(app: &App, doc: &Value) -> String {
    let spec = StartRun::new(Target::Inline(doc.clone()), json!({ "name": "Ada" }), Trigger::Studio);
    let envelope = app.run_to_end(spec).await.unwrap();
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:?}", envelope.errors);
    assert_eq!(envelope.output["broken"], "mended TOOL_ERROR", "{}", envelope.output);
    assert_eq!(envelope.output["flaky"], 2, "{}", envelope.output);
    envelope.run_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_saved_as_a_test_replays_with_no_server_and_fails_when_its_expectation_breaks() {
    let s = setup(json!({}));
    let app = app(&s);
    let doc = blueprint(&format!("k-{}", std::process::id()));
    let run = studio_run(&app, &doc).await;

    let saved = app.save_run_as_test(&doc, &run).await.unwrap();
    // greet, sum, 3 iterations, slow, flaky twice, broken.
    assert_eq!(saved.exchanges, 9);
    let folder = s.dir.path().join("home/tests/shapes");
    assert_eq!(saved.file.parent(), Some(folder.as_path()));
    assert!(folder.join("shapes.blueprint.json").is_file());
    let test: Value = serde_json::from_str(&std::fs::read_to_string(&saved.file).unwrap()).unwrap();
    assert_eq!(test["inputs"]["name"], "Ada");
    assert_eq!(test["expect"]["status"], "succeeded");
    assert_eq!(test["expect"]["output"]["greet"], "Hello, Ada");
    let cassette = std::fs::read_to_string(folder.join(format!("{}.cassette.json", saved.name))).unwrap();
    assert!(cassette.contains("failure 1 of 1"), "the retried attempt's error is kept: {cassette}");

    // No server can answer: the pool's servers file is gone, and `mcpflow test`'s code
    // starts none anyway.
    std::fs::remove_file(&s.servers).unwrap();
    let verdict = suite::run_test(&saved.file, CancellationToken::new()).await;
    assert_eq!(verdict.failure, None);

    let listed = app.blueprint_tests("shapes").unwrap();
    assert_eq!(listed, vec![(saved.name.clone(), saved.file.clone())]);
    let ran = app.run_blueprint_tests(&doc).await.unwrap();
    assert_eq!((ran.len(), ran[0].failure.clone(), ran[0].status), (1, None, Some(RunStatus::Succeeded)));

    let mut broken = test.clone();
    broken["expect"]["output"]["greet"] = json!("Hello, Bob");
    std::fs::write(&saved.file, broken.to_string()).unwrap();
    let ran = app.run_blueprint_tests(&doc).await.unwrap();
    let failure = ran[0].failure.clone().unwrap_or_default();
    assert!(failure.starts_with("output: expected") && failure.contains("Hello, Bob"), "{failure}");

    // The document on the canvas is what runs: a changed argument meets no recorded call.
    std::fs::write(&saved.file, test.to_string()).unwrap();
    let mut changed = doc.clone();
    changed["steps"][0]["args"]["message"] = json!("Hi, {{ inputs.name }}");
    let ran = app.run_blueprint_tests(&changed).await.unwrap();
    let failure = ran[0].failure.clone().unwrap_or_default();
    assert!(failure.contains("CASSETTE_UNMATCHED") && failure.contains("Hi, Ada"), "{failure}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_another_document_is_not_saved_and_leaves_nothing() {
    let s = setup(json!({}));
    let app = app(&s);
    let doc = blueprint(&format!("j-{}", std::process::id()));
    let run = studio_run(&app, &doc).await;
    let mut changed = doc.clone();
    changed["steps"][1]["args"]["b"] = json!(5);

    let err = app.save_run_as_test(&changed, &run).await.unwrap_err().to_string();
    assert!(err.contains("does not give the same result") && err.contains("CASSETTE_UNMATCHED"), "{err}");
    assert_eq!(app.blueprint_tests("shapes").unwrap(), vec![], "no test is kept");
}
