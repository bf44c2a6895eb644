//! Opening: creating, the schema version, interrupted runs (on both backends), the
//! folder lock (`postgres.rs` has the database's).

use crate::support::{Kind, Place, damage, envelope, event, open, raw, record, run_id};
use mcpflow_engine::RunStatus;
use mcpflow_store::{Error, RecordStatus, SCHEMA_VERSION, Store};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn a_new_store_creates_its_folder_and_records_the_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("nested/store");
    let opened = Store::open(&folder).unwrap();
    assert_eq!((opened.migrated_from, opened.interrupted.len()), (None, 0));
    drop(opened);
    raw(&folder, |db| {
        let version = db.open_tree("meta").unwrap().get("schema_version").unwrap().unwrap();
        assert_eq!(serde_json::from_slice::<u32>(&version).unwrap(), SCHEMA_VERSION);
    });
}

fn a_run_left_running_is_interrupted_on_the_next_open_and_keeps_its_events(kind: Kind) {
    let place = Place::new(kind);
    let (crashed, done) = (run_id(1), run_id(2));
    let store = place.store();
    for id in [&crashed, &done] {
        store.begin_run(&record(id, "inv")).unwrap();
        for seq in 0..3 {
            store.append_event(id, &event(seq)).unwrap();
        }
    }
    store.finish_run(&done, &envelope(&done, "inv", RunStatus::Succeeded)).unwrap();
    drop(store); // the process "dies" with `crashed` still running

    let opened = place.open().unwrap();
    assert_eq!(opened.interrupted, std::slice::from_ref(&crashed));
    let record = opened.store.run(&crashed).unwrap().unwrap();
    assert_eq!(record.status, RecordStatus::Interrupted);
    assert!(record.finished_at.is_some());
    assert_eq!(opened.store.events(&crashed).unwrap().len(), 3);
    assert_eq!(opened.store.run(&done).unwrap().unwrap().status, RecordStatus::Succeeded);
    drop(opened);

    assert!(place.open().unwrap().interrupted.is_empty());
}

#[test]
fn a_store_from_a_newer_mcpflow_is_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.begin_run(&record("r", "inv")).unwrap();
    drop(store);
    let newer = (SCHEMA_VERSION + 1).to_string();
    raw(dir.path(), |db| {
        db.open_tree("meta").unwrap().insert("schema_version", newer.as_bytes()).unwrap();
    });

    let error = Store::open(dir.path()).unwrap_err();
    assert!(matches!(error, Error::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("made by a newer mcpflow") && text.contains(&dir.path().display().to_string()), "{text}");
    // Nothing was migrated or swept: the version and the running run are as they were.
    raw(dir.path(), |db| {
        assert_eq!(db.open_tree("meta").unwrap().get("schema_version").unwrap().unwrap(), newer.as_bytes());
        let run = db.open_tree("runs").unwrap().iter().values().next().unwrap().unwrap();
        assert!(String::from_utf8_lossy(&run).contains("\"running\""));
    });
}

/// A run record as mcpflow 0.1 wrote it in a version-1 store: none of the fields added
/// since (`rerun_of`, `resumed_from`, `debug`, `paused_ms`), a status version 1 knew.
fn v1_record(id: &str, status: &str) -> String {
    format!(
        r#"{{"id":"{id}","blueprint":"inv","status":"{status}","trigger":"cli","inputs":{{"n":1}},"started_at":"2026-01-01T00:00:00.000Z","finished_at":null,"envelope":null,"blueprint_rev":1}}"#
    )
}

#[test]
fn a_version_1_store_migrates_to_the_current_version_and_reads_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let (done, crashed) = (run_id(1), run_id(2));
    let store = open(dir.path());
    store.save_blueprint("inv", &serde_json::json!({"blueprint": 1, "id": "inv", "steps": []})).unwrap();
    for id in [&done, &crashed] {
        store.begin_run(&record(id, "inv")).unwrap();
        store.append_event(id, &event(0)).unwrap();
    }
    drop(store);
    // What version 1 left on disk: its records, its version.
    damage(dir.path(), "runs", &done, v1_record(&done, "cancelled").as_bytes());
    damage(dir.path(), "runs", &crashed, v1_record(&crashed, "running").as_bytes());
    raw(dir.path(), |db| {
        db.open_tree("meta").unwrap().insert("schema_version", "1").unwrap();
    });

    let opened = Store::open(dir.path()).unwrap();
    assert_eq!(opened.migrated_from, Some(1));
    let record = opened.store.run(&done).unwrap().unwrap();
    assert_eq!((record.status, record.resumed_from, record.debug), (RecordStatus::Cancelled, None, false));
    // A run version 1 left running is swept as any other.
    assert_eq!(opened.interrupted, std::slice::from_ref(&crashed));
    assert_eq!(opened.store.events(&crashed).unwrap().len(), 1);
    assert_eq!(opened.store.blueprint("inv").unwrap().unwrap().meta.rev, 1);
    drop(opened);
    raw(dir.path(), |db| {
        let version = db.open_tree("meta").unwrap().get("schema_version").unwrap().unwrap();
        assert_eq!(serde_json::from_slice::<u32>(&version).unwrap(), SCHEMA_VERSION);
    });
    assert_eq!(Store::open(dir.path()).unwrap().migrated_from, None, "migrated once");
}

