//! Control from outside the run: pause, resume, single step, cancel, breakpoints, and
//! what a step held at a breakpoint would give.

use super::{Control, FrameId, Scheduler, err};
use crate::event::{EventKind, PauseReason, RunStatus};
use mcpflow_blueprint::template::{Rcvar, truthy, value_size, var_to_value};
use mcpflow_blueprint::{StepKind, StepTemplates};
use serde_json::{Value, json};

impl Scheduler {
    pub(super) fn control(&mut self, c: Control) {
        match c {
            Control::Pause => {
                if !self.paused {
                    self.paused = true;
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
                self.step_once = false;
                if self.paused {
                    self.paused = false;
                    self.emit(EventKind::RunResumed {});
                }
            }
            Control::Step => {
                self.step_once = true;
                if self.paused {
                    self.paused = false;
                    self.emit(EventKind::RunResumed {});
                }
            }
            Control::Cancel => {
                let e = err("CANCELLED", "the run was cancelled");
                self.fail_run(e, RunStatus::Cancelled);
            }
            Control::SetBreakpoints(ids) => self.breakpoints = ids.into_iter().collect(),
        }
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
                if value_size(v, self.max_value_bytes).is_none() {
                    return Some(failed(
                        "OUTPUT_TOO_LARGE",
                        format!("the value is larger than {} bytes (limits.max_value_bytes)", self.max_value_bytes),
                    ));
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
