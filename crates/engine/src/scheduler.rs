//! The scheduler: a pure state machine. [`Scheduler::apply`] takes the current time and
//! one [`Input`] (start, a call finished, a timer fired, a control request) and returns
//! the [`Action`]s the driver must perform (emit an event, invoke a call, cancel one,
//! set a timer, save a value, finish). It does no IO and reads no clock, so tests drive
//! it step by step and recorded histories replay to the same decisions.
//!
//! A run is a tree of *frames*: the top-level list is frame 0; each loop iteration is a
//! frame holding the loop body's steps. Each frame keeps one slot per member step.
//!
//! This file is the door (`apply`, the inputs and actions) and the [`Scheduler`] whose
//! fields are grouped by concern; each concern lives in its own module:
//!
//! | module | what lives there |
//! |---|---|
//! | `run` | the run's start (or refusal), failure, output and final envelope |
//! | `start` | starting ready steps: concurrency, the per-input cut, each kind's start |
//! | `outcome` | a call's answer routed to its step; retry, fallback, continue/abort, success |
//! | `routing` | what a finished step wakes: ready, skipped, switch routing, pinned, disabled |
//! | `loops` | `for_each` / `until` iterations, their concurrency and delay, `collect` |
//! | `frames` | frames and slots: open, close, cancel, abort; finished iterations' values |
//! | `timers` | timers (retry backoff, `timeout_ms`, `wait`, loop delay, run timeout) |
//! | `control` | pause, single step, breakpoints, cancel (`Debugger`) |
//! | `limits` | `concurrency`, `max_step_runs`, `max_value_bytes`, the run's timeout |
//! | `events` | event numbering, a step's `StepFinished`, the journal's sync (`Out`) |
//! | `config` | [`RunConfig`] and a re-run's selection (`pinned`, `only`) |
//! | `scope` | the template scope over frames, and `inputs` / `saved` / `run` |

mod config;
mod control;
mod events;
mod frames;
mod limits;
mod loops;
mod outcome;
mod routing;
mod run;
mod scope;
mod start;
mod timers;

use crate::event::{Envelope, ErrorEntry, EventKind, IterationPath, LogLevel, RunEvent, StepError};
use crate::servers::{CallError, CallTarget, Progress, TaskHandle};
pub use config::RunConfig;
use config::Selection;
use control::Debugger;
use events::Out;
use frames::Frames;
use limits::Limits;
use mcpflow_blueprint::template::Rcvar;
use mcpflow_blueprint::{Blueprint, OnError, Plan, Retry, StepIdx};
use run::Phase;
use scope::Globals;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use timers::TimerKind;
// What the tests below read through `use super::*`.
#[cfg(test)]
use serde_json::json;
#[cfg(test)]
use std::collections::HashSet;

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
    /// Ask a person (an `input` step). The result is `{"action", "content"?}` (an
    /// [`crate::people::Answer`]); the question's `step` and `path` are filled in.
    Ask(Box<crate::people::Question>),
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
        /// `confirm: "destructive"` applies to this tool call.
        confirm: bool,
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
    /// An iteration of loop `step` ended (finished, failed or cancelled); `path` is its
    /// path, its own index last. Only when the run is traced ([`RunConfig::trace_id`]),
    /// so that the driver ends the iteration's span as it ends rather than with its loop.
    IterationClosed {
        step: String,
        path: IterationPath,
    },
    Finish(Envelope),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// The call's step waits for a person (its `input`, or the server's elicitation).
    Waiting {
        inv: InvId,
        question: Box<crate::people::Question>,
    },
    /// The person answered the call's question.
    Answered {
        inv: InvId,
        answer: crate::people::Answer,
    },
    /// A server asked the model during the call (its params already cut for the events).
    Sampling {
        inv: InvId,
        server: String,
        request: Box<Value>,
    },
    /// The model answered (cut for the events), or why it did not.
    Sampled {
        inv: InvId,
        server: String,
        outcome: Result<Box<Value>, CallError>,
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

/// The state of one run, grouped by concern; each group lives with the code that uses
/// it (see the module list above).
pub struct Scheduler {
    plan: Arc<Plan>,
    bp_id: String,
    /// The blueprint's `on_error` and `retry`: what a step without its own does.
    on_error: OnError,
    retry: Option<Retry>,
    /// The blueprint's `confirm`: what a tool step without its own does.
    confirm: Option<mcpflow_blueprint::Confirm>,
    /// `config` without `pinned` and `only`, which are moved to `selection`.
    config: RunConfig,
    /// A re-run's pinned and selected top-level steps ([`config`]).
    selection: Selection,
    /// `inputs`, `saved` and `run` as template values ([`scope`]).
    globals: Globals,
    /// The limits and the counts they bound ([`limits`]).
    limits: Limits,
    /// Pause, single step, breakpoints ([`control`]).
    debug: Debugger,
    /// The actions of the current input, the event sequence, the journal's unsynced
    /// steps ([`events`]).
    out: Out,
    /// Per step: the steps of its list that depend on it.
    dependents: Vec<Vec<StepIdx>>,
    /// The open frames and what finished ones leave behind ([`frames`]).
    pub(crate) frames: Frames,
    /// Slots ready to start ([`start`]).
    ready: BTreeSet<(FrameId, usize)>,
    /// Calls in flight: the slot each answers ([`outcome`]).
    invocations: HashMap<InvId, (FrameId, usize)>,
    /// Timers set: what each does when it fires ([`timers`]).
    timers: HashMap<TimerId, TimerKind>,
    /// The next call or timer id.
    next_id: u64,
    now: u64,
    started_at: u64,
    errors: Vec<ErrorEntry>,
    phase: Phase,
    /// The last `apply` stopped after [`STARTS_PER_INPUT`] steps (or [`OPS_PER_INPUT`]
    /// operations) with more ready to start.
    more: bool,
}

/// Steps started by one `apply`, at most. A long run of steps that need no call (a loop
/// of transforms) is cut into pieces: the driver hands each piece's events to the sink and
/// frees them, and hears timers and cancellation, before it asks for the next piece with
/// [`Input::Continue`]. Without the cut, a 1,000,000-iteration loop would hold every
/// iteration's events and frame until its last iteration ended.
const STARTS_PER_INPUT: u32 = 1024;

/// Template operations one `apply` may spend starting steps before it ends its piece the
/// same way (a few milliseconds of work; one template may take up to `MAX_TEMPLATE_OPS`):
/// a loop of cheap transforms and one of costly ones both give the driver its turn.
const OPS_PER_INPUT: u64 = 1_000_000;

/// Finished iterations whose values wait for [`Scheduler::take_retired`]; past this,
/// `apply` frees them itself (a caller that never takes them keeps no more than these).
const RETIRED: usize = 64;

/// What a finished iteration frame held: outputs, records, loop variables.
type FrameValues = (HashMap<String, Rcvar>, HashMap<String, frames::StepRecord>, Vec<(String, Rcvar)>);

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
    StepError { code: code.into(), message: message.into(), detail: None, exhausted: None }
}

