//! Runs: start one (recorded to the store, its events broadcast to any number of
//! subscribers), control it (pause / resume / step / breakpoints / cancel), read the
//! runs that were recorded, re-run part of one ([`App::rerun_plan`]), and resume one the
//! process was killed in, polling its tasks in flight again ([`App::resume_plan`]).
//!
//! Durability: every event is appended to the store as it happens, and the engine's
//! [`Journal`] hook flushes the store before a call starts after a step finished — so a
//! finished step is on disk before any step that depends on it reaches a server.

pub(crate) mod active;
pub(crate) mod asked;
mod questions;
mod queue;
mod rerun;
mod resume;

pub(crate) use active::Active;
pub use asked::Questions;
pub use questions::{Answered, WaitingRun, waiting_note};
pub use rerun::Rerun;
pub use resume::tasks_in_flight;

use crate::app::App;
use crate::error::{AppError, Result};
use mcpflow_blueprint::{Blueprint, Options, Plan, check_bytes};
use mcpflow_engine::TaskHandle;
use mcpflow_engine::driver::MAX_WORKFLOW_DEPTH;
use mcpflow_engine::event::IterationPath;
use mcpflow_engine::{
    BlueprintSource, Control, Engine, Envelope, EventKind, EventSink, FolderSource, Journal, RunConfig, RunEvent,
    RunOrigin, RunRequest, Servers, TraceContext,
};
use mcpflow_mcp::{Pool, PoolOptions};
use mcpflow_store::{OpenQuestions, RecordStatus, RerunOf, RunRecord, Store};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// How long [`App::park`] waits for a question asked a moment ago to be recorded.
const PARK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Events a subscriber may fall behind by before it misses some (it can then read the
/// rest from the store).
const EVENT_BUFFER: usize = 4096;

/// Which blueprint to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// The current revision of a stored blueprint.
    Stored(String),
    /// A blueprint given whole (not saved).
    Inline(Value),
}

/// Who started a run (kept in its record).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Cli,
    Studio,
    Mcp,
    Schedule,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Cli => "cli",
            Trigger::Studio => "studio",
            Trigger::Mcp => "mcp",
            Trigger::Schedule => "schedule",
        }
    }
}

/// A run to start.
#[derive(Clone)]
pub struct StartRun {
    pub target: Target,
    pub inputs: Value,
    pub trigger: Trigger,
    /// The workflows that started this one from outside (an `mcpflow serve` call's
    /// `_meta["mcpflow/stack"]`), outermost first.
    pub stack: Vec<String>,
    /// The caller's span (`mcpflow serve`'s span for the `tools/call` that asked for this
    /// run, itself a child of the agent's `traceparent`): the run's trace continues it.
    /// `None`: the run starts a trace of its own (when telemetry is on).
    pub parent: Option<TraceContext>,
    pub breakpoints: HashSet<String>,
    /// Start paused (Debug): the first step waits for `step` or `resume`.
    pub paused: bool,
    pub timeout_ms: Option<u64>,
    /// Top-level steps that keep their output from an earlier run instead of running
    /// (see [`App::rerun_plan`]).
    pub pinned: BTreeMap<String, Value>,
    /// The top-level steps to run (`None`: all); the others are pinned or skipped.
    pub only: Option<BTreeSet<String>>,
    /// The past run this one re-runs part of (set by [`App::rerun_plan`]); recorded.
    pub rerun_of: Option<RerunOf>,
    /// Resuming an interrupted run (set by [`App::resume_plan`]): its id, recorded.
    pub resumed_from: Option<String>,
    /// Resuming: the tasks step instances had in flight, polled instead of called again.
    pub resume_tasks: HashMap<(String, IterationPath), TaskHandle>,
    /// Sees every event, in order, right after it is recorded (the CLI's display).
    pub observer: Option<EventSink>,
    /// Who answers the run's questions (`input` steps, servers' elicitations); `None`:
    /// the application's registry ([`App::questions`], [`App::answer`]).
    pub people: Option<Arc<dyn mcpflow_engine::People>>,
    /// A question `people` cannot answer (`INPUT_REQUIRED`) waits in the application's
    /// registry instead of failing the run (`mcpflow run --store --wait`): the run is
    /// `waiting`, and stopping the process leaves it so ([`App::park`]).
    pub wait: bool,
    /// Who answers servers' sampling requests (`mcpflow serve`: the calling client); `None`:
    /// the application's provider (see [`crate::sampling`]).
    pub sampler: Option<Arc<dyn mcpflow_engine::Sampler>>,
    /// The MCP client that asked for the run (`mcpflow serve`: its `clientInfo.name`);
    /// recorded, cut to printable text.
    pub client: Option<String>,
    /// The queued run this start takes over (`mcpflow worker` claimed it): the run keeps
    /// that id and its record is written over the queued one.
    pub queued: Option<String>,
}

