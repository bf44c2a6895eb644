//! Export and import: round trips, merging, conflicts, malformed documents, consents.

use crate::support::{Kind, envelope, event, fresh, record, run_id};
use mcpflow_engine::{RunStatus, SavedValues};
use mcpflow_store::{Counts, Error, ImportOptions, RecordStatus, Store};
use serde_json::{Value, json};

/// A valid blueprint `id`, named `name` when given (imports validate every revision).
pub fn blueprint(id: &str, name: Option<&str>) -> Value {
    let mut doc = json!({"blueprint": 1, "id": id, "steps": [{"id": "a", "kind": "transform", "value": 1}]});
    if let Some(name) = name {
        doc["name"] = json!(name);
    }
    doc
}

/// A store with a bit of everything.
pub fn filled(kind: Kind) -> Store {
    let store = fresh(kind);
    store.save_blueprint("inv", &blueprint("inv", None)).unwrap();
    store.save_blueprint("inv", &blueprint("inv", Some("Inventory"))).unwrap();
    store.save_blueprint("sync", &blueprint("sync", None)).unwrap();
    for (n, blueprint) in [(1, "inv"), (2, "sync")] {
        let id = run_id(n);
        store.begin_run(&record(&id, blueprint)).unwrap();
        store.append_event(&id, &event(0)).unwrap();
        store.append_event(&id, &event(300)).unwrap();
        store.finish_run(&id, &envelope(&id, blueprint, RunStatus::Succeeded)).unwrap();
    }
    SavedValues::save(&store, "inv", "cursor", &json!({"page": 3})).unwrap();
    store.put_server("inv", &json!({"command": "node", "env": {"T": "${env:T}"}})).unwrap();
    store.approve("sha256:ab", "node inv.js").unwrap();
    store.put_schedule_state("inv", &json!({"next_at": "2026-01-01T00:00:00Z"})).unwrap();
    store
}

fn everything() -> ImportOptions {
    ImportOptions { consents: true }
}

fn export_then_import_into_a_fresh_store_exports_the_same_document(kind: Kind) {
    let first = filled(kind).export().unwrap();
    assert_eq!(first["mcpflow_store"], 1);
    assert_eq!(first["blueprints"][0]["revisions"].as_array().unwrap().len(), 2);
    assert_eq!(first["runs"][1]["events"][1]["seq"], 300);

    let empty = fresh(kind);
    let report = empty.import_with(&first, everything()).unwrap();
    assert_eq!(report.blueprints, Counts { added: 2, skipped: 0 });
    assert_eq!(report.revisions, Counts { added: 3, skipped: 0 });
    assert_eq!(report.runs, Counts { added: 2, skipped: 0 });
    assert_eq!((report.saved.added, report.servers.added, report.consents.added, report.schedules.added), (1, 1, 1, 1));
    assert!(report.conflicts.is_empty());

    assert_eq!(empty.export().unwrap(), first);
    assert_eq!(empty.blueprint("inv").unwrap().unwrap().meta.rev, 2);
    assert_eq!(empty.runs(Some("sync"), 5).unwrap().len(), 1);
}

fn importing_the_same_document_again_adds_nothing(kind: Kind) {
    let store = filled(kind);
    let doc = store.export().unwrap();
    let report = store.import_with(&doc, everything()).unwrap();
    assert_eq!(report.blueprints, Counts { added: 0, skipped: 2 });
    assert_eq!(report.revisions, Counts { added: 0, skipped: 3 });
    assert_eq!(report.runs, Counts { added: 0, skipped: 2 });
    assert_eq!(report.consents, Counts { added: 0, skipped: 1 });
    assert!(report.conflicts.is_empty());
    assert_eq!(store.export().unwrap(), doc);
}

fn a_malformed_document_names_its_pointer_and_writes_nothing(kind: Kind) {
    let mut doc = filled(kind).export().unwrap();
    doc["runs"][1]["record"]["status"] = json!("sideways");
    let empty = fresh(kind);
    let error = empty.import(&doc).unwrap_err();
    assert!(matches!(&error, Error::ImportInvalid { pointer, .. } if pointer == "/runs/1/record/status"), "{error:?}");
    assert!(error.to_string().contains("nothing was imported"), "{error}");
    // The blueprints and servers before the bad run were not written either.
    assert!(empty.blueprints().unwrap().is_empty());
    assert!(empty.servers().unwrap().is_empty());
    assert!(empty.runs(None, 10).unwrap().is_empty());
}

