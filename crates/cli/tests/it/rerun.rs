//! `mcpflow rerun RUN STEP`: a recorded run that failed at a step is fixed in its file
//! and re-run from that step; the steps before it do not reach the server again, and
//! the re-run is recorded with where it came from.

use crate::{stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mcpflow(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow")).args(args).env("MCPFLOW_HOME", home).output().unwrap()
}

/// `a` and `c` record a line each; `b` calls `tool_b` (a typo fails it at run time).
fn pipeline(calls: &Path, tool_b: &str) -> Value {
    let record = |line: &str| json!({ "file": calls, "line": line });
    json!({ "blueprint": 1, "id": "fixme", "steps": [
        { "id": "a", "kind": "tool", "server": "echo", "tool": "record", "args": record("a") },
        { "id": "b", "kind": "tool", "server": "echo", "tool": tool_b, "args": record("b after {{ a.recorded }}") },
        { "id": "c", "kind": "tool", "server": "echo", "tool": "record", "args": record("c after {{ b.recorded }}") }
    ] })
}

fn lines(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// A store, the echo server, and the pipeline (with `tool_b` for `b`) in a file, run
/// once with `--store`.
struct Recorded {
    /// Holds the temporary folder until the test ends.
    _dir: tempfile::TempDir,
    home: PathBuf,
    servers: String,
    calls: PathBuf,
    file: String,
    /// The recorded run's exit code and envelope.
    first: (Option<i32>, Value),
}

fn recorded(tool_b: &str) -> Recorded {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path()).to_str().unwrap().to_owned();
    let calls = dir.path().join("calls.txt");
    let file = dir.path().join("pipe.blueprint.json");
    std::fs::write(&file, pipeline(&calls, tool_b).to_string()).unwrap();
    let file = file.to_str().unwrap().to_owned();
    let out = mcpflow(&home, &["run", "--store", "--json", "--allow-all-servers", "--servers", &servers, &file]);
    let envelope = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    Recorded { _dir: dir, home, servers, calls, file, first: (out.status.code(), envelope) }
}

#[test]
fn a_run_that_failed_at_a_step_is_re_run_from_it_with_the_fixed_file() {
    let r = recorded("recrod");
    let (home, servers, calls, file) = (&r.home, r.servers.as_str(), &r.calls, r.file.as_str());
    let (code, envelope) = &r.first;
    assert_eq!(*code, Some(1), "{envelope}");
    assert_eq!(envelope["errors"][0]["step"], "b", "{envelope}");
    let run_id = envelope["run_id"].as_str().unwrap().to_owned();
    assert_eq!(lines(calls), ["a"]);

    // Re-running `b` from the broken file fails again, and says so.
    let again = mcpflow(home, &["rerun", &run_id, "b", "--file", file, "--allow-all-servers", "--servers", servers]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert!(stderr(&again).contains("in step `b`"), "{}", stderr(&again));

    // Fixed: `b` and `c` run, `a` keeps its recorded output and is not called.
    std::fs::write(file, pipeline(calls, "record").to_string()).unwrap();
    let args =
        ["rerun", &run_id, "b", "--from-here", "--file", file, "--json", "--allow-all-servers", "--servers", servers];
    let fixed = mcpflow(home, &args);
    assert_eq!(fixed.status.code(), Some(0), "{}", stderr(&fixed));
    let envelope: Value = serde_json::from_slice(&fixed.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded");
    assert_eq!(envelope["summary"]["tool_calls"], 2, "{envelope}");
    assert_eq!(lines(calls), ["a", "b after a", "c after b after a"]);

    let rerun_id = envelope["run_id"].as_str().unwrap();
    let shown = stdout(&mcpflow(home, &["show", rerun_id]));
    assert!(shown.contains(&format!("re-run of run {run_id}: step `b` and every step after it")), "{shown}");
    assert!(shown.contains("(cli)"), "{shown}");
}

#[test]
fn bad_re_runs_are_usage_errors_that_say_what_to_do() {
    let r = recorded("record");
    let (home, file) = (&r.home, r.file.as_str());
    let (code, envelope) = &r.first;
    assert_eq!(*code, Some(0), "{envelope}");
    let run_id = envelope["run_id"].as_str().unwrap().to_owned();

    // A run of a file keeps no copy of it: the file must be named.
    let no_file = mcpflow(home, &["rerun", &run_id, "b"]);
    assert_eq!(no_file.status.code(), Some(2));
    assert!(stderr(&no_file).contains("save the blueprint"), "{}", stderr(&no_file));

    let unknown = mcpflow(home, &["rerun", &run_id, "bb", "--file", file]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("no step `bb`") && stderr(&unknown).contains("`b`"), "{}", stderr(&unknown));

    let no_run = mcpflow(home, &["rerun", "0190b7a4-0000-7000-8000-000000000000", "b", "--file", file]);
    assert_eq!(no_run.status.code(), Some(2));
    assert!(stderr(&no_run).contains("no run"), "{}", stderr(&no_run));
    assert_eq!(lines(&r.calls), ["a", "b after a", "c after b after a"], "no failed re-run reached a server");
}
