//! Results: a call's answer (or error, progress, task handle) routed to its step
//! instance, the outcome turned into a retry, a fallback, a failure that continues or
//! aborts, or a success recorded for the steps that read it.

use super::events::Finished;
use super::frames::{Slot, State, StepRecord};
use super::timers::TimerKind;
use super::{Action, FrameId, InvId, Scheduler, err};
use crate::event::{ErrorEntry, EventKind, LogLevel, StepError, StepStatus};
use crate::results::{output_forms, prompt_output, resource_output, tool_output_in};
use crate::servers::{CallError, Progress, TaskHandle};
use mcpflow_blueprint::template::{Past, Rcvar, Variable, value_fits, value_to_var, var_to_value};
use mcpflow_blueprint::{OnError, StepKind};
use serde_json::{Value, json};
use std::borrow::Cow;

/// The outcome of a step instance.
pub(super) enum Outcome {
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

impl Scheduler {
    pub(super) fn completed(&mut self, inv: InvId, result: Result<Value, CallError>) {
        let Some((frame, pos)) = self.invocations.remove(&inv) else { return };
        self.limits.running_calls = self.limits.running_calls.saturating_sub(1);
        let State::Running { timeout, .. } = self.frames[frame].slots[pos].state else { return };
        if let Some(t) = timeout {
            self.timers.remove(&t);
        }
        let idx = self.id_of(frame, pos);
        let outcome = match result {
            Err(e) => Outcome::Failed {
                retryable: e.transient,
                error: StepError { code: e.code, message: e.message, detail: e.detail, exhausted: None },
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
                        let error =
                            StepError { code: "ARGS_INVALID".into(), message, detail: Some(failed.0), exhausted: None };
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
                StepKind::Input(i) => {
                    // The prompt as the person saw it, templates resolved.
                    let shown = self.resolve_args(frame, pos).ok().flatten();
                    let prompt = shown.as_ref().and_then(|v| v.get("prompt")).and_then(Value::as_str);
                    input_outcome(i, prompt.unwrap_or(&i.prompt), raw)
                }
                _ => {
                    let (json, output) = output_forms(Cow::Owned(raw));
                    Outcome::Succeeded { output, json: Some(json), raw: None }
                }
            },
        };
        self.finish(frame, pos, outcome);
    }

    pub(super) fn task_started(&mut self, inv: InvId, handle: TaskHandle) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        let TaskHandle { server, task_id, started_at } = handle;
        self.emit(EventKind::StepTaskStarted { step, path, server, task_id, started_at });
    }

