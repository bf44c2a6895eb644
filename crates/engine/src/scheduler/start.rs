//! Starting steps: the ready steps started in document order within the concurrency
//! limit and a bounded number per input, each step kind's start (a transform's value, a
//! switch's case, a wait's timer, a loop, a call), and the templates resolved for it.

use super::frames::State;
use super::outcome::Outcome;
use super::run::Phase;
use super::timers::TimerKind;
use super::{Action, FrameId, Invocation, OPS_PER_INPUT, STARTS_PER_INPUT, Scheduler, err};
use crate::event::{EventKind, IterationPath, RunStatus, StepError};
use crate::people::{Asking, Question};
use crate::servers::CallTarget;
use mcpflow_blueprint::template::{Rcvar, Template, ops_spent, truthy, value_to_var};
use mcpflow_blueprint::{StepKind, StepTemplates};
use serde_json::{Map, Value, json};

impl Scheduler {
    /// Starts every ready step that may start now, in document order.
    pub(super) fn pump(&mut self) {
        self.more = false;
        let mut started = 0u32;
        let spent_before = ops_spent();
        loop {
            if self.phase != Phase::Running || self.debug.paused {
                return;
            }
            let candidates: Vec<(FrameId, usize)> = self.ready.iter().copied().collect();
            let mut progressed = false;
            for (frame, pos) in candidates {
                if self.phase != Phase::Running || self.debug.paused {
                    return;
                }
                if !self.frames.get(frame).is_some_and(|f| matches!(f.slots[pos].state, State::Ready)) {
                    self.ready.remove(&(frame, pos));
                    continue;
                }
                if self.needs_call_slot(frame, pos) && self.limits.running_calls >= self.limits.concurrency {
                    continue;
                }
                if started == STARTS_PER_INPUT || ops_spent() - spent_before > OPS_PER_INPUT {
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

    pub(super) fn needs_call_slot(&self, frame: FrameId, pos: usize) -> bool {
        matches!(
            self.plan.steps[self.id_of(frame, pos)].step.kind,
            StepKind::Tool(_)
                | StepKind::Resource(_)
                | StepKind::Prompt(_)
                | StepKind::Workflow(_)
                | StepKind::Input(_)
        )
    }

    /// Starts one step; returns whether it started (a breakpoint may hold it).
    pub(super) fn start_step(&mut self, frame: FrameId, pos: usize) -> bool {
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
        if self.held_at_breakpoint(frame, pos, &step_id, &path, args.as_ref(), value.as_ref()) {
            return false;
        }
        // A loop at the top level starts once (a loop is never retried), so it is not
        // counted: a `for_each` over `max_step_runs` items of one step fits. Every step
        // started inside an iteration counts, loops included.
        let once = frame == 0 && matches!(planned.step.kind, StepKind::Loop(_));
        self.limits.step_runs += u64::from(!once);
        if self.limits.step_runs > self.limits.max_step_runs {
            let e = err(
                "MAX_STEP_RUNS",
                format!("the run started more than {} steps (limits.max_step_runs)", self.limits.max_step_runs),
            );
            self.fail_run(e, RunStatus::Failed);
            return true;
        }
        let slot = &mut self.frames[frame].slots[pos];
        slot.attempts += 1;
        slot.started_ms.get_or_insert(self.now);
        let attempt = slot.attempts;
        self.emit(EventKind::StepStarted { step: step_id.clone(), path: path.clone(), attempt, args: args.clone() });
        self.pause_after_step(&step_id, &path);
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
                self.limits.tool_calls += 1;
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
            (StepKind::Input(i), _) => {
                let shown = args.unwrap_or(Value::Null);
                let message = shown.get("prompt").and_then(Value::as_str).unwrap_or(&i.prompt).to_owned();
                let form = match mcpflow_blueprint::ask::input_form(i.schema.as_ref(), i.is_approval(), &message) {
                    Ok(form) => form,
                    Err(e) => {
                        let error = err("INPUT_INVALID", e);
                        self.finish(frame, pos, Outcome::Failed { error, retryable: false, raw: None });
                        return true;
                    }
                };
                let default = shown.get("default").filter(|d| !d.is_null()).map(|d| form.content(d));
                let question = Question {
                    id: String::new(),
                    step: step_id.clone(),
                    path: path.clone(),
                    asking: if i.is_approval() { Asking::Approval } else { Asking::Input },
                    server: None,
                    message,
                    schema: Some(form.schema),
                    default,
                    url: None,
                    call: None,
                };
                self.invoke(frame, pos, step_id, path, Invocation::Ask(Box::new(question)));
            }
            (StepKind::Switch(_), _) => {}
        }
        true
    }

    pub(super) fn invoke(
        &mut self,
        frame: FrameId,
        pos: usize,
        step: String,
        path: IterationPath,
        invocation: Invocation,
    ) {
        let inv = self.fresh();
        self.invocations.insert(inv, (frame, pos));
        self.limits.running_calls += 1;
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
        let confirm = match &self.plan.steps[self.id_of(frame, pos)].step.kind {
            StepKind::Tool(t) => t.confirm.or(self.confirm) == Some(mcpflow_blueprint::Confirm::Destructive),
            _ => false,
        };
        self.out.push(Action::Invoke { inv, step, path, invocation, sync, resume, confirm });
    }

    /// A transform's value and a loop's `for_each`, as shared values.
    pub(super) fn resolve_value(&self, frame: FrameId, pos: usize) -> Result<Option<Rcvar>, StepError> {
        let view = self.view(frame, pos);
        let t = match &self.plan.steps[self.id_of(frame, pos)].templates {
            StepTemplates::Transform { value } => Some(value),
            StepTemplates::Loop { for_each, .. } => for_each.as_ref(),
            _ => None,
        };
        t.map(|t| t.render_var(&view).map_err(|e| err(e.code, e.message))).transpose()
    }

    /// The resolved "arguments" of a step (what `StepStarted` shows).
    pub(super) fn resolve_args(&self, frame: FrameId, pos: usize) -> Result<Option<Value>, StepError> {
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
            (StepTemplates::Input { prompt, default }, _) => {
                let prompt = prompt.render(&view).map_err(|e| err(e.code, e.message))?;
                let default = render(default)?;
                Ok(Some(json!({ "prompt": prompt, "default": default })))
            }
            _ => Ok(None),
        }
    }
}
