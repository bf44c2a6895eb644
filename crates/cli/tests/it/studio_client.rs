//! The studio's client interface (`mcpflow_service::api::Api`) with real processes: the
//! remote one starts `mcpflow service` when none answers and gets the same answers and
//! errors as the in-process one for the same calls, a run's events included; when the
//! service is killed under it, it says so, starts a service again, reconnects and
//! re-subscribes, and the run it had in flight is `interrupted` — nothing else lost.

use mcpflow_app::{App, AppOptions, Change};
use mcpflow_service::api::dto::{CommandError, Json, RunStarted};
use mcpflow_service::api::{Api, EventStream, Local, Remote, Status};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

fn echo_config() -> Json {
    Json(json!({ "command": mcpflow_testkit::binary().display().to_string(), "args": ["echo"] }))
}

/// A remote client of `home`'s service, started on demand with the `mcpflow` under test.
async fn remote(home: &Path) -> Remote {
    Remote::connect(home, "test", Some(env!("CARGO_BIN_EXE_mcpflow").into())).await.expect("a service starts")
}

fn pid_of(status: &Status) -> Option<u32> {
    match status {
        Status::Connected { pid } => Some(*pid),
        Status::Reconnecting { .. } => None,
    }
}

/// Kills the service with SIGKILL (its servers see their input close and exit).
fn kill_service(pid: u32) {
    let status = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
    assert!(status.success(), "kill -KILL {pid}");
}

/// Every batch of a run until its last: the events' types in order, and whether a
/// batch marked `done` ended it (else the source went away).
async fn drain(mut events: EventStream) -> (Vec<String>, bool) {
    let mut types = Vec::new();
    let mut done = false;
    while let Some(batch) = tokio::time::timeout(Duration::from_secs(30), events.next_batch()).await.expect("a batch") {
        for event in batch.events.0.as_array().into_iter().flatten() {
            types.push(event["type"].as_str().unwrap_or_default().to_owned());
        }
        done = batch.done;
    }
    (types, done)
}

fn blueprint(id: &str, ms: u64) -> Json {
    Json(json!({ "blueprint": 1, "id": id, "steps": [
        { "id": "hello", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi" } },
        { "id": "wait", "kind": "tool", "server": "echo", "tool": "sleep", "args": { "ms": ms } } ] }))
}

/// The same calls, in order, on one API; what they answered, with what differs between
/// two data folders (times, run ids, paths) left out.
async fn script(api: &Api) -> Value {
    let code = |e: CommandError| json!({ "code": e.code, "diagnostics": e.diagnostics.len() });
    let servers = api.put_server("echo".into(), echo_config()).await.unwrap();
    let approved = api.approve_server("echo".into()).await.unwrap();
    let saved = api.save_blueprint(blueprint("pair", 10)).await.unwrap();
    let invalid = api.save_blueprint(Json(json!({ "blueprint": 1, "id": "bad", "steps": [{ "id": "x" }] }))).await;
    let missing = api.get_blueprint("nope".into()).await;
    let listed = api.list_blueprints().await.unwrap();
    let diagnostics = api.validate_blueprint(Json(json!({ "blueprint": 1, "steps": [] }))).await.unwrap();
    let (RunStarted { run_id, blueprint: started_of }, events) =
        api.start_run(blueprint("pair", 10), Json(json!({})), false, Vec::new()).await.unwrap();
    let (types, done) = drain(events).await;
    let detail = api.get_run(run_id.clone()).await.unwrap();
    let history = api.list_runs("pair".into(), 10).await.unwrap();
    let not_running = api.control_run(run_id.clone(), mcpflow_service::api::dto::RunAction::Pause).await;
    json!({
        "servers": servers.iter().map(|s| json!([s.name, s.transport, s.approved])).collect::<Vec<_>>(),
        "approved": approved.contains("mcpflow-testkit"),
        "saved": [saved.info.id, saved.info.rev, saved.warnings.len()],
        "invalid": invalid.err().map(code),
        "missing": missing.err().map(code),
        "listed": listed.iter().map(|b| b.id.clone()).collect::<Vec<_>>(),
        "diagnostics": diagnostics.iter().map(|d| d.code.clone()).collect::<Vec<_>>(),
        "started_of": started_of,
        "events": types,
        "done": done,
        "status": detail.info.status,
        "trigger": detail.info.trigger,
        "envelope": detail.envelope.as_ref().map(|e| (e.0["status"].clone(), e.0["output"].clone())),
        "history": history.iter().map(|r| r.id == run_id).collect::<Vec<_>>(),
        "not_running": not_running.err().map(code),
    })
}

#[test]
fn through_the_service_the_studios_calls_answer_as_they_do_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let (local, remote_answers, pid) = rt.block_on(async {
        let app = App::open(&dir.path().join("local"), AppOptions::default()).unwrap();
        let local = script(&Api::Local(Local::new(app.clone()))).await;
        app.shutdown().await;
        let home = dir.path().join("shared");
        let remote = remote(&home).await;
        let pid = pid_of(&remote.status().borrow()).expect("connected");
        let answers = script(&Api::Remote(remote.clone())).await;
        remote.close();
        (local, answers, pid)
    });
    kill_service(pid);
    assert_eq!(remote_answers, local, "the service answers as the studio's own process does");
    // And the answers are what the calls should give (not merely equal).
    assert_eq!(local["invalid"]["code"], "BLUEPRINT_INVALID");
    assert!(local["invalid"]["diagnostics"].as_u64() > Some(0), "{local}");
    assert_eq!(local["missing"]["code"], "BLUEPRINT_NOT_FOUND");
    assert_eq!(local["not_running"]["code"], "RUN_NOT_ACTIVE");
    assert_eq!(local["status"], "succeeded");
    assert_eq!(local["done"], true);
    let events = local["events"].as_array().unwrap();
    assert!(events.len() >= 6 && events.first() == Some(&json!("RunStarted")), "{local}");
    assert_eq!(local["history"], json!([true]));
    assert_eq!(local["envelope"], json!(["succeeded", { "slept_ms": 10 }]), "{local}");
}

