//! Loops: a `for_each` over a list or an `until`, iterations started up to the loop's
//! concurrency and `delay_ms` apart, each in its own frame; an iteration's `collect` and
//! `until`, the loop's result, and cancelling the iterations still running.

use super::frames::State;
use super::outcome::Outcome;
use super::scope::View;
use super::timers::TimerKind;
use super::{FrameId, Scheduler, TimerId, err};
use crate::event::{EventKind, LogLevel, StepError, UntilExhausted};
use mcpflow_blueprint::limits::{DEFAULT_UNTIL_MAX_ITERATIONS, MAX_LOOP_CONCURRENCY};
use mcpflow_blueprint::template::{
    CONTAINER_OVERHEAD, Past, Rcvar, Variable, truthy, value_fits, value_to_var, var_to_value,
};
use mcpflow_blueprint::{OnExhausted, StepKind, StepTemplates};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default)]
pub(super) struct LoopRun {
    /// The `for_each` list, shared with the value it came from (never copied, nothing
    /// allocated per item up front); `None` for `until`.
    pub(super) items: Option<Rcvar>,
    /// The list's length.
    pub(super) total: Option<u32>,
    pub(super) next: u32,
    pub(super) active: BTreeSet<FrameId>,
    /// The collected values of iterations `0..results.len()`, in order.
    pub(super) results: Vec<Rcvar>,
    /// Collected values of iterations that finished before an earlier one (concurrent
    /// iterations), until the ones before them are in.
    pub(super) early: BTreeMap<u32, Rcvar>,
    /// What the collected array weighs so far, as `limits.max_value_bytes` counts it:
    /// each value is weighed as it is collected, so a loop collecting too much fails
    /// at the iteration that passes the limit, not after the last one.
    pub(super) weight: u64,
    pub(super) done: u32,
    pub(super) delay: Option<TimerId>,
    /// Iterations below this index may start without waiting `delay_ms` again.
    pub(super) cleared: u32,
    /// `until` is met (or a failure): start no more iterations.
    pub(super) stop: bool,
    /// `until` reached `max_iterations` without its condition (`on_exhausted: fail`): the
    /// loop fails with this once nothing is in flight.
    pub(super) exhausted: Option<StepError>,
}

impl Scheduler {
    pub(super) fn start_loop(&mut self, frame: FrameId, pos: usize, for_each: Option<Rcvar>) {
        let idx = self.id_of(frame, pos);
        let StepKind::Loop(l) = &self.plan.steps[idx].step.kind else { return };
        // A `for_each` is bounded by its list (and the list by `limits.max_value_bytes`):
        // only an explicit `max_iterations` caps it.
        let (items, total) = match (&l.for_each, for_each) {
            (Some(_), Some(list)) if matches!(&*list, Variable::Array(_)) => {
                let len = match &*list {
                    Variable::Array(items) => items.len(),
                    _ => 0,
                };
                let cap = l.max_iterations.map_or(u64::from(u32::MAX), u64::from);
                let Some(total) = u32::try_from(len).ok().filter(|n| u64::from(*n) <= cap) else {
                    let e = err(
                        "LOOP_TOO_MANY_ITEMS",
                        match l.max_iterations {
                            Some(max) => format!("`for_each` has {len} items; `max_iterations` is {max}"),
                            None => format!("`for_each` has {len} items; a loop runs at most {} iterations", u32::MAX),
                        },
                    );
                    self.finish(frame, pos, Outcome::Failed { error: e, retryable: false, raw: None });
                    return;
                };
                (Some(list), Some(total))
            }
            (Some(_), Some(list)) if matches!(&*list, Variable::Null) => (None, Some(0)),
            (Some(_), other) => {
                let found = other.map_or("nothing".to_owned(), |v| var_to_value(&v).to_string());
                let e = err("LOOP_NOT_AN_ARRAY", format!("`for_each` must yield an array, found {found}"));
                self.finish(frame, pos, Outcome::Failed { error: e, retryable: false, raw: None });
                return;
            }
            (None, _) => (None, None),
        };
        self.frames[frame].slots[pos].state = State::Loop(LoopRun { items, total, ..LoopRun::default() });
        self.loop_advance(frame, pos);
    }

