//! Control from outside the run: pause, resume, single step, cancel, breakpoints, and
//! what a step held at a breakpoint would give.

use super::frames::State;
use super::{Control, FrameId, Scheduler, err};
use crate::event::{EventKind, IterationPath, PauseReason, RunStatus};
use mcpflow_blueprint::template::{Rcvar, truthy, var_to_value};
use mcpflow_blueprint::{StepKind, StepTemplates};
use serde_json::{Value, json};
use std::collections::HashSet;

/// Pause, single step and breakpoints.
#[derive(Debug, Default)]
pub(super) struct Debugger {
    /// Nothing starts until `resume` or `step`.
    pub(super) paused: bool,
    /// Start the next ready step, then pause.
    pub(super) step_once: bool,
    /// Step ids that pause the run before an instance starts (once per instance).
    pub(super) breakpoints: HashSet<String>,
}

impl Scheduler {
    pub(super) fn control(&mut self, c: Control) {
        match c {
            Control::Pause => {
                if !self.debug.paused {
                    self.debug.paused = true;
                    self.emit(EventKind::RunPaused {
                        reason: PauseReason::Requested,
                        step: None,
                        path: None,
                        args: None,
                        preview: None,
                    });
                }
            }
            Control::Resume => {
                self.debug.step_once = false;
                if self.debug.paused {
                    self.debug.paused = false;
                    self.emit(EventKind::RunResumed {});
                }
            }
            Control::Step => {
                self.debug.step_once = true;
                if self.debug.paused {
                    self.debug.paused = false;
                    self.emit(EventKind::RunResumed {});
                }
            }
            Control::Cancel => {
                let e = err("CANCELLED", "the run was cancelled");
                self.fail_run(e, RunStatus::Cancelled);
            }
            Control::SetBreakpoints(ids) => self.debug.breakpoints = ids.into_iter().collect(),
        }
    }

    /// A breakpoint on the step holds this instance once, before it starts: the step stays
    /// ready and the run pauses, showing its arguments and what it would give. Returns
    /// whether it held the step.
    pub(super) fn held_at_breakpoint(
        &mut self,
        frame: FrameId,
        pos: usize,
        step_id: &str,
        path: &IterationPath,
        args: Option<&Value>,
        value: Option<&Rcvar>,
    ) -> bool {
        if !self.debug.breakpoints.contains(step_id) || self.frames[frame].slots[pos].released {
            return false;
        }
        self.frames[frame].slots[pos].released = true;
        self.frames[frame].slots[pos].state = State::Ready;
        self.ready.insert((frame, pos));
        self.debug.paused = true;
        let preview = self.pause_preview(frame, pos, value);
        self.emit(EventKind::RunPaused {
            reason: PauseReason::Breakpoint,
            step: Some(step_id.to_owned()),
            path: Some(path.clone()),
            args: args.cloned(),
            preview,
        });
        true
    }

    /// After `step` started one step, the run pauses again.
    pub(super) fn pause_after_step(&mut self, step_id: &str, path: &IterationPath) {
        if !self.debug.step_once {
            return;
        }
        self.debug.step_once = false;
        self.debug.paused = true;
        self.emit(EventKind::RunPaused {
            reason: PauseReason::Stepped,
            step: Some(step_id.to_owned()),
            path: Some(path.clone()),
            args: None,
            preview: None,
        });
    }

    /// What a `transform` or `switch` held at a breakpoint would give (see
    /// `EventKind::RunPaused::preview`): the transform's value, already resolved before
    /// the pause, or the case the switch's `when` templates pick now. Pure: templates
    /// only read the scope, so nothing runs.
    pub(super) fn pause_preview(&self, frame: FrameId, pos: usize, value: Option<&Rcvar>) -> Option<Value> {
        let failed = |code: &str, message: String| json!({ "error": { "code": code, "message": message } });
        let planned = &self.plan.steps[self.id_of(frame, pos)];
        match (&planned.step.kind, &planned.templates) {
            (StepKind::Transform(_), _) => {
                let Some(v) = value else { return Some(json!({ "value": null })) };
                if let Some(error) = self.output_past_limits(v) {
                    return Some(failed(&error.code, error.message));
                }
                Some(json!({ "value": var_to_value(v) }))
            }
            (StepKind::Switch(_), StepTemplates::Switch { when }) => {
                let view = self.view(frame, pos);
                for (i, t) in when.iter().enumerate() {
                    match t.render_var(&view) {
                        Ok(v) if truthy(&v) => return Some(json!({ "case": i })),
                        Ok(_) => {}
                        Err(e) => return Some(failed(e.code, format!("case {i}: {}", e.message))),
                    }
                }
                Some(json!({ "case": "default" }))
            }
            _ => None,
        }
    }
}
