//! Timers and retries: the timers the scheduler asked for (a retry's backoff, a step's
//! `timeout_ms`, a `wait`, a loop's delay, the run's timeout), what each does when it
//! fires, and the retry policy with its backoff.

use super::frames::State;
use super::outcome::Outcome;
use super::{Action, FrameId, InvId, Scheduler, TimerId, err};
use crate::event::RunStatus;
use mcpflow_blueprint::template::value_to_var;
use mcpflow_blueprint::{Backoff, OnTimeout, Retry, StepIdx, StepKind};
use serde_json::Value;

#[derive(Debug, Clone, Copy)]
pub(super) enum TimerKind {
    Retry(FrameId, usize),
    Timeout(InvId),
    Wait(FrameId, usize),
    LoopDelay(FrameId, usize),
    Run,
}

impl Scheduler {
    #[inline]
    pub(super) fn fresh(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub(super) fn set_timer(&mut self, kind: TimerKind, at_ms: u64) -> TimerId {
        let timer = self.fresh();
        self.timers.insert(timer, kind);
        self.out.push(Action::SetTimer { timer, at_ms });
        timer
    }

    pub(super) fn timer(&mut self, timer: TimerId) {
        let Some(kind) = self.timers.remove(&timer) else { return };
        if let TimerKind::Retry(frame, _) | TimerKind::Wait(frame, _) | TimerKind::LoopDelay(frame, _) = kind
            && !self.frames.contains(frame)
        {
            // A loop delay outlives a loop that failed; its iteration has finished since.
            return;
        }
        match kind {
            TimerKind::Run => {
                let ms = self.limits.run_timeout.unwrap_or_default();
                self.fail_run(
                    err("RUN_TIMEOUT", format!("the run did not finish within {ms} ms (limits.timeout_ms)")),
                    RunStatus::Failed,
                );
            }
            TimerKind::Timeout(inv) => {
                let Some((frame, pos)) = self.invocations.remove(&inv) else { return };
                self.limits.running_calls = self.limits.running_calls.saturating_sub(1);
                self.out.push(Action::Cancel { inv });
                let plan = self.plan.clone();
                let step = &plan.steps[self.id_of(frame, pos)].step;
                let ms = step.common.timeout_ms.unwrap_or_default();
                if let StepKind::Input(i) = &step.kind {
                    let outcome = if i.on_timeout == Some(OnTimeout::Default) {
                        let shown = self.resolve_args(frame, pos).ok().flatten().unwrap_or(Value::Null);
                        let value = shown.get("default").cloned().unwrap_or(Value::Null);
                        self.emit(crate::event::EventKind::Log {
                            level: crate::event::LogLevel::Info,
                            message: format!("no answer within {ms} ms: `{}` takes its default", step.id()),
                            step: Some(step.id().to_owned()),
                        });
                        Outcome::Succeeded { output: value_to_var(value), json: None, raw: None }
                    } else {
                        let error = err(
                            "INPUT_TIMEOUT",
                            format!("nobody answered within {ms} ms (timeout_ms); the question was withdrawn"),
                        );
                        Outcome::Failed { error, retryable: false, raw: None }
                    };
                    self.finish(frame, pos, outcome);
                    return;
                }
                let error =
                    err("STEP_TIMEOUT", format!("no result within {ms} ms (timeout_ms); the call was cancelled"));
                self.finish(frame, pos, Outcome::Failed { error, retryable: true, raw: None });
            }
            TimerKind::Retry(frame, pos) => {
                if matches!(self.frames[frame].slots[pos].state, State::Backoff { .. }) {
                    self.frames[frame].slots[pos].state = State::Ready;
                    self.ready.insert((frame, pos));
                }
            }
            TimerKind::Wait(frame, pos) => {
                if matches!(self.frames[frame].slots[pos].state, State::Sleeping { .. }) {
                    self.finish(
                        frame,
                        pos,
                        Outcome::Succeeded { output: value_to_var(Value::Null), json: None, raw: None },
                    );
                }
            }
            TimerKind::LoopDelay(frame, pos) => {
                if let State::Loop(l) = &mut self.frames[frame].slots[pos].state {
                    l.delay = None;
                    l.cleared = l.next + 1;
                }
                self.loop_advance(frame, pos);
            }
        }
    }

    pub(super) fn retry_policy(&self, idx: StepIdx) -> Option<Retry> {
        let step = &self.plan.steps[idx].step;
        step.common.retry.clone().or_else(|| match step.kind {
            StepKind::Tool(_) | StepKind::Resource(_) | StepKind::Prompt(_) => self.retry.clone(),
            _ => None,
        })
    }

    /// Delay before attempt `next` (2, 3, …).
    pub fn backoff_delay(retry: &Retry, next: u32) -> u64 {
        let base = retry.delay_ms.unwrap_or(0);
        let delay = match retry.backoff.unwrap_or_default() {
            Backoff::Fixed => base,
            Backoff::Exponential => base.saturating_mul(1u64 << (next.saturating_sub(2)).min(32)),
        };
        retry.max_delay_ms.map_or(delay, |m| delay.min(m))
    }
}
