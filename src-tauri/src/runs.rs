//! Runs from the studio: start one (Run or Debug) and stream its events to the window
//! over a Tauri `Channel`, control it (pause, resume, step, cancel, breakpoints), and
//! read the history (past runs of a blueprint, one run with all its events). The runs
//! waiting for a person — an earlier session's too, after a restart — are listed with
//! their questions, and answering one streams the run that goes on (`answer_and_follow`).
//!
//! Events are sent in batches, one per frame at most: a burst of thousands of events a
//! second becomes about sixty messages, each a JSON array in `seq` order. The window
//! batches again before React sees them (`ui/src/run/batcher.ts`).

use crate::commands::Studio;
use crate::dto::{AnswerDto, CommandError, Json, QuestionDto, ServerDto};
use mcpflow_app::runs::{Rerun, StartRun, Target, Trigger};
use mcpflow_engine::{Control, RunEvent};
use serde::{Deserialize, Serialize};
use specta::Type;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tauri::State;
use tauri::ipc::Channel;
use tokio::sync::broadcast::{self, error::RecvError};

type Result<T> = std::result::Result<T, CommandError>;

/// One message on a run's channel: events in `seq` order, and how many were lost
/// because the window fell behind (then it reads the run again with `get_run`).
#[derive(Debug, Clone, Serialize, Type)]
pub struct EventBatch {
    /// The events, as the engine writes them (`{ seq, at_ms, type, ... }`).
    pub events: Json,
    pub lagged: u32,
    /// The run ended: this is the last batch.
    pub done: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct RunStarted {
    pub run_id: String,
    pub blueprint: String,
}

/// What the window asks of a run in flight.
#[derive(Debug, Clone, Copy, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RunAction {
    Pause,
    Resume,
    Step,
    Cancel,
}

/// A recorded run, as the history lists it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct RunInfo {
    pub id: String,
    pub blueprint: String,
    /// `running`, `waiting` (a question to a person is open), `succeeded`, `partial`,
    /// `failed`, `cancelled` or `interrupted`.
    pub status: String,
    /// `studio`, `cli`, `mcp` or `schedule`.
    pub trigger: String,
    /// For an `mcp` run, the MCP client that asked for it (its `clientInfo` name).
    pub client: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub duration_ms: Option<f64>,
    pub blueprint_rev: Option<u32>,
    /// The past run this one re-ran a step of, when it is a re-run.
    pub rerun_of: Option<RerunOfDto>,
    /// The run this one resumes: a run left waiting that was answered, or an interrupted one.
    pub resumed_from: Option<String>,
    /// Started with Debug (breakpoints, or paused before the first step).
    pub debug: bool,
    /// The time it sat paused (a finished run that paused); `duration_ms` less this is
    /// its active time.
    pub paused_ms: Option<f64>,
}

/// A re-run's origin: the past run, the step it re-ran, and how much of what follows.
#[derive(Debug, Clone, Serialize, Type)]
pub struct RerunOfDto {
    pub run: String,
    pub step: String,
    pub mode: RerunMode,
}

impl From<mcpflow_store::RunRecord> for RunInfo {
    fn from(r: mcpflow_store::RunRecord) -> Self {
        #[allow(clippy::cast_precision_loss, reason = "a duration in ms is far below 2^52")]
        let duration_ms = r.envelope.as_ref().map(|e| e.duration_ms as f64);
        RunInfo {
            id: r.id,
            blueprint: r.blueprint,
            status: r.status.as_str().to_owned(),
            trigger: r.trigger,
            client: r.client,
            started_at: r.started_at,
            finished_at: r.finished_at,
            duration_ms,
            blueprint_rev: r.blueprint_rev,
            rerun_of: r.rerun_of.map(|o| RerunOfDto { run: o.run, step: o.step, mode: o.mode.into() }),
            resumed_from: r.resumed_from,
            debug: r.debug,
            #[allow(clippy::cast_precision_loss, reason = "a duration in ms is far below 2^52")]
            paused_ms: r.paused_ms.map(|ms| ms as f64),
        }
    }
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct RunDetailDto {
    pub info: RunInfo,
    pub inputs: Json,
    /// Every event of the run, in order.
    pub events: Json,
    /// The result, once finished.
    pub envelope: Option<Json>,
}

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
    let inputs = if inputs.0.is_null() { serde_json::json!({}) } else { inputs.0 };
    let mut spec = StartRun::new(Target::Inline(doc.0), inputs, Trigger::Studio);
    spec.paused = paused;
    spec.breakpoints = breakpoints.into_iter().collect::<HashSet<_>>();
    start(&studio, spec, on_events)
}

