//! Saved values through the engine's `SavedValues`, across runs and reopenings.

use crate::support::open;
use mcpflow_engine::SavedValues;
use serde_json::json;

#[test]
fn saved_values_reach_the_next_run_after_the_store_is_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert_eq!(SavedValues::load(&store, "inv").unwrap(), json!({}));
    SavedValues::save(&store, "inv", "cursor", &json!(42)).unwrap();
    SavedValues::save(&store, "inv", "seen", &json!(["a", "b"])).unwrap();
    SavedValues::save(&store, "inv", "cursor", &json!(43)).unwrap();
    drop(store);

    let store = open(dir.path());
    assert_eq!(SavedValues::load(&store, "inv").unwrap(), json!({"cursor": 43, "seen": ["a", "b"]}));
    assert_eq!(SavedValues::load(&store, "other").unwrap(), json!({}));
}

#[test]
fn saved_values_stay_with_their_blueprint() {
    let store = mcpflow_store::Store::open_temporary().unwrap();
    SavedValues::save(&store, "a", "x", &json!(1)).unwrap();
    SavedValues::save(&store, "ab", "y", &json!(2)).unwrap();
    assert_eq!(SavedValues::load(&store, "a").unwrap(), json!({"x": 1}));
    assert_eq!(SavedValues::load(&store, "ab").unwrap(), json!({"y": 2}));
    let error = SavedValues::save(&store, "a", "", &json!(1)).unwrap_err();
    assert!(error.contains("saved value name"), "{error}");
}