    pub(super) fn waiting(&mut self, inv: InvId, mut question: crate::people::Question) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        question.step.clone_from(&step);
        question.path.clone_from(&path);
        self.emit(EventKind::StepWaiting { step, path, question });
    }

    pub(super) fn answered(&mut self, inv: InvId, answer: crate::people::Answer) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        self.emit(EventKind::StepAnswered { step, path, answer });
    }

    pub(super) fn sampling(&mut self, inv: InvId, server: String, request: Value) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        self.emit(EventKind::StepSampling { step, path, server, request });
    }

    pub(super) fn sampled(&mut self, inv: InvId, server: String, outcome: Result<Box<Value>, CallError>) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        let (result, error) = match outcome {
            Ok(result) => (Some(*result), None),
            Err(e) => (None, Some(StepError { code: e.code, message: e.message, detail: e.detail, exhausted: None })),
        };
        self.emit(EventKind::StepSampled { step, path, server, result, error });
    }

    pub(super) fn progress(&mut self, inv: InvId, p: Progress) {
        let Some(&(frame, pos)) = self.invocations.get(&inv) else { return };
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        self.emit(EventKind::StepProgress { step, path, progress: p.progress, total: p.total, message: p.message });
    }

    /// A step instance ends (or retries, or hands over to its fallback).
    pub(super) fn finish(&mut self, frame: FrameId, pos: usize, outcome: Outcome) {
        let outcome = self.within_value_limit(outcome);
        self.finish_within_limits(frame, pos, outcome);
    }

    /// [`Scheduler::finish`] of an outcome already within the value limits (a loop's
    /// array, weighed as it was collected).
    pub(super) fn finish_within_limits(&mut self, frame: FrameId, pos: usize, outcome: Outcome) {
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

    /// An output larger than `limits.max_value_bytes` as JSON or deeper than
    /// `limits.max_value_depth` (a loop's collected array, a tool's result) fails its
    /// step before anything converts or records it.
    pub(super) fn within_value_limit(&self, outcome: Outcome) -> Outcome {
        let Outcome::Succeeded { output, .. } = &outcome else { return outcome };
        match self.output_past_limits(output) {
            Some(error) => Outcome::Failed { error, retryable: false, raw: None },
            None => outcome,
        }
    }

    /// Why `output` cannot be a step's output: `OUTPUT_TOO_DEEP` or `OUTPUT_TOO_LARGE`,
    /// naming the limit; `None` within both.
    pub(super) fn output_past_limits(&self, output: &Variable) -> Option<StepError> {
        match value_fits(output, self.limits.max_value_bytes, self.limits.max_value_depth) {
            Ok(_) => None,
            Err(past) => Some(self.past_limits_error(past)),
        }
    }

    /// `OUTPUT_TOO_DEEP` or `OUTPUT_TOO_LARGE`, naming the limit `past`.
    pub(super) fn past_limits_error(&self, past: Past) -> StepError {
        match past {
            Past::Depth => err(
                "OUTPUT_TOO_DEEP",
                format!(
                    "the step's output is nested deeper than {} levels (limits.max_value_depth); return flatter data, or raise the limit (at most 100)",
                    self.limits.max_value_depth
                ),
            ),
            _ => err(
                "OUTPUT_TOO_LARGE",
                format!(
                    "the step's output is larger than {} bytes (limits.max_value_bytes); return or collect less, or raise the limit",
                    self.limits.max_value_bytes
                ),
            ),
        }
    }

    /// A failure after retries and fallback: `continue` or `abort`.
    pub(super) fn settle_failure(&mut self, frame: FrameId, pos: usize, error: StepError, raw: Option<Value>) {
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
    pub(super) fn settle(
        &mut self,
        frame: FrameId,
        pos: usize,
        status: StepStatus,
        output: Rcvar,
        error: Option<StepError>,
    ) {
        let idx = self.id_of(frame, pos);
        let id = self.plan.steps[idx].step.id().to_owned();
        let slot = &mut self.frames[frame].slots[pos];
        slot.state = State::Done(status);
        // The record shares the output value; it becomes a value when a template reads it.
        let record = StepRecord {
            output: output.clone(),
            status,
            error: error.map(|e| Box::new((e.code, e.message))),
            attempts: slot.attempts,
            duration_ms: self.now.saturating_sub(slot.started_ms.unwrap_or(self.now)),
        };
        let f = &mut self.frames[frame];
        f.outputs.insert(id.clone(), output);
        f.records.insert(id, record);
        f.open = f.open.saturating_sub(1);
        self.wake_dependents(frame, idx);
        if self.frames[frame].open == 0 {
            self.frame_complete(frame);
        }
    }
}

/// An `input` step's answer (`{"action", "content"?}`) as its outcome: the value asked for,
/// `true` for an approved gate; a rejection, a decline or a dismissal fails the step (not
/// retried: a person said so).
fn input_outcome(step: &mcpflow_blueprint::InputStep, prompt: &str, raw: Value) -> Outcome {
    use mcpflow_blueprint::ask::{APPROVE_FIELD, input_form};
    let fail = |code: &str, message: String| Outcome::Failed { error: err(code, message), retryable: false, raw: None };
    let action = raw.get("action").and_then(Value::as_str).unwrap_or_default();
    let content = raw.get("content").cloned().unwrap_or(Value::Null);
    let approved = content.get(APPROVE_FIELD).and_then(Value::as_bool);
    let value = match (action, step.is_approval()) {
        ("accept", true) if approved == Some(true) => Value::Bool(true),
        ("accept", true) | ("decline", true) => {
            return fail("INPUT_REJECTED", format!("the approval was rejected: {prompt}"));
        }
        ("accept", false) => match input_form(step.schema.as_ref(), false, prompt) {
            Ok(form) => form.output(content),
            Err(e) => return fail("INPUT_INVALID", e),
        },
        ("decline", false) => return fail("INPUT_DECLINED", format!("the person declined to answer: {prompt}")),
        _ => return fail("INPUT_CANCELLED", format!("the question was dismissed without an answer: {prompt}")),
    };
    let (json, output) = output_forms(Cow::Owned(value));
    Outcome::Succeeded { output, json: Some(json), raw: None }
}
