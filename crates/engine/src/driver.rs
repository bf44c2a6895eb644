//! The tokio driver: performs what the scheduler decides. It starts calls (through
//! [`Servers`]), runs timers on tokio's clock, forwards control requests and
//! cancellation, runs sub-workflows, and hands every event to the sink.

mod drive;

use crate::event::{Envelope, IterationPath, RunEvent, RunStatus};
use crate::people::{AskSink, NoOne, People, Question};
use crate::run_trace::RunTrace;
use crate::sampling::{NoModel, SampleRequest, SampleSink, Sampler};
use crate::scheduler::{Control, Input, Invocation, RunConfig, Scheduler};
use crate::servers::{CallAsk, CallError, CallRequest, ProgressSink, Servers, TaskHandle, TaskHooks, TaskSink};
use crate::source::{BlueprintSource, SavedValues};
use crate::telemetry::{CallTrace, RunOrigin, TraceContext};
use drive::Drive;
use mcpflow_blueprint::inputs::prepare_inputs;
use mcpflow_blueprint::{Blueprint, Options, Plan, check_bytes};
use serde_json::Value;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// Numbers questions: unique in the process, so within every run.
static QUESTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// How deep `workflow` steps may nest.
pub const MAX_WORKFLOW_DEPTH: usize = 8;

/// Progress notifications waiting for the driver, at most; past this they are dropped (a
/// later one says as much), so a server sending them without pause cannot fill memory.
const PROGRESS_QUEUE: usize = 256;

/// Server log lines waiting for a run's driver, at most (see [`Engine::run_with_logs`]).
pub const LOG_QUEUE: usize = 1024;

/// Receives every event of a run, in order.
pub type EventSink = Arc<dyn Fn(&RunEvent) + Send + Sync>;

/// Makes recorded events durable. The driver calls [`Journal::sync`] before it starts
/// a call after a step finished, so a finished step is on disk before any step that
/// may depend on it reaches a server (a crash loses no finished step).
pub trait Journal: Send + Sync {
    fn sync(&self);
}

/// What the driver needs from the outside world.
#[derive(Clone)]
pub struct Engine {
    pub servers: Arc<dyn Servers>,
    pub source: Option<Arc<dyn BlueprintSource>>,
    pub saved: Option<Arc<dyn SavedValues>>,
    pub journal: Option<Arc<dyn Journal>>,
    /// Who answers the run's questions (`input` steps, servers' elicitations); `None`:
    /// nobody, they fail with `INPUT_REQUIRED`.
    pub people: Option<Arc<dyn People>>,
    /// Who answers servers' requests for a model completion (sampling): a configured
    /// provider, the client of `mcpflow serve`; `None`: nobody, they fail with
    /// `SAMPLING_UNAVAILABLE`.
    pub sampler: Option<Arc<dyn Sampler>>,
    /// Where the run's spans and measurements go; `None`: telemetry is off.
    pub telemetry: Option<Arc<dyn crate::telemetry::Telemetry>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

/// One run's parameters.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub blueprint: Arc<Blueprint>,
    pub plan: Arc<Plan>,
    pub config: RunConfig,
    /// The workflows that started this run from outside (through `mcpflow serve`),
    /// outermost first: a run that reaches one of them again is refused.
    pub stack: Vec<String>,
    /// Who started the run and the caller's trace it joins, for its root span.
    pub origin: RunOrigin,
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error("invalid inputs: {}", .0.join("; "))]
    Inputs(Vec<String>),
    #[error("saved values: {0}")]
    Saved(String),
    /// `RunConfig::pinned` or `only` names a step the run cannot pin or run by itself
    /// (the message says which and what to do).
    #[error("{message}")]
    Selection { step: String, message: String },
}

impl StartError {
    pub fn code(&self) -> &'static str {
        match self {
            StartError::Inputs(_) => "INPUTS_INVALID",
            StartError::Saved(_) => "SAVED_UNREADABLE",
            StartError::Selection { .. } => "RERUN_INVALID",
        }
    }
}

impl Engine {
    /// An engine with servers only: no sub-workflows, saved values or journal.
    pub fn new(servers: Arc<dyn Servers>) -> Self {
        Engine { servers, source: None, saved: None, journal: None, people: None, sampler: None, telemetry: None }
    }

