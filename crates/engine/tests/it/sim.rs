//! A deterministic simulator around the scheduler: it records actions, answers calls
//! when a test says so, and fires timers as a test moves the clock.

use mcpflow_blueprint::{Options, check_value};
use mcpflow_engine::scheduler::{InvId, TimerId};
use mcpflow_engine::{Action, Control, Envelope, EventKind, Input, Invocation, RunConfig, RunEvent, Scheduler};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

pub struct Sim {
    pub s: Scheduler,
    pub now: u64,
    pub events: Vec<RunEvent>,
    /// Calls in flight: (inv, step, path, invocation).
    pub inflight: Vec<(InvId, String, Vec<u32>, Invocation)>,
    pub max_inflight: usize,
    pub timers: BTreeMap<(u64, TimerId), ()>,
    pub cancelled: Vec<InvId>,
    pub saves: Vec<(String, Value)>,
    pub envelope: Option<Envelope>,
    /// Every invoke, in order: (time, step, path).
    pub invokes: Vec<(u64, String, Vec<u32>)>,
    /// The invocations that resume a task: (step, path, task id).
    pub resumed: Vec<(String, Vec<u32>, String)>,
    /// `Action::IterationClosed` (traced runs only): (loop step, iteration path).
    pub iterations_closed: Vec<(String, Vec<u32>)>,
}

/// A blueprint `t` of `steps`.
pub fn bp(steps: Value) -> Value {
    json!({ "blueprint": 1, "id": "t", "steps": steps })
}

pub fn config() -> RunConfig {
    RunConfig {
        run_id: "run-1".into(),
        inputs: json!({}),
        saved: json!({}),
        started_at: "2026-11-21T00:00:00Z".into(),
        breakpoints: HashSet::new(),
        start_paused: false,
        timeout_ms: None,
        ..RunConfig::default()
    }
}

impl Sim {
    pub fn new(doc: Value) -> Sim {
        Sim::with(doc, config())
    }

    pub fn with(doc: Value, config: RunConfig) -> Sim {
        let report = check_value(doc, &Options::default());
        assert!(!report.has_errors(), "{:#?}", report.diagnostics);
        let bp = report.blueprint.unwrap();
        let plan = Arc::new(report.plan.unwrap());
        Sim {
            s: Scheduler::new(&bp, plan, config),
            now: 0,
            events: Vec::new(),
            inflight: Vec::new(),
            max_inflight: 0,
            timers: BTreeMap::new(),
            cancelled: Vec::new(),
            saves: Vec::new(),
            envelope: None,
            invokes: Vec::new(),
            resumed: Vec::new(),
            iterations_closed: Vec::new(),
        }
    }

    /// Feeds `input`, then `Continue` while the scheduler has more ready to start.
    pub fn feed(&mut self, input: Input) {
        self.feed_one(input);
        while self.s.has_more() {
            self.feed_one(Input::Continue);
        }
    }

    fn feed_one(&mut self, input: Input) {
        for a in self.s.apply(self.now, input) {
            match a {
                Action::Emit(e) => self.events.push(e),
                Action::Invoke { inv, step, path, invocation, resume, .. } => {
                    self.invokes.push((self.now, step.clone(), path.clone()));
                    if let Some(handle) = resume {
                        self.resumed.push((step.clone(), path.clone(), handle.task_id));
                    }
                    self.inflight.push((inv, step, path, invocation));
                    self.max_inflight = self.max_inflight.max(self.inflight.len());
                }
                Action::Cancel { inv } => {
                    self.cancelled.push(inv);
                    self.inflight.retain(|c| c.0 != inv);
                }
                Action::SetTimer { timer, at_ms } => {
                    self.timers.insert((at_ms, timer), ());
                }
                Action::Save { name, value } => self.saves.push((name, value)),
                Action::IterationClosed { step, path } => self.iterations_closed.push((step, path)),
                Action::Finish(e) => self.envelope = Some(e),
            }
        }
    }

    pub fn start(mut self) -> Sim {
        self.feed(Input::Start);
        self
    }

    pub fn control(&mut self, c: Control) {
        self.feed(Input::Control(c));
    }

    /// Answers the oldest call of `step` (any path) with `result`.
    pub fn answer(&mut self, step: &str, result: Result<Value, mcpflow_engine::CallError>) {
        let i = self
            .inflight
            .iter()
            .position(|c| c.1 == step)
            .unwrap_or_else(|| panic!("no call of `{step}` in flight: {:?}", self.inflight_steps()));
        let (inv, ..) = self.inflight.remove(i);
        self.feed(Input::Completed { inv, result });
    }

    /// Answers a tool call with a text result holding `value` as JSON.
    pub fn ok(&mut self, step: &str, value: Value) {
        self.answer(step, Ok(json!({"content": [{"type": "text", "text": value.to_string()}]})));
    }

    pub fn tool_error(&mut self, step: &str, text: &str) {
        self.answer(step, Ok(json!({"content": [{"type": "text", "text": text}], "isError": true})));
    }

    pub fn inflight_steps(&self) -> Vec<String> {
        self.inflight.iter().map(|c| c.1.clone()).collect()
    }

    /// Moves the clock to `to`, firing due timers in order.
    pub fn advance_to(&mut self, to: u64) {
        while let Some((&(at, timer), _)) = self.timers.iter().next() {
            if at > to {
                break;
            }
            self.timers.remove(&(at, timer));
            self.now = at;
            self.feed(Input::Timer { timer });
        }
        self.now = to;
    }

    /// Answers every call with `f` until nothing is in flight (timers fire as needed).
    pub fn drive(&mut self, mut f: impl FnMut(&str, &[u32], &Invocation) -> Value) {
        for _ in 0..100_000 {
            if self.envelope.is_some() {
                return;
            }
            if let Some((inv, step, path, invocation)) = self.inflight.first().cloned() {
                self.inflight.remove(0);
                let raw = f(&step, &path, &invocation);
                self.feed(Input::Completed { inv, result: Ok(raw) });
            } else if let Some((&(at, _), _)) = self.timers.iter().next() {
                self.advance_to(at);
            } else {
                return;
            }
        }
    }

    pub fn envelope(&self) -> &Envelope {
        self.envelope.as_ref().expect("the run has not finished")
    }

    /// A compact trace of step events: "started a", "finished a succeeded", "skipped b" …
    pub fn trace(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::StepStarted { step, path, .. } => Some(format!("start {step}{}", p(path))),
                EventKind::StepFinished { step, path, status, .. } => {
                    Some(format!("{} {step}{}", status.as_str(), p(path)))
                }
                EventKind::StepSkipped { step, path, .. } => Some(format!("skip {step}{}", p(path))),
                EventKind::StepRetrying { step, attempt, delay_ms, .. } => {
                    Some(format!("retry {step} #{attempt} +{delay_ms}"))
                }
                EventKind::RunPaused { reason, step, .. } => {
                    Some(format!("paused {reason:?} {}", step.clone().unwrap_or_default()))
                }
                EventKind::RunResumed {} => Some("resumed".into()),
                _ => None,
            })
            .collect()
    }

    pub fn tool_args(&self, step: &str) -> Value {
        self.events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::StepStarted { step: s, args, .. } if s == step => args.clone(),
                _ => None,
            })
            .unwrap_or(Value::Null)
    }
}

fn p(path: &[u32]) -> String {
    if path.is_empty() { String::new() } else { format!("{path:?}") }
}

pub fn text(v: Value) -> Value {
    json!({"content": [{"type": "text", "text": v.to_string()}]})
}
