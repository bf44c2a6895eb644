//! `workflow` steps name blueprints by id: a path is a validation error, and `mcpflow
//! run` finds the callee among the calling file's folder by the `id` inside each file.

use crate::{stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn write(path: &Path, doc: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(doc).unwrap()).unwrap();
}

/// A blueprint `id` whose one step outputs `marker`.
fn leaf(id: &str, marker: &str) -> Value {
    json!({ "blueprint": 1, "id": id, "steps": [{ "id": "out", "kind": "transform", "value": marker }] })
}

/// A blueprint that calls `target` and outputs what it returned.
fn caller(target: &str) -> Value {
    json!({ "blueprint": 1, "id": "main", "steps": [{ "id": "sub", "kind": "workflow", "workflow": target }] })
}

fn run(file: &Path, home: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", file.to_str().unwrap(), "--json"])
        .env("MCPFLOW_HOME", home)
        .output()
        .unwrap()
}

#[test]
fn workflow_references_are_ids_and_resolve_by_the_id_inside_files_of_the_callers_folder_only() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let parent = tmp.path();
    let folder = parent.join("blueprints");
    std::fs::create_dir(&folder).unwrap();
    // Outside the folder: a blueprint whose id matches what the callers ask for.
    write(&parent.join("evil.blueprint.json"), &leaf("evil", "EVIL-FROM-PARENT"));
    // Inside: a symlink to it (leaves the folder), a decoy named like an id, the real one.
    std::os::unix::fs::symlink(parent.join("evil.blueprint.json"), folder.join("evil-link.json")).unwrap();
    write(&folder.join("x.blueprint.json"), &leaf("not-x", "DECOY"));
    write(&folder.join("Some Helper File.json"), &leaf("helper", "HELPER-BY-ID"));

    // A path, relative or absolute, is a validation error at the step's `workflow`.
    let absolute = parent.join("evil.blueprint.json").display().to_string();
    for target in ["../evil", absolute.as_str()] {
        let f = folder.join("main-path.json");
        write(&f, &caller(target));
        let out = run(&f, &home);
        assert_eq!(out.status.code(), Some(2), "{target}: {}{}", stdout(&out), stderr(&out));
        assert!(stderr(&out).contains("error[INVALID_ID]"), "{target}: {}", stderr(&out));
        assert!(!stdout(&out).contains("EVIL"), "{target}: {}", stdout(&out));
    }

    // The parent's `evil` is not reached by id either, not even through the symlink.
    let f = folder.join("main-evil.json");
    write(&f, &caller("evil"));
    let out = run(&f, &home);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["errors"][0]["code"], "WORKFLOW_NOT_FOUND", "{env}");
    assert!(!stdout(&out).contains("EVIL-FROM-PARENT"), "{}", stdout(&out));

    // A file named `x.blueprint.json` holding another id is not blueprint `x`.
    let f = folder.join("main-x.json");
    write(&f, &caller("x"));
    let out = run(&f, &home);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["errors"][0]["code"], "WORKFLOW_NOT_FOUND", "{env}");
    assert!(!stdout(&out).contains("DECOY"), "{}", stdout(&out));

    // A file with any name whose `id` matches is found.
    let f = folder.join("main-helper.json");
    write(&f, &caller("helper"));
    let out = run(&f, &home);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["output"], "HELPER-BY-ID", "{env}");
}

#[test]
fn two_files_in_the_folder_with_the_called_id_are_an_error_naming_both() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("one.json"), &leaf("twin", "ONE"));
    write(&tmp.path().join("two.json"), &leaf("twin", "TWO"));
    let f = tmp.path().join("main.json");
    write(&f, &caller("twin"));
    let out = run(&f, &tmp.path().join("home"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["errors"][0]["code"], "WORKFLOW_NOT_FOUND", "{env}");
    let msg = env["errors"][0]["message"].as_str().unwrap();
    assert!(msg.contains("one.json") && msg.contains("two.json"), "{msg}");
}