    /// Prepares a run config: inputs with defaults applied and validated, saved values loaded.
    pub fn config(&self, bp: &Blueprint, run_id: String, inputs: Value) -> Result<RunConfig, StartError> {
        let inputs = prepare_inputs(bp.inputs.as_ref(), inputs).map_err(StartError::Inputs)?;
        let saved = match &self.saved {
            Some(s) => s.load(&bp.id).map_err(StartError::Saved)?,
            None => Value::Object(Default::default()),
        };
        Ok(RunConfig {
            run_id,
            inputs,
            saved,
            started_at: now_rfc3339(),
            breakpoints: Default::default(),
            start_paused: false,
            timeout_ms: None,
            pinned: Default::default(),
            only: None,
            resume_tasks: Default::default(),
            trace_id: None,
        })
    }

    /// Runs to the end. `control` feeds pause/resume/step/breakpoints; `cancel` cancels.
    pub async fn run(
        &self,
        request: RunRequest,
        events: EventSink,
        control: Option<mpsc::UnboundedReceiver<Control>>,
        cancel: CancellationToken,
    ) -> Envelope {
        self.run_nested(request, events, control, None, cancel).await
    }

    /// Like [`Engine::run`], with server log lines (`(server, line)`) joining the events.
    /// The channel is bounded (make it with [`LOG_QUEUE`]): a sender should drop what does
    /// not fit rather than wait. Timers and cancellation are served before log lines.
    pub async fn run_with_logs(
        &self,
        request: RunRequest,
        events: EventSink,
        control: Option<mpsc::UnboundedReceiver<Control>>,
        logs: mpsc::Receiver<(String, String)>,
        cancel: CancellationToken,
    ) -> Envelope {
        self.run_nested(request, events, control, Some(logs), cancel).await
    }

