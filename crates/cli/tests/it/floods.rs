//! A server that floods one call with progress notifications or questions, through
//! `mcpflow run --store --events` against the testkit `faulty` fixture: what is recorded
//! is capped per call (progress: 100 at once then 5 a second, each message cut at 1 KiB;
//! questions: 32), and one note says how many were dropped.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

/// Runs `steps` against the faulty fixture (server `faulty`, speaking the 2025-11-25
/// protocol, whose servers may send requests of their own) with `--store`, `--events` and
/// `extra`; returns the run's output, its events and how long it took (seconds).
fn run(dir: &Path, steps: Value, extra: &[&str]) -> (Output, Vec<Value>, f64) {
    let bin = mcpflow_testkit::binary().display().to_string();
    let servers = dir.join("servers.json");
    let faulty = json!({ "command": bin, "args": ["faulty"], "protocol": "2025-11-25" });
    std::fs::write(&servers, json!({ "mcpServers": { "faulty": faulty } }).to_string()).unwrap();
    let blueprint = dir.join("bp.json");
    std::fs::write(&blueprint, json!({ "blueprint": 1, "id": "flood", "steps": steps }).to_string()).unwrap();
    let events = dir.join("events.jsonl");
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "--allow-all-servers", "--json", "-q", "--events"])
        .arg(&events)
        .arg("--servers")
        .arg(&servers)
        .arg(&blueprint)
        .args(extra)
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let secs = started.elapsed().as_secs_f64();
    let events = std::fs::read_to_string(&events).unwrap_or_default();
    let events = events.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (out, events, secs)
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The events of the stored run, as `mcpflow show RUN --events` gives them.
fn stored(dir: &Path, out: &Output) -> Vec<Value> {
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run_id = envelope["run_id"].as_str().unwrap();
    let shown = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["show", run_id, "--events"])
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"))
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    stdout(&shown).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The `Log` events whose message contains `words`.
fn notes<'a>(events: &'a [Value], words: &str) -> Vec<&'a Value> {
    of_type(events, "Log").into_iter().filter(|e| e["message"].as_str().is_some_and(|m| m.contains(words))).collect()
}

#[test]
fn a_flood_of_progress_is_capped_per_call_cut_and_noted_once() {
    let dir = tempfile::tempdir().unwrap();
    const SENT: u64 = 2000;
    let steps = json!([
        { "id": "flood", "kind": "tool", "server": "faulty", "tool": "flood_progress",
          "args": { "count": SENT, "bytes": 60_000 } },
        // A second call keeps the run open while the first call's note is routed.
        { "id": "after", "kind": "tool", "server": "faulty", "tool": "echo", "args": { "message": "done" } }
    ]);
    let (out, events, secs) = run(dir.path(), steps, &[]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    // At most the burst, then 5 a second for as long as the run took.
    let most = 100 + (5.0 * secs).ceil() as usize + 1;
    for (what, events) in [("--events", events.clone()), ("the store", stored(dir.path(), &out))] {
        let progress = of_type(&events, "StepProgress");
        assert!(
            !progress.is_empty() && progress.len() <= most,
            "{what}: {} progress events of {SENT} sent (at most {most})",
            progress.len()
        );
        for p in &progress {
            let message = p["message"].as_str().unwrap_or_default();
            assert!(message.len() <= 1024 + '…'.len_utf8(), "{what}: a progress message of {} bytes", message.len());
        }
        let noted = notes(&events, "progress notifications dropped from server faulty");
        assert_eq!(noted.len(), 1, "{what}: one note of what was dropped: {noted:?}");
    }
}

#[test]
fn a_flood_of_questions_is_capped_per_call_and_noted_once() {
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, json!({ "ask": { "ok": true } }).to_string()).unwrap();
    let steps = json!([
        { "id": "ask", "kind": "tool", "server": "faulty", "tool": "flood_questions", "args": { "count": 300 } },
        { "id": "after", "kind": "tool", "server": "faulty", "tool": "echo", "args": { "message": "done" } }
    ]);
    let (out, events, _) = run(dir.path(), steps, &["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (what, events) in [("--events", events), ("the store", stored(dir.path(), &out))] {
        let asked = of_type(&events, "StepWaiting");
        assert_eq!(asked.len(), 32, "{what}: the questions recorded are the call's first 32 ({envelope})");
        let noted = notes(&events, "268 questions from server faulty declined");
        assert_eq!(noted.len(), 1, "{what}: one note of what was declined: {noted:?}");
    }
}
