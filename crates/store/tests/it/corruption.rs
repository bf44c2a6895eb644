//! Damaged bytes in a tree are errors naming the tree and the key, never panics; a run
//! that cannot be read back (damaged, or nested deeper than the store reads) is skipped
//! by listings, the backup and the open-time sweep, and reported with its removal. The
//! damage is done to sled's files; `postgres.rs` damages a PostgreSQL record.

use crate::support::{self, Kind, Place, damage, open, raw, record};
use mcpflow_engine::{BlueprintSource, SavedValues};
use mcpflow_store::Error;
use serde_json::json;

#[test]
fn a_damaged_run_record_is_an_error_and_can_still_be_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.begin_run(&record("broken-run", "inv")).unwrap();
    store.begin_run(&record("fine-run", "inv")).unwrap();
    drop(store);
    damage(dir.path(), "runs", "broken-run", b"{\"id\": \"broken-run\", \"stat");

    // The store still opens (the sweep skips what it cannot read) …
    let opened = mcpflow_store::Store::open(dir.path()).unwrap();
    assert_eq!(opened.interrupted, ["fine-run"]);
    let store = opened.store;
    // … and reading the run says which tree and key are damaged.
    let error = store.run("broken-run").unwrap_err();
    assert_eq!(error.code(), "RUN_UNREADABLE");
    assert!(error.to_string().contains("`runs` tree") && error.to_string().contains("broken-run"), "{error}");
    // … and listing the runs skips it.
    let list = store.run_list(None, 10).unwrap();
    assert_eq!(list.runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), ["fine-run"]);
    assert_eq!(list.skipped[0].run_id, "broken-run");
    assert_eq!(list.skipped[0].code, "STORE_CORRUPT");

    assert!(store.delete_run("broken-run").unwrap());
    let left: Vec<String> = store.runs(Some("inv"), 10).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(left, ["fine-run"]);
}

#[test]
fn a_damaged_revision_is_an_error_for_the_store_and_for_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.save_blueprint("inv", &json!({"id": "inv"})).unwrap();
    drop(store);
    damage(dir.path(), "revisions", "inv", &[0xff, 0xfe, 0x00]);

    let store = open(dir.path());
    let error = store.blueprint("inv").unwrap_err();
    assert!(matches!(error, Error::Corrupt { tree: "revisions", .. }), "{error:?}");
    assert!(store.revisions("inv").is_err());
    let message = BlueprintSource::load(&store, "inv").unwrap_err();
    assert!(message.contains("`revisions` tree"), "{message}");
}

#[test]
fn a_damaged_saved_value_is_an_error_for_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    SavedValues::save(&store, "inv", "cursor", &json!(1)).unwrap();
    drop(store);
    damage(dir.path(), "saved", "cursor", b"");

    let store = open(dir.path());
    let message = SavedValues::load(&store, "inv").unwrap_err();
    assert!(message.contains("`saved` tree") && message.contains("cursor"), "{message}");
}

#[test]
fn a_damaged_schema_version_is_an_error_on_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    raw(dir.path(), |db| {
        db.open_tree("meta").unwrap().insert("schema_version", "one").unwrap();
    });
    let error = mcpflow_store::Store::open(dir.path()).unwrap_err();
    assert!(matches!(error, Error::Corrupt { tree: "meta", .. }), "{error:?}");
}

#[test]
fn a_key_from_an_unknown_layout_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    raw(dir.path(), |db| {
        db.open_tree("servers").unwrap().insert(b"\x07inv", b"{}".as_slice()).unwrap();
    });
    let error = open(dir.path()).servers().unwrap_err();
    assert!(error.to_string().contains("key version"), "{error}");
}

/// JSON text nested `levels` arrays deep.
fn nested(levels: usize) -> String {
    "[".repeat(levels) + &"]".repeat(levels)
}

/// A value nested `levels` arrays deep, built without recursion.
fn nested_value(levels: usize) -> serde_json::Value {
    let mut value = json!([]);
    for _ in 1..levels {
        value = json!([value]);
    }
    value
}

/// The event an older mcpflow recorded for a step whose value nests 180 levels: the
/// bytes as it wrote them, straight into sled.
fn deep_event(seq: u64) -> Vec<u8> {
    let event = mcpflow_engine::RunEvent {
        seq,
        at_ms: 1,
        kind: mcpflow_engine::EventKind::RunStarted {
            run_id: "r".into(),
            blueprint: "inv".into(),
            inputs: json!("DEEP"),
            trace_id: None,
        },
    };
    serde_json::to_string(&event).unwrap().replace("\"DEEP\"", &nested(180)).into_bytes()
}

