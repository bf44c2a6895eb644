//! Runs that wait for a person, through the application (the studio's and the daemon's
//! path): the record is `waiting` while a question is open; a shutdown leaves such a run
//! waiting; the next application lists its question and answering it resumes the run,
//! the step that had finished not called again (the echo fixture's `record` tool appends
//! a line per call).

use crate::{Setup, setup};
use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::people::Answer;
use mcpflow_engine::{Question, RunStatus};
use mcpflow_store::RecordStatus;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn open(s: &Setup, home: &Path) -> App {
    let options = AppOptions { server_files: vec![s.servers.clone()], allow_all: true, ..AppOptions::default() };
    App::open(home, options).unwrap()
}

/// `first` records, `ask` asks for a name and a count, `second` records both.
fn save(app: &App) {
    let record = |id: &str, line: &str| json!({ "id": id, "kind": "tool", "server": "echo", "tool": "record", "args": { "file": "{{ inputs.file }}", "line": line } });
    let doc = json!({ "blueprint": 1, "id": "ask-app",
        "inputs": { "type": "object", "properties": { "file": { "type": "string" } } },
        "steps": [
            record("first", "first"),
            { "id": "ask", "kind": "input", "prompt": "Deploy what?", "after": ["first"],
              "schema": { "type": "object", "required": ["name"],
                          "properties": { "name": { "type": "string" }, "replicas": { "type": "integer" } } } },
            record("second", "second {{ ask.name }} x{{ ask.replicas }}")
        ] });
    app.save_blueprint(&doc).unwrap();
}

