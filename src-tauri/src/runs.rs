//! Runs from the studio: start one (Run or Debug) and stream its events to the window
//! over a Tauri `Channel`, control it (pause, resume, step, cancel, breakpoints), and
//! read the history (past runs of a blueprint, one run with all its events). The runs
//! waiting for a person — an earlier session's too, after a restart — are listed with
//! their questions, and answering one streams the run that goes on (`answer_and_follow`).
//!
//! Events come in batches, one per frame at most (`mcpflow_service::api::EventStream`): a
//! burst of thousands of events a second becomes about sixty messages, each a JSON array
//! in `seq` order. The window batches again before React sees them
//! (`ui/src/run/batcher.ts`).

use crate::commands::Studio;
use crate::dto::{
    AnswerDto, CommandError, EventBatch, Json, RerunMode, RunAction, RunDetailDto, RunInfo, RunStarted, ServerDto,
    TemplatePreviewDto, WaitingRunDto,
};
use mcpflow_service::api::EventStream;
use tauri::State;
use tauri::ipc::Channel;

type Result<T> = std::result::Result<T, CommandError>;

/// Starts a run of the document on the canvas (saved or not) and streams its events to
/// `on_events`. It pauses before each step in `breakpoints`; `paused` starts it paused
/// (nothing runs before `step` or `resume`).
#[tauri::command]
#[specta::specta]
pub async fn start_run(
    studio: State<'_, Studio>,
    doc: Json,
    inputs: Json,
    paused: bool,
    breakpoints: Vec<String>,
    on_events: Channel<EventBatch>,
) -> Result<RunStarted> {
    let (started, events) = studio.api.start_run(doc, inputs, paused, breakpoints).await?;
    tauri::async_runtime::spawn(forward(events, on_events));
    Ok(started)
}

/// Runs `step` of the document again — alone, or with everything after it — with the
/// other steps' outputs pinned from the past run `run_id` (and that run's inputs).
#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments, reason = "a command's arguments are its IPC payload")]
pub async fn rerun_step(
    studio: State<'_, Studio>,
    doc: Json,
    run_id: String,
    step: String,
    mode: RerunMode,
    paused: bool,
    breakpoints: Vec<String>,
    on_events: Channel<EventBatch>,
) -> Result<RunStarted> {
    let (started, events) = studio.api.rerun_step(doc, run_id, step, mode, paused, breakpoints).await?;
    tauri::async_runtime::spawn(forward(events, on_events));
    Ok(started)
}

/// The servers a run of the document calls, as it would start them (its own `servers`
/// over the configured ones), with whether each may start. Starts nothing.
#[tauri::command]
#[specta::specta]
pub async fn run_servers(studio: State<'_, Studio>, doc: Json) -> Result<Vec<ServerDto>> {
    studio.api.run_servers(doc).await
}

/// Approves the exact command a run of the document starts for `name`; returns it.
#[tauri::command]
#[specta::specta]
pub async fn approve_run_server(studio: State<'_, Studio>, doc: Json, name: String) -> Result<String> {
    studio.api.approve_run_server(doc, name).await
}

#[tauri::command]
#[specta::specta]
pub async fn control_run(studio: State<'_, Studio>, run_id: String, action: RunAction) -> Result<()> {
    studio.api.control_run(run_id, action).await
}

/// Replaces the breakpoints of a run in flight (the editor's set, kept out of the file).
#[tauri::command]
#[specta::specta]
pub async fn set_breakpoints(studio: State<'_, Studio>, run_id: String, steps: Vec<String>) -> Result<()> {
    studio.api.set_breakpoints(run_id, steps).await
}

/// The runs waiting for a person: in flight here, and those an earlier session left
/// waiting (what the studio shows at start).
#[tauri::command]
#[specta::specta]
pub async fn waiting_runs(studio: State<'_, Studio>) -> Result<Vec<WaitingRunDto>> {
    studio.api.waiting_runs().await
}

/// Answers a run's open question and streams the run that goes on to `on_events`: the
/// run itself when it is in flight here (its events from the answer on), or — a run an
/// earlier session left waiting — the new run that resumes it on `doc` (the document on
/// the canvas, as a re-run takes it), its finished steps pinned. Errors as
/// `answer_question`'s, and the resume's (`BAD_REQUEST` when `doc` is another blueprint).
#[tauri::command]
#[specta::specta]
pub async fn answer_and_follow(
    studio: State<'_, Studio>,
    doc: Json,
    run_id: String,
    question_id: String,
    answer: AnswerDto,
    on_events: Channel<EventBatch>,
) -> Result<RunStarted> {
    let (started, events) = studio.api.answer_and_follow(doc, run_id, question_id, answer).await?;
    tauri::async_runtime::spawn(forward(events, on_events));
    Ok(started)
}

/// Follows a run in flight that something else started (an agent, the CLI, a schedule):
/// its events from now on go to `on_events`, as a run started here does; what came before
/// is read with `get_run`. `RUN_NOT_ACTIVE` when it has ended already.
#[tauri::command]
#[specta::specta]
pub async fn follow_run(studio: State<'_, Studio>, run_id: String, on_events: Channel<EventBatch>) -> Result<()> {
    let (_, events) = studio.api.follow_run(run_id).await?;
    tauri::async_runtime::spawn(forward(events, on_events));
    Ok(())
}

/// Past runs of a blueprint, newest first.
#[tauri::command]
#[specta::specta]
pub async fn list_runs(studio: State<'_, Studio>, blueprint: String, limit: u32) -> Result<Vec<RunInfo>> {
    studio.api.list_runs(blueprint, limit).await
}

/// Files the runs of a document never stored (`from`) under the id it was first saved as.
#[tauri::command]
#[specta::specta]
pub async fn move_runs(studio: State<'_, Studio>, from: String, to: String) -> Result<u32> {
    studio.api.move_runs(from, to).await
}

/// A template's value against a scope (the last run's), or only its syntax checked.
#[tauri::command]
#[specta::specta]
pub async fn preview_template(
    studio: State<'_, Studio>,
    template: Json,
    scope: Option<Json>,
) -> Result<TemplatePreviewDto> {
    studio.api.preview_template(template, scope).await
}

/// One recorded run with all its events.
#[tauri::command]
#[specta::specta]
pub async fn get_run(studio: State<'_, Studio>, run_id: String) -> Result<RunDetailDto> {
    studio.api.get_run(run_id).await
}

/// Sends the run's batches to the window until the run ends or the window goes away.
/// A run whose source went away before its end (the service stopped) gets a last,
/// empty batch: the window then reads the run again with `get_run`.
async fn forward(mut events: EventStream, channel: Channel<EventBatch>) {
    let mut ended = false;
    while let Some(batch) = events.next_batch().await {
        ended = batch.done;
        if channel.send(batch).is_err() {
            // The window closed or reloaded; the run goes on and is recorded.
            return;
        }
    }
    if !ended {
        let _ = channel.send(EventBatch { events: Json(serde_json::Value::Array(Vec::new())), lagged: 0, done: true });
    }
}
