//! Tool calls run as tasks (MCP `io.modelcontextprotocol/tasks`) against a server nobody
//! here wrote: `server-everything`'s `simulate-research-query` (`execution.taskSupport:
//! "required"`, four stages of 1 s, each with a status message, `pollInterval` 1 s) over
//! stdio — the task is created, its handle reported, `tasks/get` polled, the status
//! messages reach the progress sink, the result comes from `tasks/result`; cancelling
//! sends `tasks/cancel`; resuming polls the same task and a task the server does not know
//! fails with `TASK_LOST` without calling the tool. The tool is called as a task from the
//! first call: its listing says so (counted on the server's side by
//! `tests/servers/count_calls.mjs`, a stdio proxy).

use crate::support::{config, node, npm_server, pool, progress_events, text, tool};
use mcpflow_engine::{Progress, TaskHandle, TaskSink};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A task sink that keeps the handles it is told.
fn handles() -> (TaskSink, Arc<Mutex<Vec<TaskHandle>>>) {
    let seen: Arc<Mutex<Vec<TaskHandle>>> = Arc::default();
    let sink = seen.clone();
    let started: TaskSink = Arc::new(move |handle| {
        sink.lock().unwrap().push(handle);
        Box::pin(async {})
    });
    (started, seen)
}

fn everything() -> mcpflow_mcp::Pool {
    pool(vec![("everything", node("server-everything", &["stdio"]))])
}

/// `server-everything` behind the proxy that writes each `tools/call` it passes into `calls`.
fn everything_counted(calls: &std::path::Path) -> mcpflow_mcp::Pool {
    let proxy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers/count_calls.mjs");
    let args = [proxy.display().to_string(), calls.display().to_string(), "node".to_owned()]
        .into_iter()
        .chain([npm_server("server-everything").display().to_string(), "stdio".to_owned()]);
    pool(vec![("everything", config(json!({ "command": "node", "args": args.collect::<Vec<_>>() })))])
}

#[tokio::test]
async fn server_everything_research_query_runs_as_a_task_with_its_stages_as_progress() {
    let dir = tempfile::tempdir().unwrap();
    let calls = dir.path().join("calls.txt");
    let pool = everything_counted(&calls);
    let (started, handles) = handles();
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = progress.clone();
    let mut call = tool(Some("everything"), "simulate-research-query", json!({"topic": "tides"}));
    call.progress = Some(Arc::new(move |p| sink.lock().unwrap().push(p)));
    call.tasks.started = Some(started);
    let result = pool.call(call).await.unwrap();
    assert!(text(&result).contains("# Research Report: tides"), "{result}");
    let handles = handles.lock().unwrap().clone();
    assert_eq!(handles.len(), 1, "{handles:?}");
    assert_eq!(handles[0].server, "everything");
    assert!(!handles[0].task_id.is_empty());
    // Each of the four stages was seen while polling: the result was waited for, not
    // taken early.
    let messages: Vec<String> = progress.lock().unwrap().iter().filter_map(|p| p.message.clone()).collect();
    for stage in ["Gathering sources...", "Analyzing content...", "Synthesizing findings...", "Generating report..."] {
        assert!(messages.iter().any(|m| m == stage), "no `{stage}` in {messages:?}");
    }
    // One notification per change, counted up.
    let counts: Vec<f64> = progress.lock().unwrap().iter().map(|p| p.progress).collect();
    assert!(counts.windows(2).all(|w| w[1] > w[0]), "{counts:?}");
    pool.shutdown().await;
    // The listing says `taskSupport: "required"`: one `tools/call` in all, as a task from
    // the first (no plain call refused first).
    let calls = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(calls, "simulate-research-query as a task\n");
}

#[tokio::test]
async fn cancelling_a_task_step_sends_tasks_cancel_and_resuming_a_lost_task_fails_without_calling() {
    let pool = everything();
    let (started, handles) = handles();
    let mut call = tool(Some("everything"), "simulate-research-query", json!({"topic": "cancel me"}));
    call.tasks.started = Some(started);
    // The task's first status, polled with `tasks/get`: it is working on the server.
    let (sink, mut first_status) = progress_events();
    call.progress = Some(sink);
    let cancel = call.cancel.clone();
    let running = tokio::spawn({
        let pool = pool.clone();
        async move { pool.call(call).await }
    });
    let status = tokio::time::timeout(Duration::from_secs(30), first_status.recv()).await;
    assert!(matches!(status, Ok(Some(_))), "the task never reported a status: {status:?}");
    assert_eq!(handles.lock().unwrap().len(), 1, "the task was reported before it was polled");
    cancel.cancel();
    let error = running.await.unwrap().unwrap_err();
    assert_eq!(error.code(), "CANCELLED", "{error}");

    // The server heard `tasks/cancel`: asked about the same task, it says `cancelled`. The
    // call returned at once and `tasks/cancel` follows on its own; resuming polls the task
    // until it ends, and it ends `cancelled` once that lands, seconds before its last stage.
    let handle = handles.lock().unwrap()[0].clone();
    let mut again = tool(None, "simulate-research-query", json!({"topic": "cancel me"}));
    again.tasks.resume = Some(handle.clone());
    let error = pool.call(again).await.unwrap_err();
    assert_eq!(error.code(), "TASK_CANCELLED", "{error}");
    assert!(error.to_string().contains(&handle.task_id), "{error}");

    // A task the server does not know: `TASK_LOST`, naming it, and the tool is not called.
    let lost = TaskHandle { server: "everything".into(), task_id: "no-such-task".into(), started_at: String::new() };
    let mut resumed = tool(Some("everything"), "simulate-research-query", json!({"topic": "x"}));
    resumed.tasks.resume = Some(lost);
    let error = pool.call(resumed).await.unwrap_err();
    assert_eq!(error.code(), "TASK_LOST", "{error}");
    let message = error.to_string();
    assert!(message.contains("no-such-task") && message.contains("run the workflow again"), "{message}");
    pool.shutdown().await;
}

#[tokio::test]
async fn resuming_polls_the_same_task_to_its_result() {
    let pool = everything();
    let (started, handles) = handles();
    let mut first = tool(Some("everything"), "simulate-research-query", json!({"topic": "resumed"}));
    first.tasks.started = Some(started);
    // The first caller vanishes as a killed process does: its future is neither polled
    // again nor dropped (a dropped call cancels its task), once the handle is known.
    let mut running = Box::pin(pool.call(first));
    tokio::select! {
        done = &mut running => panic!("the task ended before its handle was seen: {done:?}"),
        () = async {
            while handles.lock().unwrap().is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        } => {}
    }
    std::mem::forget(running);
    let handle = handles.lock().unwrap()[0].clone();
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = progress.clone();
    let mut resumed = tool(Some("everything"), "simulate-research-query", json!({"topic": "ignored"}));
    resumed.tasks.resume = Some(handle);
    resumed.progress = Some(Arc::new(move |p| sink.lock().unwrap().push(p)));
    let result = pool.call(resumed).await.unwrap();
    // The task's own topic: the tool was not called again with the new arguments.
    assert!(text(&result).contains("# Research Report: resumed"), "{result}");
    assert!(progress.lock().unwrap().iter().any(|p| p.message.as_deref() == Some("Generating report...")));
    pool.shutdown().await;
}