/// A client's name as recorded: printable characters only, at most 64 of them.
fn client_name(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(64).collect()
}

impl std::fmt::Debug for StartRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartRun")
            .field("target", &self.target)
            .field("trigger", &self.trigger)
            .field("stack", &self.stack)
            .field("pinned", &self.pinned.keys().collect::<Vec<_>>())
            .field("only", &self.only)
            .field("rerun_of", &self.rerun_of)
            .field("resumed_from", &self.resumed_from)
            .field("resume_tasks", &self.resume_tasks)
            .finish_non_exhaustive()
    }
}

impl StartRun {
    pub fn new(target: Target, inputs: Value, trigger: Trigger) -> Self {
        StartRun {
            target,
            inputs,
            trigger,
            stack: Vec::new(),
            parent: None,
            breakpoints: HashSet::new(),
            paused: false,
            timeout_ms: None,
            pinned: BTreeMap::new(),
            only: None,
            rerun_of: None,
            resumed_from: None,
            resume_tasks: HashMap::new(),
            observer: None,
            people: None,
            wait: false,
            sampler: None,
            client: None,
            queued: None,
        }
    }
}

/// A run in flight, as its starter sees it.
#[derive(Debug)]
pub struct Started {
    pub run_id: String,
    pub blueprint: String,
    /// The blueprint's top-level steps (the total for progress).
    pub steps: u32,
    /// Every event from the first on.
    pub events: broadcast::Receiver<Arc<RunEvent>>,
    /// The envelope, when the run ends.
    pub done: oneshot::Receiver<Envelope>,
}

impl Started {
    /// Waits for the end of the run.
    pub async fn finish(self) -> Envelope {
        let run_id = self.run_id;
        let blueprint = self.blueprint;
        self.done.await.unwrap_or_else(|_| Envelope::lost(run_id, blueprint))
    }
}

/// A recorded run with its events.
#[derive(Debug, Clone)]
pub struct RunDetail {
    pub record: RunRecord,
    pub events: Vec<RunEvent>,
}

impl RunDetail {
    /// The run's trace id (32 hex digits) when it ran with telemetry on: from its
    /// envelope once it has ended, else from its `RunStarted` event (a run still going,
    /// or one interrupted).
    pub fn trace_id(&self) -> Option<&str> {
        self.record.envelope.as_ref().and_then(|e| e.trace_id.as_deref()).or_else(|| {
            self.events.iter().find_map(|e| match &e.kind {
                EventKind::RunStarted { trace_id, .. } => trace_id.as_deref(),
                _ => None,
            })
        })
    }
}