    /// Starts iterations while the loop's concurrency allows; finishes the loop when all
    /// are done.
    pub(super) fn loop_advance(&mut self, frame: FrameId, pos: usize) {
        let idx = self.id_of(frame, pos);
        let plan = self.plan.clone();
        let StepKind::Loop(l) = &plan.steps[idx].step.kind else { return };
        let body = plan.steps[idx].body.unwrap_or(0);
        // `until` stops at `max_iterations` (default 1,000); a `for_each` at the end of its
        // list, which `start_loop` checked against an explicit `max_iterations`.
        let max = if l.until.is_some() { l.max_iterations.unwrap_or(DEFAULT_UNTIL_MAX_ITERATIONS) } else { u32::MAX };
        // Each iteration in flight holds a frame: at most MAX_LOOP_CONCURRENCY of them,
        // whatever `concurrency` asks, so a long list is never a frame per element at once.
        let concurrency = if l.until.is_some() { 1 } else { l.concurrency.unwrap_or(1).clamp(1, MAX_LOOP_CONCURRENCY) };
        loop {
            let State::Loop(run) = &mut self.frames[frame].slots[pos].state else { return };
            let total = run.total;
            let exhausted = run.stop || total.is_some_and(|t| run.next >= t) || run.next >= max;
            if exhausted {
                if run.active.is_empty() && run.delay.is_none() {
                    if let Some(error) = run.exhausted.take() {
                        self.finish(frame, pos, Outcome::Failed { error, retryable: false, raw: None });
                        return;
                    }
                    let output = Variable::Array(std::mem::take(&mut run.results));
                    // Weighed item by item as it was collected (`collected`).
                    self.finish_within_limits(
                        frame,
                        pos,
                        Outcome::Succeeded { output: Rcvar::new(output), json: None, raw: None },
                    );
                }
                return;
            }
            if run.active.len() as u32 >= concurrency || run.delay.is_some() {
                return;
            }
            let i = run.next;
            if i > 0
                && run.cleared <= i
                && let Some(d) = l.delay_ms.filter(|d| *d > 0)
            {
                let timer = self.set_timer(TimerKind::LoopDelay(frame, pos), self.now + d);
                if let State::Loop(run) = &mut self.frames[frame].slots[pos].state {
                    run.delay = Some(timer);
                }
                return;
            }
            run.next += 1;
            let item = match run.items.as_deref() {
                Some(Variable::Array(items)) => items.get(i as usize).cloned(),
                _ => None,
            }
            .unwrap_or_else(|| value_to_var(Value::Null));
            let last =
                l.until.is_some().then(|| run.results.last().cloned().unwrap_or_else(|| value_to_var(Value::Null)));
            let mut path = self.frames[frame].path.clone();
            path.push(i);
            let var = l.as_name.clone().unwrap_or_else(|| "item".into());
            let mut vars = vec![(var, item), ("index".to_owned(), value_to_var(json!(i)))];
            // `last`: the previous iteration's collected value (an `until` loop runs one
            // iteration at a time, so it is in `results`), `null` on the first.
            if let Some(last) = last {
                vars.push(("last".to_owned(), last));
            }
            let child = self.new_frame(body, Some(frame), Some((frame, pos)), path, vars, i);
            if let State::Loop(run) = &mut self.frames[frame].slots[pos].state {
                run.active.insert(child);
            }
            if self.frames[child].open == 0 {
                self.frame_complete(child);
            }
        }
    }

