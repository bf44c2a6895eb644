//! A server that writes without pause, run through the `App` (the path of `serve` and
//! the studio, where log lines are routed to runs): the run hears a bounded number of its
//! lines and a note of the ones dropped. That timeouts still fire on time under a flood is
//! shown by the CLI's `noise` tests and the pool's `flood` tests.

use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::{Control, EventKind, RunStatus};
use mcpflow_store::Store;
use serde_json::json;
use std::time::Instant;
use tokio::sync::broadcast::error::RecvError;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_server_reaches_the_run_as_a_bounded_log_with_a_note_of_what_was_dropped() {
    let options = AppOptions { allow_all: true, ..AppOptions::default() };
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), options).unwrap();
    // The step's timeout is only a guard: the test ends the run itself once the note is in.
    let doc = json!({ "blueprint": 1, "id": "flood",
        "servers": { "noise": { "command": "/usr/bin/yes", "args": ["garbage-line-not-json"] } },
        "steps": [ { "id": "a", "kind": "tool", "server": "noise", "tool": "anything", "timeout_ms": 60_000 } ] });
    let started = Instant::now();
    let mut run = app.start_run(StartRun::new(Target::Inline(doc), json!({}), Trigger::Studio)).unwrap();
    loop {
        match run.events.recv().await {
            Ok(event) => match &event.kind {
                EventKind::Log { message, .. } if message.contains("dropped from server noise") => break,
                EventKind::RunFinished { .. } => panic!("the run ended before a note of dropped lines"),
                _ => {}
            },
            Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => panic!("the run's events ended before a note of dropped lines"),
        }
    }
    app.control(&run.run_id, Control::Cancel).unwrap();
    let run_id = run.run_id.clone();
    let env = run.finish().await;
    let wall = started.elapsed().as_secs_f64();
    assert_eq!(env.status, RunStatus::Cancelled, "{:?}", env.errors);
    // The burst (1,000 lines), then 100 a second and a note every 5 s, never the flood:
    // counted over the run's own lifetime, so a slow machine allows more and never flakes.
    let logs = crate::recorded_logs(&app, &run_id);
    let most = 1000.0 + 100.0 * wall + wall / 5.0 + 100.0;
    assert!((logs.len() as f64) < most, "{} log events recorded in {wall:.1} s", logs.len());
    assert!(logs.iter().any(|l| l.contains("dropped from server noise")), "the note is not in the run's record");
}