impl App {
    /// Checks and starts a run; returns at once. The run is recorded from its first
    /// event; its starter gets every event.
    pub fn start_run(&self, mut spec: StartRun) -> Result<Started> {
        let (bp, plan, rev) = self.load(&spec.target)?;
        check_stack(&bp.id, &spec.stack)?;
        let own_pool = self.own_pool(&bp);
        let run_id = spec.queued.clone().unwrap_or_else(crate::headless::new_run_id);
        let store = self.store().clone();
        let recorder = Arc::new(Recorder { store: store.clone(), failed: AtomicBool::new(false) });
        let engine = self.run_engine(&spec, &run_id, own_pool.clone(), recorder.clone());
        let config = run_config(&engine, &bp, &plan, run_id.clone(), &mut spec)?;
        let (events_tx, events_rx) = broadcast::channel(EVENT_BUFFER);
        let (control_tx, control_rx) = mpsc::unbounded_channel();
        let cancel = CancellationToken::new();
        let shared = Shared {
            run_id: run_id.clone(),
            store,
            parked: Arc::new(AtomicBool::new(false)),
            // The questions open in the run's events: the record is `waiting` while any is.
            asking: Arc::new(std::sync::Mutex::new(OpenQuestions::default())),
            paused: Arc::new(std::sync::Mutex::new((None, 0))),
        };
        let recorded = Arc::new(AtomicBool::new(false));
        self.enter(&shared, &bp.id, control_tx, cancel.clone(), events_tx.clone(), recorded.clone())?;
        let record = run_record(&run_id, &bp.id, rev, &config, &mut spec);
        self.begin(&shared, &record, spec.queued.is_some(), &recorded)?;
        let sink = event_sink(&shared, recorder, spec.observer.clone(), events_tx);
        let (done_tx, done_rx) = oneshot::channel();
        let blueprint = bp.id.clone();
        let steps = u32::try_from(bp.steps.len()).unwrap_or(u32::MAX);
        let logs = self.inner.logs.join(&run_id, crate::logs::Listen::of(&bp));
        let origin = RunOrigin { trigger: spec.trigger.as_str(), parent: spec.parent.clone() };
        let request = RunRequest { blueprint: Arc::new(bp), plan: Arc::new(plan), config, stack: spec.stack, origin };
        let run = RunTask { engine, request, sink, control: control_rx, logs, cancel, own_pool, done: done_tx };
        tokio::spawn(self.clone().drive(shared, run));
        Ok(Started { run_id, blueprint, steps, events: events_rx, done: done_rx })
    }

    /// The pool of a blueprint that brings its own servers, with the configured servers
    /// kept under their names (a clash is `SERVER_SHADOWED` in validation); `None` when
    /// every one it declares is configured: it runs on the shared pool.
    fn own_pool(&self, bp: &Blueprint) -> Option<Arc<Pool>> {
        let state = self.server_state();
        let (configs, shadowed) = state.configs.clone().under_blueprint(&bp.servers);
        if shadowed.len() == bp.servers.len() {
            return None;
        }
        let options = PoolOptions::default()
            .with_log(self.inner.logs.sender())
            .with_roots(self.inner.roots.clone())
            .with_auth(self.authenticator());
        Some(Arc::new(Pool::new(configs, state.approvals.clone(), options)))
    }

    /// The engine run `run_id` runs on: its servers, the store as its source, saved
    /// values and journal, its people, sampler and telemetry.
    fn run_engine(
        &self,
        spec: &StartRun,
        run_id: &str,
        own_pool: Option<Arc<Pool>>,
        recorder: Arc<Recorder>,
    ) -> Engine {
        let servers: Arc<dyn Servers> = match own_pool {
            Some(p) => p,
            None => self.pool(),
        };
        let servers = self.inner.options.front.advise(self.inner.logs.track(run_id, servers));
        let store = self.store().clone();
        Engine {
            servers,
            source: Some(Arc::new(Sources {
                store: store.clone(),
                folder: self.inner.options.folder.clone().map(FolderSource::new),
            })),
            saved: Some(Arc::new(store)),
            journal: Some(recorder),
            // A run with no people of its own asks the application's: any front door answers.
            people: Some(match (spec.people.clone(), spec.wait) {
                (None, _) => self.inner.questions.people(run_id),
                (Some(people), false) => people,
                (Some(people), true) => questions::then_wait(people, self.inner.questions.people(run_id)),
            }),
            // Read for each run: a provider set in the settings applies from the next run.
            sampler: Some(spec.sampler.clone().unwrap_or_else(|| Arc::new(self.sampling_model()))),
            // Read for each run, like the sampler: a settings change applies from the next run.
            telemetry: self.telemetry(),
        }
    }

