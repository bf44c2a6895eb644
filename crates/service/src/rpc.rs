//! The `api` session: JSON-RPC 2.0 requests for the application's use cases, one per
//! line, each at most [`MAX_REQUEST`] bytes, answered in order; and for a client that
//! sent `subscribe`, `notifications/changed` lines when the stored blueprints or servers
//! change.
//!
//! | method | params | result |
//! |---|---|---|
//! | `blueprints/list` | — | the stored blueprints' metadata (`BlueprintMeta`) |
//! | `blueprints/get` | `id` | `{meta, json}` |
//! | `runs/list` | `blueprint?`, `limit?` (20), `with_skipped?` | run records, newest first; with `with_skipped: true`, `{runs, skipped}`: also the runs that cannot be read (`Unreadable`) |
//! | `runs/remove` | `run_id` | `{removed}`: the run and its events are gone (one that cannot be read too; refused while it runs) |
//! | `runs/get` | `run_id` | `{record, events}` |
//! | `runs/active` | — | `[{run_id, blueprint}]` of the runs in flight |
//! | `questions/list` | `run_id?` | `[{run_id, blueprint, question}]`: the open questions of waiting runs |
//! | `store/export` | `with_skipped?` | the whole store as a backup document (what can be read); with `with_skipped: true`, `{doc, skipped}` |
//! | `store/import` | `doc`: a blueprint or a backup | `{report}`: what was added, in words |
//! | `service/stop` | — | `{stopping, pid}`: the service exits (refused with runs in flight, and by a studio) |
//! | `subscribe` | — | `{}`; then `notifications/changed`: `{what: "blueprints" \| "servers"}`, or `{what: "runs", run_id, blueprint, trigger, client}` as a run starts |
//!
//! Errors carry the application's stable codes in `error.data.code` and its words in
//! `error.message`.

use crate::api::dto::{CommandError, RunStarted};
use crate::api::{EventStream, Local};
use mcpflow_app::app::{App, Change};
use mcpflow_app::error::AppError;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{Semaphore, mpsc};

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

/// Requests of one session answered at once; past it, the session reads no further
/// line until one is answered.
const MAX_IN_FLIGHT: usize = 64;
/// Runs one session follows at once (`start_run`, `follow_run`, …).
const MAX_FOLLOWED: usize = 256;
/// Messages queued for a client that reads slowly; past it, a run's events wait (and its
/// broadcast counts what it loses) rather than memory growing.
const OUTGOING: usize = 1024;

