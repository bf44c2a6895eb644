//! Servers that write without pause: timeouts still fire on time and memory stays
//! bounded (`yes` as a stdio server, on stdout and on stderr).

use crate::memory::{Peak, run_measured};
use serde_json::{Value, json};

/// A blueprint with one tool step on `command args…`, declared by the blueprint itself.
fn flood_blueprint(dir: &std::path::Path, command: &str, args: &[&str], step_timeout: Option<u64>) -> String {
    let mut step = json!({ "id": "a", "kind": "tool", "server": "noise", "tool": "anything" });
    if let Some(ms) = step_timeout {
        step["timeout_ms"] = json!(ms);
    }
    let bp = json!({ "blueprint": 1, "id": "flood",
        "servers": { "noise": { "command": command, "args": args } },
        "steps": [step] });
    let path = dir.join("flood.json");
    std::fs::write(&path, bp.to_string()).unwrap();
    path.display().to_string()
}

/// Runs the blueprint and checks what every flood must give: the run fails with `code`
/// (the timeout of 3 s, not cut short), the process's peak RSS stays under 100 MB, and the
/// dropped lines are reported in a few notes instead of being shown. How soon after the
/// timeout the run ends depends on the machine's load: no upper bound (a flood that kept
/// the timer from firing shows as the 30 s kill of `run_measured`).
fn assert_fires_on_time(file: &str, extra: &[&str], code: &str) {
    let mut args = vec!["run", file, "--allow-all-servers", "--json"];
    args.extend_from_slice(extra);
    let Peak { output, hwm_kb, wall } = run_measured(&args);
    let envelope: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(output.status.code(), Some(1), "{envelope}");
    assert_eq!(envelope["status"], "failed", "{envelope}");
    assert_eq!(envelope["errors"][0]["code"], code, "{envelope}");
    // The run's own clock: from its start to the timeout being handled. A lower bound only.
    let ms = envelope["duration_ms"].as_u64().unwrap();
    assert!(ms >= 3000, "the timeout of 3000 ms was handled at {ms} ms");
    assert!(hwm_kb < 100 * 1024, "peak RSS of mcpflow: {} MB", hwm_kb / 1024);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("dropped from server noise"), "{}", &stderr[..stderr.len().min(2000)]);
    // Burst (1,000 lines) + 100 lines a second + a note every 5 s, never the flood: counted
    // over the process's own lifetime, so a slow machine allows more, never flakes.
    let lines = stderr.lines().count();
    let most = 1000.0 + 100.0 * wall.as_secs_f64() + wall.as_secs_f64() / 5.0 + 100.0;
    assert!((lines as f64) < most, "{lines} lines on stderr in {wall:?}");
}

#[test]
fn a_step_timeout_fires_on_time_while_the_server_floods_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = flood_blueprint(dir.path(), "/usr/bin/yes", &["garbage-line-not-json"], Some(3000));
    assert_fires_on_time(&file, &[], "STEP_TIMEOUT");
}

#[test]
fn the_run_timeout_fires_on_time_while_the_server_floods_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = flood_blueprint(dir.path(), "/usr/bin/yes", &["garbage-line-not-json"], None);
    assert_fires_on_time(&file, &["--timeout", "3s"], "RUN_TIMEOUT");
}

#[test]
fn a_step_timeout_fires_on_time_while_the_server_floods_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let file = flood_blueprint(dir.path(), "/bin/sh", &["-c", "yes garbage-on-stderr >&2 & exec sleep 60"], Some(3000));
    assert_fires_on_time(&file, &[], "STEP_TIMEOUT");
}
