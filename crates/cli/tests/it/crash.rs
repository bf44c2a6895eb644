//! Crash safety of `mcpflow run --store`: the process is killed with SIGKILL at random
//! points; after each kill the store opens, the run is `interrupted`, its events are a
//! gap-free prefix, and every step whose call reached a server finds the step it depends
//! on recorded as finished (a finished step is durable before a dependent starts).
//!
//! `MCPFLOW_CRASH_CYCLES` sets the number of kills (default 50); a soak:
//! `MCPFLOW_CRASH_CYCLES=1000 cargo test -p mcpflow-cli --test it crash -- --nocapture`.

use crate::repo;
use mcpflow_engine::EventKind;
use mcpflow_store::{RecordStatus, Store};
use serde_json::json;
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::Duration;

const STEPS: usize = 80;

/// A pipeline of `record` calls: step `sK` appends `sK` to `file` and depends on `s(K-1)`.
fn chain(file: &str) -> serde_json::Value {
    let steps: Vec<_> = (0..STEPS)
        .map(|k| {
            json!({ "id": format!("s{k}"), "kind": "tool", "server": "echo", "tool": "record",
            "args": { "file": file, "line": format!("s{k}") } })
        })
        .collect();
    json!({ "blueprint": 1, "id": "chain", "steps": steps })
}

/// A small deterministic generator, so a failing cycle can be replayed.
fn next(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

#[test]
fn sigkill_at_random_points_loses_no_finished_step() {
    let cycles: usize = std::env::var("MCPFLOW_CRASH_CYCLES").ok().and_then(|c| c.parse().ok()).unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    // One undisturbed run measures how long a run takes here; kills land within it.
    let calibrate = dir.path().join("chain-calibrate.json");
    std::fs::write(&calibrate, chain(&dir.path().join("calls-calibrate.txt").display().to_string()).to_string())
        .unwrap();
    let started = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "-q", "--allow-all-servers", "--servers"])
        .arg(&servers)
        .arg(&calibrate)
        .env("MCPFLOW_HOME", &home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let span = u64::try_from(started.elapsed().as_millis()).unwrap_or(1000).max(20);
    let mut seen_runs: HashSet<String> =
        Store::open(&home.join("store")).unwrap().store.runs(None, 10).unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(seen_runs.len(), 1, "the calibration run was recorded");
    let mut seed = 0x5eed_u64;
    let (mut interrupted, mut finished, mut not_started) = (0, 0, 0);
    for cycle in 0..cycles {
        let record = dir.path().join(format!("calls-{cycle}.txt"));
        let file = dir.path().join(format!("chain-{cycle}.json"));
        std::fs::write(&file, chain(&record.display().to_string()).to_string()).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
            .args(["run", "--store", "-q", "--allow-all-servers", "--servers"])
            .arg(&servers)
            .arg(&file)
            .current_dir(repo())
            .env("MCPFLOW_HOME", &home)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(span / 4 + next(&mut seed) % span));
        child.kill().unwrap();
        child.wait().unwrap();

        let opened = Store::open(&home.join("store")).unwrap_or_else(|e| panic!("cycle {cycle}: {e}"));
        let store = opened.store;
        let newest = store.runs(None, 1).unwrap().into_iter().next().filter(|r| !seen_runs.contains(&r.id));
        let calls: Vec<String> =
            std::fs::read_to_string(&record).unwrap_or_default().lines().map(str::to_owned).collect();
        let Some(run) = newest else {
            assert!(calls.is_empty(), "cycle {cycle}: calls reached the server but no run was recorded: {calls:?}");
            not_started += 1;
            continue;
        };
        seen_runs.insert(run.id.clone());
        match run.status {
            RecordStatus::Interrupted => {
                interrupted += 1;
                assert!(opened.interrupted.contains(&run.id), "cycle {cycle}: the open reports the interrupted run");
            }
            RecordStatus::Succeeded => finished += 1,
            other => panic!("cycle {cycle}: a killed run is interrupted (or finished before the kill), not {other:?}"),
        }
        let events = store.events(&run.id).unwrap();
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        let first = seqs.first().copied().unwrap_or(0);
        assert!(
            seqs.iter().enumerate().all(|(i, s)| *s == first + i as u64),
            "cycle {cycle}: the recorded events are a gap-free prefix: {seqs:?}"
        );
        let done: HashSet<&str> = events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::StepFinished { step, .. } => Some(step.as_str()),
                _ => None,
            })
            .collect();
        for call in &calls {
            let k: usize = call[1..].parse().unwrap();
            if k > 0 {
                let dep = format!("s{}", k - 1);
                assert!(
                    done.contains(dep.as_str()),
                    "cycle {cycle}: `{call}` reached the server, so `{dep}` must be recorded as finished; recorded: {done:?}"
                );
            }
        }
        if run.status == RecordStatus::Succeeded {
            assert_eq!(done.len(), STEPS, "cycle {cycle}: a finished run has every step");
        }
        drop(store);
    }
    eprintln!(
        "run span {span} ms; {cycles} kills: {interrupted} interrupted mid-run, {finished} finished first, {not_started} before the run began"
    );
    assert!(interrupted >= cycles / 4, "kills land mid-run ({interrupted} of {cycles}, run span {span} ms)");
}