fn a_duplicate_in_the_document_is_malformed(kind: Kind) {
    let mut doc = filled(kind).export().unwrap();
    let copy = doc["blueprints"][0].clone();
    doc["blueprints"].as_array_mut().unwrap().push(copy);
    let error = fresh(kind).import(&doc).unwrap_err();
    assert!(
        matches!(&error, Error::ImportInvalid { pointer, message } if pointer == "/blueprints/2" && message.contains("/blueprints/0")),
        "{error:?}"
    );
}

fn a_version_1_export_imports_into_the_current_store(kind: Kind) {
    // As mcpflow 0.1 exported it (schema version 1): records without the fields added since.
    let id = run_id(1);
    let doc = json!({"mcpflow_store": 1, "schema_version": 1,
        "blueprints": [{"id": "inv", "revisions": [{"rev": 1, "saved_at": "2026-01-01T00:00:00.000Z", "json": blueprint("inv", None)}]}],
        "runs": [{"record": {"id": id, "blueprint": "inv", "status": "succeeded", "trigger": "cli", "inputs": {},
            "started_at": "2026-01-01T00:00:00.000Z", "finished_at": "2026-01-01T00:00:01.000Z", "envelope": null, "blueprint_rev": 1},
            "events": [{"seq": 0, "at_ms": 0, "type": "Log", "level": "info", "message": "hi", "step": null}]}],
        "saved": {}, "servers": {}, "consents": [], "schedules": {}});
    let store = fresh(kind);
    let report = store.import(&doc).unwrap();
    assert_eq!((report.blueprints.added, report.runs.added), (1, 1));
    assert_eq!(store.run(&id).unwrap().unwrap().status, RecordStatus::Succeeded);
    assert_eq!(store.events(&id).unwrap().len(), 1);
    assert_eq!(store.export().unwrap()["schema_version"], mcpflow_store::SCHEMA_VERSION);
}

fn an_export_of_a_newer_schema_version_is_refused_with_what_to_do(kind: Kind) {
    let mut doc = filled(kind).export().unwrap();
    doc["schema_version"] = json!(mcpflow_store::SCHEMA_VERSION + 1);
    let error = fresh(kind).import(&doc).unwrap_err();
    assert!(matches!(&error, Error::ImportInvalid { pointer, .. } if pointer == "/schema_version"), "{error:?}");
    assert!(error.to_string().contains("upgrade mcpflow"), "{error}");
}

fn an_unknown_member_is_malformed_not_ignored(kind: Kind) {
    let doc = json!({"mcpflow_store": 1, "schema_version": 1, "blueprint": []});
    let error = fresh(kind).import(&doc).unwrap_err();
    assert!(error.to_string().contains("unknown field `blueprint`"), "{error}");
}

fn consents_are_imported_only_when_asked(kind: Kind) {
    let doc = filled(kind).export().unwrap();
    let empty = fresh(kind);
    let report = empty.import(&doc).unwrap();
    assert_eq!(report.consents, Counts { added: 0, skipped: 1 });
    assert!(!empty.is_approved("sha256:ab").unwrap());
    assert_eq!(report.servers.added, 1);

    empty.import_with(&doc, everything()).unwrap();
    assert!(empty.is_approved("sha256:ab").unwrap());
}

fn a_different_value_in_the_store_wins_and_is_reported(kind: Kind) {
    let doc = filled(kind).export().unwrap();
    let store = fresh(kind);
    let mine = json!({"url": "http://localhost:9/mcp"});
    store.put_server("inv", &mine).unwrap();
    store.save_blueprint("sync", &json!({"id": "sync", "mine": true})).unwrap();

    let report = store.import(&doc).unwrap();
    assert_eq!(report.conflicts, ["/blueprints/1", "/servers/inv"]);
    assert_eq!(store.servers().unwrap(), [("inv".to_owned(), mine)]);
    assert_eq!(store.blueprint("sync").unwrap().unwrap().json["mine"], true);
    assert_eq!(report.blueprints, Counts { added: 1, skipped: 1 });
}

