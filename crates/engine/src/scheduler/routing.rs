//! What a finished step wakes: its dependents become ready, are skipped (all their
//! dependencies skipped, or a switch routed away) or, at the top level of a re-run,
//! finish pinned or skipped; disabled steps skip without blocking their branch.

use super::events::Finished;
use super::frames::State;
use super::{FrameId, Scheduler};
use crate::event::{EventKind, LogLevel, SkipReason, StepStatus};
use crate::results::output_forms;
use mcpflow_blueprint::template::{Variable, value_to_var};
use mcpflow_blueprint::{StepIdx, StepKind};
use serde_json::Value;
use std::borrow::Cow;

/// [`pinned_case`] over the value the scheduler keeps.
pub(super) fn routed_case(output: &Variable) -> Option<Option<usize>> {
    let Variable::Object(o) = output else { return None };
    match &**o.get("case")? {
        Variable::String(s) if s == "default" => Some(None),
        Variable::Number(n) => n.as_u64().and_then(|i| usize::try_from(i).ok()).map(Some),
        _ => None,
    }
}

impl Scheduler {
    /// A step whose dependencies are done may start: it becomes ready — unless the run
    /// re-runs part of an earlier one and the step is pinned (it finishes at once with
    /// its earlier output) or not among those to run (it is skipped).
    pub(super) fn make_ready(&mut self, frame: FrameId, pos: usize) {
        if self.plan.steps[self.id_of(frame, pos)].step.common.is_disabled() {
            self.skip_disabled(frame, pos);
            return;
        }
        // Frame 0 is the top level: only top-level steps are pinned or left out.
        if frame == 0 {
            let idx = self.id_of(frame, pos);
            if let Some(output) = self.selection.pinned.remove(&idx) {
                self.finish_pinned(pos, output);
                return;
            }
            if self.selection.only.as_ref().is_some_and(|only| !only.contains(&idx)) {
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
    pub(super) fn finish_pinned(&mut self, pos: usize, output: Value) {
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

    pub(super) fn wake_dependents(&mut self, frame: FrameId, idx: StepIdx) {
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
    pub(super) fn routed_away(&self, frame: FrameId, sw: StepIdx, target: StepIdx) -> bool {
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

    pub(super) fn skip(&mut self, frame: FrameId, pos: usize) {
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
    pub(super) fn skip_disabled(&mut self, frame: FrameId, pos: usize) {
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
}