#[test]
fn a_store_that_records_a_waiting_run_says_a_version_above_1() {
    // So an mcpflow of version 1, which cannot read `waiting`, refuses the store (its
    // check of a newer version is the one tested above) rather than misreading the run.
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.begin_run(&record(&run_id(1), "inv")).unwrap();
    store.set_waiting(&run_id(1), true).unwrap();
    drop(store);
    raw(dir.path(), |db| {
        let version = db.open_tree("meta").unwrap().get("schema_version").unwrap().unwrap();
        assert!(serde_json::from_slice::<u32>(&version).unwrap() > 1);
        let run = db.open_tree("runs").unwrap().iter().values().next().unwrap().unwrap();
        assert!(String::from_utf8_lossy(&run).contains(r#""status":"waiting""#));
    });
}

#[test]
fn a_schema_version_no_mcpflow_wrote_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    raw(dir.path(), |db| {
        db.open_tree("meta").unwrap().insert("schema_version", "0").unwrap();
    });
    assert_eq!(Store::open(dir.path()).unwrap_err().code(), "STORE_UNKNOWN_SCHEMA");
}

#[test]
fn a_second_open_of_the_same_folder_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path());
    let error = Store::open(dir.path()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "the store at {} is locked by another mcpflow process; close it or set MCPFLOW_HOME",
            dir.path().display()
        )
    );
    assert_eq!(error.code(), "STORE_LOCKED");
    drop(first);
    Store::open(dir.path()).unwrap();
}

const HOLD: &str = "MCPFLOW_STORE_TEST_HOLD";

/// Not a test of its own: the child process of the test below, holding the store open
/// until its stdin closes. Does nothing in a normal run.
#[test]
fn holds_the_store_for_another_process() {
    let Some(dir) = std::env::var_os(HOLD) else { return };
    let opened = Store::open(Path::new(&dir)).unwrap();
    let mut out = std::io::stdout();
    writeln!(out, "store-held").unwrap();
    out.flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    drop(opened);
}

#[test]
fn a_store_held_by_another_process_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "open::holds_the_store_for_another_process", "--nocapture", "--test-threads=1"])
        .env(HOLD, dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the holder exited before opening the store").unwrap();
        if line.contains("store-held") {
            break;
        }
    }

    let error = Store::open(dir.path()).unwrap_err();
    assert!(matches!(error, Error::Locked { .. }), "{error:?}");

    drop(child.stdin.take()); // the holder reads EOF and exits
    assert!(child.wait().unwrap().success());
    Store::open(dir.path()).unwrap();
}

#[test]
fn a_file_where_the_folder_should_be_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("store");
    std::fs::write(&file, "not a folder").unwrap();
    let error = Store::open(&file).unwrap_err();
    assert_eq!(error.code(), "STORE_FOLDER");
    assert!(error.to_string().contains("MCPFLOW_HOME"), "{error}");
}

fn asked(seq: u64, step: &str, id: &str) -> mcpflow_engine::RunEvent {
    use mcpflow_engine::people::{Asking, Question};
    let question = Question {
        id: id.to_owned(),
        step: step.to_owned(),
        path: vec![],
        asking: Asking::Input,
        server: None,
        message: format!("{step}?"),
        schema: Some(serde_json::json!({"type": "object", "properties": {"value": {"type": "string"}}})),
        default: None,
        url: None,
        call: None,
    };
    mcpflow_engine::RunEvent {
        seq,
        at_ms: seq,
        kind: mcpflow_engine::EventKind::StepWaiting { step: step.to_owned(), path: vec![], question },
    }
}

fn answered(seq: u64, step: &str) -> mcpflow_engine::RunEvent {
    use mcpflow_engine::people::Answer;
    let answer = Answer::Accept { content: serde_json::json!({"value": "x"}) };
    mcpflow_engine::RunEvent {
        seq,
        at_ms: seq,
        kind: mcpflow_engine::EventKind::StepAnswered { step: step.to_owned(), path: vec![], answer },
    }
}

