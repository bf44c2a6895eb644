//! Saved values through the engine's `SavedValues`, across runs and reopenings; servers' listings.

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

on_both!(
    saved_values_reach_the_next_run_after_the_store_is_reopened,
    saved_values_stay_with_their_blueprint,
    a_servers_listing_outlives_the_store_and_is_replaced_whole,
);

fn a_servers_listing_outlives_the_store_and_is_replaced_whole(kind: Kind) {
    let place = Place::new(kind);
    let store = place.store();
    assert_eq!(store.listing("everything").unwrap(), None, "never listed");
    store.put_listing("everything", &json!({"tools": [{"name": "echo"}, {"name": "add"}]})).unwrap();
    store.put_listing("everything", &json!({"tools": [{"name": "echo"}]})).unwrap();
    store.put_listing("memory", &json!({"tools": []})).unwrap();
    drop(store);

    let store = place.store();
    assert_eq!(store.listing("everything").unwrap(), Some(json!({"tools": [{"name": "echo"}]})));
    assert!(store.delete_listing("memory").unwrap());
    assert_eq!(store.listing("memory").unwrap(), None);
    assert!(!store.delete_listing("memory").unwrap(), "already gone");
    let error = store.put_listing("", &json!({})).unwrap_err().to_string();
    assert!(error.contains("server name"), "{error}");
}
