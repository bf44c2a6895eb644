//! The scheduler: a pure state machine. [`Scheduler::apply`] takes the current time and
//! one [`Input`] (start, a call finished, a timer fired, a control request) and returns
//! the [`Action`]s the driver must perform (emit an event, invoke a call, cancel one,
//! set a timer, save a value, finish). It does no IO and reads no clock, so tests drive
//! it step by step and recorded histories replay to the same decisions.
//!
//! A run is a tree of *frames*: the top-level list is frame 0; each loop iteration is a
//! frame holding the loop body's steps. Each frame keeps one [`Slot`] per member step.

mod control;
mod events;
mod frames;
mod loops;
mod scope;
mod timers;

use crate::driver::StartError;
use crate::event::{
    Envelope, ErrorEntry, EventKind, IterationPath, LogLevel, PauseReason, RunEvent, RunStatus, SkipReason, StepError,
    StepStatus, Summary,
};
use crate::results::{output_forms, prompt_output, resource_output, tool_output_in};
use crate::servers::{CallError, CallTarget, Progress, TaskHandle};
use events::Finished;
use frames::{Frames, Slot, State};
use mcpflow_blueprint::diagnostic::did_you_mean;
use mcpflow_blueprint::limits::DEFAULT_MAX_VALUE_BYTES;
use mcpflow_blueprint::template::{Rcvar, Template, Variable, truthy, value_size, value_to_var, var_to_value};
use mcpflow_blueprint::{Blueprint, OnError, Plan, Retry, StepIdx, StepKind, StepTemplates};
use scope::View;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use timers::TimerKind;

/// Default `limits.concurrency`.
pub const DEFAULT_CONCURRENCY: u32 = 16;
/// Default `limits.max_step_runs` (defined with the blueprint format's other limits).
pub use mcpflow_blueprint::limits::DEFAULT_MAX_STEP_RUNS;

pub type InvId = u64;
pub type TimerId = u64;
pub(crate) type FrameId = usize;

/// Something the driver performs on the scheduler's behalf.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Server(CallTarget),
    /// Run another blueprint by id with these inputs; the result is its output.
    Workflow {
        id: String,
        inputs: Value,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Emit(RunEvent),
    /// `sync`: a step this call depends on finished since the journal last synced; the
    /// driver makes the journal durable before the call starts.
    Invoke {
        inv: InvId,
        step: String,
        path: IterationPath,
        invocation: Invocation,
        sync: bool,
        /// Resuming an interrupted run: the task this step instance had in flight, to poll
        /// instead of calling again (see [`RunConfig::resume_tasks`]).
        resume: Option<TaskHandle>,
    },
    Cancel {
        inv: InvId,
    },
    SetTimer {
        timer: TimerId,
        at_ms: u64,
    },
    Save {
        name: String,
        value: Value,
    },
    Finish(Envelope),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    Pause,
    Resume,
    /// Start the next ready step, then pause.
    Step,
    Cancel,
    SetBreakpoints(Vec<String>),
}

#[derive(Debug, Clone)]
pub enum Input {
    Start,
    /// A call finished: the raw MCP result (or a sub-workflow's output) or an error.
    Completed {
        inv: InvId,
        result: Result<Value, CallError>,
    },
    Progress {
        inv: InvId,
        progress: Progress,
    },
    /// The server runs the call as a task: its handle, to be recorded.
    TaskStarted {
        inv: InvId,
        handle: TaskHandle,
    },
    Timer {
        timer: TimerId,
    },
    Control(Control),
    /// A line a server wrote (its stderr), to appear in the run's event stream.
    Log {
        source: String,
        message: String,
    },
    /// Go on with the steps an earlier input left ready (see [`Scheduler::has_more`]).
    Continue,
}

/// What a run starts with. `Default` gives an empty config, so that a struct literal
/// can name only what it sets (`..RunConfig::default()`).
#[derive(Debug, Clone, Default)]
pub struct RunConfig {
    pub run_id: String,
    /// Prepared inputs (defaults applied, validated).
    pub inputs: Value,
    /// Values saved by earlier runs (`saved`).
    pub saved: Value,
    /// RFC 3339 start time, for `run.started_at`.
    pub started_at: String,
    pub breakpoints: HashSet<String>,
    /// Start paused (Debug): nothing starts until `resume` or `step`.
    pub start_paused: bool,
    /// Overrides `limits.timeout_ms` (the CLI's `--timeout`).
    pub timeout_ms: Option<u64>,
    /// Re-running part of an earlier run: top-level step id → its output from that run.
    /// A pinned step does not run; when its dependencies are done it finishes at once as
    /// succeeded with this output (`attempts: 0`), which templates read as if it had run.
    pub pinned: BTreeMap<String, Value>,
    /// The top-level steps allowed to run (`None`: all). A top-level step that is
    /// neither here nor pinned is skipped, and the skip rule applies downstream.
    pub only: Option<BTreeSet<String>>,
    /// Resuming an interrupted run: (step id, iteration path) → the task that step
    /// instance had in flight. Its first call polls that task instead of calling again.
    pub resume_tasks: HashMap<(String, IterationPath), TaskHandle>,
}