#[test]
fn a_service_killed_under_the_studio_client_is_started_again_and_the_run_it_had_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let rt = runtime();
    let last_pid = rt.block_on(async {
        let remote = remote(&home).await;
        let api = Api::Remote(remote.clone());
        let mut status = remote.status();
        let first = pid_of(&status.borrow_and_update()).expect("connected");
        api.put_server("echo".into(), echo_config()).await.unwrap();
        api.approve_server("echo".into()).await.unwrap();
        api.save_blueprint(blueprint("long", 30_000)).await.unwrap();
        let mut changes = api.subscribe_changes();
        let (started, events) =
            api.start_run(blueprint("long", 30_000), Json(json!({})), false, Vec::new()).await.unwrap();

        kill_service(first);

        // The run's stream ends without a last batch: its source went away.
        let (types, done) = drain(events).await;
        assert!(!done, "a run whose service died did not end by itself: {types:?}");
        // The client says so, then is connected to a new service.
        let mut saw_reconnecting = false;
        let second = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                match status.borrow_and_update().clone() {
                    Status::Reconnecting { message } => {
                        assert!(message.contains(&format!("pid {first}")), "{message}");
                        saw_reconnecting = true;
                    }
                    Status::Connected { pid } if pid != first => return pid,
                    Status::Connected { .. } => {}
                }
                status.changed().await.unwrap();
            }
        })
        .await
        .expect("reconnected within 30 s");
        assert!(saw_reconnecting, "the status said nothing of the service going away");
        // Re-subscribed: told to read again what may have changed, and hears new changes.
        let mut heard = Vec::new();
        let told = |heard: &[Change]| {
            heard.iter().any(|c| matches!(c, Change::Blueprints)) && heard.iter().any(|c| matches!(c, Change::Servers))
        };
        while !told(&heard) {
            let change = tokio::time::timeout(Duration::from_secs(10), changes.recv()).await;
            heard.push(change.expect("told of the reconnection").unwrap());
        }
        api.save_blueprint(blueprint("after", 10)).await.unwrap();
        let next = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match changes.recv().await.unwrap() {
                    Change::Blueprints => return,
                    _ => continue,
                }
            }
        });
        next.await.expect("a save after the reconnection is heard");

        // Nothing else is lost: the run is interrupted, the blueprints and servers are there.
        let run = api.get_run(started.run_id.clone()).await.unwrap();
        assert_eq!(run.info.status, "interrupted");
        let ids: Vec<String> = api.list_blueprints().await.unwrap().into_iter().map(|b| b.id).collect();
        assert!(ids.contains(&"long".to_owned()) && ids.contains(&"after".to_owned()), "{ids:?}");
        assert!(api.list_servers().await.unwrap().iter().any(|s| s.name == "echo" && s.approved));
        remote.close();
        second
    });
    kill_service(last_pid);
}