    /// Puts the run in the table of runs in flight; refused past `max_runs`.
    fn enter(
        &self,
        shared: &Shared,
        blueprint: &str,
        control: mpsc::UnboundedSender<Control>,
        cancel: CancellationToken,
        events: broadcast::Sender<Arc<RunEvent>>,
        recorded: Arc<AtomicBool>,
    ) -> Result<()> {
        let mut active = self.inner.active.lock().map_err(|_| AppError::Store("run table poisoned".into()))?;
        let limit = self.inner.options.max_runs.unwrap_or(crate::app::DEFAULT_MAX_RUNS);
        if active.len() >= limit {
            return Err(AppError::Busy { active: active.len() });
        }
        let entry = Active {
            blueprint: blueprint.to_owned(),
            parked: shared.parked.clone(),
            asking: shared.asking.clone(),
            control,
            cancel,
            events,
            recorded,
        };
        active.insert(shared.run_id.clone(), entry);
        Ok(())
    }

    /// Records the run's start (a waiting run it resumes waits no more) and tells the
    /// subscribers; when the store refuses, the run leaves the table and is not started.
    /// `queued`: the record goes over the queued run a worker claimed.
    fn begin(&self, shared: &Shared, record: &RunRecord, queued: bool, recorded: &AtomicBool) -> Result<()> {
        let store = &shared.store;
        let begun = if queued { store.take_over_run(record) } else { store.begin_run(record) };
        let begun = begun.and_then(|()| store.sync());
        if let Some(resumed) = &record.resumed_from {
            // A run left waiting whose question this run answers waits no more.
            if begun.is_ok()
                && let Err(e) = store.settle_waiting(resumed)
            {
                tracing::error!(run = %resumed, error = %e, "could not record that a waiting run was resumed");
            }
            self.inner.questions.resumed(resumed);
        }
        if let Err(e) = begun {
            self.forget(&shared.run_id);
            return Err(e.into());
        }
        recorded.store(true, Ordering::Release);
        self.changed(crate::app::Change::RunStarted {
            run_id: shared.run_id.clone(),
            blueprint: record.blueprint.clone(),
            trigger: record.trigger.clone(),
            client: record.client.clone(),
        });
        Ok(())
    }

    /// Runs the engine (in a worker process for the long-lived front doors), then records
    /// the end — or, when the run was parked, leaves its record waiting — and lets go of
    /// what the run held.
    async fn drive(self, shared: Shared, run: RunTask) {
        let RunTask { engine, request, sink, control, logs, cancel, own_pool, done } = run;
        let id = &shared.run_id;
        let mut envelope = match &self.inner.options.workers {
            Some(command) => {
                mcpflow_worker::run(command, &engine, request, sink, Some(control), Some(logs), cancel).await
            }
            None => engine.run_with_logs(request, sink, Some(control), logs, cancel).await,
        };
        self.inner.logs.leave(id);
        if shared.parked.load(Ordering::Acquire) {
            let open = shared.asking.lock().map(|open| open.clone().into_questions()).unwrap_or_default();
            questions::left_waiting(&mut envelope, &open);
        } else {
            if let Err(e) = shared.store.finish_run(id, &envelope) {
                tracing::error!(run = %id, error = %e, "could not record the end of a run");
            }
            let paused_ms = shared.paused.lock().map(|p| p.1).unwrap_or(0);
            if paused_ms > 0
                && let Err(e) = shared.store.record_paused(id, paused_ms)
            {
                tracing::error!(run = %id, error = %e, "could not record the time a run sat paused");
            }
        }
        if let Some(pool) = own_pool {
            pool.shutdown().await;
        }
        self.forget(id);
        let _ = done.send(envelope);
    }