fn a_longer_history_extends_the_stored_blueprint(kind: Kind) {
    let theirs = fresh(kind);
    theirs.save_blueprint("inv", &blueprint("inv", Some("v1"))).unwrap();
    theirs.save_blueprint("inv", &blueprint("inv", Some("v2"))).unwrap();
    let mine = fresh(kind);
    mine.save_blueprint("inv", &blueprint("inv", Some("v1"))).unwrap();

    let report = mine.import(&theirs.export().unwrap()).unwrap();
    assert_eq!(report.revisions, Counts { added: 1, skipped: 1 });
    let current = mine.blueprint("inv").unwrap().unwrap();
    assert_eq!((current.meta.rev, current.json), (2, blueprint("inv", Some("v2"))));
}

fn a_run_the_document_shows_running_arrives_interrupted(kind: Kind) {
    let theirs = fresh(kind);
    theirs.begin_run(&record("live", "inv")).unwrap();
    theirs.append_event("live", &event(0)).unwrap();
    let doc: Value = theirs.export().unwrap();
    assert_eq!(doc["runs"][0]["record"]["status"], "running");

    let mine = fresh(kind);
    mine.import(&doc).unwrap();
    assert_eq!(mine.run("live").unwrap().unwrap().status, RecordStatus::Interrupted);
    assert_eq!(mine.events("live").unwrap(), [event(0)]);
}

/// Every revision of a backup is checked like a blueprint being saved, and stored under
/// its own id: a revision that is not a blueprint object, one the validator refuses, or
/// one whose `id` differs from the blueprint it is listed under is refused with the
/// blueprint id, the revision and the first finding — and nothing of the document is
/// written, not even its sound blueprints, runs and servers.
fn a_backup_with_a_revision_that_is_not_a_valid_blueprint_of_its_id_is_refused_whole(kind: Kind) {
    let cases: [(&str, Value, &str, &[&str]); 3] = [
        ("not an object", json!(5), "/blueprints/1/revisions/0/json", &["`sync` revision 1", "INVALID_TYPE"]),
        (
            "invalid",
            json!({"blueprint": 1, "id": "sync", "steps": [{"id": "a", "kind": "transform", "value": "{{ nope.x }}"}]}),
            "/blueprints/1/revisions/0/json/steps/0/value",
            &["`sync` revision 1", "TEMPLATE_UNKNOWN_NAME", "/steps/0/value"],
        ),
        ("id mismatch", blueprint("other", None), "/blueprints/1/revisions/0/json/id", &["`sync`", "`other`"]),
    ];
    for (case, json, at, says) in cases {
        let mut doc = filled(kind).export().unwrap();
        doc["blueprints"][1]["revisions"][0]["json"] = json;
        let store = filled(kind);
        let before = store.export().unwrap();
        let empty = fresh(kind);
        for target in [&store, &empty] {
            let error = target.import(&doc).unwrap_err();
            let Error::ImportInvalid { pointer, message } = &error else { panic!("{case}: {error:?}") };
            assert_eq!(pointer, at, "{case}: {error}");
            for word in says {
                assert!(message.contains(word), "{case}: `{word}` not in {error}");
            }
        }
        assert_eq!(store.export().unwrap(), before, "{case}: the store changed");
        assert_eq!(empty.export().unwrap(), fresh(kind).export().unwrap(), "{case}");
    }
}

on_both!(
    export_then_import_into_a_fresh_store_exports_the_same_document,
    importing_the_same_document_again_adds_nothing,
    a_malformed_document_names_its_pointer_and_writes_nothing,
    a_duplicate_in_the_document_is_malformed,
    a_version_1_export_imports_into_the_current_store,
    an_export_of_a_newer_schema_version_is_refused_with_what_to_do,
    an_unknown_member_is_malformed_not_ignored,
    consents_are_imported_only_when_asked,
    a_different_value_in_the_store_wins_and_is_reported,
    a_longer_history_extends_the_stored_blueprint,
    a_run_the_document_shows_running_arrives_interrupted,
    a_backup_with_a_revision_that_is_not_a_valid_blueprint_of_its_id_is_refused_whole,
);
