//! Debug runs in the record: marked `debug`, with the time they sat paused
//! (`paused_ms`, from the events' `at_ms`), so the history can show active time.

use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::{Control, EventKind, RunStatus};
use mcpflow_store::Store;
use serde_json::json;
use std::time::Duration;

fn app() -> App {
    App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debug_run_records_the_time_it_sat_paused() {
    let app = app();
    app.save_blueprint(&json!({ "blueprint": 1, "id": "two", "steps": [
        { "id": "a", "kind": "transform", "value": 1 },
        { "id": "b", "kind": "transform", "value": "{{ a }}" }
    ] }))
    .unwrap();

    // Run: not Debug, never paused.
    let env = app.run_to_end(StartRun::new(Target::Stored("two".into()), json!({}), Trigger::Studio)).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded);
    let plain = app.runs(Some("two"), 10).unwrap().into_iter().find(|r| r.id == env.run_id).unwrap();
    assert!(!plain.debug);
    assert_eq!(plain.paused_ms, None);

    // Debug with a breakpoint on `b`: it is left paused 300 ms (the pause being measured,
    // not a wait for something) before going on.
    let mut spec = StartRun::new(Target::Stored("two".into()), json!({}), Trigger::Studio);
    spec.breakpoints = ["b".to_owned()].into();
    let mut started = app.start_run(spec).unwrap();
    let run_id = started.run_id.clone();
    loop {
        let e = started.events.recv().await.unwrap();
        if matches!(e.kind, EventKind::RunPaused { .. }) {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.control(&run_id, Control::Resume).unwrap();
    let env = started.finish().await;
    assert_eq!(env.status, RunStatus::Succeeded);
    let debug = app.runs(Some("two"), 10).unwrap().into_iter().find(|r| r.id == run_id).unwrap();
    assert!(debug.debug);
    let paused = debug.paused_ms.expect("the paused time is recorded");
    // It sat paused at least the 300 ms it was left paused, within the run's time.
    assert!((300..=env.duration_ms).contains(&paused), "paused {paused} ms of {} ms", env.duration_ms);
}