impl Scheduler {
    pub fn new(blueprint: &Blueprint, plan: Arc<Plan>, mut config: RunConfig) -> Self {
        let selection = Selection::new(&plan, &mut config);
        let mut dependents = vec![Vec::new(); plan.steps.len()];
        for (idx, s) in plan.steps.iter().enumerate() {
            for &d in &s.deps {
                dependents[d].push(idx);
            }
        }
        Scheduler {
            bp_id: blueprint.id.clone(),
            on_error: blueprint.on_error.unwrap_or(OnError::Abort),
            retry: blueprint.retry.clone(),
            confirm: blueprint.confirm,
            limits: Limits::new(blueprint, config.timeout_ms),
            globals: Globals::new(blueprint, &config),
            debug: Debugger { paused: config.start_paused, step_once: false, breakpoints: config.breakpoints.clone() },
            out: Out::default(),
            dependents,
            frames: Frames::default(),
            ready: BTreeSet::new(),
            invocations: HashMap::new(),
            timers: HashMap::new(),
            next_id: 1,
            now: 0,
            started_at: 0,
            errors: Vec::new(),
            phase: Phase::NotStarted,
            more: false,
            selection,
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
        self.more && self.phase == Phase::Running && !self.debug.paused
    }

    /// The values of finished iterations, for the caller to drop when it suits it.
    pub fn take_retired(&mut self) -> Retired {
        Retired { _values: std::mem::take(&mut self.frames.retired) }
    }

    /// Feeds one input at time `now_ms` (milliseconds on the driver's clock).
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Vec<Action> {
        if self.frames.retired.len() >= RETIRED {
            self.frames.retired.clear();
        }
        self.now = now_ms.max(self.now);
        match input {
            Input::Start => self.start(),
            _ if self.phase != Phase::Running => {}
            Input::Completed { inv, result } => self.completed(inv, result),
            Input::Progress { inv, progress } => self.progress(inv, progress),
            Input::TaskStarted { inv, handle } => self.task_started(inv, handle),
            Input::Waiting { inv, question } => self.waiting(inv, *question),
            Input::Answered { inv, answer } => self.answered(inv, answer),
            Input::Sampling { inv, server, request } => self.sampling(inv, server, *request),
            Input::Sampled { inv, server, outcome } => self.sampled(inv, server, outcome),
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
        for frame in std::mem::take(&mut self.frames.finished) {
            self.frames.remove(frame);
        }
        self.out.take()
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
