//! The run's lifecycle: start (or refusal), failure of the whole run, the blueprint's
//! output, and the final envelope with its summary.

use super::frames::State;
use super::scope::View;
use super::timers::TimerKind;
use super::{Action, Scheduler, err};
use crate::driver::StartError;
use crate::event::{Envelope, ErrorEntry, EventKind, LogLevel, PauseReason, RunStatus, StepError, StepStatus, Summary};
use mcpflow_blueprint::template::{Past, value_fits, var_to_value};
use serde_json::Value;

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(super) enum Phase {
    NotStarted,
    Running,
    Done,
}

impl Scheduler {
    pub(super) fn start(&mut self) {
        if self.phase != Phase::NotStarted {
            return;
        }
        self.phase = Phase::Running;
        self.started_at = self.now;
        self.emit(EventKind::RunStarted {
            run_id: self.config.run_id.clone(),
            blueprint: self.bp_id.clone(),
            inputs: self.config.inputs.clone(),
            trace_id: self.config.trace_id.clone(),
        });
        if let Some(refused) = self.selection.refused.take() {
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
        if let Some(error) = self.globals_past_limits() {
            self.end_failed(error);
            return;
        }
        if let Some(ms) = self.limits.run_timeout {
            let at = self.now + ms;
            self.set_timer(TimerKind::Run, at);
        }
        if self.debug.paused {
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

    /// The run's `inputs` or `saved` values past `limits.max_value_bytes` or
    /// `limits.max_value_depth`: the run is refused before any step starts.
    fn globals_past_limits(&self) -> Option<StepError> {
        let (bytes, depth) = (self.limits.max_value_bytes, self.limits.max_value_depth);
        for (name, value) in [("inputs", &self.globals.inputs), ("saved", &self.globals.saved)] {
            match value_fits(value, bytes, depth) {
                Ok(_) => {}
                Err(Past::Depth) => {
                    return Some(err(
                        "INPUT_TOO_DEEP",
                        format!(
                            "the run's {name} are nested deeper than {depth} levels (limits.max_value_depth); pass flatter data, or raise the limit (at most 100)"
                        ),
                    ));
                }
                Err(_) => {
                    return Some(err(
                        "INPUT_TOO_LARGE",
                        format!(
                            "the run's {name} are larger than {bytes} bytes (limits.max_value_bytes); pass less data, or raise the limit"
                        ),
                    ));
                }
            }
        }
        None
    }

    pub(super) fn fail_run(&mut self, error: StepError, status: RunStatus) {
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

    pub(super) fn finish_run(&mut self) {
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
            Err(e) if self.selection.only.is_some() => {
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
            Err(e) => self.end_failed(e),
        }
    }

    /// Ends the run `failed` with `error`, the run's own (no step).
    fn end_failed(&mut self, error: StepError) {
        self.errors.push(ErrorEntry {
            step: String::new(),
            path: Vec::new(),
            code: error.code,
            message: error.message,
        });
        self.end(RunStatus::Failed, Value::Null);
    }

    pub(super) fn end(&mut self, status: RunStatus, output: Value) {
        let mut summary = Summary { tool_calls: self.limits.tool_calls, ..Summary::default() };
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
            trace_id: self.config.trace_id.clone(),
        };
        self.emit(EventKind::RunFinished { envelope: envelope.clone() });
        self.out.push(Action::Finish(envelope));
    }
}