    pub(super) fn iteration_done(&mut self, frame: FrameId) {
        let Some((of, opos)) = self.frames[frame].owner else { return };
        let plan = self.plan.clone();
        let idx = self.id_of(of, opos);
        let (StepKind::Loop(l), StepTemplates::Loop { until, collect, .. }) =
            (&plan.steps[idx].step.kind, &plan.steps[idx].templates)
        else {
            return;
        };
        let view = View { s: self, frame, extra: Vec::new() };
        let result = match collect {
            Some(t) => t.render_var(&view),
            None => {
                let last = plan.lists[self.frames[frame].list]
                    .members
                    .iter()
                    .rev()
                    .find(|&&m| plan.steps[m].fallback_of.is_none());
                Ok(last
                    .and_then(|&m| self.frames[frame].outputs.get(plan.steps[m].step.id()).cloned())
                    .unwrap_or_else(|| value_to_var(Value::Null)))
            }
        };
        let condition = match until {
            Some(t) => t.render_var(&view).map(Some),
            None => Ok(None),
        };
        let iteration = self.frames[frame].iteration;
        let (result, condition) = match (result, condition) {
            (Ok(r), Ok(c)) => (r, c),
            (Err(e), _) | (_, Err(e)) => {
                self.close_frame(frame);
                if let State::Loop(run) = &mut self.frames[of].slots[opos].state {
                    run.active.remove(&frame);
                }
                self.cancel_loop(of, opos);
                self.finish(of, opos, Outcome::Failed { error: err(e.code, e.message), retryable: false, raw: None });
                return;
            }
        };
        let step = plan.steps[idx].step.id().to_owned();
        let path = self.frames[of].path.clone();
        // Nothing outside a loop reads its body steps (validation guarantees it): the
        // iteration's values can go now rather than at the end of the run.
        let done_frame = &mut self.frames[frame];
        let values = (
            std::mem::take(&mut done_frame.outputs),
            std::mem::take(&mut done_frame.records),
            std::mem::take(&mut done_frame.vars),
        );
        self.frames.retired.push(values);
        self.frames.finished.push(frame);
        let stop = condition.as_ref().is_some_and(|v| truthy(v));
        if let Some(error) = self.collected(of, opos, frame, iteration, result) {
            self.cancel_loop(of, opos);
            self.finish(of, opos, Outcome::Failed { error, retryable: false, raw: None });
            return;
        }
        let State::Loop(run) = &mut self.frames[of].slots[opos].state else { return };
        run.done += 1;
        if stop {
            run.stop = true;
        }
        let done = run.done;
        let total = run.total;
        let max = l.max_iterations.unwrap_or(DEFAULT_UNTIL_MAX_ITERATIONS);
        let hit_cap = l.until.is_some() && !stop && done >= max;
        self.emit(EventKind::StepProgress {
            step: step.clone(),
            path,
            progress: f64::from(done),
            total: total.map(f64::from),
            message: Some(match total {
                Some(t) => format!("{done}/{t}"),
                None => format!("iteration {done}"),
            }),
        });
        if hit_cap {
            let last = condition.map_or(Value::Null, |v| var_to_value(&v));
            let shown = clip(&last.to_string(), 200);
            if l.on_exhausted == Some(OnExhausted::Succeed) {
                self.emit(EventKind::Log {
                    level: LogLevel::Warn,
                    message: format!(
                        "loop `{step}` stopped at max_iterations ({max}) before `until` was true (last value {shown}); `on_exhausted: succeed` keeps what it collected"
                    ),
                    step: Some(step),
                });
            } else if let State::Loop(run) = &mut self.frames[of].slots[opos].state {
                let mut error = err(
                    "LOOP_UNTIL_EXHAUSTED",
                    format!(
                        "loop `{step}` ran {done} iterations (max_iterations {max}) and its `until` was never true; its last value was {shown}. Raise `max_iterations`, fix the condition, or set `\"on_exhausted\": \"succeed\"` to keep what was collected"
                    ),
                );
                error.exhausted = Some(Box::new(UntilExhausted { iterations: done, max_iterations: max, last }));
                run.exhausted = Some(error);
            }
        }
        self.loop_advance(of, opos);
    }

    /// Iteration `iteration` (frame `frame`, now finished) of the loop at `of`/`opos`
    /// collected `result`: weighed against what the loop may still collect, then kept in
    /// order. `OUTPUT_TOO_LARGE` (or `_DEEP`) once the collected array would be past the
    /// value limits.
    fn collected(
        &mut self,
        of: FrameId,
        opos: usize,
        frame: FrameId,
        iteration: u32,
        result: Rcvar,
    ) -> Option<StepError> {
        let (bytes, depth) = (self.limits.max_value_bytes, self.limits.max_value_depth);
        let State::Loop(run) = &mut self.frames[of].slots[opos].state else { return None };
        run.active.remove(&frame);
        // The array itself: its own overhead and brackets once, a comma before each
        // value but the first.
        let before = if run.weight == 0 { CONTAINER_OVERHEAD + 2 } else { run.weight + 1 };
        let fits = match (bytes.checked_sub(before), depth.checked_sub(1)) {
            (Some(left), Some(below)) => value_fits(&result, left, below),
            (None, _) => Err(Past::Bytes),
            (_, None) => Err(Past::Depth),
        };
        match fits {
            Ok(weight) => run.weight = before + weight,
            Err(past) => return Some(self.past_limits_error(past)),
        }
        if iteration as usize == run.results.len() {
            run.results.push(result);
            while let Some(next) = run.early.remove(&(run.results.len() as u32)) {
                run.results.push(next);
            }
        } else {
            run.early.insert(iteration, result);
        }
        None
    }

    /// Cancels the active iterations of a loop instance.
    pub(super) fn cancel_loop(&mut self, frame: FrameId, pos: usize) {
        let active: Vec<FrameId> = match &mut self.frames[frame].slots[pos].state {
            State::Loop(run) => {
                run.stop = true;
                std::mem::take(&mut run.active).into_iter().collect()
            }
            _ => Vec::new(),
        };
        for f in active {
            self.cancel_frame(f);
        }
    }
}

/// `text` cut to at most `max` characters (an ellipsis marks the cut): a condition's value
/// in a message stays short whatever the server returned.
fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