async fn asked(app: &App, run: &str) -> Question {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some((_, q)) = app.questions(Some(run)).into_iter().next() {
            return q;
        }
        assert!(Instant::now() < deadline, "run {run} never asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn status(app: &App, run: &str) -> RecordStatus {
    app.store().run(run).unwrap().unwrap().status
}

fn lines(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file).unwrap_or_default().lines().map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_waiting_while_its_question_is_open_and_running_again_once_answered() {
    let s = setup(json!({}));
    let app = open(&s, &s.dir.path().join("home"));
    save(&app);
    let file = s.dir.path().join("calls.txt");
    let started = app
        .start_run(StartRun::new(Target::Stored("ask-app".into()), json!({ "file": file }), Trigger::Studio))
        .unwrap();
    let run = started.run_id.clone();
    let q = asked(&app, &run).await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while status(&app, &run) != RecordStatus::Waiting {
        assert!(Instant::now() < deadline, "the record never said waiting");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    app.answer(&run, &q.id, Answer::Accept { content: json!({ "name": "web", "replicas": 2 }) }).unwrap();
    let envelope = started.finish().await;
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:?}", envelope.errors);
    assert_eq!(status(&app, &run), RecordStatus::Succeeded);
    assert_eq!(lines(&file), ["first", "second web x2"]);
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_leaves_fields_out_gives_the_step_the_forms_defaults_for_them() {
    let s = setup(json!({}));
    let app = open(&s, &s.dir.path().join("home"));
    let doc = json!({ "blueprint": 1, "id": "ask-defaults", "steps": [
        { "id": "ask", "kind": "input", "prompt": "Deploy what?",
          "schema": { "type": "object", "required": ["name"], "properties": {
              "name": { "type": "string" }, "replicas": { "type": "integer", "default": 2 } } } }
    ], "output": "{{ ask }}" });
    app.save_blueprint(&doc).unwrap();
    let started =
        app.start_run(StartRun::new(Target::Stored("ask-defaults".into()), json!({}), Trigger::Studio)).unwrap();
    let run = started.run_id.clone();
    let q = asked(&app, &run).await;
    app.answer(&run, &q.id, Answer::Accept { content: json!({ "name": "web" }) }).unwrap();
    let envelope = started.finish().await;
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:?}", envelope.errors);
    assert_eq!(envelope.output, json!({ "name": "web", "replicas": 2 }));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_leaves_a_waiting_run_waiting_and_the_next_app_resumes_it_when_answered() {
    let s = setup(json!({}));
    let home = s.dir.path().join("home");
    let file = s.dir.path().join("calls.txt");
    let run = {
        let app = open(&s, &home);
        save(&app);
        let started = app
            .start_run(StartRun::new(Target::Stored("ask-app".into()), json!({ "file": file }), Trigger::Studio))
            .unwrap();
        let run = started.run_id.clone();
        asked(&app, &run).await;
        app.shutdown().await;
        let envelope = started.finish().await;
        assert_eq!(envelope.errors.first().map(|e| e.code.as_str()), Some("RUN_WAITING"), "{envelope:?}");
        let record = app.store().run(&run).unwrap().unwrap();
        assert_eq!((record.status, record.finished_at), (RecordStatus::Waiting, None));
        run
    };
    assert_eq!(lines(&file), ["first"]);

    // The next start: the question is there, from the run's events.
    let app = open(&s, &home);
    let questions = app.questions(None);
    assert_eq!(questions.len(), 1, "{questions:?}");
    let (listed_run, q) = &questions[0];
    assert_eq!((listed_run, q.step.as_str(), q.message.as_str()), (&run, "ask", "Deploy what?"));
    assert!(app.waiting_notes()[0].contains(&format!("mcpflow answer {run} ask --answers FILE")));

    // A wrong answer is refused and changes nothing.
    let wrong = app.answer(&run, &q.id, Answer::Accept { content: json!({ "replicas": "two" }) }).unwrap_err();
    assert_eq!(wrong.code(), "BAD_REQUEST", "{wrong}");
    assert_eq!(status(&app, &run), RecordStatus::Waiting);

    app.answer(&run, &q.id, Answer::Accept { content: json!({ "name": "api", "replicas": 3 }) }).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let resumed = loop {
        let runs = app.runs(Some("ask-app"), 10).unwrap();
        if let Some(r) = runs.iter().find(|r| r.resumed_from.as_deref() == Some(&run) && r.finished_at.is_some()) {
            break r.clone();
        }
        assert!(Instant::now() < deadline, "the resumed run never finished: {runs:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(resumed.status, RecordStatus::Succeeded, "{:?}", resumed.envelope);
    assert_eq!(resumed.trigger, "studio", "started as the waiting run was");
    assert_eq!(lines(&file), ["first", "second api x3"], "first was not called again");
    assert_eq!(status(&app, &run), RecordStatus::Interrupted, "settled");
    assert!(app.questions(None).is_empty());
    let again = app.answer(&run, &q.id, Answer::Decline).unwrap_err();
    assert_eq!(again.code(), "QUESTION_NOT_OPEN", "{again}");
    app.shutdown().await;
}

/// A loop whose first iteration was answered and whose second waits when the app stops:
/// answered after the restart, the loop runs again from its first iteration, whose
/// question gets its earlier answer (nobody is asked twice), and the second gets the new
/// one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_answered_before_in_a_loop_that_runs_again_get_their_earlier_answers() {
    let s = setup(json!({}));
    let home = s.dir.path().join("home");
    let doc = json!({ "blueprint": 1, "id": "ask-each",
        "steps": [{ "id": "each", "kind": "loop", "for_each": ["a", "b"], "concurrency": 1,
            "steps": [{ "id": "name", "kind": "input", "prompt": "Name for {{ item }}?" }],
            "collect": "{{ name }}" }] });
    let run = {
        let app = open(&s, &home);
        app.save_blueprint(&doc).unwrap();
        let started =
            app.start_run(StartRun::new(Target::Stored("ask-each".into()), json!({}), Trigger::Studio)).unwrap();
        let run = started.run_id.clone();
        let first = asked(&app, &run).await;
        assert_eq!((first.message.as_str(), first.path.as_slice()), ("Name for a?", &[0][..]));
        app.answer(&run, &first.id, Answer::Accept { content: json!({ "value": "Ada" }) }).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let second = loop {
            if let Some((_, q)) = app.questions(Some(&run)).into_iter().find(|(_, q)| q.id != first.id) {
                break q;
            }
            assert!(Instant::now() < deadline, "the second iteration never asked");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(second.message, "Name for b?");
        app.shutdown().await;
        started.finish().await;
        run
    };

    let app = open(&s, &home);
    let questions = app.questions(Some(&run));
    assert_eq!(questions.len(), 1, "{questions:?}");
    let q = &questions[0].1;
    assert_eq!((q.message.as_str(), q.path.as_slice()), ("Name for b?", &[1][..]));
    app.answer(&run, &q.id, Answer::Accept { content: json!({ "value": "Grace" }) }).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let resumed = loop {
        let runs = app.runs(Some("ask-each"), 10).unwrap();
        if let Some(r) = runs.iter().find(|r| r.resumed_from.as_deref() == Some(&run) && r.finished_at.is_some()) {
            break r.clone();
        }
        assert!(Instant::now() < deadline, "the resumed run never finished: {runs:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let envelope = resumed.envelope.unwrap();
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:?}", envelope.errors);
    assert_eq!(envelope.output, json!(["Ada", "Grace"]));
    assert!(app.questions(None).is_empty(), "nobody was asked again");
    app.shutdown().await;
}

/// The studio's path after a restart: a run of a blueprint given inline (the canvas) is
/// listed with its record, resumed on the document given again, and followed: the
/// resuming run's events come from its first on, and `first` is not called again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_inline_run_is_listed_after_a_restart_and_followed_when_answered_on_the_document_it_ran() {
    let s = setup(json!({}));
    let home = s.dir.path().join("home");
    let file = s.dir.path().join("calls.txt");
    let (run, doc) = {
        let app = open(&s, &home);
        save(&app);
        let doc = app.blueprint("ask-app").unwrap().json;
        let started = app
            .start_run(StartRun::new(Target::Inline(doc.clone()), json!({ "file": file }), Trigger::Studio))
            .unwrap();
        let run = started.run_id.clone();
        asked(&app, &run).await;
        app.shutdown().await;
        started.finish().await;
        (run, doc)
    };

    let app = open(&s, &home);
    let waiting = app.waiting();
    assert_eq!(waiting.len(), 1, "{waiting:?}");
    assert_eq!(
        (waiting[0].record.id.as_str(), waiting[0].record.status, waiting[0].in_flight),
        (run.as_str(), RecordStatus::Waiting, false)
    );
    let q = waiting[0].questions[0].clone();
    assert_eq!(q.step, "ask");

    // Another blueprint's document is refused, naming the right one; the run stays
    // waiting (it can be answered again).
    let answer = || Answer::Accept { content: json!({ "name": "db", "replicas": 1 }) };
    let mut other = doc.clone();
    other["id"] = json!("something-else");
    let err = app.answer_and_follow(&run, &q.id, answer(), Some(Target::Inline(other))).unwrap_err();
    assert!(err.to_string().contains("resume it on `ask-app`"), "{err}");
    assert_eq!(app.waiting().len(), 1, "still waiting after refusals");

    // Without a document: the one the run ran, kept with it.
    let mut answered = app.answer_and_follow(&run, &q.id, answer(), None).unwrap();
    assert!(answered.resumed);
    assert_ne!(answered.run_id, run);
    assert_eq!(answered.blueprint, "ask-app");
    let mut kinds = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let event =
            tokio::time::timeout_at(deadline, answered.events.recv()).await.expect("the run to finish").unwrap();
        let kind = serde_json::to_value(&event.kind).unwrap()["type"].as_str().unwrap().to_owned();
        kinds.push(kind.clone());
        if kind == "RunFinished" {
            break;
        }
    }
    assert_eq!(kinds.first().map(String::as_str), Some("RunStarted"), "followed from its first event: {kinds:?}");
    assert_eq!(lines(&file), ["first", "second db x1"], "first was not called again");
    assert!(app.waiting().is_empty());
    app.shutdown().await;
}

/// A run in flight here: answering and following it gives the same run, its events from
/// the answer on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_in_flight_is_followed_from_its_answer_on() {
    let s = setup(json!({}));
    let app = open(&s, &s.dir.path().join("home"));
    save(&app);
    let file = s.dir.path().join("calls.txt");
    let started = app
        .start_run(StartRun::new(Target::Stored("ask-app".into()), json!({ "file": file }), Trigger::Studio))
        .unwrap();
    let run = started.run_id.clone();
    let q = asked(&app, &run).await;
    let waiting = app.waiting();
    assert_eq!((waiting.len(), waiting[0].in_flight), (1, true));
    let mut answered = app
        .answer_and_follow(&run, &q.id, Answer::Accept { content: json!({ "name": "web", "replicas": 2 }) }, None)
        .unwrap();
    assert_eq!((answered.run_id.as_str(), answered.resumed), (run.as_str(), false));
    let first = tokio::time::timeout(Duration::from_secs(20), answered.events.recv()).await.unwrap().unwrap();
    assert_eq!(serde_json::to_value(&first.kind).unwrap()["type"], "StepAnswered");
    assert_eq!(started.finish().await.status, RunStatus::Succeeded);
    assert_eq!(lines(&file), ["first", "second web x2"]);
    app.shutdown().await;
}

/// A resume that cannot start (too many runs in flight) leaves the run waiting: listed,
/// and answerable again — not stuck as "being resumed".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_that_cannot_start_leaves_the_run_waiting_and_answerable() {
    let s = setup(json!({}));
    let home = s.dir.path().join("home");
    let file = s.dir.path().join("calls.txt");
    let run = {
        let app = open(&s, &home);
        save(&app);
        let started = app
            .start_run(StartRun::new(Target::Stored("ask-app".into()), json!({ "file": file }), Trigger::Studio))
            .unwrap();
        let run = started.run_id.clone();
        asked(&app, &run).await;
        app.shutdown().await;
        started.finish().await;
        run
    };
    let options = AppOptions {
        server_files: vec![s.servers.clone()],
        allow_all: true,
        max_runs: Some(0),
        ..AppOptions::default()
    };
    let app = App::open(&home, options).unwrap();
    let q = app.waiting_question(&run, "ask").unwrap();
    let answer = || Answer::Accept { content: json!({ "name": "db" }) };
    for _ in 0..2 {
        let err = app.answer_and_follow(&run, &q.id, answer(), None).unwrap_err();
        assert_eq!(err.code(), "RUNS_BUSY", "{err}");
        assert_eq!(status(&app, &run), RecordStatus::Waiting);
        assert_eq!(app.waiting().len(), 1, "still listed");
    }
    app.shutdown().await;
}

/// Whoever reads that a run waits can answer it at once: the question is open in the
/// application before its `StepWaiting` event exists (asked of the registry directly, and
/// through a front door's own people first — `run --store --wait` — that cannot answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_open_before_the_run_says_it_waits() {
    let s = setup(json!({}));
    let app = open(&s, &s.dir.path().join("home"));
    let doc = json!({ "blueprint": 1, "id": "asks-now", "steps": [
        { "id": "ask", "kind": "input", "prompt": "Name?",
          "schema": { "type": "object", "properties": { "name": { "type": "string" } } } } ], "output": "{{ ask.name }}" });
    for headless_first in [false, true] {
        let mut spec = StartRun::new(Target::Inline(doc.clone()), json!({}), Trigger::Cli);
        if headless_first {
            spec.people = Some(std::sync::Arc::new(mcpflow_app::people::Headless::new(None)));
            spec.wait = true;
        }
        let mut started = app.start_run(spec).unwrap();
        let run = started.run_id.clone();
        let question = loop {
            let event = started.events.recv().await.unwrap();
            if let mcpflow_engine::EventKind::StepWaiting { question, .. } = &event.kind {
                break question.clone();
            }
        };
        // Answered the moment the event is seen, without waiting for anything.
        app.answer(&run, &question.id, Answer::Accept { content: json!({ "name": "Ada" }) }).unwrap();
        let envelope = started.finish().await;
        assert_eq!((envelope.status, envelope.output), (RunStatus::Succeeded, json!("Ada")), "{headless_first}");
    }
}