/// What a re-run runs again: the step alone, or the step and everything after it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RerunMode {
    Step,
    FromHere,
}

/// The IPC twin of the app's [`Rerun`] (which has no `specta::Type`).
impl From<RerunMode> for Rerun {
    fn from(mode: RerunMode) -> Self {
        match mode {
            RerunMode::Step => Rerun::Step,
            RerunMode::FromHere => Rerun::FromHere,
        }
    }
}

impl From<Rerun> for RerunMode {
    fn from(mode: Rerun) -> Self {
        match mode {
            Rerun::Step => RerunMode::Step,
            Rerun::FromHere => RerunMode::FromHere,
        }
    }
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
    let mut spec = studio.app.rerun_plan_on(&run_id, Target::Inline(doc.0), &step, mode.into())?;
    spec.trigger = Trigger::Studio;
    spec.paused = paused;
    spec.breakpoints = breakpoints.into_iter().collect();
    start(&studio, spec, on_events)
}

fn start(studio: &Studio, spec: StartRun, on_events: Channel<EventBatch>) -> Result<RunStarted> {
    let started = studio.app.start_run(spec)?;
    let answer = RunStarted { run_id: started.run_id.clone(), blueprint: started.blueprint.clone() };
    tauri::async_runtime::spawn(forward(started.events, on_events));
    // The run goes on by itself; its end reaches the window as the last batch.
    drop(started.done);
    Ok(answer)
}

/// The servers a run of the document calls, as it would start them (its own `servers`
/// over the configured ones), with whether each may start. Starts nothing.
#[tauri::command]
#[specta::specta]
pub async fn run_servers(studio: State<'_, Studio>, doc: Json) -> Result<Vec<ServerDto>> {
    Ok(studio.app.run_servers(&doc.0)?.into_iter().map(ServerDto::from).collect())
}

/// Approves the exact command a run of the document starts for `name`; returns it.
#[tauri::command]
#[specta::specta]
pub async fn approve_run_server(studio: State<'_, Studio>, doc: Json, name: String) -> Result<String> {
    Ok(studio.app.approve_run_server(&doc.0, &name)?)
}

#[tauri::command]
#[specta::specta]
pub async fn control_run(studio: State<'_, Studio>, run_id: String, action: RunAction) -> Result<()> {
    let control = match action {
        RunAction::Pause => Control::Pause,
        RunAction::Resume => Control::Resume,
        RunAction::Step => Control::Step,
        RunAction::Cancel => Control::Cancel,
    };
    Ok(studio.app.control(&run_id, control)?)
}

/// Replaces the breakpoints of a run in flight (the editor's set, kept out of the file).
#[tauri::command]
#[specta::specta]
pub async fn set_breakpoints(studio: State<'_, Studio>, run_id: String, steps: Vec<String>) -> Result<()> {
    Ok(studio.app.control(&run_id, Control::SetBreakpoints(steps))?)
}

/// A run waiting for a person: its record and open questions.
#[derive(Debug, Clone, Serialize, Type)]
pub struct WaitingRunDto {
    pub run: RunInfo,
    /// Oldest first.
    pub questions: Vec<QuestionDto>,
    /// In flight in this studio; else an earlier session (or another process) left it
    /// waiting, and answering it resumes it as a new run.
    pub in_flight: bool,
}

