//! Blueprints that travel: `mcpflow export-blueprint ID --portable` writes a stored
//! blueprint with the configured servers it uses copied in (values that may be secrets as
//! `${env:NAME}`), the blueprints it calls alongside and a README; another data folder —
//! another machine — runs it with `mcpflow run` and nothing else. `mcpflow run` warns
//! about a server command that does not exist here.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

const SECRET: &str = "s3cret-token-value";

fn mcpflow_in(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(args)
        .env("MCPFLOW_HOME", home)
        .envs(env.iter().copied())
        .current_dir(repo())
        .output()
        .unwrap()
}

/// A data folder whose store configures `echo` (the testkit server, with a secret in its
/// `env`) and holds `main`, which calls `sub` through a `workflow` step.
fn studio_home(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("studio");
    {
        let opened = mcpflow_store::Store::open(&home.join("store")).unwrap();
        let echo = json!({ "command": mcpflow_testkit::binary().display().to_string(), "args": ["echo"],
                           "env": { "ECHO_TOKEN": SECRET } });
        opened.store.put_server("echo", &echo).unwrap();
    }
    for doc in [
        json!({ "blueprint": 1, "id": "main", "steps": [
            { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hello" } },
            { "id": "sub", "kind": "workflow", "workflow": "sub", "args": { "n": 2 } }
        ], "output": { "said": "{{ say }}", "sum": "{{ sub }}" } }),
        json!({ "blueprint": 1, "id": "sub", "steps": [
            { "id": "add", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": "{{ inputs.n }}", "b": 3 } }
        ], "output": "{{ add.sum }}" }),
    ] {
        let file = dir.join(format!("{}.json", doc["id"].as_str().unwrap()));
        std::fs::write(&file, doc.to_string()).unwrap();
        let out = mcpflow_in(&home, &["import", file.to_str().unwrap()], &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    home
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_portable_export_runs_in_another_data_folder_with_only_its_variables_set() {
    let dir = tempfile::tempdir().unwrap();
    let home = studio_home(dir.path());
    let folder = dir.path().join("travel");
    let out = mcpflow_in(&home, &["export-blueprint", "main", "--portable", "--out", folder.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("set before running: ECHO_TOKEN"), "{}", stderr(&out));

    // The servers copied in, the secret as a reference; the called blueprint alongside.
    let main = read(&folder.join("main.json"));
    assert_eq!(main["servers"]["echo"]["env"]["ECHO_TOKEN"], "${env:ECHO_TOKEN}");
    assert_eq!(main["servers"]["echo"]["args"], json!(["echo"]));
    let sub = read(&folder.join("sub.json"));
    assert_eq!(sub["servers"]["echo"]["env"]["ECHO_TOKEN"], "${env:ECHO_TOKEN}");
    let readme = std::fs::read_to_string(folder.join("README.md")).unwrap();
    assert!(
        readme.contains("`ECHO_TOKEN`") && readme.contains("mcpflow run main.json --allow-server echo"),
        "{readme}"
    );
    for entry in std::fs::read_dir(&folder).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains(SECRET), "the secret was exported:\n{text}");
    }

    // Another machine: a data folder of its own, no store, no servers file.
    let elsewhere = dir.path().join("elsewhere");
    let main_file = folder.join("main.json");
    let run = ["run", main_file.to_str().unwrap(), "--allow-server", "echo", "--json", "-q"];
    let out = mcpflow_in(&elsewhere, &run, &[("ECHO_TOKEN", "another-value")]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(envelope["output"], json!({ "said": "hello", "sum": 5.0 }), "{envelope}");
    assert!(!stderr(&out).contains("SERVER_COMMAND_MISSING"), "{}", stderr(&out));

    // Exporting again over it writes nothing and says which file is in the way.
    let before = std::fs::read_to_string(&main_file).unwrap();
    let out = mcpflow_in(&home, &["export-blueprint", "main", "--portable", "--out", folder.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("main.json exists") && stderr(&out).contains("--out DIR"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&main_file).unwrap(), before);
    // Nothing was started to list the servers, so no lock came along: a note says so.
    assert!(!folder.join("main.lock.json").exists());
}

#[test]
fn a_portable_export_with_its_servers_allowed_carries_the_lock_and_runs_locked_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let home = studio_home(dir.path());
    let folder = dir.path().join("travel");
    let export = ["export-blueprint", "main", "--portable", "--out", folder.to_str().unwrap()];
    let out = mcpflow_in(&home, &[&export[..], &["--allow-server", "echo"]].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("main.lock.json") && stderr(&out).contains("sub.lock.json"), "{}", stderr(&out));
    let lock = read(&folder.join("main.lock.json"));
    assert!(lock["servers"]["echo"]["tools"]["echo"].is_object(), "{lock}");
    assert!(!std::fs::read_to_string(folder.join("main.lock.json")).unwrap().contains(SECRET));
    // The other machine runs it `--locked`: the same servers, nothing changed.
    let elsewhere = dir.path().join("elsewhere");
    let main_file = folder.join("main.json");
    let run = ["run", main_file.to_str().unwrap(), "--locked", "--allow-server", "echo", "--json", "-q"];
    let out = mcpflow_in(&elsewhere, &run, &[("ECHO_TOKEN", "another-value")]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    // Without the servers allowed here, the export says why it has no lock.
    let again = dir.path().join("again");
    let out = mcpflow_in(&home, &["export-blueprint", "main", "--portable", "--out", again.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("note: no lock for `main`"), "{}", stderr(&out));
}

#[test]
fn export_without_portable_writes_the_document_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let home = studio_home(dir.path());
    let out = mcpflow_in(&home, &["export-blueprint", "main"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["id"], "main");
    assert!(doc.get("servers").is_none(), "{doc}");
    let out = mcpflow_in(&home, &["export-blueprint", "nope"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nope"), "{}", stderr(&out));
}

#[test]
fn run_warns_about_a_server_command_that_does_not_exist_here_naming_server_and_steps() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("moved.json");
    let doc = json!({ "blueprint": 1, "id": "moved",
        "servers": { "graph": { "command": "/opt/nowhere/bin/graph-server", "args": [] } },
        "steps": [
            { "id": "first", "kind": "tool", "server": "graph", "tool": "t", "args": {} },
            { "id": "second", "kind": "tool", "server": "graph", "tool": "t", "args": {}, "after": ["first"] }
        ] });
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = mcpflow_in(&dir.path().join("home"), &["run", file.to_str().unwrap(), "--allow-all-servers", "-q"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "warning[SERVER_COMMAND_MISSING]: server `graph` (step `first`, `second`) starts /opt/nowhere/bin/graph-server"
        ),
        "{err}"
    );
}
