//! Servers that write without pause: the pool's own timeouts (`initialize`, a call's
//! deadline) fire on time, and what reaches the log channel is bounded.

use crate::support::{config, configs, tool};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerLog};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::Receiver;

/// Counts what arrives on the log channel, in a task, until the channel closes.
fn count_lines(mut lines: Receiver<ServerLog>) -> tokio::task::JoinHandle<Vec<ServerLog>> {
    tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some(line) = lines.recv().await {
            got.push(line);
        }
        got
    })
}

/// `call`, failing the test if it hangs: the flood must not keep the pool's timers from
/// firing. A guard against a hang, far longer than the timeouts under test.
async fn guarded<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), call).await.expect("the timeout never fired while the server flooded")
}

/// The log saw the burst, the rate after it and a note — never the flood itself.
fn assert_bounded(lines: &[ServerLog], secs: f64) {
    let most = 1000.0 + 100.0 * secs + 10.0;
    assert!((lines.len() as f64) < most, "{} lines reached the log in {secs} s", lines.len());
    assert!(
        lines.iter().any(|l| l.line.contains("lines (") && l.line.contains("dropped from server noise")),
        "no note of dropped lines"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_initialize_timeout_fires_while_the_server_floods_stdout() {
    let (log, lines) = tokio::sync::mpsc::channel(1024);
    let counted = count_lines(lines);
    let noise = config(json!({ "command": "/usr/bin/yes", "args": ["garbage-line-not-json"] }));
    let options = PoolOptions::default().with_log(log).with_connect_timeout(Duration::from_secs(1));
    let pool = Pool::new(configs(vec![("noise", noise)]), Approvals::allow_all(), options);
    let started = Instant::now();
    let err = guarded(pool.call(tool(Some("noise"), "anything", json!({})))).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.code(), "SERVER_START_FAILED", "{err}");
    // The cause is the connect timeout itself (not the end of the flood, nor a parse error).
    assert!(err.to_string().contains("`initialize` within 1000 ms"), "{err}");
    // A lower bound only: the timeout is not cut short. How soon after it the pool answers
    // depends on the machine's load (a flood starving the timer shows as a hang instead).
    assert!(took >= Duration::from_secs(1), "took {took:?}");
    pool.shutdown().await;
    drop(pool);
    assert_bounded(&counted.await.unwrap(), started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_deadline_fires_while_the_server_floods_stderr() {
    let (log, lines) = tokio::sync::mpsc::channel(1024);
    let counted = count_lines(lines);
    let bin = mcpflow_testkit::binary().display().to_string();
    // The faulty fixture answers on stdout while `yes` floods the shared stderr.
    let script = format!("yes garbage-on-stderr >&2 & exec '{bin}' faulty");
    let noise = config(json!({ "command": "/bin/sh", "args": ["-c", script] }));
    let pool = Pool::new(configs(vec![("noise", noise)]), Approvals::allow_all(), PoolOptions::default().with_log(log));
    let started = Instant::now();
    pool.call(tool(Some("noise"), "echo", json!({"message": "up"}))).await.unwrap();
    let mut hang = tool(Some("noise"), "hang", json!({}));
    hang.timeout = Some(Duration::from_secs(1));
    let call = Instant::now();
    let err = guarded(pool.call(hang)).await.unwrap_err();
    let took = call.elapsed();
    assert_eq!(err.code(), "CALL_TIMEOUT", "{err}");
    // The call's own deadline fired (the pool's default is a minute).
    assert!(err.to_string().contains("within 1000 ms"), "{err}");
    // A lower bound only, as above.
    assert!(took >= Duration::from_secs(1), "took {took:?}");
    pool.shutdown().await;
    drop(pool);
    // Lines reach the log until the server is gone: count the time up to then (a busy
    // machine can take a while to stop it), plus a second of slack.
    let secs = started.elapsed().as_secs_f64();
    assert_bounded(&counted.await.unwrap(), secs + 1.0);
}

/// The peak resident memory of this process, in KiB (Linux `/proc/self/status`).
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_flooding_pings_that_never_reads_its_stdin_is_closed_with_answer_queue_full() {
    // The fixture stops reading stdin, then sends 200,000 pings: the first answers fill
    // the pipe, the rest would wait in this process without a bound.
    let deaf = config(json!({ "command": mcpflow_testkit::binary(), "args": ["faulty"], "protocol": "2025-11-25" }));
    let pool = Pool::new(configs(vec![("deaf", deaf)]), Approvals::allow_all(), PoolOptions::default());
    let err = pool.call(tool(Some("deaf"), "flood_pings", json!({ "count": 200_000 }))).await.unwrap_err();
    assert_eq!(err.code(), "ANSWER_QUEUE_FULL", "{err}");
    let message = err.to_string();
    assert!(message.contains("server `deaf`") && message.contains("1024 answers"), "{message}");
    // The next call starts the server again.
    pool.call(tool(Some("deaf"), "echo", json!({ "message": "again" }))).await.unwrap();
    pool.shutdown().await;
    // 1,024 answers of a few hundred bytes each, whatever the server sends.
    let peak = peak_kib();
    assert!(peak < 512 * 1024, "this test process peaked at {peak} KiB");
}
