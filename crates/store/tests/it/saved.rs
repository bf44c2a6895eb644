//! Saved values through the engine's `SavedValues`, across runs and reopenings.

use crate::support::{Kind, Place, fresh};
use mcpflow_engine::SavedValues;
use serde_json::json;

fn saved_values_reach_the_next_run_after_the_store_is_reopened(kind: Kind) {
    let place = Place::new(kind);
    let store = place.store();
    assert_eq!(SavedValues::load(&store, "inv").unwrap(), json!({}));
    SavedValues::save(&store, "inv", "cursor", &json!(42)).unwrap();
    SavedValues::save(&store, "inv", "seen", &json!(["a", "b"])).unwrap();
    SavedValues::save(&store, "inv", "cursor", &json!(43)).unwrap();
    drop(store);

    let store = place.store();
    assert_eq!(SavedValues::load(&store, "inv").unwrap(), json!({"cursor": 43, "seen": ["a", "b"]}));
    assert_eq!(SavedValues::load(&store, "other").unwrap(), json!({}));
}

fn saved_values_stay_with_their_blueprint(kind: Kind) {
    let store = fresh(kind);
    SavedValues::save(&store, "a", "x", &json!(1)).unwrap();
    SavedValues::save(&store, "ab", "y", &json!(2)).unwrap();
    assert_eq!(SavedValues::load(&store, "a").unwrap(), json!({"x": 1}));
    assert_eq!(SavedValues::load(&store, "ab").unwrap(), json!({"y": 2}));
    let error = SavedValues::save(&store, "a", "", &json!(1)).unwrap_err();
    assert!(error.contains("saved value name"), "{error}");
}

on_both!(saved_values_reach_the_next_run_after_the_store_is_reopened, saved_values_stay_with_their_blueprint,);