    /// Starts a run and waits for its end.
    pub async fn run_to_end(&self, spec: StartRun) -> Result<Envelope> {
        Ok(self.start_run(spec)?.finish().await)
    }

    /// Pause, resume, step, breakpoints or cancel a run in flight.
    pub fn control(&self, run_id: &str, control: Control) -> Result<()> {
        let active = self.inner.active.lock().map_err(|_| AppError::Store("run table poisoned".into()))?;
        let run = active.get(run_id).ok_or_else(|| AppError::NotRunning(run_id.to_owned()))?;
        if matches!(control, Control::Cancel) {
            run.cancel.cancel();
            return Ok(());
        }
        run.control.send(control).map_err(|_| AppError::NotRunning(run_id.to_owned()))
    }

    /// Leaves run `run_id` waiting rather than ending it, when it waits for an answer in
    /// the application's registry: its record stays `waiting` with its question, its
    /// in-flight work is stopped here (steps that had not finished run again when it is
    /// answered), and answering it later — after a restart, `mcpflow answer` — resumes it.
    /// Returns whether it was parked (and so cancelled here); when not, the caller ends
    /// it as usual.
    pub async fn park(&self, run_id: &str) -> bool {
        if self.inner.questions.list(Some(run_id)).is_empty() {
            return false;
        }
        // The question is asked here a moment before its `StepWaiting` is recorded: the
        // record must be `waiting`, with the question, before the run is left so.
        let deadline = tokio::time::Instant::now() + PARK_WAIT;
        loop {
            let recorded = {
                let Ok(active) = self.inner.active.lock() else { return false };
                let Some(run) = active.get(run_id) else { return false };
                run.asking.lock().is_ok_and(|open| open.is_waiting())
            };
            if recorded {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let Ok(active) = self.inner.active.lock() else { return false };
        let Some(run) = active.get(run_id) else { return false };
        run.parked.store(true, Ordering::Release);
        if let Err(e) = self.store().sync() {
            tracing::error!(run = %run_id, error = %e, "could not flush a run left waiting");
        }
        run.cancel.cancel();
        tracing::info!(run = %run_id, "the run is left waiting for its answer");
        true
    }

    /// Parks ([`App::park`]) every run in flight that waits for an answer: what a
    /// long-lived front door (the studio, `serve`, the daemon) does when it stops, so its
    /// waiting runs survive it.
    pub async fn park_waiting(&self) -> Vec<String> {
        let mut parked = Vec::new();
        for (id, _) in self.active_runs() {
            if self.park(&id).await {
                parked.push(id);
            }
        }
        parked
    }

    /// Events of a run in flight from now on (earlier ones are in the store).
    pub fn subscribe(&self, run_id: &str) -> Result<broadcast::Receiver<Arc<RunEvent>>> {
        let active = self.inner.active.lock().map_err(|_| AppError::Store("run table poisoned".into()))?;
        active.get(run_id).map(|a| a.events.subscribe()).ok_or_else(|| AppError::NotRunning(run_id.to_owned()))
    }

    /// The ids of the runs in flight, with their blueprints: those whose record is on
    /// disk (a run is listed once a crash would leave it `interrupted`, not before).
    pub fn active_runs(&self) -> Vec<(String, String)> {
        match self.inner.active.lock() {
            Ok(a) => a
                .iter()
                .filter(|(_, r)| r.recorded.load(Ordering::Acquire))
                .map(|(id, r)| (id.clone(), r.blueprint.clone()))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Recorded runs, newest first; of one blueprint when given. Runs that cannot be
    /// read are left out ([`App::run_list`] reports them).
    pub fn runs(&self, blueprint: Option<&str>, limit: usize) -> Result<Vec<RunRecord>> {
        Ok(self.store().runs(blueprint, limit)?)
    }

    /// Recorded runs, newest first, of one blueprint when given, and the runs met on the
    /// way that cannot be read, each with the command that removes it.
    pub fn run_list(&self, blueprint: Option<&str>, limit: usize) -> Result<mcpflow_store::RunList> {
        Ok(self.store().run_list(blueprint, limit)?)
    }

    /// Removes a recorded run with its events — one that cannot be read too. Returns
    /// whether it was recorded. A run in flight is refused: cancel it first.
    pub fn remove_run(&self, run_id: &str) -> Result<bool> {
        if self.active_runs().iter().any(|(id, _)| id == run_id) {
            return Err(AppError::BadRequest(format!(
                "run `{run_id}` is in flight; cancel it (or let it finish) before removing it"
            )));
        }
        Ok(self.store().delete_run(run_id)?)
    }

    /// Files the runs of `from`, a document never stored, under `to`: a new blueprint
    /// keeps the runs made before its first save under another id. Runs in flight stay
    /// where they are. Refused when `from` is a stored blueprint (its runs are its own).
    pub fn move_runs(&self, from: &str, to: &str) -> Result<u32> {
        if from == to {
            return Ok(0);
        }
        if self.store().blueprint(from)?.is_some() {
            return Err(AppError::BadRequest(format!(
                "blueprint `{from}` is stored, so its runs stay with it; only a document never saved gives its runs to the id it is first saved under"
            )));
        }
        let keep: Vec<String> = self.active_runs().into_iter().map(|(id, _)| id).collect();
        Ok(self.store().move_runs(from, to, &keep)?)
    }

    /// A recorded run with all its events, in order.
    pub fn run_detail(&self, run_id: &str) -> Result<RunDetail> {
        let record =
            self.store().run(run_id)?.ok_or_else(|| AppError::NotFound { what: "run", id: run_id.to_owned() })?;
        let events = self.store().events(run_id)?;
        Ok(RunDetail { record, events })
    }

    fn forget(&self, run_id: &str) {
        if let Ok(mut active) = self.inner.active.lock() {
            active.remove(run_id);
        }
    }

    /// The blueprint to run, checked, with its stored revision.
    fn load(&self, target: &Target) -> Result<(Blueprint, Plan, Option<u32>)> {
        let (doc, rev) = match target {
            Target::Stored(id) => {
                let stored = self.blueprint(id)?;
                (stored.json, Some(stored.meta.rev))
            }
            Target::Inline(doc) => (crate::blueprints::document(doc)?, None),
        };
        let text = serde_json::to_vec(&doc).map_err(|e| AppError::BadRequest(e.to_string()))?;
        let report = check_bytes(&text, &Options::default());
        if report.has_errors() {
            return Err(AppError::Invalid(report.diagnostics));
        }
        match (report.blueprint, report.plan) {
            (Some(bp), Some(plan)) => Ok((bp, plan, rev)),
            _ => Err(AppError::Invalid(report.diagnostics)),
        }
    }
}

/// Refuses a run whose blueprint is already on the stack of runs that led to it, or
/// that nests too deep.
pub fn check_stack(id: &str, stack: &[String]) -> Result<()> {
    let chain = || stack.iter().map(String::as_str).chain([id]).collect::<Vec<_>>().join(" → ");
    if stack.iter().any(|s| s == id) {
        return Err(AppError::Recursion { id: id.to_owned(), chain: chain() });
    }
    if stack.len() >= MAX_WORKFLOW_DEPTH {
        return Err(AppError::Depth { limit: MAX_WORKFLOW_DEPTH, chain: chain() });
    }
    Ok(())
}

/// What a run in flight shares between its entry in the table, its event sink and the
/// task that drives it.
#[derive(Clone)]
struct Shared {
    run_id: String,
    store: Store,
    /// Left waiting ([`App::park`]): its events from now on are not recorded, nor its end.
    parked: Arc<AtomicBool>,
    /// The questions open in its recorded events.
    asking: Arc<std::sync::Mutex<OpenQuestions>>,
    /// The time the run sits paused, from its events' `at_ms`: (since, total).
    paused: Arc<std::sync::Mutex<(Option<u64>, u64)>>,
}

/// What the task driving a run owns.
struct RunTask {
    engine: Engine,
    request: RunRequest,
    sink: EventSink,
    control: mpsc::UnboundedReceiver<Control>,
    logs: mpsc::Receiver<(String, String)>,
    cancel: CancellationToken,
    own_pool: Option<Arc<Pool>>,
    done: oneshot::Sender<Envelope>,
}

/// The run's configuration: its inputs checked against the blueprint, and what `spec`
/// asks of it (breakpoints, a paused start, a timeout, pinned outputs, a selection,
/// tasks to resume), checked against the plan.
fn run_config(engine: &Engine, bp: &Blueprint, plan: &Plan, run_id: String, spec: &mut StartRun) -> Result<RunConfig> {
    let mut config = engine.config(bp, run_id, spec.inputs.clone()).map_err(|e| match e {
        mcpflow_engine::StartError::Inputs(list) => AppError::Inputs(list),
        other => AppError::BadRequest(other.to_string()),
    })?;
    config.breakpoints = spec.breakpoints.clone();
    config.start_paused = spec.paused;
    config.timeout_ms = spec.timeout_ms;
    config.pinned = std::mem::take(&mut spec.pinned);
    config.only = spec.only.take();
    config.resume_tasks = std::mem::take(&mut spec.resume_tasks);
    config.check(plan).map_err(|e| AppError::BadRequest(e.to_string()))?;
    Ok(config)
}

/// The run's record as it starts.
fn run_record(run_id: &str, blueprint: &str, rev: Option<u32>, config: &RunConfig, spec: &mut StartRun) -> RunRecord {
    RunRecord {
        id: run_id.to_owned(),
        blueprint: blueprint.to_owned(),
        status: RecordStatus::Running,
        trigger: spec.trigger.as_str().to_owned(),
        client: spec.client.as_deref().map(client_name),
        inputs: config.inputs.clone(),
        started_at: config.started_at.clone(),
        finished_at: None,
        envelope: None,
        blueprint_rev: rev,
        // A document given whole is kept with the run: what it ran, whatever is saved later.
        definition: match &spec.target {
            Target::Inline(doc) => Some(doc.clone()),
            Target::Stored(_) => None,
        },
        rerun_of: spec.rerun_of.take(),
        resumed_from: spec.resumed_from.take(),
        debug: spec.paused || !spec.breakpoints.is_empty(),
        paused_ms: None,
    }
}

/// Where the run's events go: the store (with the time it sits paused and whether it
/// waits for a person), the starter's observer, and the broadcast its followers hear.
/// A parked run's events go nowhere.
fn event_sink(
    shared: &Shared,
    recorder: Arc<Recorder>,
    observer: Option<EventSink>,
    events: broadcast::Sender<Arc<RunEvent>>,
) -> EventSink {
    let shared = shared.clone();
    Arc::new(move |e: &RunEvent| {
        if shared.parked.load(Ordering::Acquire) {
            // Left waiting: the record stays as it was when the run was parked.
            return;
        }
        if let Ok(mut p) = shared.paused.lock() {
            match e.kind {
                EventKind::RunPaused { .. } => {
                    p.0.get_or_insert(e.at_ms);
                }
                EventKind::RunResumed {} | EventKind::RunFinished { .. } => {
                    if let Some(since) = p.0.take() {
                        p.1 += e.at_ms.saturating_sub(since);
                    }
                }
                _ => {}
            }
        }
        record_event(&shared, &recorder, e);
        if let Some(observer) = &observer {
            observer(e);
        }
        let _ = events.send(Arc::new(e.clone()));
    })
}

/// Appends an event to the run's record, and marks the record waiting (or not) as the
/// event opens or closes a question.
fn record_event(shared: &Shared, recorder: &Recorder, e: &RunEvent) {
    let (store, run_id) = (&shared.store, &shared.run_id);
    match store.append_event(run_id, e) {
        Ok(()) => {}
        // Too deep to read back: the run records why in the event's place
        // (see `Store::note_unrecorded`) and goes on.
        Err(refused @ mcpflow_store::Error::TooDeep { .. }) => {
            tracing::warn!(run = %run_id, error = %refused, "an event is recorded as why it was not");
            if let Err(err) = store.note_unrecorded(run_id, e, &refused) {
                recorder.report(&err);
            }
        }
        Err(err) => recorder.report(&err),
    }
    let change = shared.asking.lock().ok().and_then(|mut open| open.apply(&e.kind));
    if let Some(waiting) = change
        && let Err(err) = store.set_waiting(run_id, waiting)
    {
        recorder.report(&err);
    }
}

/// Syncs the store for the engine's [`Journal`] hook; reports a failing store once.
struct Recorder {
    store: Store,
    failed: AtomicBool,
}

impl Recorder {
    fn report(&self, error: &mcpflow_store::Error) {
        if !self.failed.swap(true, Ordering::Relaxed) {
            tracing::error!(%error, "could not record a run event; the run goes on unrecorded");
        }
    }
}

impl Journal for Recorder {
    fn sync(&self) {
        if let Err(e) = self.store.sync() {
            self.report(&e);
        }
    }
}

/// Where `workflow` steps find blueprints: the store first, then the folder.
struct Sources {
    store: Store,
    folder: Option<FolderSource>,
}

impl BlueprintSource for Sources {
    fn load(&self, id: &str) -> std::result::Result<Vec<u8>, String> {
        match (BlueprintSource::load(&self.store, id), &self.folder) {
            (Ok(bytes), _) => Ok(bytes),
            (Err(_), Some(folder)) => folder.load(id),
            (Err(e), None) => Err(e),
        }
    }
}

/// One record per top-level step, from a run's events: its last status (`waiting`, with
/// its `question`, while a question is open), attempts, duration, error and output.
pub fn step_records(events: &[RunEvent]) -> Vec<Value> {
    let mut order: Vec<String> = Vec::new();
    let mut records: HashMap<String, Value> = HashMap::new();
    for e in events {
        let (step, record) = match &e.kind {
            EventKind::StepStarted { step, path, attempt, .. } if path.is_empty() => {
                (step, serde_json::json!({ "step": step, "status": "running", "attempts": attempt }))
            }
            EventKind::StepFinished {
                step, path, status, output, error, attempts, duration_ms, recovered_by, ..
            } if path.is_empty() => {
                let mut r = serde_json::json!({
                    "step": step, "status": status.as_str(), "attempts": attempts, "duration_ms": duration_ms,
                    "output": output,
                });
                if let Some(error) = error {
                    r["error"] = serde_json::json!(error);
                }
                if let Some(by) = recovered_by {
                    r["recovered_by"] = serde_json::json!(by);
                }
                (step, r)
            }
            EventKind::StepSkipped { step, path, .. } if path.is_empty() => {
                (step, serde_json::json!({ "step": step, "status": "skipped" }))
            }
            // Waiting for a person (with what it asks), then running again once answered.
            EventKind::StepWaiting { step, path, question } if path.is_empty() => {
                if let Some(r) = records.get_mut(step) {
                    r["status"] = serde_json::json!("waiting");
                    r["question"] = serde_json::json!(question);
                }
                continue;
            }
            EventKind::StepAnswered { step, path, .. } if path.is_empty() => {
                if let Some(r) = records.get_mut(step) {
                    r["status"] = serde_json::json!("running");
                    if let Some(r) = r.as_object_mut() {
                        r.remove("question");
                    }
                }
                continue;
            }
            _ => continue,
        };
        if !records.contains_key(step) {
            order.push(step.clone());
        }
        records.insert(step.clone(), record);
    }
    order.into_iter().filter_map(|s| records.remove(&s)).collect()
}
