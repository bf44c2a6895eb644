//! The committed JSON Schema is the one the types generate, and it accepts the examples.

use crate::repo;
use mcpflow_blueprint::schema::{blueprint_schema, blueprint_schema_text};

#[test]
fn committed_schema_is_up_to_date() {
    let path = repo().join("schema/blueprint.schema.json");
    let generated = blueprint_schema_text();
    if std::env::var_os("MCPFLOW_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schema/blueprint.schema.json is stale: run `MCPFLOW_UPDATE_SCHEMA=1 cargo test -p mcpflow-blueprint --test it schema` and commit it"
    );
}

#[test]
fn every_example_matches_the_json_schema() {
    let validator = jsonschema::validator_for(&blueprint_schema()).unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(repo().join("workflows")).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".blueprint.json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(&value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} examples");
}

#[test]
fn the_schema_rejects_an_unknown_step_field_and_a_wrong_kind_field() {
    let validator = jsonschema::validator_for(&blueprint_schema()).unwrap();
    let bad =
        serde_json::json!({"blueprint": 1, "id": "x", "steps": [{"id": "a", "kind": "wait", "ms": 1, "tool": "t"}]});
    assert!(!validator.is_valid(&bad));
    let good = serde_json::json!({"blueprint": 1, "id": "x", "steps": [{"id": "a", "kind": "wait", "ms": 1, "retry": {"attempts": 2}}]});
    assert!(validator.is_valid(&good), "{:?}", validator.iter_errors(&good).map(|e| e.to_string()).collect::<Vec<_>>());
}
