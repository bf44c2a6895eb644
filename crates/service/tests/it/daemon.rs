//! The scheduler loop over a real store: scheduled runs fire, never overlap, and a fire
//! missed while mcpflow was closed runs once on start. (The planner's exact instants,
//! across timezones and DST, are in `schedule.rs` with an injected clock.)

use mcpflow_app::{App, AppOptions};
use mcpflow_service::schedule::Trigger;
use mcpflow_store::{RecordStatus, Store};
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn app(store: Store) -> App {
    App::with_store(store, Vec::new(), AppOptions::default()).unwrap()
}

/// Waits until `done` holds, looking every 20 ms; 60 s is only the failure guard.
async fn until(done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "the schedules did not get there within 60 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_runs_fire_and_a_run_in_flight_blocks_the_next_slot() {
    let app = app(Store::open_temporary().unwrap());
    app.save_blueprint(&json!({ "blueprint": 1, "id": "tick", "schedule": { "every": "1s" },
        "steps": [{ "id": "slow", "kind": "wait", "ms": 1500 }] }))
        .unwrap();
    let stop = CancellationToken::new();
    let scheduler = tokio::spawn(mcpflow_service::daemon::run_schedules(app.clone(), stop.clone()));
    // Until two runs have finished and a slot was skipped while one was in flight.
    until(|| {
        let finished = app.runs(Some("tick"), 10).unwrap().iter().filter(|r| r.finished_at.is_some()).count();
        let skipped = app.store().schedule_state("tick").unwrap().and_then(|s| s["skipped_overlaps"].as_u64());
        finished >= 2 && skipped >= Some(1)
    })
    .await;
    stop.cancel();
    scheduler.await.unwrap();
    app.shutdown().await;

    let mut runs = app.runs(Some("tick"), 10).unwrap();
    runs.reverse();
    assert!(runs.len() >= 2, "slots at 1 s and 3 s fired: {runs:?}");
    assert!(runs.iter().all(|r| r.trigger == "schedule"));
    assert_eq!(runs[0].status, RecordStatus::Succeeded);
    for pair in runs.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let a_end = a.finished_at.as_deref().expect("the earlier run finished");
        assert!(a_end <= b.started_at.as_str(), "runs of one blueprint never overlap: {a_end} > {}", b.started_at);
    }
    let state = app.store().schedule_state("tick").unwrap().expect("the state is kept in the store");
    assert!(state["skipped_overlaps"].as_u64().unwrap() >= 1, "the 2 s slot came while a run was in flight: {state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fire_missed_while_closed_runs_once_on_start() {
    let dir = tempfile::tempdir().unwrap();
    let opened = Store::open(dir.path()).unwrap();
    let store = opened.store;
    let now = chrono::Utc::now();
    // mcpflow was closed for three hours of an hourly schedule: three slots were missed.
    let state = json!({
        "trigger": Trigger::every("1h").unwrap().to_string(),
        "anchor": now - chrono::Duration::minutes(200),
        "next_fire": now - chrono::Duration::minutes(140),
        "last_fire": now - chrono::Duration::minutes(200),
        "skipped_overlaps": 0
    });
    store.put_schedule_state("hourly", &state).unwrap();
    let app = app(store);
    app.save_blueprint(&json!({ "blueprint": 1, "id": "hourly", "schedule": { "every": "1h", "inputs": { "n": 7 } },
        "inputs": { "type": "object", "properties": { "n": { "type": "integer" } } },
        "steps": [{ "id": "echo", "kind": "transform", "value": "{{ inputs.n }}" }] }))
        .unwrap();
    let stop = CancellationToken::new();
    let scheduler = tokio::spawn(mcpflow_service::daemon::run_schedules(app.clone(), stop.clone()));
    // Until the missed slots' run has finished and the schedule has moved past now.
    until(|| {
        let finished = app.runs(Some("hourly"), 10).unwrap().iter().any(|r| r.finished_at.is_some());
        let state = app.store().schedule_state("hourly").unwrap().unwrap_or_default();
        let next = serde_json::from_value::<chrono::DateTime<chrono::Utc>>(state["next_fire"].clone());
        finished && next.is_ok_and(|next| next > now)
    })
    .await;
    stop.cancel();
    scheduler.await.unwrap();
    app.shutdown().await;

    let runs = app.runs(Some("hourly"), 10).unwrap();
    assert_eq!(runs.len(), 1, "three missed slots fire once: {runs:?}");
    assert_eq!(runs[0].status, RecordStatus::Succeeded);
    assert_eq!(runs[0].envelope.as_ref().unwrap().output, json!(7), "the schedule's inputs reach the run");
    let state = app.store().schedule_state("hourly").unwrap().unwrap();
    let next: chrono::DateTime<chrono::Utc> = serde_json::from_value(state["next_fire"].clone()).unwrap();
    assert!(next > now && next <= now + chrono::Duration::hours(1), "the schedule goes on from now: {state}");
}
