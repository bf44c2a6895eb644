//! `mcpflow lock` and `--locked`: a lock taken against one version of the echo fixture,
//! checked against a later one (`MCPFLOW_TESTKIT_ECHO_DRIFT`).

use crate::{mcpflow, stderr, stdout};
use std::path::{Path, PathBuf};

/// A blueprint adding with `add` and reading its `sum` in the next step.
const SUM: &str = r#"{
  "blueprint": 1,
  "id": "sum",
  "steps": [
    { "id": "total", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": 1, "b": 2 } },
    { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "sum: {{ total.sum }}" } }
  ]
}
"#;

/// An `mcpServers` file naming the echo fixture, as the version `drift` says (`None`: v1).
fn servers(dir: &Path, drift: Option<&str>) -> PathBuf {
    let bin = mcpflow_testkit::binary().display().to_string();
    let env = drift.map(|d| serde_json::json!({ "MCPFLOW_TESTKIT_ECHO_DRIFT": d })).unwrap_or_default();
    let path = dir.join(format!("servers-{}.json", drift.unwrap_or("v1")));
    let doc = serde_json::json!({ "mcpServers": { "echo": { "command": bin, "args": ["echo"], "env": env } } });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// `sum.json` in `dir`, locked against v1 of the echo fixture.
fn locked_blueprint(dir: &Path) -> PathBuf {
    let file = dir.join("sum.json");
    std::fs::write(&file, SUM).unwrap();
    let v1 = servers(dir, None);
    let out = mcpflow(&["lock", file.to_str().unwrap(), "--servers", v1.to_str().unwrap(), "--allow-server", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    file
}

fn validate_locked(file: &Path, servers: &Path) -> std::process::Output {
    let (file, servers) = (file.to_str().unwrap(), servers.to_str().unwrap());
    mcpflow(&["validate", "--locked", "--servers", servers, "--allow-server", "echo", file])
}

#[test]
fn lock_writes_the_schemas_and_their_hashes_beside_the_blueprint_sorted() {
    let dir = tempfile::tempdir().unwrap();
    locked_blueprint(dir.path());
    let text = std::fs::read_to_string(dir.path().join("sum.lock.json")).unwrap();
    let lock: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(lock["lock"], 1);
    assert_eq!(lock["blueprint"], "sum");
    let add = &lock["servers"]["echo"]["tools"]["add"];
    assert_eq!(add["inputSchema"]["required"], serde_json::json!(["a", "b"]));
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "number");
    assert_eq!(add["inputSchemaSha256"].as_str().unwrap().len(), 64);
    assert_eq!(add["outputSchemaSha256"].as_str().unwrap().len(), 64);
    assert!(lock["servers"]["echo"]["tools"]["echo"].is_object(), "{text}");
    assert!(lock["servers"]["echo"]["tools"].get("multiply").is_none(), "only the tools the blueprint uses: {text}");
    let keys: Vec<&String> = lock.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["blueprint", "lock", "servers"], "keys are sorted");
}

#[test]
fn the_same_servers_pass_validate_locked() {
    let dir = tempfile::tempdir().unwrap();
    let file = locked_blueprint(dir.path());
    let out = validate_locked(&file, &servers(dir.path(), None));
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(!stdout(&out).contains("LOCK_"), "{}", stdout(&out));
}

#[test]
fn a_new_required_argument_and_a_renamed_output_field_are_breaking_and_name_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    let file = locked_blueprint(dir.path());
    let out = validate_locked(&file, &servers(dir.path(), Some("breaking")));
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "sum.json:5:56: error[LOCK_BREAKING_CHANGE]: tool `add` of server `echo`: new required argument `c`; steps affected: step `total`"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "sum.json:6:80: error[LOCK_BREAKING_CHANGE]: tool `add` of server `echo`: output field `sum` is gone; step `say` reads it at /steps/1/args/message (the output of step `total`)"
        ),
        "{text}"
    );
    assert!(text.contains("  = hint: fix the steps for the new schema, then accept it with `mcpflow lock --update"));
    assert!(
        text.contains("note[LOCK_COMPATIBLE_CHANGE]: tool `add` of server `echo`: new output field `total`"),
        "{text}"
    );
}

#[test]
fn a_new_optional_argument_is_a_note_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let file = locked_blueprint(dir.path());
    let out = validate_locked(&file, &servers(dir.path(), Some("compatible")));
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "sum.json:5:56: note[LOCK_COMPATIBLE_CHANGE]: tool `add` of server `echo`: new optional argument `note`; steps affected: step `total`"
        ),
        "{text}"
    );
    assert!(!text.contains("LOCK_BREAKING_CHANGE"), "{text}");
    assert!(stderr(&out).contains("0 error(s), 0 warning(s), 1 note(s)"), "{}", stderr(&out));
}

#[test]
fn lock_update_accepts_the_new_schemas_and_lock_alone_does_not_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let file = locked_blueprint(dir.path());
    let v2 = servers(dir.path(), Some("compatible"));
    let (f, s) = (file.to_str().unwrap(), v2.to_str().unwrap());
    let again = mcpflow(&["lock", f, "--servers", s, "--allow-server", "echo"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("exists already") && stderr(&again).contains("mcpflow lock --update"));
    let update = mcpflow(&["lock", "--update", f, "--servers", s, "--allow-server", "echo"]);
    assert_eq!(update.status.code(), Some(0), "{}", stderr(&update));
    let out = validate_locked(&file, &v2);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stdout(&out).contains("LOCK_"), "{}", stdout(&out));
}

#[test]
fn locked_without_a_lock_file_says_to_run_mcpflow_lock() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sum.json");
    std::fs::write(&file, SUM).unwrap();
    let out = validate_locked(&file, &servers(dir.path(), None));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: no lock file") && stderr(&out).contains("run `mcpflow lock"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_locked_runs_nothing_after_a_breaking_change_and_runs_after_a_compatible_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = locked_blueprint(dir.path());
    let f = file.to_str().unwrap();
    let v2 = servers(dir.path(), Some("breaking"));
    let out = mcpflow(&["run", "--locked", f, "--servers", v2.to_str().unwrap(), "--allow-server", "echo", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}{}", stdout(&out), stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("error[LOCK_BREAKING_CHANGE]: tool `add` of server `echo`: new required argument `c`"),
        "{text}"
    );
    assert!(text.contains("nothing was run"), "{text}");
    assert_eq!(stdout(&out), "", "no run envelope");

    let v3 = servers(dir.path(), Some("compatible"));
    let out = mcpflow(&["run", "--locked", f, "--servers", v3.to_str().unwrap(), "--allow-server", "echo", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains("note[LOCK_COMPATIBLE_CHANGE]"), "{}", stderr(&out));
    let envelope: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded");
    assert!(envelope["output"].as_str().unwrap().starts_with("sum: 3"), "{envelope}");
}

#[test]
fn a_server_that_may_not_start_is_unchecked_and_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = locked_blueprint(dir.path());
    let v1 = servers(dir.path(), None);
    let out = mcpflow(&["validate", "--locked", "--servers", v1.to_str().unwrap(), file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("error[LOCK_UNCHECKED]: tool `add` of server `echo` was not compared with the lock"),
        "{text}"
    );
    assert!(text.contains("= hint: let it start: --allow-server echo"), "{text}");
}
