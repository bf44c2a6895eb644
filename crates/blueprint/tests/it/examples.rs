//! Every example in workflows/ validates clean, declares `$schema`, and together the
//! examples use every kind and every common and top-level field.

use crate::repo;
use mcpflow_blueprint::{Options, StepKind, check_many};
use std::collections::BTreeSet;

fn examples() -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(repo().join("workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".blueprint.json"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn every_example_validates_without_errors_or_warnings() {
    let files = examples();
    assert!(files.len() >= 6);
    let docs: Vec<&[u8]> = files.iter().map(|(_, b)| b.as_slice()).collect();
    for ((name, _), report) in files.iter().zip(check_many(&docs, &Options::default())) {
        assert!(report.diagnostics.is_empty(), "{name}: {:#?}", report.diagnostics);
        assert!(report.plan.is_some(), "{name}");
        let bp = report.blueprint.unwrap();
        assert_eq!(bp.schema.as_deref(), Some("../schema/blueprint.schema.json"), "{name}");
        assert_eq!(format!("{}.blueprint.json", bp.id), *name, "file name follows the id");
    }
}

#[test]
fn examples_cover_every_kind_and_every_field() {
    let mut kinds = BTreeSet::new();
    let mut fields = BTreeSet::new();
    fn walk(v: &serde_json::Value, kinds: &mut BTreeSet<String>, fields: &mut BTreeSet<String>) {
        for step in v.as_array().into_iter().flatten() {
            if let Some(k) = step.get("kind").and_then(|k| k.as_str()) {
                kinds.insert(k.to_owned());
            }
            for key in step.as_object().into_iter().flat_map(|o| o.keys()) {
                fields.insert(format!("step.{key}"));
            }
            if let Some(body) = step.get("steps") {
                walk(body, kinds, fields);
            }
        }
    }
    for (_, bytes) in examples() {
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        for key in v.as_object().unwrap().keys() {
            fields.insert(key.clone());
        }
        walk(&v["steps"], &mut kinds, &mut fields);
    }
    for kind in mcpflow_blueprint::KINDS {
        assert!(kinds.contains(*kind), "no example uses kind `{kind}`");
    }
    for common in mcpflow_blueprint::COMMON_KEYS {
        assert!(fields.contains(&format!("step.{common}")), "no example uses the step field `{common}`");
    }
    for top in [
        "$schema",
        "blueprint",
        "id",
        "name",
        "description",
        "inputs",
        "servers",
        "on_error",
        "retry",
        "limits",
        "schedule",
        "expose",
        "confirm",
        "steps",
        "output",
        "layout",
    ] {
        assert!(fields.contains(top), "no example uses the top-level field `{top}`");
    }
    // Loop fields too.
    for f in ["for_each", "until", "as", "concurrency", "max_iterations", "delay_ms", "collect", "on_exhausted"] {
        assert!(fields.contains(&format!("step.{f}")), "no example uses the loop field `{f}`");
    }
    // `input` fields too.
    for f in ["prompt", "schema", "default", "on_timeout", "approve", "confirm"] {
        assert!(fields.contains(&format!("step.{f}")), "no example uses the field `{f}`");
    }
    let _ = StepKind::Wait;
}

#[test]
fn examples_round_trip_through_the_types() {
    for (name, bytes) in examples() {
        let report = mcpflow_blueprint::check_bytes(&bytes, &Options::default());
        let bp = report.blueprint.unwrap();
        let written = serde_json::to_value(&bp).unwrap();
        let original: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(written, original, "{name} changes when read and written back");
    }
}
