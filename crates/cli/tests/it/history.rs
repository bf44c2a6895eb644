//! The store from the command line: `run --store` records, `list` / `runs` / `show`
//! read, `export` / `import` move it — and importing never starts a process.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn mcpflow(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(args)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .output()
        .unwrap()
}

/// That nothing was started by the commands that ran in `dir` and have exited: a process
/// they forked would still be there now, its command line naming a file in `dir` (before
/// exec, the command's own; after, the tripwire's), or it has left `marker` behind.
fn assert_no_process_started(dir: &Path, marker: &Path) {
    let started = mcpflow_testkit::procs::mentioning(&dir.display().to_string());
    assert!(started.is_empty(), "a process was started: {started:?}");
    assert!(!marker.exists(), "importing started a server process");
}

/// A stdio server whose start would leave `marker` behind.
fn tripwire(marker: &Path) -> Value {
    json!({ "command": "sh", "args": ["-c", format!("touch {}; sleep 5", marker.display())] })
}

#[test]
fn run_store_records_and_list_runs_show_read_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let file = dir.path().join("hello.json");
    std::fs::write(
        &file,
        json!({ "blueprint": 1, "id": "hello", "steps": [
        { "id": "greet", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi" } },
        { "id": "loud", "kind": "transform", "value": "{{ length(prev) }}" }
    ] })
        .to_string(),
    )
    .unwrap();
    let args = [
        "run",
        "--store",
        "--json",
        "--allow-all-servers",
        "--servers",
        servers.to_str().unwrap(),
        file.to_str().unwrap(),
    ];
    let out = mcpflow(&home, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run_id = envelope["run_id"].as_str().unwrap();

    let runs = mcpflow(&home, &["runs", "hello", "--json"]);
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs[0]["id"], run_id);
    assert_eq!(runs[0]["status"], "succeeded");
    assert_eq!(runs[0]["trigger"], "cli");

    let shown = mcpflow(&home, &["show", run_id]);
    let text = stdout(&shown);
    assert!(text.contains("greet") && text.contains("loud") && text.contains("succeeded"), "{text}");

    let events = mcpflow(&home, &["show", run_id, "--events"]);
    let kinds: Vec<String> = stdout(&events)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("RunStarted"));
    assert_eq!(kinds.last().map(String::as_str), Some("RunFinished"));
    assert_eq!(kinds.iter().filter(|k| *k == "StepFinished").count(), 2);

    // A re-run (the studio makes them) travels through export / import and says what it re-ran.
    let mut backup: Value = serde_json::from_slice(&mcpflow(&home, &["export"]).stdout).unwrap();
    let mut rerun = backup["runs"][0].clone();
    let rerun_id = "01900000-0000-7000-8000-000000000042";
    rerun["record"]["id"] = json!(rerun_id);
    rerun["record"]["rerun_of"] = json!({ "run": run_id, "step": "loud", "mode": "step" });
    backup["runs"] = json!([rerun]);
    let file = dir.path().join("rerun.json");
    std::fs::write(&file, backup.to_string()).unwrap();
    let home2 = dir.path().join("home2");
    let out = mcpflow(&home2, &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = stdout(&mcpflow(&home2, &["runs"]));
    assert!(listed.contains(&format!("re-run of {run_id}")), "{listed}");
    let shown = stdout(&mcpflow(&home2, &["show", rerun_id]));
    assert!(shown.contains(&format!("re-run of run {run_id}: step `loud` alone")), "{shown}");

    let missing = mcpflow(&home, &["show", "no-such-run"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("no run `no-such-run`"), "{}", stderr(&missing));
}

#[test]
fn importing_blueprints_and_backups_that_name_stdio_servers_starts_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let marker = dir.path().join("started");
    // CLI import of one blueprint with its own stdio server.
    let bp = json!({ "blueprint": 1, "id": "tripwire", "servers": { "trap": tripwire(&marker) },
        "steps": [{ "id": "t", "kind": "tool", "server": "trap", "tool": "anything" }] });
    let file = dir.path().join("tripwire.json");
    std::fs::write(&file, bp.to_string()).unwrap();
    let out = mcpflow(&home, &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("imported blueprint `tripwire` as revision 1"), "{}", stderr(&out));
    assert_no_process_started(dir.path(), &marker);

    // Store import of a backup whose servers and blueprints name stdio commands.
    let backup = json!({ "mcpflow_store": 1, "schema_version": 1,
        "blueprints": [{ "id": "other", "revisions": [{ "rev": 1, "saved_at": "2026-11-21T00:00:00.000Z",
            "json": { "blueprint": 1, "id": "other", "steps": [{ "id": "t", "kind": "tool", "server": "trap2", "tool": "x" }] } }] }],
        "runs": [], "saved": {}, "servers": { "trap2": tripwire(&marker) }, "consents": [], "schedules": {} });
    let file = dir.path().join("backup.json");
    std::fs::write(&file, backup.to_string()).unwrap();
    let out = mcpflow(&home, &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let listed = stdout(&mcpflow(&home, &["list"]));
    assert!(listed.contains("tripwire") && listed.contains("other"), "{listed}");
    assert_no_process_started(dir.path(), &marker);
    let exported: Value = serde_json::from_slice(&mcpflow(&home, &["export"]).stdout).unwrap();
    assert_eq!(exported["servers"]["trap2"]["command"], "sh", "the server config was imported as written");
}

/// Records a run of a one-step blueprint with `run --store`; its run id.
pub(crate) fn record_run(home: &Path, file: &Path) -> String {
    let out = mcpflow(home, &["run", "--store", "--json", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    envelope["run_id"].as_str().unwrap().to_owned()
}

/// Sets the output of run `run_id`'s record to a value `levels` arrays deep, straight
/// through sled: what an mcpflow before the store's depth limit wrote.
pub(crate) fn nest_output(home: &Path, run_id: &str, levels: usize) {
    let db = sled::open(home.join("store")).unwrap();
    let runs = db.open_tree("runs").unwrap();
    let key = [&[1u8][..], run_id.as_bytes()].concat();
    let mut record: Value = serde_json::from_slice(&runs.get(&key).unwrap().unwrap()).unwrap();
    record["envelope"]["output"] = json!("DEEP");
    let deep = "[".repeat(levels) + &"]".repeat(levels);
    runs.insert(key, record.to_string().replace("\"DEEP\"", &deep).as_bytes()).unwrap();
    db.flush().unwrap();
}

/// Two runs of a one-step blueprint recorded in `home`, the first then made 180 levels
/// deep as the store wrote it before records were held to its reading limit: (deep, fine).
pub fn deep_and_fine_runs(dir: &Path, home: &Path) -> (String, String) {
    let file = dir.join("one.json");
    let blueprint =
        json!({ "blueprint": 1, "id": "one", "steps": [{ "id": "n", "kind": "transform", "value": "{{ `1` }}" }] });
    std::fs::write(&file, blueprint.to_string()).unwrap();
    let deep = record_run(home, &file);
    let fine = record_run(home, &file);
    nest_output(home, &deep, 180);
    (deep, fine)
}

#[test]
fn a_run_180_levels_deep_is_skipped_by_runs_show_and_export_until_runs_remove() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (deep, fine) = deep_and_fine_runs(dir.path(), &home);
    let remove = format!("mcpflow runs --remove {deep}");

    let runs = mcpflow(&home, &["runs"]);
    assert_eq!(runs.status.code(), Some(0), "{}", stderr(&runs));
    assert!(stdout(&runs).contains(&fine) && !stdout(&runs).contains(&deep), "{}", stdout(&runs));
    assert!(stderr(&runs).contains(&remove) && stderr(&runs).contains("levels deep"), "{}", stderr(&runs));
    let listed = mcpflow(&home, &["runs", "one", "--json"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect::<Vec<_>>(), [&fine]);

    let shown = mcpflow(&home, &["show", &fine]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let refused = mcpflow(&home, &["show", &deep]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(stderr(&refused).contains("RUN_UNREADABLE") || stderr(&refused).contains(&remove), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(&remove), "{}", stderr(&refused));

    // The backup holds everything readable, names what it left out, and exits 3.
    let backup = dir.path().join("backup.json");
    let exported = mcpflow(&home, &["export", backup.to_str().unwrap()]);
    assert_eq!(exported.status.code(), Some(3), "{}", stderr(&exported));
    assert!(stderr(&exported).contains(&remove), "{}", stderr(&exported));
    let doc: Value = serde_json::from_slice(&std::fs::read(&backup).unwrap()).unwrap();
    let ids: Vec<&str> = doc["runs"].as_array().unwrap().iter().map(|r| r["record"]["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [fine.as_str()]);
    assert_eq!(doc["blueprints"].as_array().map(Vec::len), Some(0), "a run from a file saves no blueprint");

    // The command it names removes the run; then nothing is skipped.
    let removed = mcpflow(&home, &["runs", "--remove", &deep]);
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let runs = mcpflow(&home, &["runs"]);
    assert!(!stderr(&runs).contains(&deep), "{}", stderr(&runs));
    assert!(stdout(&runs).contains(&fine), "{}", stdout(&runs));
    let exported = mcpflow(&home, &["export", backup.to_str().unwrap()]);
    assert_eq!(exported.status.code(), Some(0), "{}", stderr(&exported));
    let again = mcpflow(&home, &["runs", "--remove", &deep]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("no run"), "{}", stderr(&again));
}
