//! The `api` session: JSON-RPC 2.0 requests for the application's use cases, one per
//! line, each at most [`MAX_REQUEST`] bytes, answered in order; and for a client that
//! sent `subscribe`, `notifications/changed` lines when the stored blueprints or servers
//! change.
//!
//! | method | params | result |
//! |---|---|---|
//! | `blueprints/list` | — | the stored blueprints' metadata (`BlueprintMeta`) |
//! | `blueprints/get` | `id` | `{meta, json}` |
//! | `runs/list` | `blueprint?`, `limit?` (20) | run records, newest first |
//! | `runs/get` | `run_id` | `{record, events}` |
//! | `runs/active` | — | `[{run_id, blueprint}]` of the runs in flight |
//! | `questions/list` | `run_id?` | `[{run_id, blueprint, question}]`: the open questions of waiting runs |
//! | `store/export` | — | the whole store as a backup document |
//! | `store/import` | `doc`: a blueprint or a backup | `{report}`: what was added, in words |
//! | `service/stop` | — | `{stopping, pid}`: the service exits (refused with runs in flight, and by a studio) |
//! | `subscribe` | — | `{}`; then `notifications/changed`: `{what: "blueprints" \| "servers"}`, or `{what: "runs", run_id, blueprint, trigger, client}` as a run starts |
//!
//! Errors carry the application's stable codes in `error.data.code` and its words in
//! `error.message`.

use super::endpoint::{ReadHalf, WriteHalf};
use crate::app::{App, Change};
use crate::error::AppError;
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::sync::broadcast::error::RecvError;

/// Longest request line (a blueprint is at most 5 MB).
pub const MAX_REQUEST: u64 = 8 * 1024 * 1024;
/// Longest answer a client reads (a run's events may be long).
pub const MAX_ANSWER: u64 = 256 * 1024 * 1024;
/// Most runs one `runs/list` returns.
const MAX_LIMIT: usize = 1000;

/// One line read from the client: a request, or why the session ends.
enum Line {
    Request(String),
    TooLong,
}

/// Serves one `api` session until the client goes away.
pub(super) async fn serve(
    app: App,
    read: BufReader<ReadHalf>,
    mut write: WriteHalf,
    stoppable: Option<tokio_util::sync::CancellationToken>,
) {
    // Lines are read on their own task, so waiting for a change never cuts a line short.
    let (lines_tx, mut lines) = tokio::sync::mpsc::channel::<Line>(1);
    let reader = tokio::spawn(read_lines(read, lines_tx));
    let mut changes: Option<tokio::sync::broadcast::Receiver<Change>> = None;
    loop {
        let next = async {
            match &mut changes {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        let outgoing = tokio::select! {
            line = lines.recv() => match line {
                None => break,
                Some(Line::TooLong) => {
                    let message = format!("a request line is longer than {MAX_REQUEST} bytes; the session is closed");
                    let _ = send(&mut write, &error_response(Value::Null, -32600, "REQUEST_TOO_LARGE", &message)).await;
                    break;
                }
                Some(Line::Request(line)) => answer(&app, &line, &mut changes, stoppable.as_ref()),
            },
            change = next => {
                let params = match change {
                    Ok(Change::Servers) => json!({ "what": "servers" }),
                    Ok(Change::RunStarted { run_id, blueprint, trigger, client }) => json!({
                        "what": "runs", "run_id": run_id, "blueprint": blueprint, "trigger": trigger, "client": client
                    }),
                    // Missed changes: the blueprints are the likelier; a client reads again.
                    Ok(Change::Blueprints) | Err(RecvError::Lagged(_)) => json!({ "what": "blueprints" }),
                    Err(RecvError::Closed) => {
                        changes = None;
                        continue;
                    }
                };
                json!({ "jsonrpc": "2.0", "method": "notifications/changed", "params": params })
            }
        };
        if send(&mut write, &outgoing).await.is_err() {
            break;
        }
    }
    reader.abort();
}

/// Reads request lines, each held to [`MAX_REQUEST`] while it is read, until the client
/// closes, a line is too long, or the session stops listening.
async fn read_lines(mut read: BufReader<ReadHalf>, lines: tokio::sync::mpsc::Sender<Line>) {
    loop {
        let line = match super::read_line_within(&mut read, MAX_REQUEST).await {
            Ok(Some(line)) => Line::Request(line),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Line::TooLong,
            Ok(None) | Err(_) => return,
        };
        let last = matches!(line, Line::TooLong);
        if lines.send(line).await.is_err() || last {
            return;
        }
    }
}

async fn send(write: &mut WriteHalf, message: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write.write_all(&bytes).await
}

/// The response to one request line.
fn answer(
    app: &App,
    line: &str,
    changes: &mut Option<tokio::sync::broadcast::Receiver<Change>>,
    stoppable: Option<&tokio_util::sync::CancellationToken>,
) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return error_response(Value::Null, -32700, "PARSE_ERROR", &format!("not JSON: {e}")),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return error_response(id, -32600, "BAD_REQUEST", "a request needs a `method`");
    };
    let params = request.get("params").cloned().unwrap_or(json!({}));
    let result = call(app, method, &params, changes, stoppable);
    match result {
        Ok(value) => json!({ "jsonrpc": "2.0", "id": id, "result": value }),
        Err(Failure::Unknown) => error_response(
            id,
            -32601,
            "METHOD_NOT_FOUND",
            &format!(
                "no method `{method}`: blueprints/list, blueprints/get, runs/list, runs/get, runs/active, \
                 questions/list, store/export, store/import, subscribe"
            ),
        ),
        Err(Failure::Params(message)) => error_response(id, -32602, "BAD_REQUEST", &format!("{method}: {message}")),
        Err(Failure::App(e)) => error_response(id, -32000, e.code(), &e.to_string()),
    }
}