/// Serves one `api` session until the client goes away. Requests are answered as they
/// finish (a long one, a browser sign-in, does not hold up the others), matched by id.
pub(super) async fn serve(
    local: Local,
    read: BufReader<super::ReadHalf>,
    write: super::WriteHalf,
    stoppable: Option<tokio_util::sync::CancellationToken>,
) {
    let (outgoing, mut queued) = mpsc::channel::<Value>(OUTGOING);
    let writer = tokio::spawn(async move {
        let mut write = write;
        while let Some(message) = queued.recv().await {
            if send(&mut write, &message).await.is_err() {
                return;
            }
        }
    });
    // Lines are read on their own task, so waiting for a change never cuts a line short.
    let (lines_tx, mut lines) = mpsc::channel::<Line>(1);
    let reader = tokio::spawn(read_lines(read, lines_tx));
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let followed = Arc::new(Semaphore::new(MAX_FOLLOWED));
    let mut tasks = tokio::task::JoinSet::new();
    let mut changes: Option<tokio::sync::broadcast::Receiver<Change>> = None;
    // The runs this session started: they end with it (see `end_owned`).
    let owned: Owned = Arc::default();
    loop {
        let next = async {
            match &mut changes {
                Some(rx) => rx.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            line = lines.recv() => match line {
                None => break,
                Some(Line::TooLong) => {
                    let message = format!("a request line is longer than {MAX_REQUEST} bytes; the session is closed");
                    let _ = outgoing.send(error_response(Value::Null, -32600, "REQUEST_TOO_LARGE", &message)).await;
                    break;
                }
                Some(Line::Request(line)) => {
                    let Ok(permit) = in_flight.clone().acquire_owned().await else { break };
                    let request = match parse(&line) {
                        Ok(request) => request,
                        Err(refusal) => {
                            drop(permit);
                            if outgoing.send(refusal).await.is_err() { break }
                            continue;
                        }
                    };
                    let (local, outgoing, followed) = (local.clone(), outgoing.clone(), followed.clone());
                    let owned = owned.clone();
                    if let Some(answer) = answer_here(&local.app, &request, &mut changes, stoppable.as_ref()) {
                        drop(permit);
                        if outgoing.send(answer).await.is_err() { break }
                        continue;
                    }
                    tasks.spawn(async move {
                        let Request { id, method, params } = request;
                        let asked_for = params.get("run_id").and_then(Value::as_str).map(str::to_owned);
                        if let Some(started) = crate::api::dispatch_stream(&local, &method, params.clone()) {
                            drop(permit);
                            // A run this session started (not one it follows or answered).
                            if let Ok((run, _)) = &started
                                && method != "follow_run"
                                && asked_for.as_deref() != Some(run.run_id.as_str())
                            {
                                owned.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(run.run_id.clone());
                            }
                            follow(id, &method, started, &outgoing, &followed).await;
                            return;
                        }
                        let answer = match crate::api::dispatch_plain(&local, &method, params).await {
                            Some(Ok(value)) => json!({ "jsonrpc": "2.0", "id": id, "result": value }),
                            Some(Err(e)) => command_error(id, &e),
                            None => unknown(id, &method),
                        };
                        drop(permit);
                        let _ = outgoing.send(answer).await;
                    });
                }
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
                let notification = json!({ "jsonrpc": "2.0", "method": "notifications/changed", "params": params });
                if outgoing.send(notification).await.is_err() { break }
            }
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    tasks.shutdown().await;
    reader.abort();
    drop(outgoing);
    let _ = writer.await;
    end_owned(&local.app, &owned).await;
}

type Owned = Arc<std::sync::Mutex<Vec<String>>>;

/// A front door's runs end with its session, as they did in its own process: closing
/// the studio (or killing it, or Ctrl-C to `mcpflow run --store`) cancels the runs it
/// started that are still in flight — a run paused at a breakpoint would otherwise keep
/// the service busy for ever — except those waiting for a person, which are left
/// waiting (answered later, they resume). Runs of other clients and schedules go on.
async fn end_owned(app: &App, owned: &Owned) {
    let ids = std::mem::take(&mut *owned.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    let active: Vec<String> = app.active_runs().into_iter().map(|(id, _)| id).collect();
    for id in ids.iter().filter(|id| active.contains(id)) {
        if !app.park(id).await {
            let _ = app.control(id, mcpflow_engine::Control::Cancel);
        }
    }
}

/// Answers a streaming call, then sends its run's batches as `run/events` until the run
/// ends (or the client goes). At most [`MAX_FOLLOWED`] at once per session.
async fn follow(
    id: Value,
    method: &str,
    started: Result<(RunStarted, EventStream), CommandError>,
    outgoing: &mpsc::Sender<Value>,
    followed: &Arc<Semaphore>,
) {
    let (run, mut stream) = match started {
        Ok(started) => started,
        Err(e) => {
            let _ = outgoing.send(command_error(id, &e)).await;
            return;
        }
    };
    let Ok(_slot) = followed.clone().try_acquire_owned() else {
        let e = CommandError::new(
            "RUNS_BUSY",
            format!(
                "{method}: this session follows {MAX_FOLLOWED} runs already; the run goes on, read it with get_run"
            ),
        );
        let _ = outgoing.send(command_error(id, &e)).await;
        return;
    };
    let Ok(result) = serde_json::to_value(&run) else { return };
    if outgoing.send(json!({ "jsonrpc": "2.0", "id": id, "result": result })).await.is_err() {
        return;
    }
    while let Some(batch) = stream.next_batch().await {
        let Ok(batch) = serde_json::to_value(&batch) else { continue };
        let params = json!({ "run_id": run.run_id, "batch": batch });
        if outgoing.send(json!({ "jsonrpc": "2.0", "method": "run/events", "params": params })).await.is_err() {
            return;
        }
    }
}

/// Reads request lines, each held to [`MAX_REQUEST`] while it is read, until the client
/// closes, a line is too long, or the session stops listening.
async fn read_lines(mut read: BufReader<super::ReadHalf>, lines: mpsc::Sender<Line>) {
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

async fn send(write: &mut super::WriteHalf, message: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    write.write_all(&bytes).await
}

struct Request {
    id: Value,
    method: String,
    params: Value,
}

/// One request line, or the error response that refuses it.
fn parse(line: &str) -> Result<Request, Value> {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => return Err(error_response(Value::Null, -32700, "PARSE_ERROR", &format!("not JSON: {e}"))),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return Err(error_response(id, -32600, "BAD_REQUEST", "a request needs a `method`"));
    };
    let params = request.get("params").cloned().unwrap_or(json!({}));
    Ok(Request { id, method: method.to_owned(), params })
}

/// The response to a request this session answers itself (the CLI's reads, `subscribe`,
/// `service/stop`); `None` for the use cases of [`crate::api`].
fn answer_here(
    app: &App,
    request: &Request,
    changes: &mut Option<tokio::sync::broadcast::Receiver<Change>>,
    stoppable: Option<&tokio_util::sync::CancellationToken>,
) -> Option<Value> {
    let (id, method) = (request.id.clone(), request.method.as_str());
    match call(app, method, &request.params, changes, stoppable) {
        Ok(value) => Some(json!({ "jsonrpc": "2.0", "id": id, "result": value })),
        Err(Failure::Unknown) => None,
        Err(Failure::Params(message)) => {
            Some(error_response(id, -32602, "BAD_REQUEST", &format!("{method}: {message}")))
        }
        Err(Failure::App(e)) => Some(command_error(id, &e.into())),
    }
}

fn unknown(id: Value, method: &str) -> Value {
    error_response(
        id,
        -32601,
        "METHOD_NOT_FOUND",
        &format!(
            "no method `{method}`: blueprints/list, blueprints/get, runs/list, runs/get, runs/active, runs/remove, \
             questions/list, store/export, store/import, subscribe, service/stop, or a use case of the studio's (list_blueprints, \
             start_run, …: crates/service/src/api)"
        ),
    )
}

/// An application error, whole (code, message, diagnostics) in `error.data`.
fn command_error(id: Value, e: &CommandError) -> Value {
    let data = serde_json::to_value(e).unwrap_or_else(|_| json!({ "code": e.code }));
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32000, "message": e.message, "data": data } })
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
            if params.get("with_skipped").and_then(Value::as_bool) == Some(true) {
                return to_value(serde_json::to_value(app.run_list(blueprint, limit)?));
            }
            to_value(serde_json::to_value(app.runs(blueprint, limit)?))
        }
        "runs/remove" => Ok(json!({ "removed": app.remove_run(&text("run_id")?)? })),
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
        "store/export" => {
            let backup = app.store().backup().map_err(AppError::from)?;
            if params.get("with_skipped").and_then(Value::as_bool) == Some(true) {
                return Ok(json!({ "doc": backup.doc, "skipped": backup.skipped }));
            }
            Ok(backup.doc)
        }
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
