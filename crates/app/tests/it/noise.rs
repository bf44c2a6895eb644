//! A server that writes without pause, run through the `App` (the path of `serve` and
//! the studio, where log lines are routed to runs): the step's timeout fires on time and
//! the run records a bounded number of log events.

use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::RunStatus;
use mcpflow_store::Store;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_server_neither_delays_the_step_timeout_nor_floods_the_run_log() {
    let options = AppOptions { allow_all: true, ..AppOptions::default() };
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), options).unwrap();
    let doc = json!({ "blueprint": 1, "id": "flood",
        "servers": { "noise": { "command": "/usr/bin/yes", "args": ["garbage-line-not-json"] } },
        "steps": [ { "id": "a", "kind": "tool", "server": "noise", "tool": "anything", "timeout_ms": 2000 } ] });
    let env = app.run_to_end(StartRun::new(Target::Inline(doc), json!({}), Trigger::Studio)).await.unwrap();
    assert_eq!(env.status, RunStatus::Failed, "{:?}", env.errors);
    assert_eq!(env.errors[0].code, "STEP_TIMEOUT", "{:?}", env.errors);
    assert!((2000..=2200).contains(&env.duration_ms), "the 2000 ms timeout was handled at {} ms", env.duration_ms);
    let logs = crate::recorded_logs(&app, &env.run_id);
    // The burst (1,000 lines), 100 a second after it, and a note.
    assert!(logs.len() < 1300, "{} log events recorded", logs.len());
    assert!(logs.iter().any(|l| l.contains("dropped from server noise")), "no note of dropped lines");
}
