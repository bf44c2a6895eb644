//! `--db URL` / `MCPFLOW_DB`: the store in a PostgreSQL database (a throwaway cluster of
//! `mcpflow_testkit::postgres`) instead of the data folder — a folder's backup imported
//! there, then listed, shown and run against from it. Skips without PostgreSQL; fails
//! then under `CI=true`.

use crate::{repo, stderr, stdout};
use mcpflow_testkit::postgres::Cluster;
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// `mcpflow ARGS` with `home` as the data folder and `env` set.
fn mcpflow(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command.args(args).current_dir(repo()).env("MCPFLOW_HOME", home).env_remove("MCPFLOW_DB");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn ok(out: Output) -> Output {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    out
}

#[test]
fn a_folder_backup_imported_with_db_is_listed_shown_and_run_against_from_the_database() {
    let Some(cluster) = Cluster::shared() else { return };
    let url = cluster.database();
    let dir = tempfile::tempdir().unwrap();
    let (folder, elsewhere) = (dir.path().join("folder"), dir.path().join("elsewhere"));
    let file = dir.path().join("count.json");
    let blueprint = json!({ "blueprint": 1, "id": "count", "name": "Count",
        "steps": [{ "id": "n", "kind": "transform", "value": "{{ length(`[1, 2, 3]`) }}" }] });
    std::fs::write(&file, blueprint.to_string()).unwrap();
    let file = file.to_str().unwrap();

    // A desktop user's folder: the blueprint saved, one run recorded, exported.
    ok(mcpflow(&folder, &[], &["import", file]));
    let envelope: Value =
        serde_json::from_slice(&ok(mcpflow(&folder, &[], &["run", "--store", "--json", file])).stdout).unwrap();
    let first = envelope["run_id"].as_str().unwrap().to_owned();
    let backup = dir.path().join("backup.json");
    ok(mcpflow(&folder, &[], &["export", backup.to_str().unwrap()]));

    // Imported into the database, from a data folder that has none of it.
    let out = ok(mcpflow(&elsewhere, &[], &["--db", &url, "import", backup.to_str().unwrap()]));
    assert!(stderr(&out).contains("1 blueprints added"), "{}", stderr(&out));

    let listed: Value =
        serde_json::from_slice(&ok(mcpflow(&elsewhere, &[], &["list", "--json", "--db", &url])).stdout).unwrap();
    assert_eq!((listed[0]["id"].as_str(), listed[0]["name"].as_str()), (Some("count"), Some("Count")), "{listed}");
    let env = [("MCPFLOW_DB", url.as_str())];
    let runs: Value = serde_json::from_slice(&ok(mcpflow(&elsewhere, &env, &["runs", "--json"])).stdout).unwrap();
    assert_eq!((runs[0]["id"].as_str(), runs[0]["status"].as_str()), (Some(first.as_str()), Some("succeeded")));
    let shown = stdout(&ok(mcpflow(&elsewhere, &env, &["show", &first])));
    assert!(shown.contains("succeeded"), "{shown}");

    // A run recorded there, listed from there; the data folder's own store stays empty.
    ok(mcpflow(&elsewhere, &env, &["run", "--store", "--json", file]));
    let runs: Value =
        serde_json::from_slice(&ok(mcpflow(&elsewhere, &env, &["runs", "count", "--json"])).stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(2), "{runs}");
    let local: Value = serde_json::from_slice(&ok(mcpflow(&elsewhere, &[], &["list", "--json"])).stdout).unwrap();
    assert_eq!(local, json!([]), "the folder's store was not used");

    // A recorded run re-run against the database, recorded there with the run it came from.
    let rerun: Value = serde_json::from_slice(
        &ok(mcpflow(&elsewhere, &env, &["rerun", &first, "n", "--file", file, "--json"])).stdout,
    )
    .unwrap();
    assert_eq!((rerun["status"].as_str(), rerun["output"].as_u64()), (Some("succeeded"), Some(3)), "{rerun}");
    let runs: Value =
        serde_json::from_slice(&ok(mcpflow(&elsewhere, &env, &["runs", "count", "--json"])).stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(3), "{runs}");

    // The same document comes back out of the database (with the new runs).
    let exported: Value = serde_json::from_slice(&ok(mcpflow(&elsewhere, &env, &["export"])).stdout).unwrap();
    assert_eq!(
        exported["blueprints"],
        serde_json::from_slice::<Value>(&std::fs::read(&backup).unwrap()).unwrap()["blueprints"]
    );
}

#[test]
fn a_command_not_wired_to_a_database_refuses_db_and_a_bad_url_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let out = mcpflow(dir.path(), &[], &["--db", "postgresql://u:pw@127.0.0.1:1/x", "daemon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("`mcpflow daemon` cannot use a store in a database yet"), "{}", stderr(&out));
    let out = mcpflow(dir.path(), &[], &["--db", "postgresql://u:pw@127.0.0.1:1/x", "serve", "--schedule"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("the workers' leader fires them"), "{}", stderr(&out));

    let Some(cluster) = Cluster::shared() else { return };
    let nowhere = format!("postgresql://postgres:pw@/x?host={}", cluster.socket_folder().join("none").display());
    let out = mcpflow(dir.path(), &[("MCPFLOW_DB", &nowhere)], &["list"]);
    assert_eq!(out.status.code(), Some(2));
    let text = stderr(&out);
    assert!(text.contains("cannot connect to the store's database") && !text.contains(":pw@"), "{text}");
}

/// `mcpflow serve --db URL`: an MCP client over stdio sees the blueprints of the team's
/// store (not the data folder's, whose service is not asked) and runs one there.
#[test]
fn serve_on_a_database_lists_and_runs_the_teams_blueprints() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let Some(cluster) = Cluster::shared() else { return };
    let url = cluster.database();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("count.json");
    let blueprint = json!({ "blueprint": 1, "id": "team-count", "name": "Team count",
        "steps": [{ "id": "n", "kind": "transform", "value": "{{ length(`[1, 2]`) }}" }] });
    std::fs::write(&file, blueprint.to_string()).unwrap();
    let home = dir.path().join("home");
    ok(mcpflow(&home, &[], &["--db", &url, "import", file.to_str().unwrap()]));

    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["--db", &url, "serve"])
        .env("MCPFLOW_HOME", &home)
        .env_remove("MCPFLOW_DB")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut call = |id: u64, method: &str, params: Value| -> Value {
        writeln!(stdin, "{}", json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).unwrap();
        if method == "initialize" {
            writeln!(stdin, "{}", json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).unwrap();
        }
        loop {
            let line = lines.next().expect("serve answered").unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    };
    call(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": { "name": "team-test", "version": "1" } }),
    );
    let listed = call(2, "tools/call", json!({ "name": "list_workflows", "arguments": {} }));
    assert!(listed.to_string().contains("team-count"), "{listed}");
    let ran = call(3, "tools/call", json!({ "name": "run_workflow", "arguments": { "id": "team-count" } }));
    assert_eq!(ran["result"]["structuredContent"]["status"], "succeeded", "{ran}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    // The run is the team's: recorded in the database.
    let runs: Value =
        serde_json::from_slice(&ok(mcpflow(&home, &[], &["--db", &url, "runs", "team-count", "--json"])).stdout)
            .unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
}