    fn run_nested(
        &self,
        request: RunRequest,
        events: EventSink,
        control: Option<mpsc::UnboundedReceiver<Control>>,
        logs: Option<mpsc::Receiver<(String, String)>>,
        cancel: CancellationToken,
    ) -> futures::future::BoxFuture<'_, Envelope> {
        let RunRequest { blueprint, plan, mut config, mut stack, origin } = request;
        // Traced: the root span opens now, and its trace id goes into the config, from
        // which the scheduler writes it into `RunStarted` and the envelope (the id is an
        // input: the scheduler stays deterministic).
        let trace = self
            .telemetry
            .as_ref()
            .map(|telemetry| RunTrace::start(telemetry.clone(), plan.clone(), &blueprint.id, &config.run_id, &origin));
        // Log lines written during the run carry its ids (`--log-format json`).
        let log_span = trace.as_ref().map(|t| {
            let trace_id = t.trace_id_hex();
            let span = tracing::info_span!("run", run_id = %config.run_id, trace_id = %trace_id);
            config.trace_id = Some(trace_id);
            span
        });
        let run = Box::pin(async move {
            stack.push(blueprint.id.clone());
            let sched = Scheduler::new(&blueprint, plan, config);
            let (drive, mut inbox) = Drive::new(self, &blueprint.id, stack, cancel, trace, events);
            inbox.control = control;
            inbox.logs = logs;
            drive.run(sched, inbox).await
        });
        match log_span {
            Some(span) => Box::pin(run.instrument(span)),
            None => run,
        }
    }

    async fn invoke(&self, invocation: Invocation, call: Call<'_>) -> Result<Value, CallError> {
        let Call { inv, step, path, cancel, tx, tasks, resume, stack, confirm, trace } = call;
        match invocation {
            Invocation::Ask(question) => {
                let (unanswered, _) = mpsc::channel(1);
                let answer = self.asker(inv, step, path, tx.clone(), cancel.clone(), unanswered)(*question).await?;
                serde_json::to_value(&answer).map_err(|e| CallError::new("INPUT_INVALID", e.to_string(), false))
            }
            Invocation::Server(target) => {
                let (unanswered, mut failed) = mpsc::channel(1);
                let progress_tx = tx.clone();
                let progress: ProgressSink = Arc::new(move |p| {
                    // Full: the driver is behind; this one is dropped, a later one tells.
                    let _ = progress_tx.try_send(Input::Progress { inv, progress: p });
                });
                let started: TaskSink = Arc::new(move |handle| {
                    let (recorded, done) = tokio::sync::oneshot::channel();
                    let sent = tasks.send(TaskStart { inv, handle, recorded }).is_ok();
                    Box::pin(async move {
                        // The run ended (the driver is gone): nothing more to record.
                        if sent {
                            let _ = done.await;
                        }
                    })
                });
                let request = CallRequest {
                    target,
                    timeout: None,
                    cancel: cancel.clone(),
                    progress: Some(progress),
                    stack,
                    tasks: TaskHooks { started: Some(started), resume },
                    ask: Some(CallAsk {
                        sink: self.asker(
                            inv,
                            step.clone(),
                            path.clone(),
                            tx.clone(),
                            cancel.clone(),
                            unanswered.clone(),
                        ),
                        confirm_destructive: confirm,
                    }),
                    sample: Some(self.sample_sink(inv, step, path, tx.clone(), cancel.clone(), unanswered)),
                    trace: trace.zip(self.telemetry.clone()).map(|(parent, telemetry)| CallTrace { telemetry, parent }),
                };
                // A question of the server's that nobody can answer ends the call at once
                // with why (`INPUT_REQUIRED`), rather than with whatever the server makes of
                // the refusal; so does a sampling request refused or unanswered.
                tokio::select! {
                    biased;
                    Some(e) = failed.recv() => Err(e),
                    // The call may end on the question's failure before the branch above
                    // is polled again: the why still wins.
                    r = self.servers.call(request) => match failed.try_recv() {
                        Ok(e) => Err(e),
                        Err(_) => r,
                    },
                    () = cancel.cancelled() => Err(CallError::cancelled()),
                }
            }
            // Boxed: a sub-workflow's future is large and most calls are not one.
            Invocation::Workflow { id, inputs } => Box::pin(self.sub_workflow(&id, inputs, cancel, stack, trace)).await,
        }
    }

    /// The sink a call's questions go through: each is recorded on the step
    /// (`StepWaiting`), asked of the run's people, and its answer recorded
    /// (`StepAnswered`). The scheduler hears both in order with the call's other news.
    fn asker(
        &self,
        inv: u64,
        step: String,
        path: IterationPath,
        tx: mpsc::Sender<Input>,
        cancel: CancellationToken,
        unanswered: mpsc::Sender<CallError>,
    ) -> AskSink {
        let people: Arc<dyn People> = self.people.clone().unwrap_or_else(|| Arc::new(NoOne));
        Arc::new(move |mut question: Question| {
            question.id = format!("q{}", QUESTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            question.step.clone_from(&step);
            question.path.clone_from(&path);
            let (people, tx, cancel, unanswered) = (people.clone(), tx.clone(), cancel.clone(), unanswered.clone());
            Box::pin(async move {
                // Asked first, then put on record: whoever answers (the application's
                // registry) holds the question before anyone can read that the run waits
                // for it, and answer it.
                let asked = people.ask(question.clone(), cancel.clone());
                // Not dropped when the queue is full, unlike progress: the question must be
                // on record (it waits for the driver, which is not blocked on this call).
                if tx.send(Input::Waiting { inv, question: Box::new(question) }).await.is_err() {
                    return Err(CallError::cancelled());
                }
                let answer = tokio::select! {
                    answer = asked => answer,
                    () = cancel.cancelled() => Err(CallError::cancelled()),
                };
                match &answer {
                    Ok(a) => {
                        let _ = tx.send(Input::Answered { inv, answer: a.clone() }).await;
                    }
                    Err(e) if e.code != "CANCELLED" => {
                        let _ = unanswered.try_send(e.clone());
                    }
                    Err(_) => {}
                }
                answer
            })
        })
    }

    /// The sink a call's sampling requests go through: each is recorded on the step
    /// (`StepSampling`, cut), refused when the server's switch is off, else given to the
    /// run's sampler, and its answer or error recorded (`StepSampled`, cut). Refused or
    /// unanswered, the call ends at once with why.
    fn sample_sink(
        &self,
        inv: u64,
        step: String,
        path: IterationPath,
        tx: mpsc::Sender<Input>,
        cancel: CancellationToken,
        failed: mpsc::Sender<CallError>,
    ) -> SampleSink {
        let sampler: Arc<dyn Sampler> = self.sampler.clone().unwrap_or_else(|| Arc::new(NoModel::default()));
        let ask = self.asker(inv, step.clone(), path.clone(), tx.clone(), cancel.clone(), failed.clone());
        Arc::new(move |mut request: SampleRequest| {
            request.step.clone_from(&step);
            request.path.clone_from(&path);
            request.ask = Some(ask.clone());
            let (sampler, tx, cancel, failed) = (sampler.clone(), tx.clone(), cancel.clone(), failed.clone());
            Box::pin(async move {
                let server = request.server.clone();
                let asked = Box::new(crate::sampling::bounded(&request.params));
                // On record before anyone answers (waits for the driver, like a question).
                if tx.send(Input::Sampling { inv, server: server.clone(), request: asked }).await.is_err() {
                    return Err(CallError::cancelled());
                }
                let answer = if request.allowed {
                    tokio::select! {
                        answer = sampler.sample(request, cancel.clone()) => answer,
                        () = cancel.cancelled() => Err(CallError::cancelled()),
                    }
                } else {
                    Err(request.not_allowed())
                };
                let outcome = answer.as_ref().map(|a| Box::new(crate::sampling::bounded(a))).map_err(Clone::clone);
                let _ = tx.send(Input::Sampled { inv, server, outcome }).await;
                if let Err(e) = &answer
                    && e.code != "CANCELLED"
                {
                    let _ = failed.try_send(e.clone());
                }
                answer
            })
        })
    }

    async fn sub_workflow(
        &self,
        id: &str,
        inputs: Value,
        cancel: CancellationToken,
        stack: Vec<String>,
        parent: Option<TraceContext>,
    ) -> Result<Value, CallError> {
        if stack.iter().any(|s| s == id) {
            let chain = stack.iter().map(String::as_str).chain([id]).collect::<Vec<_>>().join(" → ");
            return Err(CallError::new(
                "WORKFLOW_RECURSION",
                format!("sub-workflows call each other in a circle: {chain}"),
                false,
            ));
        }
        if stack.len() >= MAX_WORKFLOW_DEPTH {
            return Err(CallError::new(
                "WORKFLOW_DEPTH",
                format!("sub-workflows nest deeper than {MAX_WORKFLOW_DEPTH} ({})", stack.join(" → ")),
                false,
            ));
        }
        let Some(source) = &self.source else {
            return Err(CallError::new("WORKFLOW_NOT_FOUND", format!("no blueprint source to find `{id}`"), false));
        };
        let bytes = source.load(id).map_err(|e| CallError::new("WORKFLOW_NOT_FOUND", e, false))?;
        let report = check_bytes(&bytes, &Options::default());
        let first = report.errors().next().map(|d| format!("{} at {}: {}", d.code, d.pointer, d.message));
        let (Some(bp), Some(plan)) = (report.blueprint, report.plan) else {
            let first = first.unwrap_or_default();
            return Err(CallError::new("WORKFLOW_INVALID", format!("blueprint `{id}` is invalid: {first}"), false));
        };
        let run_id = format!("{}/{}", stack.last().map_or("", String::as_str), id);
        let config = self.config(&bp, run_id, inputs).map_err(|e| CallError::new(e.code(), e.to_string(), false))?;
        // Traced: the callee's root span is a child of the calling step's attempt.
        let origin = RunOrigin { trigger: "workflow", parent };
        let request = RunRequest { blueprint: Arc::new(bp), plan: Arc::new(plan), config, stack, origin };
        let sink: EventSink = Arc::new(|_| {});
        let envelope = self.run_nested(request, sink, None, None, cancel).await;
        match envelope.status {
            RunStatus::Succeeded | RunStatus::Partial => Ok(envelope.output),
            RunStatus::Cancelled => Err(CallError::cancelled()),
            _ => {
                let first = envelope.errors.first();
                let message = first.map_or_else(
                    || "it failed".to_owned(),
                    |e| format!("{} in step `{}`: {}", e.code, e.step, e.message),
                );
                let code =
                    first.filter(|e| e.code.starts_with("WORKFLOW_")).map_or("WORKFLOW_FAILED", |e| e.code.as_str());
                Err(CallError::new(code, format!("sub-workflow `{id}` failed: {message}"), false))
            }
        }
    }
}

/// One call the driver performs, with what it reports back through.
struct Call<'a> {
    inv: u64,
    step: String,
    path: IterationPath,
    cancel: CancellationToken,
    tx: &'a mpsc::Sender<Input>,
    tasks: mpsc::UnboundedSender<TaskStart>,
    resume: Option<TaskHandle>,
    stack: Vec<String>,
    confirm: bool,
    /// The span the call belongs to (its step's attempt), when the run is traced.
    trace: Option<TraceContext>,
}

/// A call became a task: its handle, and who waits for it to be on disk.
struct TaskStart {
    inv: u64,
    handle: TaskHandle,
    recorded: tokio::sync::oneshot::Sender<()>,
}

/// The current time as RFC 3339 (UTC, milliseconds).
fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
