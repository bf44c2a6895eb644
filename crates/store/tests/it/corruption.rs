//! Damaged bytes in a tree are errors naming the tree and the key, never panics.

use crate::support::{damage, open, raw, record};
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
    assert!(matches!(&error, Error::Corrupt { tree: "runs", key, .. } if key.contains("broken-run")), "{error:?}");
    assert!(error.to_string().contains("`runs` tree"), "{error}");
    assert_eq!(store.runs(None, 10).unwrap_err().code(), "STORE_CORRUPT");

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