impl RunConfig {
    /// Checks `pinned` and `only` against the plan that will run: each names a top-level
    /// step that is not a fallback, no step is both pinned and in `only`, and a pinned
    /// switch's output names one of its cases. The scheduler refuses to start otherwise.
    pub fn check(&self, plan: &Plan) -> Result<(), StartError> {
        let only = self.only.iter().flatten().map(|id| ("only", id));
        for (field, id) in self.pinned.keys().map(|id| ("pinned", id)).chain(only) {
            top_level_step(plan, field, id)?;
        }
        if let Some(only) = &self.only
            && let Some(id) = self.pinned.keys().find(|id| only.contains(*id))
        {
            return Err(StartError::Selection {
                step: id.clone(),
                message: format!(
                    "step `{id}` is both pinned and in `only`; a step either runs again or keeps its earlier output, so name it in one of them"
                ),
            });
        }
        for (id, output) in &self.pinned {
            let Some(&idx) = plan.by_id.get(id) else { continue };
            if let StepKind::Switch(sw) = &plan.steps[idx].step.kind
                && pinned_case(output, sw.cases.len()).is_none()
            {
                return Err(StartError::Selection {
                    step: id.clone(),
                    message: format!(
                        "the pinned output of switch `{id}` is {output}, but a switch's output is {{\"case\": <index of one of its {} case(s)> | \"default\"}}; pin the output the switch gave in an earlier run of this blueprint, or let it run again",
                        sw.cases.len()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// `id` names a top-level step that can be pinned or run by itself.
fn top_level_step(plan: &Plan, field: &str, id: &str) -> Result<(), StartError> {
    let selection = |message: String| Err(StartError::Selection { step: id.to_owned(), message });
    let Some(&idx) = plan.by_id.get(id) else {
        let top = plan.lists[0].members.iter().filter(|&&m| plan.steps[m].fallback_of.is_none());
        let hint = did_you_mean(id, top.map(|&m| plan.steps[m].step.id()));
        let hint = if hint.is_empty() { "name a top-level step".to_owned() } else { hint };
        return selection(format!("`{field}` names `{id}`, but the blueprint has no such step; {hint}"));
    };
    let planned = &plan.steps[idx];
    if let Some(owner) = plan.lists[planned.list].owner {
        let owner = plan.steps[owner].step.id();
        return selection(format!(
            "`{field}` names `{id}`, a step inside loop `{owner}`; steps in a loop run with it, so name `{owner}` instead"
        ));
    }
    if let Some(of) = planned.fallback_of {
        let of = plan.steps[of].step.id();
        return selection(format!(
            "`{field}` names `{id}`, the fallback of `{of}`; a fallback runs only for its step, so name `{of}` instead"
        ));
    }
    Ok(())
}

/// The case a switch output (`{ "case": i | "default" }`) names: `Some(Some(i))`, or
/// `Some(None)` for the default; `None` when it names none of `cases` cases.
fn pinned_case(output: &Value, cases: usize) -> Option<Option<usize>> {
    match output.get("case")? {
        Value::String(s) if s == "default" => Some(None),
        Value::Number(n) => n.as_u64().and_then(|i| usize::try_from(i).ok()).filter(|&i| i < cases).map(Some),
        _ => None,
    }
}

/// [`pinned_case`] over the value the scheduler keeps.
fn routed_case(output: &Variable) -> Option<Option<usize>> {
    let Variable::Object(o) = output else { return None };
    match &**o.get("case")? {
        Variable::String(s) if s == "default" => Some(None),
        Variable::Number(n) => n.as_u64().and_then(|i| usize::try_from(i).ok()).map(Some),
        _ => None,
    }
}

/// The outcome of a step instance.
enum Outcome {
    /// `json`: the output as JSON when it is at hand already (a call's result), so the
    /// event need not convert it back from `output`.
    Succeeded {
        output: Rcvar,
        json: Option<Value>,
        raw: Option<Value>,
    },
    Failed {
        error: StepError,
        retryable: bool,
        raw: Option<Value>,
    },
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Phase {
    NotStarted,
    Running,
    Done,
}

pub struct Scheduler {
    plan: Arc<Plan>,
    bp_id: String,
    on_error: OnError,
    retry: Option<Retry>,
    concurrency: u32,
    max_step_runs: u64,
    /// `limits.max_value_bytes`: the largest value a template may build or a step output.
    pub(crate) max_value_bytes: u64,
    run_timeout: Option<u64>,
    /// `config` without `pinned` and `only`, which are moved here.
    config: RunConfig,
    /// Pinned top-level steps: the output each finishes with, taken when it does (so
    /// the run holds it once, as it holds a real output).
    pinned: HashMap<StepIdx, Value>,
    /// The top-level steps allowed to run (`None`: all).
    only: Option<HashSet<StepIdx>>,
    /// Why `pinned` / `only` cannot be used: the run fails as it starts.
    refused: Option<StartError>,
    /// Steps with an instance finished since the journal last synced (see `needs_sync`).
    unsynced: HashSet<StepIdx>,
    pub(crate) inputs: Rcvar,
    pub(crate) saved: Rcvar,
    pub(crate) run_var: Rcvar,
    /// Per step: the steps of its list that depend on it.
    dependents: Vec<Vec<StepIdx>>,
    pub(crate) frames: Frames,
    /// Iterations finished during the current input, removed once it is handled.
    finished_frames: Vec<FrameId>,
    ready: BTreeSet<(FrameId, usize)>,
    invocations: HashMap<InvId, (FrameId, usize)>,
    timers: HashMap<TimerId, TimerKind>,
    next_id: u64,
    seq: u64,
    now: u64,
    started_at: u64,
    running_calls: u32,
    step_runs: u64,
    tool_calls: u64,
    paused: bool,
    step_once: bool,
    breakpoints: HashSet<String>,
    errors: Vec<ErrorEntry>,
    phase: Phase,
    out: Vec<Action>,
    /// The last `apply` stopped after [`STARTS_PER_INPUT`] steps with more ready to start.
    more: bool,
    /// Values nothing reads any more (finished iterations'), kept until
    /// [`Scheduler::take_retired`], so the driver can free them when it has nothing
    /// more urgent to do. At most [`RETIRED`] are kept.
    retired: Vec<FrameValues>,
}

/// Steps started by one `apply`, at most. A long run of steps that need no call (a loop
/// of transforms) is cut into pieces: the driver hands each piece's events to the sink and
/// frees them, and hears timers and cancellation, before it asks for the next piece with
/// [`Input::Continue`]. Without the cut, a 1,000,000-iteration loop would hold every
/// iteration's events and frame until its last iteration ended.
const STARTS_PER_INPUT: u32 = 1024;

/// Finished iterations whose values wait for [`Scheduler::take_retired`]; past this,
/// `apply` frees them itself (a caller that never takes them keeps no more than these).
const RETIRED: usize = 64;

/// What a finished iteration frame held: outputs, records, loop variables.
type FrameValues = (HashMap<String, Rcvar>, HashMap<String, Rcvar>, Vec<(String, Rcvar)>);

/// Values of finished iterations that nothing reads any more, to be dropped.
#[derive(Debug, Default)]
pub struct Retired {
    _values: Vec<FrameValues>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler").field("run_id", &self.config.run_id).field("phase", &self.phase).finish()
    }
}

fn err(code: &str, message: impl Into<String>) -> StepError {
    StepError { code: code.into(), message: message.into(), detail: None }
}

impl Scheduler {
    pub fn new(blueprint: &Blueprint, plan: Arc<Plan>, mut config: RunConfig) -> Self {
        let refused = config.check(&plan).err();
        let index = |id: &String| plan.by_id.get(id).copied();
        let pinned =
            std::mem::take(&mut config.pinned).into_iter().filter_map(|(id, v)| Some((index(&id)?, v))).collect();
        let only = config.only.take().map(|only| only.iter().filter_map(index).collect());
        let mut dependents = vec![Vec::new(); plan.steps.len()];
        for (idx, s) in plan.steps.iter().enumerate() {
            for &d in &s.deps {
                dependents[d].push(idx);
            }
        }
        let limits = blueprint.limits.clone().unwrap_or_default();
        let run_var = value_to_var(json!({
            "id": config.run_id, "blueprint": blueprint.id, "started_at": config.started_at,
        }));
        Scheduler {
            bp_id: blueprint.id.clone(),
            on_error: blueprint.on_error.unwrap_or(OnError::Abort),
            retry: blueprint.retry.clone(),
            concurrency: limits.concurrency.unwrap_or(DEFAULT_CONCURRENCY).max(1),
            max_step_runs: limits.max_step_runs.unwrap_or(DEFAULT_MAX_STEP_RUNS),
            max_value_bytes: limits.max_value_bytes.unwrap_or(DEFAULT_MAX_VALUE_BYTES),
            run_timeout: config.timeout_ms.or(limits.timeout_ms),
            inputs: value_to_var(config.inputs.clone()),
            saved: value_to_var(if config.saved.is_object() { config.saved.clone() } else { json!({}) }),
            run_var,
            dependents,
            frames: Frames::default(),
            finished_frames: Vec::new(),
            ready: BTreeSet::new(),
            invocations: HashMap::new(),
            timers: HashMap::new(),
            next_id: 1,
            seq: 0,
            now: 0,
            started_at: 0,
            running_calls: 0,
            step_runs: 0,
            tool_calls: 0,
            paused: config.start_paused,
            step_once: false,
            breakpoints: config.breakpoints.clone(),
            errors: Vec::new(),
            phase: Phase::NotStarted,
            out: Vec::new(),
            more: false,
            retired: Vec::new(),
            pinned,
            only,
            refused,
            unsynced: HashSet::new(),
            plan,
            config,
        }
    }

    /// True once the run has finished (`Action::Finish` was returned).
    pub fn is_finished(&self) -> bool {
        self.phase == Phase::Done
    }

    /// True when the last `apply` left ready steps it may start now: feed
    /// [`Input::Continue`] (after the actions it returned are performed).
    pub fn has_more(&self) -> bool {
        self.more && self.phase == Phase::Running && !self.paused
    }

    /// The values of finished iterations, for the caller to drop when it suits it.
    pub fn take_retired(&mut self) -> Retired {
        Retired { _values: std::mem::take(&mut self.retired) }
    }

    /// Feeds one input at time `now_ms` (milliseconds on the driver's clock).
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Vec<Action> {
        if self.retired.len() >= RETIRED {
            self.retired.clear();
        }
        self.now = now_ms.max(self.now);
        match input {
            Input::Start => self.start(),
            _ if self.phase != Phase::Running => {}
            Input::Completed { inv, result } => self.completed(inv, result),
            Input::Progress { inv, progress } => self.progress(inv, progress),
            Input::TaskStarted { inv, handle } => self.task_started(inv, handle),
            Input::Timer { timer } => self.timer(timer),
            Input::Control(c) => self.control(c),
            Input::Log { source, message } => self.emit(EventKind::Log {
                level: LogLevel::Info,
                message: format!("[{source}] {message}"),
                step: None,
            }),
            Input::Continue => {}
        }
        if self.phase == Phase::Running {
            self.pump();
        }
        // Nothing refers to a finished iteration any more (its slots are all done, its
        // values retired); its frame goes now that no step of this input is half done.
        for frame in std::mem::take(&mut self.finished_frames) {
            self.frames.remove(frame);
        }
        std::mem::take(&mut self.out)
    }

    // ----- events -------------------------------------------------------------------

    // ----- lifecycle ------------------------------------------------------------------

    fn start(&mut self) {
        if self.phase != Phase::NotStarted {
            return;
        }
        self.phase = Phase::Running;
        self.started_at = self.now;
        self.emit(EventKind::RunStarted {
            run_id: self.config.run_id.clone(),
            blueprint: self.bp_id.clone(),
            inputs: self.config.inputs.clone(),
        });
        if let Some(refused) = self.refused.take() {
            let step = match &refused {
                StartError::Selection { step, .. } => step.clone(),
                _ => String::new(),
            };
            self.errors.push(ErrorEntry {
                step,
                path: Vec::new(),
                code: refused.code().into(),
                message: refused.to_string(),
            });
            self.end(RunStatus::Failed, Value::Null);
            return;
        }
        if let Some(ms) = self.run_timeout {
            let at = self.now + ms;
            self.set_timer(TimerKind::Run, at);
        }
        if self.paused {
            self.emit(EventKind::RunPaused {
                reason: PauseReason::Requested,
                step: None,
                path: None,
                args: None,
                preview: None,
            });
        }
        let top = self.new_frame(0, None, None, Vec::new(), Vec::new(), 0);
        if self.frames[top].open == 0 {
            self.frame_complete(top);
        }
    }

    /// A step whose dependencies are done may start: it becomes ready — unless the run
    /// re-runs part of an earlier one and the step is pinned (it finishes at once with
    /// its earlier output) or not among those to run (it is skipped).
    fn make_ready(&mut self, frame: FrameId, pos: usize) {
        if self.plan.steps[self.id_of(frame, pos)].step.common.is_disabled() {
            self.skip_disabled(frame, pos);
            return;
        }
        // Frame 0 is the top level: only top-level steps are pinned or left out.
        if frame == 0 {
            let idx = self.id_of(frame, pos);
            if let Some(output) = self.pinned.remove(&idx) {
                self.finish_pinned(pos, output);
                return;
            }
            if self.only.as_ref().is_some_and(|only| !only.contains(&idx)) {
                self.skip(frame, pos);
                return;
            }
        }
        self.frames[frame].slots[pos].state = State::Ready;
        self.ready.insert((frame, pos));
    }

    /// A pinned top-level step finishes without running: succeeded, `attempts: 0`,
    /// `duration_ms: 0`, its output in the same forms as a real one. No `StepStarted`
    /// (nothing started), no breakpoint, no `save` (the earlier run saved it).
    fn finish_pinned(&mut self, pos: usize, output: Value) {
        let step = self.step_name(0, pos);
        self.emit(EventKind::Log {
            level: LogLevel::Info,
            message: format!("step `{step}` pinned from an earlier run"),
            step: Some(step),
        });
        let (json, output) = output_forms(Cow::Owned(output));
        self.emit_finished(0, pos, Finished::succeeded(json, None, None));
        self.settle(0, pos, StepStatus::Succeeded, output, None);
    }

    /// Starts every ready step that may start now, in document order.
    fn pump(&mut self) {
        self.more = false;
        let mut started = 0u32;
        loop {
            if self.phase != Phase::Running || self.paused {
                return;
            }
            let candidates: Vec<(FrameId, usize)> = self.ready.iter().copied().collect();
            let mut progressed = false;
            for (frame, pos) in candidates {
                if self.phase != Phase::Running || self.paused {
                    return;
                }
                if !self.frames.get(frame).is_some_and(|f| matches!(f.slots[pos].state, State::Ready)) {
                    self.ready.remove(&(frame, pos));
                    continue;
                }
                if self.needs_call_slot(frame, pos) && self.running_calls >= self.concurrency {
                    continue;
                }
                if started == STARTS_PER_INPUT {
                    self.more = true;
                    return;
                }
                self.ready.remove(&(frame, pos));
                if self.start_step(frame, pos) {
                    progressed = true;
                    started += 1;
                }
            }
            if !progressed {
                return;
            }
        }
    }

    fn needs_call_slot(&self, frame: FrameId, pos: usize) -> bool {
        matches!(
            self.plan.steps[self.id_of(frame, pos)].step.kind,
            StepKind::Tool(_) | StepKind::Resource(_) | StepKind::Prompt(_) | StepKind::Workflow(_)
        )
    }

    /// Starts one step; returns whether it started (a breakpoint may hold it).
    fn start_step(&mut self, frame: FrameId, pos: usize) -> bool {
        let idx = self.id_of(frame, pos);
        let step_id = self.plan.steps[idx].step.id().to_owned();
        let path = self.frames[frame].path.clone();
        let plan = self.plan.clone();
        let planned = &plan.steps[idx];

        // Resolve arguments first: breakpoints show them. Transforms and loops resolve to
        // shared values (no copy of what they read); their events show a summary.
        let resolved = self.resolve_value(frame, pos).and_then(|value| {
            let shown = match (&planned.step.kind, &value) {
                (StepKind::Transform(_), _) => None,
                (StepKind::Loop(_), Some(v)) => Some(json!({ "items": v.as_array().map(Vec::len) })),
                (StepKind::Loop(_), None) => None,
                _ => self.resolve_args(frame, pos)?,
            };
            Ok((value, shown))
        });
        let (value, args) = match resolved {
            Ok(a) => a,
            Err(e) => {
                self.frames[frame].slots[pos].attempts += 1;
                self.frames[frame].slots[pos].started_ms.get_or_insert(self.now);
                self.emit(EventKind::StepStarted {
                    step: step_id.clone(),
                    path: path.clone(),
                    attempt: self.frames[frame].slots[pos].attempts,
                    args: None,
                });
                self.finish(frame, pos, Outcome::Failed { error: e, retryable: false, raw: None });
                return true;
            }
        };
        if self.breakpoints.contains(&step_id) && !self.frames[frame].slots[pos].released {
            self.frames[frame].slots[pos].released = true;
            self.frames[frame].slots[pos].state = State::Ready;
            self.ready.insert((frame, pos));
            self.paused = true;
            let preview = self.pause_preview(frame, pos, value.as_ref());
            self.emit(EventKind::RunPaused {
                reason: PauseReason::Breakpoint,
                step: Some(step_id),
                path: Some(path),
                args: args.clone(),
                preview,
            });
            return false;
        }
        self.step_runs += 1;
        if self.step_runs > self.max_step_runs {
            let e = err(
                "MAX_STEP_RUNS",
                format!("the run started more than {} steps (limits.max_step_runs)", self.max_step_runs),
            );
            self.fail_run(e, RunStatus::Failed);
            return true;
        }
        let slot = &mut self.frames[frame].slots[pos];
        slot.attempts += 1;
        slot.started_ms.get_or_insert(self.now);
        let attempt = slot.attempts;
        self.emit(EventKind::StepStarted { step: step_id.clone(), path: path.clone(), attempt, args: args.clone() });
        if self.step_once {
            self.step_once = false;
            self.paused = true;
            self.emit(EventKind::RunPaused {
                reason: PauseReason::Stepped,
                step: Some(step_id.clone()),
                path: Some(path.clone()),
                args: None,
                preview: None,
            });
        }
        match (&planned.step.kind, &planned.templates) {
            (StepKind::Transform(_), _) => {
                let output = value.unwrap_or_else(|| value_to_var(Value::Null));
                self.finish(frame, pos, Outcome::Succeeded { output, json: None, raw: None });
            }
            (StepKind::Switch(_), StepTemplates::Switch { when }) => {
                let mut chosen: Option<usize> = None;
                for (i, t) in when.iter().enumerate() {
                    match t.render_var(&self.view(frame, pos)) {
                        Ok(v) if truthy(&v) => {
                            chosen = Some(i);
                            break;
                        }
                        Ok(_) => {}
                        Err(e) => {
                            let error = err(e.code, e.message);
                            self.finish(frame, pos, Outcome::Failed { error, retryable: false, raw: None });
                            return true;
                        }
                    }
                }
                // The output routes: when it is settled, the targets it does not name
                // are skipped (see `wake_dependents`).
                let output = value_to_var(json!({ "case": chosen.map_or(json!("default"), |i| json!(i)) }));
                self.finish(frame, pos, Outcome::Succeeded { output, json: None, raw: None });
            }
            (StepKind::Wait(w), _) => {
                let at = self.now + w.ms;
                let timer = self.set_timer(TimerKind::Wait(frame, pos), at);
                self.frames[frame].slots[pos].state = State::Sleeping { timer };
            }
            (StepKind::Loop(_), _) => self.start_loop(frame, pos, value),
            (StepKind::Workflow(w), _) => {
                let invocation = Invocation::Workflow { id: w.workflow.clone(), inputs: args.unwrap_or(json!({})) };
                self.invoke(frame, pos, step_id, path, invocation);
            }
            (StepKind::Tool(t), _) => {
                let args = match args {
                    Some(Value::Object(m)) => m,
                    Some(Value::Null) | None => Map::new(),
                    Some(other) => {
                        let e = err("ARGS_NOT_OBJECT", format!("`args` resolved to {other}, not an object"));
                        self.finish(frame, pos, Outcome::Failed { error: e, retryable: false, raw: None });
                        return true;
                    }
                };
                self.tool_calls += 1;
                let target = CallTarget::Tool { server: t.server.clone(), tool: t.tool.clone(), args };
                self.invoke(frame, pos, step_id, path, Invocation::Server(target));
            }
            (StepKind::Resource(r), _) => {
                let uri = args.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
                let target = CallTarget::Resource { server: r.server.clone(), uri };
                self.invoke(frame, pos, step_id, path, Invocation::Server(target));
            }
            (StepKind::Prompt(p), _) => {
                let args = match args {
                    Some(Value::Object(m)) => m
                        .into_iter()
                        .map(|(k, v)| match v {
                            Value::String(s) => (k, Value::String(s)),
                            other => (k, Value::String(other.to_string())),
                        })
                        .collect(),
                    _ => Map::new(),
                };
                let target = CallTarget::Prompt { server: p.server.clone(), prompt: p.prompt.clone(), args };
                self.invoke(frame, pos, step_id, path, Invocation::Server(target));
            }
            (StepKind::Switch(_), _) => {}
        }
        true
    }

    fn invoke(&mut self, frame: FrameId, pos: usize, step: String, path: IterationPath, invocation: Invocation) {
        let inv = self.fresh();
        self.invocations.insert(inv, (frame, pos));
        self.running_calls += 1;
        let timeout = self.plan.steps[self.id_of(frame, pos)].step.common.timeout_ms.map(|ms| {
            let at = self.now + ms;
            self.set_timer(TimerKind::Timeout(inv), at)
        });
        self.frames[frame].slots[pos].state = State::Running { inv, timeout };
        let sync = self.needs_sync(frame, pos);
        let resume = match &invocation {
            Invocation::Server(_) if !self.config.resume_tasks.is_empty() => {
                self.config.resume_tasks.remove(&(step.clone(), path.clone()))
            }
            _ => None,
        };
        self.out.push(Action::Invoke { inv, step, path, invocation, sync, resume });
    }

    /// A transform's value and a loop's `for_each`, as shared values.
    fn resolve_value(&self, frame: FrameId, pos: usize) -> Result<Option<Rcvar>, StepError> {
        let view = self.view(frame, pos);
        let t = match &self.plan.steps[self.id_of(frame, pos)].templates {
            StepTemplates::Transform { value } => Some(value),
            StepTemplates::Loop { for_each, .. } => for_each.as_ref(),
            _ => None,
        };
        t.map(|t| t.render_var(&view).map_err(|e| err(e.code, e.message))).transpose()
    }

    /// The resolved "arguments" of a step (what `StepStarted` shows).
    fn resolve_args(&self, frame: FrameId, pos: usize) -> Result<Option<Value>, StepError> {
        let idx = self.id_of(frame, pos);
        let view = self.view(frame, pos);
        let render = |t: &Option<Template>| -> Result<Option<Value>, StepError> {
            t.as_ref().map(|t| t.render(&view).map_err(|e| err(e.code, e.message))).transpose()
        };
        match (&self.plan.steps[idx].templates, &self.plan.steps[idx].step.kind) {
            (StepTemplates::Tool { args } | StepTemplates::Prompt { args } | StepTemplates::Workflow { args }, _) => {
                render(args)
            }
            (StepTemplates::Resource { uri }, _) => render(&Some(uri.clone())),

            (StepTemplates::Wait, StepKind::Wait(w)) => Ok(Some(json!({ "ms": w.ms }))),
            _ => Ok(None),
        }
    }

    // ----- completion -----------------------------------------------------------------

    fn completed(&mut self, inv: InvId, result: Result<Value, CallError>) {
        let Some((frame, pos)) = self.invocations.remove(&inv) else { return };
        self.running_calls = self.running_calls.saturating_sub(1);
        let State::Running { timeout, .. } = self.frames[frame].slots[pos].state else { return };
        if let Some(t) = timeout {
            self.timers.remove(&t);
        }
        let idx = self.id_of(frame, pos);
        let outcome = match result {
            Err(e) => Outcome::Failed {
                retryable: e.transient,
                error: StepError { code: e.code, message: e.message, detail: e.detail },
                raw: None,
            },
            Ok(raw) => match &self.plan.steps[idx].step.kind {
                StepKind::Tool(_) => match tool_output_in(&raw) {
                    Ok(output) => {
                        let (json, output) = output_forms(output);
                        Outcome::Succeeded { output, json: Some(json), raw: Some(raw) }
                    }
                    Err(failed) if crate::results::refused_arguments(&failed.0) => {
                        let tool = match &self.plan.steps[idx].step.kind {
                            StepKind::Tool(t) => t.tool.clone(),
                            _ => String::new(),
                        };
                        let message = format!(
                            "tool `{tool}` refused its arguments; check them against its input schema (the \
                             server's own words are in the detail)"
                        );
                        let error = StepError { code: "ARGS_INVALID".into(), message, detail: Some(failed.0) };
                        Outcome::Failed { error, retryable: false, raw: Some(raw) }
                    }
                    Err(failed) => {
                        Outcome::Failed { error: err("TOOL_ERROR", failed.0), retryable: true, raw: Some(raw) }
                    }
                },
                StepKind::Resource(_) => {
                    let (json, output) = output_forms(Cow::Owned(resource_output(&raw)));
                    Outcome::Succeeded { output, json: Some(json), raw: Some(raw) }
                }
                StepKind::Prompt(_) => {
                    let (json, output) = output_forms(Cow::Owned(prompt_output(&raw)));
                    Outcome::Succeeded { output, json: Some(json), raw: Some(raw) }
                }
                _ => {
                    let (json, output) = output_forms(Cow::Owned(raw));
                    Outcome::Succeeded { output, json: Some(json), raw: None }
                }
            },
        };
        self.finish(frame, pos, outcome);
    }

    fn task_started(&mut self, inv: InvId, handle: TaskHandle) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        let TaskHandle { server, task_id, started_at } = handle;
        self.emit(EventKind::StepTaskStarted { step, path, server, task_id, started_at });
    }

    fn progress(&mut self, inv: InvId, p: Progress) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        self.emit(EventKind::StepProgress { step, path, progress: p.progress, total: p.total, message: p.message });
    }

    /// A step instance ends (or retries, or hands over to its fallback).
    fn finish(&mut self, frame: FrameId, pos: usize, outcome: Outcome) {
        let outcome = self.within_value_limit(outcome);
        let idx = self.id_of(frame, pos);
        let plan = self.plan.clone();
        let planned = &plan.steps[idx];
        let step_id = planned.step.id().to_owned();
        let path = self.frames[frame].path.clone();
        let attempts = self.frames[frame].slots[pos].attempts;
        match outcome {
            Outcome::Failed { error, retryable, raw } => {
                if retryable
                    && let Some(r) = self.retry_policy(idx)
                    && attempts < r.attempts
                {
                    let delay_ms = Self::backoff_delay(&r, attempts + 1);
                    self.emit(EventKind::StepRetrying { step: step_id, path, attempt: attempts + 1, delay_ms, error });
                    let timer = self.set_timer(TimerKind::Retry(frame, pos), self.now + delay_ms);
                    self.frames[frame].slots[pos].state = State::Backoff { timer };
                    return;
                }
                if let Some(fb) = planned.fallback.filter(|&fb| !plan.steps[fb].step.common.is_disabled()) {
                    let fpos = plan.steps[fb].position;
                    let handling =
                        value_to_var(json!({ "step": step_id, "message": error.message, "code": error.code }));
                    drop(raw); // the fallback's own result is what the run keeps
                    self.emit(EventKind::Log {
                        level: LogLevel::Warn,
                        message: format!(
                            "`{step_id}` failed ({}: {}); running its fallback `{}`",
                            error.code,
                            error.message,
                            plan.steps[fb].step.id()
                        ),
                        step: Some(step_id),
                    });
                    self.frames[frame].slots[pos].state = State::InFallback;
                    let fslot = &mut self.frames[frame].slots[fpos];
                    *fslot = Slot { state: State::Ready, handling: Some(handling), ..Slot::default() };
                    self.ready.insert((frame, fpos));
                    return;
                }
                self.settle_failure(frame, pos, error, raw);
            }
            Outcome::Succeeded { output, json, raw } => {
                let json = json.unwrap_or_else(|| var_to_value(&output));
                if let Some(name) = &planned.step.common.save {
                    self.out.push(Action::Save { name: name.clone(), value: json.clone() });
                }
                let shown = planned.fallback_of.map(|_| json.clone());
                self.emit_finished(frame, pos, Finished::succeeded(json, raw, None));
                if let Some(first) = planned.fallback_of {
                    // A fallback's output stands in for the step it handled (through a
                    // chain of fallbacks, for the original step).
                    let mut of = first;
                    while let Some(o) = plan.steps[of].fallback_of {
                        let p = plan.steps[of].position;
                        self.frames[frame].slots[p].state = State::Done(StepStatus::Failed);
                        of = o;
                    }
                    let opos = plan.steps[of].position;
                    self.frames[frame].slots[pos].state = State::Done(StepStatus::Succeeded);
                    let json = shown.unwrap_or_else(|| var_to_value(&output));
                    self.emit_finished(frame, opos, Finished::succeeded(json, None, Some(step_id)));
                    self.settle(frame, opos, StepStatus::Succeeded, output, None);
                } else {
                    self.settle(frame, pos, StepStatus::Succeeded, output, None);
                }
            }
        }
    }

    /// An output larger than `limits.max_value_bytes` as JSON (a loop's collected array,
    /// a tool's result) fails its step before anything converts it.
    fn within_value_limit(&self, outcome: Outcome) -> Outcome {
        match outcome {
            Outcome::Succeeded { output, .. } if value_size(&output, self.max_value_bytes).is_none() => {
                let error = err(
                    "OUTPUT_TOO_LARGE",
                    format!(
                        "the step's output is larger than {} bytes (limits.max_value_bytes); return or collect less, or raise the limit",
                        self.max_value_bytes
                    ),
                );
                Outcome::Failed { error, retryable: false, raw: None }
            }
            other => other,
        }
    }

    /// A failure after retries and fallback: `continue` or `abort`.
    fn settle_failure(&mut self, frame: FrameId, pos: usize, error: StepError, raw: Option<Value>) {
        let plan = self.plan.clone();
        let idx = self.id_of(frame, pos);
        // A failing fallback fails the step it stood in for.
        let mut target = idx;
        while let Some(of) = plan.steps[target].fallback_of {
            if target != idx {
                let p = plan.steps[target].position;
                self.frames[frame].slots[p].state = State::Done(StepStatus::Failed);
            }
            target = of;
        }
        let target_pos = plan.steps[target].position;
        let path = self.frames[frame].path.clone();
        self.emit_finished(frame, pos, Finished::failed(error.clone(), raw));
        if target != idx {
            self.frames[frame].slots[pos].state = State::Done(StepStatus::Failed);
            // The step the fallback stood in for ends here too (with the fallback's error):
            // its `StepFinished` tells viewers it is no longer running.
            self.emit_finished(frame, target_pos, Finished::failed(error.clone(), None));
        }
        let target_id = plan.steps[target].step.id().to_owned();
        self.errors.push(ErrorEntry {
            step: target_id,
            path,
            code: error.code.clone(),
            message: error.message.clone(),
        });
        let on_error = plan.steps[target].step.common.on_error.unwrap_or(self.on_error);
        match on_error {
            OnError::Continue => {
                self.settle(frame, target_pos, StepStatus::Failed, value_to_var(Value::Null), Some(error))
            }
            OnError::Abort => {
                self.frames[frame].slots[target_pos].state = State::Done(StepStatus::Failed);
                self.abort_frame(frame, error);
            }
        }
    }

    /// Records a finished instance and wakes what depends on it.
    fn settle(&mut self, frame: FrameId, pos: usize, status: StepStatus, output: Rcvar, error: Option<StepError>) {
        let idx = self.id_of(frame, pos);
        let id = self.plan.steps[idx].step.id().to_owned();
        let slot = &mut self.frames[frame].slots[pos];
        slot.state = State::Done(status);
        // The record shares the output value; only the small fields are new.
        let mut record = BTreeMap::new();
        record.insert("output".to_owned(), output.clone());
        record.insert("status".to_owned(), value_to_var(json!(status.as_str())));
        record.insert(
            "error".to_owned(),
            value_to_var(error.map_or(Value::Null, |e| json!({"code": e.code, "message": e.message}))),
        );
        record.insert("attempts".to_owned(), value_to_var(json!(slot.attempts)));
        let duration_ms = self.now.saturating_sub(slot.started_ms.unwrap_or(self.now));
        record.insert("duration_ms".to_owned(), value_to_var(json!(duration_ms)));
        let record = Rcvar::new(Variable::Object(record));
        let f = &mut self.frames[frame];
        f.outputs.insert(id.clone(), output);
        f.records.insert(id, record);
        f.open = f.open.saturating_sub(1);
        self.wake_dependents(frame, idx);
        if self.frames[frame].open == 0 {
            self.frame_complete(frame);
        }
    }

    fn wake_dependents(&mut self, frame: FrameId, idx: StepIdx) {
        let deps = self.dependents[idx].clone();
        for d in deps {
            let dpos = self.plan.steps[d].position;
            if !matches!(self.frames[frame].slots[dpos].state, State::Waiting) {
                continue;
            }
            if self.plan.steps[d].switch == Some(idx) && self.routed_away(frame, idx, d) {
                self.skip(frame, dpos);
                continue;
            }
            let statuses: Vec<Option<StepStatus>> = self.plan.steps[d]
                .deps
                .iter()
                .map(|&x| match self.frames[frame].slots[self.plan.steps[x].position].state {
                    State::Done(s) => Some(s),
                    _ => None,
                })
                .collect();
            if statuses.iter().any(Option::is_none) {
                continue;
            }
            // A disabled dependency counts as done: the user switched one step off, not
            // the branch after it.
            let counts_skipped = |&x: &StepIdx| {
                let slot = &self.frames[frame].slots[self.plan.steps[x].position];
                matches!(slot.state, State::Done(StepStatus::Skipped)) && !slot.disabled
            };
            if self.plan.steps[d].deps.iter().all(counts_skipped) {
                self.skip(frame, dpos);
            } else {
                self.make_ready(frame, dpos);
            }
        }
    }

    /// Whether switch `sw`, succeeded in `frame`, routes away from its target `target`:
    /// its output (`{ "case": i | "default" }`, computed or pinned) names another case.
    /// Routing reads the output, not the evaluation, so a pinned switch routes as the
    /// earlier run did.
    fn routed_away(&self, frame: FrameId, sw: StepIdx, target: StepIdx) -> bool {
        let spos = self.plan.steps[sw].position;
        let (State::Done(StepStatus::Succeeded), StepKind::Switch(switch)) =
            (&self.frames[frame].slots[spos].state, &self.plan.steps[sw].step.kind)
        else {
            return false;
        };
        let Some(output) = self.frames[frame].outputs.get(self.plan.steps[sw].step.id()) else { return false };
        let chosen = match routed_case(output) {
            Some(Some(i)) => switch.cases.get(i).map(|c| c.to.as_slice()),
            Some(None) => switch.default.as_deref(),
            // Not a case (a fallback's output stands in for the switch): no routing.
            None => return false,
        };
        let target = self.plan.steps[target].step.id();
        !chosen.unwrap_or_default().iter().any(|t| t == target)
    }

    fn skip(&mut self, frame: FrameId, pos: usize) {
        if matches!(self.frames[frame].slots[pos].state, State::Done(_)) {
            return;
        }
        self.ready.remove(&(frame, pos));
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        self.emit(EventKind::StepSkipped { step, path, reason: None });
        self.settle(frame, pos, StepStatus::Skipped, value_to_var(Value::Null), None);
    }

    /// A disabled step finishes without running: skipped with reason `disabled`, output
    /// `null`. No `StepStarted`, no breakpoint, no `save`; its dependents still run.
    fn skip_disabled(&mut self, frame: FrameId, pos: usize) {
        if matches!(self.frames[frame].slots[pos].state, State::Done(_)) {
            return;
        }
        self.ready.remove(&(frame, pos));
        self.frames[frame].slots[pos].disabled = true;
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        self.emit(EventKind::StepSkipped { step, path, reason: Some(SkipReason::Disabled) });
        self.settle(frame, pos, StepStatus::Skipped, value_to_var(Value::Null), None);
    }

    // ----- loops ----------------------------------------------------------------------

    // ----- frames, abort, cancel --------------------------------------------------------

    fn fail_run(&mut self, error: StepError, status: RunStatus) {
        if self.phase != Phase::Running {
            return;
        }
        if !self.errors.iter().any(|e| e.code == error.code && e.message == error.message) {
            self.errors.push(ErrorEntry {
                step: String::new(),
                path: Vec::new(),
                code: error.code,
                message: error.message,
            });
        }
        self.cancel_frame(0);
        self.end(status, Value::Null);
    }

    fn finish_run(&mut self) {
        let plan = self.plan.clone();
        let view = View { s: self, frame: 0, extra: Vec::new() };
        let output = match &plan.output {
            Some(t) => t.render(&view).map_err(|e| err(e.code, e.message)),
            None => {
                let last = plan.lists[0].members.iter().rev().find(|&&m| plan.steps[m].fallback_of.is_none());
                Ok(last
                    .and_then(|&m| self.frames[0].outputs.get(plan.steps[m].step.id()))
                    .map_or(Value::Null, |v| var_to_value(v)))
            }
        };
        match output {
            Ok(v) => {
                let status = if self.errors.is_empty() { RunStatus::Succeeded } else { RunStatus::Partial };
                self.end(status, v);
            }
            Err(e) if self.only.is_some() => {
                // A re-run of some steps skipped others on purpose; an output that reads
                // them is not this run's failure.
                self.emit(EventKind::Log {
                    level: LogLevel::Warn,
                    message: format!(
                        "the blueprint's output could not be computed from the steps this re-run ran or pinned ({}: {}); the run's output is null",
                        e.code, e.message
                    ),
                    step: None,
                });
                let status = if self.errors.is_empty() { RunStatus::Succeeded } else { RunStatus::Partial };
                self.end(status, Value::Null);
            }
            Err(e) => {
                self.errors.push(ErrorEntry {
                    step: String::new(),
                    path: Vec::new(),
                    code: e.code,
                    message: e.message,
                });
                self.end(RunStatus::Failed, Value::Null);
            }
        }
    }

    fn end(&mut self, status: RunStatus, output: Value) {
        let mut summary = Summary { tool_calls: self.tool_calls, ..Summary::default() };
        if let Some(top) = self.frames.get(0) {
            for (pos, slot) in top.slots.iter().enumerate() {
                let m = self.plan.lists[0].members[pos];
                if self.plan.steps[m].fallback_of.is_some() {
                    continue;
                }
                summary.steps += 1;
                match slot.state {
                    State::Done(StepStatus::Succeeded) => summary.succeeded += 1,
                    State::Done(StepStatus::Failed) => summary.failed += 1,
                    _ => summary.skipped += 1,
                }
            }
        }
        self.timers.clear();
        self.phase = Phase::Done;
        let envelope = Envelope {
            run_id: self.config.run_id.clone(),
            blueprint: self.bp_id.clone(),
            status,
            output,
            summary,
            errors: self.errors.clone(),
            duration_ms: self.now.saturating_sub(self.started_at),
        };
        self.emit(EventKind::RunFinished { envelope: envelope.clone() });
        self.out.push(Action::Finish(envelope));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpflow_blueprint::{Options, check_value};

    fn scheduler(doc: Value) -> Scheduler {
        let report = check_value(doc, &Options::default());
        let (Some(bp), Some(plan)) = (report.blueprint, report.plan) else { panic!("{:?}", report.diagnostics) };
        let config = RunConfig {
            run_id: "r".into(),
            inputs: json!({}),
            saved: json!({}),
            started_at: String::new(),
            breakpoints: HashSet::new(),
            start_paused: false,
            timeout_ms: None,
            ..RunConfig::default()
        };
        Scheduler::new(&bp, Arc::new(plan), config)
    }

    fn envelope(actions: &[Action]) -> Option<&Envelope> {
        actions.iter().find_map(|a| if let Action::Finish(e) = a { Some(e) } else { None })
    }

    /// Runs `doc` to the end, answering every call at once; the steps whose call asked
    /// the journal to sync first, in call order.
    fn synced_calls(doc: Value) -> Vec<String> {
        let mut s = scheduler(doc);
        let mut waiting: Vec<(InvId, String, bool)> = Vec::new();
        let collect = |actions: &[Action], waiting: &mut Vec<(InvId, String, bool)>| {
            for a in actions {
                if let Action::Invoke { inv, step, sync, .. } = a {
                    waiting.push((*inv, step.clone(), *sync));
                }
            }
        };
        collect(&s.apply(0, Input::Start), &mut waiting);
        let mut synced = Vec::new();
        while !waiting.is_empty() {
            let (inv, step, sync) = waiting.remove(0);
            if sync {
                synced.push(step);
            }
            let actions = s.apply(1, Input::Completed { inv, result: Ok(json!({ "structuredContent": { "n": 1 } })) });
            collect(&actions, &mut waiting);
        }
        synced
    }

    #[test]
    fn a_call_syncs_the_journal_only_when_a_step_it_reads_finished_since_the_last_sync() {
        // A chain: every call reads the one before.
        let chain = synced_calls(json!({ "blueprint": 1, "id": "t", "steps": [
            { "id": "a", "kind": "tool", "server": "s", "tool": "t" },
            { "id": "b", "kind": "tool", "server": "s", "tool": "t" },
            { "id": "c", "kind": "transform", "value": "{{ b.n }}" },
            { "id": "d", "kind": "tool", "server": "s", "tool": "t", "args": { "x": "{{ c }}" } }
        ] }));
        assert_eq!(chain, ["b", "d"], "b after a; d after c (a transform: no call of its own, so unsynced)");
        // A loop of calls that read nothing in the loop: the first iteration syncs what
        // the loop waited for, the others do not wait for the disk.
        let looped = synced_calls(json!({ "blueprint": 1, "id": "t", "steps": [
            { "id": "first", "kind": "tool", "server": "s", "tool": "t" },
            { "id": "each", "kind": "loop", "for_each": "{{ `[1, 2, 3, 4, 5, 6]` }}", "concurrency": 2, "steps": [
                { "id": "get", "kind": "tool", "server": "s", "tool": "t", "args": { "n": "{{ item }}" } },
                { "id": "put", "kind": "tool", "server": "s", "tool": "t", "args": { "n": "{{ get.n }}" } }
            ] }
        ] }));
        assert_eq!(looped.iter().filter(|s| *s == "get").count(), 1, "{looped:?}");
        assert_eq!(looped.iter().filter(|s| *s == "put").count(), 6, "each put reads its get: {looped:?}");
    }

    #[test]
    fn a_finished_iteration_leaves_no_frame_behind() {
        let mut s = scheduler(json!({ "blueprint": 1, "id": "t", "steps": [
            { "id": "each", "kind": "loop", "for_each": "{{ `[1, 2, 3]` }}", "concurrency": 2, "steps": [
                { "id": "get", "kind": "tool", "server": "s", "tool": "get", "args": { "n": "{{ item }}" } }
            ] }
        ] }));
        let calls = |actions: &[Action]| -> Vec<InvId> {
            actions.iter().filter_map(|a| if let Action::Invoke { inv, .. } = a { Some(*inv) } else { None }).collect()
        };
        let mut waiting = calls(&s.apply(0, Input::Start));
        assert_eq!((waiting.len(), s.frames.len()), (2, 3), "the top level and two running iterations");
        let mut results = Vec::new();
        while let Some(inv) = waiting.pop() {
            let actions = s.apply(1, Input::Completed { inv, result: Ok(json!({ "structuredContent": inv })) });
            waiting.extend(calls(&actions));
            assert!(s.frames.len() <= 3, "{} frames", s.frames.len());
            results.extend(envelope(&actions).map(|e| e.output.clone()));
        }
        assert_eq!(s.frames.len(), 1, "only the top level is left");
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].as_array().map(Vec::len), Some(3));
    }
}
