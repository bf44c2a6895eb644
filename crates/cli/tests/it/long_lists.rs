//! Limits that hold on real data: a `for_each` runs over its whole list however long it
//! is (no default `max_iterations`); an explicit `max_iterations` still refuses a longer
//! list; `until` still stops at 1,000 by default (here with `on_exhausted: succeed`); `limits.max_step_runs` defaults to
//! 1,000,000. Each run is measured (wall time, peak RSS from `/proc`).

use crate::memory::{Peak, measured_within};
use crate::{echo_servers, repo};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Writes `bp` and an inputs file holding `items: [0, 1, …, n-1]` under `dir`, and runs
/// `mcpflow run … --json -q` on them, measured.
fn run_over(dir: &Path, bp: &Value, n: u64, extra: &[&str]) -> Peak {
    let file = dir.join("bp.json");
    std::fs::write(&file, bp.to_string()).unwrap();
    let inputs = dir.join("inputs.json");
    std::fs::write(&inputs, json!({ "items": (0..n).collect::<Vec<_>>() }).to_string()).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command
        .args(["run", &file.display().to_string(), "--inputs", &inputs.display().to_string(), "--json", "-q"])
        .args(extra)
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"));
    // 20,000 echo calls take ~7 s in a debug build on an idle machine, ~15 s on a busy
    // one: room for a slower CI runner, still a bound on a hang.
    measured_within(command, Duration::from_secs(120))
}

fn envelope(run: &Peak) -> Value {
    serde_json::from_slice(&run.output.stdout)
        .unwrap_or_else(|e| panic!("no envelope ({e}); stderr: {}", String::from_utf8_lossy(&run.output.stderr)))
}

fn for_each(body: Value, max_iterations: Option<u64>) -> Value {
    let mut l = json!({ "id": "each", "kind": "loop", "for_each": "{{ inputs.items }}", "steps": [body] });
    if let Some(max) = max_iterations {
        l["max_iterations"] = json!(max);
    }
    json!({ "blueprint": 1, "id": "long-list",
        "inputs": { "type": "object", "properties": { "items": { "type": "array" } } },
        "steps": [l], "output": "{{ each }}" })
}

#[allow(clippy::print_stderr, reason = "the measurements the tests report, as the other measured tests print them")]
fn report(what: &str, run: &Peak) {
    eprintln!("{what}: {:.2} s, peak RSS {} MB", run.wall.as_secs_f64(), run.hwm_kb / 1024);
}

const LONG: u64 = 20_000;

#[test]
fn a_for_each_over_20000_items_without_max_iterations_runs_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let bp = for_each(json!({ "id": "double", "kind": "transform", "value": "{{ item }}-{{ index }}" }), None);
    let run = run_over(dir.path(), &bp, LONG, &[]);
    report(&format!("for_each over {LONG} items, a transform each"), &run);
    assert_eq!(run.output.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.output.stderr));
    let env = envelope(&run);
    assert_eq!(env["status"], "succeeded");
    assert_eq!((env["summary"]["steps"].as_u64(), env["summary"]["succeeded"].as_u64()), (Some(1), Some(1)));
    let out = env["output"].as_array().unwrap();
    assert_eq!(out.len(), LONG as usize);
    assert_eq!((out[0].as_str(), out[19_999].as_str()), (Some("0-0"), Some("19999-19999")));
}

#[test]
fn a_for_each_of_20000_echo_tool_calls_without_max_iterations_runs_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let servers = echo_servers(dir.path()).display().to_string();
    let bp = for_each(
        json!({ "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "n{{ item }}" } }),
        None,
    );
    let mut bp = bp;
    bp["steps"][0]["concurrency"] = json!(8);
    let run = run_over(dir.path(), &bp, LONG, &["--servers", &servers, "--allow-server", "echo"]);
    report(&format!("for_each over {LONG} items, an echo tool call each"), &run);
    assert_eq!(run.output.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.output.stderr));
    let env = envelope(&run);
    assert_eq!(env["status"], "succeeded");
    assert_eq!(env["summary"]["tool_calls"].as_u64(), Some(LONG));
    let out = env["output"].as_array().unwrap();
    assert_eq!(out.len(), LONG as usize);
    assert_eq!(out[LONG as usize - 1], json!(format!("n{}", LONG - 1)), "in iteration order");
}

#[test]
fn an_explicit_max_iterations_still_refuses_a_longer_list_before_the_first_iteration() {
    let dir = tempfile::tempdir().unwrap();
    let bp = for_each(json!({ "id": "t", "kind": "transform", "value": "{{ item }}" }), Some(1_500));
    let run = run_over(dir.path(), &bp, 1_501, &[]);
    assert_eq!(run.output.status.code(), Some(1), "{}", String::from_utf8_lossy(&run.output.stderr));
    let env = envelope(&run);
    assert_eq!(env["status"], "failed");
    assert_eq!(env["errors"][0]["code"], "LOOP_TOO_MANY_ITEMS", "{env}");
    let message = env["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("1501 items") && message.contains("`max_iterations` is 1500"), "{message}");
    // Exactly at the cap it runs.
    let run = run_over(dir.path(), &bp, 1_500, &[]);
    assert_eq!(run.output.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.output.stderr));
    assert_eq!(envelope(&run)["output"].as_array().map(Vec::len), Some(1_500));
}

#[test]
fn until_with_on_exhausted_succeed_still_stops_at_1000_iterations_by_default_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let bp = json!({ "blueprint": 1, "id": "forever",
        "inputs": { "type": "object", "properties": { "items": { "type": "array" } } },
        "steps": [
        { "id": "poll", "kind": "loop", "until": "{{ `false` }}", "on_exhausted": "succeed",
          "steps": [ { "id": "t", "kind": "transform", "value": "{{ index }}" } ] }
    ], "output": "{{ poll }}" });
    let events = dir.path().join("events.ndjson");
    let run = run_over(dir.path(), &bp, 0, &["--events", &events.display().to_string()]);
    assert_eq!(run.output.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.output.stderr));
    let env = envelope(&run);
    assert_eq!(env["output"].as_array().map(Vec::len), Some(1_000));
    let events = std::fs::read_to_string(&events).unwrap();
    assert!(events.contains("stopped at max_iterations (1000) before `until` was true"), "no warning");
}

#[test]
fn max_step_runs_defaults_to_a_million_so_a_run_of_over_100000_step_runs_succeeds() {
    // The old default was 100,000 step runs: this run, 100,001 iterations of one step,
    // failed with MAX_STEP_RUNS. (The explicit `max_iterations` keeps the
    // test about step runs, not the loop's own default.)
    let n = 100_001;
    let dir = tempfile::tempdir().unwrap();
    let bp = for_each(json!({ "id": "t", "kind": "transform", "value": "{{ item }}" }), Some(200_000));
    let run = run_over(dir.path(), &bp, n, &[]);
    report(&format!("for_each over {n} items, a transform each"), &run);
    assert_eq!(run.output.status.code(), Some(0), "{}", String::from_utf8_lossy(&run.output.stdout));
    assert_eq!(envelope(&run)["output"].as_array().map(Vec::len), Some(n as usize));
    assert_eq!(mcpflow_blueprint::limits::DEFAULT_MAX_STEP_RUNS, 1_000_000);
}
