//! Servers, consents and schedule state.

use crate::support::{Kind, fresh};
use serde_json::json;

fn servers_are_stored_as_written_with_env_references_unresolved(kind: Kind) {
    let store = fresh(kind);
    let config = json!({"command": "node", "args": ["s.js"], "env": {"TOKEN": "${env:TOKEN}"}});
    store.put_server("inv", &config).unwrap();
    store.put_server("echo", &json!({"url": "http://localhost:1/mcp"})).unwrap();
    let servers = store.servers().unwrap();
    assert_eq!(servers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["echo", "inv"]);
    assert_eq!(servers[1].1, config);

    assert!(store.delete_server("inv").unwrap());
    assert!(!store.delete_server("inv").unwrap());
    assert_eq!(store.servers().unwrap().len(), 1);
}

fn a_server_entry_must_be_an_object(kind: Kind) {
    let store = fresh(kind);
    let error = store.put_server("inv", &json!("npx inv")).unwrap_err();
    assert_eq!(error.code(), "STORE_INVALID_VALUE");
    assert!(store.servers().unwrap().is_empty());
}

fn consents_are_approved_listed_and_revoked(kind: Kind) {
    let store = fresh(kind);
    assert!(!store.is_approved("sha256:aa").unwrap());
    store.approve("sha256:bb", "node b.js").unwrap();
    store.approve("sha256:aa", "node a.js").unwrap();
    assert!(store.is_approved("sha256:aa").unwrap());
    let listed = store.consents().unwrap();
    assert_eq!(listed.iter().map(|c| c.command.as_str()).collect::<Vec<_>>(), ["node a.js", "node b.js"]);
    assert!(store.revoke("sha256:aa").unwrap());
    assert!(!store.is_approved("sha256:aa").unwrap());
    assert!(!store.revoke("sha256:aa").unwrap());
}

fn schedule_state_is_kept_per_blueprint(kind: Kind) {
    let store = fresh(kind);
    assert_eq!(store.schedule_state("inv").unwrap(), None);
    store.put_schedule_state("inv", &json!({"next_at": "2026-01-01T00:00:00Z"})).unwrap();
    store.put_schedule_state("inv", &json!({"next_at": "2026-01-02T00:00:00Z"})).unwrap();
    assert_eq!(store.schedule_state("inv").unwrap(), Some(json!({"next_at": "2026-01-02T00:00:00Z"})));
    assert_eq!(store.schedule_state("other").unwrap(), None);
    assert!(store.delete_schedule_state("inv").unwrap());
    assert_eq!(store.schedule_state("inv").unwrap(), None);
}

on_both!(
    servers_are_stored_as_written_with_env_references_unresolved,
    a_server_entry_must_be_an_object,
    consents_are_approved_listed_and_revoked,
    schedule_state_is_kept_per_blueprint,
);