/// The runs waiting for a person: in flight here, and those an earlier session left
/// waiting (what the studio shows at start).
#[tauri::command]
#[specta::specta]
pub async fn waiting_runs(studio: State<'_, Studio>) -> Result<Vec<WaitingRunDto>> {
    Ok(studio
        .app
        .waiting()
        .into_iter()
        .map(|w| {
            let run_id = w.record.id.clone();
            WaitingRunDto {
                run: w.record.into(),
                questions: w.questions.into_iter().map(|q| QuestionDto::new(run_id.clone(), q)).collect(),
                in_flight: w.in_flight,
            }
        })
        .collect())
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
    let answered = studio.app.answer_and_follow(&run_id, &question_id, answer.into(), Some(Target::Inline(doc.0)))?;
    tauri::async_runtime::spawn(forward(answered.events, on_events));
    Ok(RunStarted { run_id: answered.run_id, blueprint: answered.blueprint })
}

/// Follows a run in flight that something else started (an agent, the CLI, a schedule):
/// its events from now on go to `on_events`, as a run started here does; what came before
/// is read with `get_run`. `RUN_NOT_ACTIVE` when it has ended already.
#[tauri::command]
#[specta::specta]
pub async fn follow_run(studio: State<'_, Studio>, run_id: String, on_events: Channel<EventBatch>) -> Result<()> {
    let events = studio.app.subscribe(&run_id)?;
    tauri::async_runtime::spawn(forward(events, on_events));
    Ok(())
}

/// Past runs of a blueprint, newest first.
#[tauri::command]
#[specta::specta]
pub async fn list_runs(studio: State<'_, Studio>, blueprint: String, limit: u32) -> Result<Vec<RunInfo>> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX).clamp(1, 1000);
    Ok(studio.app.runs(Some(&blueprint), limit)?.into_iter().map(RunInfo::from).collect())
}

/// One recorded run with all its events.
#[tauri::command]
#[specta::specta]
pub async fn get_run(studio: State<'_, Studio>, run_id: String) -> Result<RunDetailDto> {
    let detail = studio.app.run_detail(&run_id)?;
    let events = serde_json::to_value(&detail.events).map_err(|e| CommandError::new("INTERNAL", e.to_string()))?;
    let envelope = detail.record.envelope.as_ref().and_then(|e| serde_json::to_value(e).ok()).map(Json);
    let inputs = Json(detail.record.inputs.clone());
    Ok(RunDetailDto { info: detail.record.into(), inputs, events: Json(events), envelope })
}

/// How long events gather before they are sent: one frame.
const FRAME: Duration = Duration::from_millis(16);
/// Sent at once past this many, frame or not.
const MAX_BATCH: usize = 4096;

/// Sends the run's events in batches until the run ends or the window goes away.
async fn forward(mut events: broadcast::Receiver<Arc<RunEvent>>, channel: Channel<EventBatch>) {
    let mut done = false;
    while !done {
        let mut batch = Vec::new();
        let mut lagged = 0u64;
        match events.recv().await {
            Ok(e) => batch.push(e),
            Err(RecvError::Lagged(n)) => lagged += n,
            Err(RecvError::Closed) => done = true,
        }
        let frame = tokio::time::Instant::now() + FRAME;
        while !done && batch.len() < MAX_BATCH {
            match tokio::time::timeout_at(frame, events.recv()).await {
                Ok(Ok(e)) => batch.push(e),
                Ok(Err(RecvError::Lagged(n))) => lagged += n,
                Ok(Err(RecvError::Closed)) => done = true,
                Err(_) => break,
            }
        }
        let json = match serde_json::to_value(&batch) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("could not encode run events: {e}");
                serde_json::Value::Array(Vec::new())
            }
        };
        let lagged = u32::try_from(lagged).unwrap_or(u32::MAX);
        if channel.send(EventBatch { events: Json(json), lagged, done }).is_err() {
            // The window closed or reloaded; the run goes on and is recorded.
            return;
        }
    }
}