enum Failure {
    Unknown,
    Params(String),
    App(AppError),
}

impl From<AppError> for Failure {
    fn from(e: AppError) -> Self {
        Failure::App(e)
    }
}

fn call(
    app: &App,
    method: &str,
    params: &Value,
    changes: &mut Option<tokio::sync::broadcast::Receiver<Change>>,
    stoppable: Option<&tokio_util::sync::CancellationToken>,
) -> Result<Value, Failure> {
    let text = |name: &str| -> Result<String, Failure> {
        params
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| Failure::Params(format!("`{name}` (a string) is required")))
    };
    let to_value = |v: Result<Value, serde_json::Error>| v.map_err(|e| Failure::Params(e.to_string()));
    match method {
        "blueprints/list" => to_value(serde_json::to_value(app.blueprints()?)),
        "blueprints/get" => {
            let stored = app.blueprint(&text("id")?)?;
            Ok(json!({ "meta": serde_json::to_value(&stored.meta).unwrap_or(Value::Null), "json": stored.json }))
        }
        "runs/list" => {
            let blueprint = params.get("blueprint").and_then(Value::as_str);
            let limit = params.get("limit").and_then(Value::as_u64).map_or(20, |l| l as usize).min(MAX_LIMIT);
            to_value(serde_json::to_value(app.runs(blueprint, limit)?))
        }
        "runs/get" => {
            let detail = app.run_detail(&text("run_id")?)?;
            Ok(json!({ "record": serde_json::to_value(&detail.record).unwrap_or(Value::Null),
                       "events": serde_json::to_value(&detail.events).unwrap_or(Value::Null) }))
        }
        "runs/active" => Ok(Value::Array(
            app.active_runs()
                .into_iter()
                .map(|(run_id, blueprint)| json!({ "run_id": run_id, "blueprint": blueprint }))
                .collect(),
        )),
        "questions/list" => {
            let run = params.get("run_id").and_then(Value::as_str);
            let blueprint_of = |run: &str| app.store().run(run).ok().flatten().map(|r| r.blueprint).unwrap_or_default();
            Ok(Value::Array(
                app.questions(run)
                    .into_iter()
                    .map(|(run, q)| json!({ "run_id": run, "blueprint": blueprint_of(&run), "question": q }))
                    .collect(),
            ))
        }
        "store/export" => Ok(app.store().export().map_err(AppError::from)?),
        "store/import" => {
            let doc = params
                .get("doc")
                .ok_or_else(|| Failure::Params("`doc` (a blueprint or a backup) is required".into()))?;
            Ok(json!({ "report": app.import(doc)?.to_string() }))
        }
        "service/stop" => {
            let Some(stop) = stoppable else {
                return Err(Failure::App(AppError::BadRequest(
                    "the studio holds this data folder; close it to free the folder".into(),
                )));
            };
            let active = app.active_runs().len();
            if active > 0 {
                return Err(Failure::App(AppError::BadRequest(format!(
                    "the mcpflow service (pid {}) has {active} run(s) in flight; wait for them to finish, or stop \
                     it with `kill {}` (its runs are then marked interrupted)",
                    std::process::id(),
                    std::process::id()
                ))));
            }
            stop.cancel();
            Ok(json!({ "stopping": true, "pid": std::process::id() }))
        }
        "subscribe" => {
            *changes = Some(app.subscribe_changes());
            Ok(json!({}))
        }
        _ => Err(Failure::Unknown),
    }
}

fn error_response(id: Value, code: i64, app_code: &str, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message, "data": { "code": app_code } } })
}