/// A run whose events end with a question nobody answered stays `waiting` (unfinished,
/// its question readable) across opens; one whose question was answered before the
/// process died is `interrupted` like any other.
fn a_run_left_with_an_open_question_is_waiting_on_the_next_open_and_keeps_it(kind: Kind) {
    let place = Place::new(kind);
    let (asking, answered_run, parked) = (run_id(1), run_id(2), run_id(3));
    let store = place.store();
    for id in [&asking, &answered_run, &parked] {
        store.begin_run(&record(id, "inv")).unwrap();
        store.append_event(id, &event(0)).unwrap();
        store.append_event(id, &asked(1, "ask", "q1")).unwrap();
    }
    store.append_event(&answered_run, &answered(2, "ask")).unwrap();
    // Set while it waited, as the application does when it records `StepWaiting`.
    store.set_waiting(&parked, true).unwrap();
    assert_eq!(store.run(&parked).unwrap().unwrap().status, RecordStatus::Waiting);
    drop(store);

    let opened = place.open().unwrap();
    assert_eq!(opened.interrupted, std::slice::from_ref(&answered_run));
    assert_eq!(opened.waiting, [asking.clone(), parked.clone()]);
    for id in [&asking, &parked] {
        let record = opened.store.run(id).unwrap().unwrap();
        assert_eq!((record.status, record.finished_at), (RecordStatus::Waiting, None));
        let open = mcpflow_store::open_questions(&opened.store.events(id).unwrap());
        assert_eq!(open.iter().map(|q| (q.step.as_str(), q.id.as_str())).collect::<Vec<_>>(), [("ask", "q1")]);
    }
    let listed: Vec<String> = opened.store.waiting_runs().unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(listed, [asking.clone(), parked.clone()]);
    // Answered by a resuming run: settled once, then no longer waiting.
    assert!(opened.store.settle_waiting(&asking).unwrap());
    assert!(!opened.store.settle_waiting(&asking).unwrap());
    assert_eq!(opened.store.run(&asking).unwrap().unwrap().status, RecordStatus::Interrupted);
    drop(opened);

    let again = place.open().unwrap();
    assert_eq!(again.waiting, std::slice::from_ref(&parked), "still waiting after another open");
    assert!(again.interrupted.is_empty());
}

#[test]
fn a_question_withdrawn_by_its_step_ending_or_retrying_is_not_open() {
    use mcpflow_engine::{EventKind, RunEvent, StepError, StepStatus};
    let finished = RunEvent {
        seq: 2,
        at_ms: 2,
        kind: EventKind::StepFinished {
            step: "ask".into(),
            path: vec![],
            status: StepStatus::Failed,
            output: None,
            error: None,
            attempts: 1,
            duration_ms: 1,
            raw: None,
            recovered_by: None,
        },
    };
    let retrying = RunEvent {
        seq: 4,
        at_ms: 4,
        kind: EventKind::StepRetrying {
            step: "call".into(),
            path: vec![],
            attempt: 2,
            delay_ms: 0,
            error: StepError { code: "X".into(), message: "x".into(), detail: None, exhausted: None },
        },
    };
    let events = [asked(1, "ask", "q1"), finished, asked(3, "call", "q2"), retrying, asked(5, "other", "q3")];
    let open = mcpflow_store::open_questions(&events);
    assert_eq!(open.iter().map(|q| q.id.as_str()).collect::<Vec<_>>(), ["q3"]);
    let mut tracker = mcpflow_store::OpenQuestions::default();
    assert_eq!(tracker.apply(&events[0].kind), Some(true));
    assert_eq!(tracker.apply(&answered(6, "other").kind), None);
    assert_eq!(tracker.apply(&events[1].kind), Some(false));
}

#[test]
fn a_snapshot_torn_by_a_kill_does_not_lock_the_store_out_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let id = run_id(7);
    let store = open(dir.path());
    store.begin_run(&record(&id, "inv")).unwrap();
    store.finish_run(&id, &envelope(&id, "inv", RunStatus::Succeeded)).unwrap();
    drop(store);
    // What a process killed while sled wrote a snapshot leaves: a `.generating` file
    // cut short, with the highest LSN so sled takes it for the newest.
    let torn = dir.path().join("snap.7FFFFFFFFFFFFFFF.generating");
    std::fs::write(&torn, b"cut short by SIGKILL").unwrap();
    let refused = (0..100)
        .find_map(|_| match ::sled::Config::new().path(dir.path()).open() {
            Err(::sled::Error::Io(_)) => {
                std::thread::sleep(std::time::Duration::from_millis(10)); // the lock, released a moment late
                None
            }
            other => Some(other.map(|_| ())),
        })
        .unwrap();
    assert!(matches!(refused, Err(::sled::Error::Corruption { at: None, .. })), "sled alone refuses: {refused:?}");

    let opened = Store::open(dir.path()).unwrap();
    assert_eq!(opened.store.run(&id).unwrap().unwrap().status, RecordStatus::Succeeded);
    assert!(!torn.exists(), "the torn snapshot is gone");
}

on_both!(
    a_run_left_running_is_interrupted_on_the_next_open_and_keeps_its_events,
    a_run_left_with_an_open_question_is_waiting_on_the_next_open_and_keeps_it,
);
