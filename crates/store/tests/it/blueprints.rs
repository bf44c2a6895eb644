//! Blueprints: revisions, identical saves, listing, deleting, the engine's source.

use crate::support::{Kind, Place, fresh, record};
use mcpflow_engine::BlueprintSource;
use serde_json::{Value, json};

fn version(n: u32) -> Value {
    json!({"version": 1, "id": "inv", "name": format!("Inventory v{n}"), "steps": [{"id": "s", "wait_ms": n}]})
}

fn each_changed_save_is_a_new_revision_and_every_revision_reads_back(kind: Kind) {
    let store = fresh(kind);
    let revs: Vec<u32> = (1..=3).map(|n| store.save_blueprint("inv", &version(n)).unwrap().rev).collect();
    assert_eq!(revs, [1, 2, 3]);

    let listed = store.revisions("inv").unwrap();
    assert_eq!(listed.iter().map(|m| m.rev).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(listed[1].name.as_deref(), Some("Inventory v2"));
    for n in 1..=3 {
        let stored = store.revision("inv", n).unwrap().unwrap();
        assert_eq!((stored.meta.rev, stored.json), (n, version(n)));
    }
    assert!(store.revision("inv", 4).unwrap().is_none());

    let current = store.blueprint("inv").unwrap().unwrap();
    assert_eq!((current.meta.rev, current.json), (3, version(3)));
}

fn saving_the_current_json_again_adds_no_revision(kind: Kind) {
    let store = fresh(kind);
    let first = store.save_blueprint("inv", &version(1)).unwrap();
    let again = store.save_blueprint("inv", &version(1)).unwrap();
    assert_eq!(again, first);
    assert_eq!(store.revisions("inv").unwrap().len(), 1);

    // Going back to an older document is a change: it becomes revision 3.
    store.save_blueprint("inv", &version(2)).unwrap();
    assert_eq!(store.save_blueprint("inv", &version(1)).unwrap().rev, 3);
}

fn blueprints_are_listed_by_id_with_their_current_revision(kind: Kind) {
    let store = fresh(kind);
    for id in ["b", "a", "c"] {
        store.save_blueprint(id, &json!({"id": id, "description": format!("about {id}")})).unwrap();
    }
    store.save_blueprint("b", &json!({"id": "b", "name": "B two"})).unwrap();
    let listed = store.blueprints().unwrap();
    let summary: Vec<(&str, u32)> = listed.iter().map(|m| (m.id.as_str(), m.rev)).collect();
    assert_eq!(summary, [("a", 1), ("b", 2), ("c", 1)]);
    assert_eq!(listed[0].description.as_deref(), Some("about a"));
    assert_eq!((listed[1].name.as_deref(), listed[1].description.as_deref()), (Some("B two"), None));
}

fn an_id_that_extends_another_is_a_different_blueprint(kind: Kind) {
    let store = fresh(kind);
    store.save_blueprint("a", &json!({"id": "a"})).unwrap();
    store.save_blueprint("ab", &json!({"id": "ab"})).unwrap();
    store.save_blueprint("ab", &json!({"id": "ab", "v": 2})).unwrap();
    assert_eq!(store.revisions("a").unwrap().len(), 1);
    assert!(store.delete_blueprint("a").unwrap());
    assert_eq!(store.revisions("ab").unwrap().len(), 2);
}

fn deleting_a_blueprint_removes_its_revisions_but_keeps_its_runs(kind: Kind) {
    let store = Place::new(kind).store();
    store.save_blueprint("inv", &version(1)).unwrap();
    store.save_blueprint("inv", &version(2)).unwrap();
    store.begin_run(&record("r1", "inv")).unwrap();

    assert!(store.delete_blueprint("inv").unwrap());
    assert!(store.blueprint("inv").unwrap().is_none());
    assert!(store.revisions("inv").unwrap().is_empty());
    assert!(store.revision("inv", 1).unwrap().is_none());
    assert!(store.blueprints().unwrap().is_empty());
    assert_eq!(store.runs(Some("inv"), 10).unwrap().len(), 1);
    assert!(!store.delete_blueprint("inv").unwrap());

    // A new blueprint under the same id starts its history again.
    assert_eq!(store.save_blueprint("inv", &version(3)).unwrap().rev, 1);
}

fn the_engine_loads_the_current_revision_as_blueprint_text(kind: Kind) {
    let store = fresh(kind);
    store.save_blueprint("inv", &version(1)).unwrap();
    store.save_blueprint("inv", &version(2)).unwrap();
    let bytes = BlueprintSource::load(&store, "inv").unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), version(2));
    assert_eq!(BlueprintSource::load(&store, "nope").unwrap_err(), "no stored blueprint `nope`");
}

fn ids_that_cannot_be_keys_are_refused(kind: Kind) {
    let store = fresh(kind);
    let empty = store.save_blueprint("", &json!({})).unwrap_err();
    assert_eq!(empty.code(), "STORE_INVALID_KEY");
    let nul = store.save_blueprint("a\0b", &json!({})).unwrap_err();
    assert!(nul.to_string().contains("NUL"), "{nul}");
    assert!(store.blueprints().unwrap().is_empty());
}

on_both!(
    each_changed_save_is_a_new_revision_and_every_revision_reads_back,
    saving_the_current_json_again_adds_no_revision,
    blueprints_are_listed_by_id_with_their_current_revision,
    an_id_that_extends_another_is_a_different_blueprint,
    deleting_a_blueprint_removes_its_revisions_but_keeps_its_runs,
    the_engine_loads_the_current_revision_as_blueprint_text,
    ids_that_cannot_be_keys_are_refused,
);
