//! Fault tests with the `faulty` fixture: crashes, hangs, garbage, huge results and
//! broken servers.

use crate::{processes_tagged, run, setup};
use mcpflow_engine::RunStatus;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_restarts_the_server_and_the_retry_succeeds() {
    let s = setup(json!({}));
    let marker = s.dir.path().join("crashed").display().to_string();
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "crash", "steps": [
        { "id": "c", "kind": "tool", "server": "faulty", "tool": "crash_once", "args": { "marker": marker },
          "retry": { "attempts": 2, "delay_ms": 50 } }
    ] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output["crashed_before"], json!(true));
    assert!(
        ran.events
            .iter()
            .any(|e| matches!(&e.kind, mcpflow_engine::EventKind::StepRetrying { step, .. } if step == "c"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_hits_the_step_timeout_and_no_process_is_left() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let tag = format!("hang-{}", std::process::id());
    let s = setup(json!({ "hung": { "command": bin, "args": ["faulty"], "env": { "MCPFLOW_TEST_TAG": tag } } }));
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "hang", "steps": [
        { "id": "h", "kind": "tool", "server": "hung", "tool": "hang", "timeout_ms": 300 }
    ] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Failed);
    assert_eq!(ran.envelope.errors[0].code, "STEP_TIMEOUT");
    assert!(ran.envelope.duration_ms < 3_000, "{}", ran.envelope.duration_ms);
    assert!(processes_tagged(&tag).is_empty(), "processes left: {:?}", processes_tagged(&tag));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_are_retried_like_any_failure() {
    let s = setup(json!({}));
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "flaky", "steps": [
        { "id": "f", "kind": "tool", "server": "faulty", "tool": "fail_n_times", "args": { "key": "k", "n": 2 },
          "retry": { "attempts": 3, "delay_ms": 10 } }
    ] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output, json!({ "key": "k", "attempts": 3 }));
    assert_eq!(ran.envelope.summary.tool_calls, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_on_stdout_does_not_break_the_call() {
    let s = setup(json!({}));
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "garbage", "steps": [
        { "id": "g", "kind": "tool", "server": "faulty", "tool": "garbage" },
        { "id": "e", "kind": "tool", "server": "faulty", "tool": "echo", "args": { "message": "still here" } },
        // Time for the stray line (its own path: stdout reader → log router) to arrive.
        { "id": "w", "kind": "wait", "ms": 300, "after": ["e"] }
    ], "output": "{{ e }}" }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output, json!("still here"));
    // A headless run hears its servers: the stray line is in its log.
    assert!(
        ran.events.iter().any(|e| matches!(&e.kind, mcpflow_engine::EventKind::Log { message, .. }
            if message.starts_with("[faulty]") && message.contains("this line is not JSON-RPC"))),
        "the stray line is logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_result_is_a_clear_error() {
    let s = setup(json!({}));
    // The size limit is under test; the step's timeout is only a guard against a hang
    // (a loaded machine reads 80 MB slowly).
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "huge", "steps": [
        { "id": "h", "kind": "tool", "server": "faulty", "tool": "huge", "args": { "mb": 80 }, "timeout_ms": 120_000 },
        { "id": "e", "kind": "tool", "server": "faulty", "tool": "echo", "args": { "message": "after" }, "after": [] }
    ], "on_error": "continue" }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Partial, "{:?}", ran.envelope);
    let e = &ran.envelope.errors[0];
    assert_eq!(e.step, "h");
    assert!(["OUTPUT_TOO_LARGE", "PROTOCOL_ERROR"].contains(&e.code.as_str()), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_broken_server_leaves_the_other_servers_steps_working() {
    let s = setup(json!({ "broken": { "command": "/nonexistent/mcp-server", "args": [] } }));
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "broken", "on_error": "continue", "steps": [
        { "id": "bad", "kind": "tool", "server": "broken", "tool": "anything", "after": [] },
        { "id": "good", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "fine" }, "after": [] }
    ], "output": "{{ good }}" }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Partial);
    assert_eq!(ran.envelope.output, json!("fine"));
    assert_eq!(ran.envelope.errors.len(), 1);
    assert_eq!(ran.envelope.errors[0].step, "bad");
}

#[test]
fn the_process_check_sees_a_tagged_live_child() {
    let tag = format!("detector-{}", std::process::id());
    let mut child = std::process::Command::new(mcpflow_testkit::binary())
        .arg("echo")
        .env("MCPFLOW_TEST_TAG", &tag)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert_eq!(processes_tagged(&tag), [child.id()]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(processes_tagged(&tag).is_empty());
}

/// In the app (studio, `serve`, `run --store`) servers are shared by every run; what a
/// server writes besides its MCP messages still reaches the runs that use it as `Log`
/// events, recorded with the run — and not runs that do not use that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_puts_a_servers_stray_output_into_the_log_of_the_run_calling_it() {
    use mcpflow_app::runs::{StartRun, Target, Trigger};
    use mcpflow_app::{App, AppOptions};
    use mcpflow_store::Store;

    let s = setup(json!({}));
    let options = AppOptions { server_files: vec![s.servers.clone()], allow_all: true, ..AppOptions::default() };
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), options).unwrap();
    let uses = json!({ "blueprint": 1, "id": "garbage", "steps": [
        { "id": "g", "kind": "tool", "server": "faulty", "tool": "garbage" },
        { "id": "e", "kind": "tool", "server": "faulty", "tool": "echo", "args": { "message": "after" } },
        // The stray line travels on its own path (stdout reader → router → run): give it
        // time to arrive while the run is still going.
        { "id": "w", "kind": "wait", "ms": 300 }
    ] });
    // A run of one echo step on `server`, paused before it: active, and not calling.
    let paused_on = |id: &str, server: &str| {
        let doc = json!({ "blueprint": 1, "id": id, "steps": [
            { "id": "x", "kind": "tool", "server": server, "tool": "echo", "args": { "message": "x" } }
        ] });
        let mut spec = StartRun::new(Target::Inline(doc), json!({}), Trigger::Studio);
        spec.paused = true;
        app.start_run(spec).unwrap()
    };
    // A run that does not use `faulty`.
    let other = paused_on("other", "echo");
    // A run that names `faulty` too: the line was written while the other run was
    // calling, so it is not this one's.
    let idle = paused_on("idle", "faulty");
    let env = app.run_to_end(StartRun::new(Target::Inline(uses), json!({}), Trigger::Studio)).await.unwrap();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    let logs = |run: &str| crate::recorded_logs(&app, run);
    let mine = logs(&env.run_id);
    assert!(
        mine.iter().any(|m| m.starts_with("[faulty]") && m.contains("this line is not JSON-RPC")),
        "the run's log has the stray line: {mine:?}"
    );
    let theirs = logs(&other.run_id);
    assert!(!theirs.iter().any(|m| m.contains("[faulty]")), "a run not using faulty hears nothing of it: {theirs:?}");
    assert!(
        !logs(&idle.run_id).iter().any(|m| m.contains("[faulty]")),
        "a run using faulty but not calling it now hears nothing: {:?}",
        logs(&idle.run_id)
    );
    for run in [other, idle] {
        app.control(&run.run_id, mcpflow_engine::Control::Cancel).unwrap();
        run.finish().await;
    }
}