fn event_key(run_id: &str, seq: u64) -> Vec<u8> {
    let mut key = vec![1];
    key.extend_from_slice(run_id.as_bytes());
    key.push(0);
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

#[test]
fn a_run_recorded_180_levels_deep_is_skipped_and_reported_until_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let (deep, fine) = (support::run_id(1), support::run_id(2));
    store.begin_run(&record(&deep, "inv")).unwrap();
    store.begin_run(&record(&fine, "inv")).unwrap();
    store.append_event(&fine, &support::event(1)).unwrap();
    store.finish_run(&fine, &support::envelope(&fine, "inv", mcpflow_engine::RunStatus::Succeeded)).unwrap();
    drop(store);
    // As the old writer left it: the record (still `running`) and an event, 180 deep.
    let mut deep_record = record(&deep, "inv");
    deep_record.inputs = json!("DEEP");
    let deep_record = serde_json::to_string(&deep_record).unwrap().replace("\"DEEP\"", &nested(180));
    damage(dir.path(), "runs", &deep, deep_record.as_bytes());
    raw(dir.path(), |db| {
        db.open_tree("events").unwrap().insert(event_key(&deep, 1), deep_event(1)).unwrap();
    });

    // The open-time sweep goes on past it and says so.
    let opened = mcpflow_store::Store::open(dir.path()).unwrap();
    let ids = |list: &[mcpflow_store::Unreadable]| list.iter().map(|u| u.run_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&opened.unreadable), [deep.as_str()]);
    let store = opened.store;

    // Listings, another run and the backup read everything else …
    let listed: Vec<String> = store.runs(None, 10).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(listed, [fine.as_str()]);
    let of_blueprint: Vec<String> = store.runs(Some("inv"), 10).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(of_blueprint, [fine.as_str()]);
    assert_eq!(store.run(&fine).unwrap().unwrap().status, mcpflow_store::RecordStatus::Succeeded);
    assert_eq!(store.events(&fine).unwrap().len(), 1);
    let doc = store.export().unwrap();
    let exported: Vec<&str> =
        doc["runs"].as_array().unwrap().iter().map(|r| r["record"]["id"].as_str().unwrap()).collect();
    assert_eq!(exported, [fine.as_str()]);

    // … and report the deep run with the command that removes it.
    let list = store.run_list(None, 10).unwrap();
    assert_eq!(ids(&list.skipped), [deep.as_str()]);
    let remove = format!("mcpflow runs --remove {deep}");
    assert_eq!(list.skipped[0].remove_command(), remove);
    assert!(list.skipped[0].message.contains("nests 181 levels deep"), "{}", list.skipped[0].message);
    assert_eq!(ids(&store.run_list(Some("inv"), 10).unwrap().skipped), [deep.as_str()]);
    assert_eq!(ids(&store.backup().unwrap().skipped), [deep.as_str()]);
    let error = store.run(&deep).unwrap_err();
    assert_eq!(error.code(), "RUN_UNREADABLE");
    assert!(error.to_string().contains(&remove), "{error}");

    // Removed, it is reported no more.
    assert!(store.delete_run(&deep).unwrap());
    assert!(store.run_list(None, 10).unwrap().skipped.is_empty());
    assert!(store.backup().unwrap().skipped.is_empty());
    assert!(store.events(&deep).unwrap().is_empty());
    drop(store);
    assert!(mcpflow_store::Store::open(dir.path()).unwrap().unreadable.is_empty());
}

#[test]
fn an_unreadable_event_is_left_out_of_the_backup_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let run = support::run_id(1);
    store.begin_run(&record(&run, "inv")).unwrap();
    for seq in 1..=3 {
        store.append_event(&run, &support::event(seq)).unwrap();
    }
    drop(store);
    raw(dir.path(), |db| {
        db.open_tree("events").unwrap().insert(event_key(&run, 2), deep_event(2)).unwrap();
    });

    let store = open(dir.path());
    let backup = store.backup().unwrap();
    let seqs: Vec<u64> =
        backup.doc["runs"][0]["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 3]);
    assert_eq!(backup.skipped.len(), 1);
    assert_eq!((backup.skipped[0].run_id.as_str(), backup.skipped[0].event), (run.as_str(), Some(2)));
    // Reading the run's events names the event and the way out.
    let error = store.events(&run).unwrap_err().to_string();
    assert!(error.contains("event 2") && error.contains("mcpflow runs --remove"), "{error}");
}

fn the_store_refuses_to_write_what_it_could_not_read_back(kind: Kind) {
    let place = Place::new(kind);
    let store = place.store();
    let run = support::run_id(1);
    let deep = nested_value(180);

    let mut deep_record = record(&run, "inv");
    deep_record.inputs = deep.clone();
    let error = store.begin_run(&deep_record).unwrap_err();
    assert_eq!(error.code(), "STORE_VALUE_TOO_DEEP");
    assert!(error.to_string().contains(&format!("the record of run `{run}`")), "{error}");
    assert!(store.run(&run).unwrap().is_none());

    store.begin_run(&record(&run, "inv")).unwrap();
    let event = mcpflow_engine::RunEvent {
        seq: 4,
        at_ms: 40,
        kind: mcpflow_engine::EventKind::RunStarted {
            run_id: run.clone(),
            blueprint: "inv".into(),
            inputs: deep.clone(),
            trace_id: None,
        },
    };
    let error = store.append_event(&run, &event).unwrap_err();
    assert_eq!(error.code(), "STORE_VALUE_TOO_DEEP");
    let text = error.to_string();
    assert!(text.contains(&format!("event 4 of run `{run}`")) && text.contains("max_value_depth"), "{text}");
    assert!(store.events(&run).unwrap().is_empty(), "nothing was written");

    // In its place, the run records why.
    store.note_unrecorded(&run, &event, &error).unwrap();
    let events = store.events(&run).unwrap();
    assert_eq!(events.len(), 1);
    assert!(
        matches!(&events[0].kind, mcpflow_engine::EventKind::Log { message, .. }
            if message.starts_with("[STORE_VALUE_TOO_DEEP] event 4")),
        "{events:?}"
    );

    // A run whose output is too deep still ends, its output saying why.
    let mut envelope = support::envelope(&run, "inv", mcpflow_engine::RunStatus::Succeeded);
    envelope.output = deep;
    store.finish_run(&run, &envelope).unwrap();
    let recorded = store.run(&run).unwrap().unwrap();
    assert_eq!(recorded.status, mcpflow_store::RecordStatus::Succeeded);
    let output = recorded.envelope.unwrap().output;
    assert!(output.as_str().is_some_and(|o| o.starts_with("[STORE_VALUE_TOO_DEEP]")), "{output}");
    drop(store);
    assert!(place.open().unwrap().unreadable.is_empty());
}

on_both!(the_store_refuses_to_write_what_it_could_not_read_back);
