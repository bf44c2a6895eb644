//! The team's engine, measured (issue 34, item 6): `mcpflow worker`s on a store in
//! PostgreSQL (a throwaway cluster of `mcpflow_testkit::postgres`, on a Unix socket) run
//! queued runs of a three-step blueprint — a transform, a 10 ms `sleep` on the echo
//! fixture, a transform — at 1, 2 and 4 workers (`--concurrency 4` each). Two phases per
//! worker count, each on a fresh database:
//!
//! - **throughput**: N runs queued at once; runs/minute = N over the time from the first
//!   queued to the last finished;
//! - **latency**: runs queued at 2,000 a minute (one every 30 ms, the goal's rate);
//!   queue-to-start p50 and p95 = the run's `started_at` (when its worker started it)
//!   minus its `queued_at` (when it was queued), both read from the database.
//!
//! `cargo bench -p mcpflow-cli --bench workers` (release; prints a table). Under `cargo
//! test --benches` it runs one small round at one worker, so CI sees it work.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout, clippy::print_stderr)]

use mcpflow_store::{RecordStatus, RunRecord, Store};
use mcpflow_testkit::postgres::Cluster;
use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The goal's arrival rate: 2,000 runs a minute.
const PACE: Duration = Duration::from_millis(30);

fn blueprint() -> Value {
    json!({ "blueprint": 1, "id": "bench", "steps": [
        { "id": "first", "kind": "transform", "value": "{{ length(`[1, 2, 3]`) }}" },
        { "id": "nap", "kind": "tool", "server": "echo", "tool": "sleep", "args": { "ms": 10 }, "after": ["first"] },
        { "id": "last", "kind": "transform", "value": "{{ nap.slept_ms }}", "after": ["nap"] }
    ] })
}

fn queued() -> RunRecord {
    RunRecord {
        id: mcpflow_app::headless::new_run_id(),
        blueprint: "bench".to_owned(),
        status: RecordStatus::Queued,
        trigger: "cli".to_owned(),
        client: None,
        inputs: json!({}),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        finished_at: None,
        envelope: None,
        blueprint_rev: None,
        definition: Some(blueprint()),
        rerun_of: None,
        resumed_from: None,
        debug: false,
        paused_ms: None,
    }
}

/// A worker process, killed when dropped.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a worker on `url` and returns once it says it is on the queue.
fn worker(url: &str, home: &Path, servers: &Path) -> Worker {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["--db", url, "worker", "--concurrency", "4", "--poll", "200ms", "--allow-all-servers", "--servers"])
        .arg(servers)
        .env("MCPFLOW_HOME", home)
        .env("RUST_LOG", "error")
        .env_remove("MCPFLOW_DB")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the worker ended before it was on the queue").unwrap();
        if line.contains("up to") {
            break;
        }
    }
    // Keep reading, so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Worker(child)
}

/// Waits until `n` runs have succeeded (none failed), for at most ten minutes.
fn wait_done(db: &mut postgres::Client, n: i64) {
    let start = Instant::now();
    loop {
        let row = db
            .query_one(
                "SELECT count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status NOT IN
                 ('queued', 'running', 'succeeded')) FROM runs",
                &[],
            )
            .unwrap();
        let (done, bad): (i64, i64) = (row.get(0), row.get(1));
        assert_eq!(bad, 0, "runs ended otherwise than succeeded");
        if done >= n {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(600), "{done} of {n} runs finished in ten minutes");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Queue-to-start of every run, in milliseconds, sorted.
fn latencies(db: &mut postgres::Client) -> Vec<f64> {
    let mut all: Vec<f64> = db
        .query(
            "SELECT extract(epoch FROM (record->>'started_at')::timestamptz - queued_at)::float8 * 1000 FROM runs",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    all.sort_by(f64::total_cmp);
    all
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// A fresh database with its workers.
struct Round {
    db: postgres::Client,
    store: Store,
    _workers: Vec<Worker>,
}

fn round(cluster: &Cluster, workers: usize, dir: &Path, servers: &Path) -> Round {
    let url = cluster.database();
    let store = Store::connect_shared(&url).unwrap().store;
    let home = dir.join(format!("home-{}", mcpflow_app::headless::new_run_id()));
    let workers = (0..workers).map(|_| worker(&url, &home, servers)).collect();
    let db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    Round { db, store, _workers: workers }
}

fn main() {
    let measured = std::env::args().any(|a| a == "--bench");
    let Some(cluster) = Cluster::shared() else { return };
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers.json");
    let echo = json!({ "mcpServers": { "echo": { "command": mcpflow_testkit::binary(), "args": ["echo"] } } });
    std::fs::write(&servers, echo.to_string()).unwrap();
    let (counts, burst, paced): (&[usize], i64, i64) = if measured { (&[1, 2, 4], 1_000, 400) } else { (&[1], 20, 10) };

    println!("workers | runs/minute ({burst} queued at once) | queue-to-start p50 / p95 ({paced} at 2,000/min)");
    for &workers in counts {
        // Throughput: a burst, from the first queued to the last finished.
        let mut r = round(cluster, workers, dir.path(), &servers);
        let start = Instant::now();
        for _ in 0..burst {
            r.store.enqueue(&queued()).unwrap();
        }
        wait_done(&mut r.db, burst);
        let per_minute = burst as f64 / start.elapsed().as_secs_f64() * 60.0;
        drop(r);

        // Latency: at the goal's rate.
        let mut r = round(cluster, workers, dir.path(), &servers);
        let start = Instant::now();
        for i in 0..paced {
            let due = start + PACE * u32::try_from(i).unwrap();
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            r.store.enqueue(&queued()).unwrap();
        }
        wait_done(&mut r.db, paced);
        let waits = latencies(&mut r.db);
        println!(
            "{workers} | {per_minute:.0} | {:.0} ms / {:.0} ms",
            percentile(&waits, 0.5),
            percentile(&waits, 0.95)
        );
    }
}
