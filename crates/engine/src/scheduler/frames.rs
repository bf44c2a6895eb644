//! The frames of a run by id: the top level and the loop iterations that are open (or
//! were cancelled). A finished iteration is removed, so a run holds the frames of what
//! is running rather than one per iteration it ever ran. Ids are never reused: a late
//! reference to a removed frame (a timer that fires after its loop ended) finds nothing
//! instead of another iteration.
//!
//! The frame, its slots and their states live here too, with opening, closing,
//! cancelling and aborting a frame.

use super::events::Finished;
use super::loops::LoopRun;
use super::outcome::Outcome;
use super::{Action, FrameId, FrameValues, InvId, Scheduler, TimerId, err};
use crate::event::{EventKind, IterationPath, RunStatus, StepError, StepStatus};
use mcpflow_blueprint::template::{Rcvar, Variable, value_to_var};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::{Index, IndexMut};

#[derive(Debug, Default)]
pub(crate) struct Frames {
    live: HashMap<FrameId, Frame, BuildHasherDefault<IdHasher>>,
    next: FrameId,
    /// Iterations finished during the current input, removed once it is handled.
    pub(crate) finished: Vec<FrameId>,
    /// Values nothing reads any more (finished iterations'), kept until
    /// [`Scheduler::take_retired`], so the driver can free them when it has nothing
    /// more urgent to do. At most [`RETIRED`](super::RETIRED) are kept.
    pub(crate) retired: Vec<FrameValues>,
}

impl Frames {
    /// Adds a frame; its id is the next one (the top level is 0).
    pub(crate) fn push(&mut self, frame: Frame) -> FrameId {
        let id = self.next;
        self.next += 1;
        self.live.insert(id, frame);
        id
    }

    pub(crate) fn get(&self, id: FrameId) -> Option<&Frame> {
        self.live.get(&id)
    }

    pub(crate) fn contains(&self, id: FrameId) -> bool {
        self.live.contains_key(&id)
    }

    pub(crate) fn remove(&mut self, id: FrameId) -> Option<Frame> {
        self.live.remove(&id)
    }

    /// How many frames are held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }
}

impl Index<FrameId> for Frames {
    type Output = Frame;

    #[allow(clippy::panic, reason = "as indexing a Vec: the scheduler only follows ids of frames it holds")]
    fn index(&self, id: FrameId) -> &Frame {
        self.live.get(&id).unwrap_or_else(|| panic!("frame {id} is not open"))
    }
}

impl IndexMut<FrameId> for Frames {
    #[allow(clippy::panic, reason = "as indexing a Vec: the scheduler only follows ids of frames it holds")]
    fn index_mut(&mut self, id: FrameId) -> &mut Frame {
        self.live.get_mut(&id).unwrap_or_else(|| panic!("frame {id} is not open"))
    }
}

/// Frame ids are consecutive numbers: one multiplication spreads them over the hash.
#[derive(Debug, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, id: usize) {
        self.0 = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A frame: the top level or one loop iteration.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(super) list: usize,
    pub(crate) parent: Option<FrameId>,
    /// The loop step instance this iteration belongs to.
    pub(super) owner: Option<(FrameId, usize)>,
    pub(super) path: IterationPath,
    pub(crate) vars: Vec<(String, Rcvar)>,
    pub(super) slots: Vec<Slot>,
    pub(crate) outputs: HashMap<String, Rcvar>,
    pub(crate) records: HashMap<String, StepRecord>,
    pub(super) open: usize,
    pub(super) iteration: u32,
    pub(super) closed: bool,
}

/// A finished step instance as `steps.<id>` shows it (`{ output, status, error, attempts,
/// duration_ms }`), made into a value only when a template reads it: most never are,
/// and a loop settles one per step per iteration.
#[derive(Debug)]
pub(crate) struct StepRecord {
    pub(super) output: Rcvar,
    pub(super) status: StepStatus,
    /// The error's code and message.
    pub(super) error: Option<Box<(String, String)>>,
    pub(super) attempts: u32,
    pub(super) duration_ms: u64,
}

impl StepRecord {
    pub(super) fn to_var(&self) -> Rcvar {
        let mut record = BTreeMap::new();
        record.insert("output".to_owned(), self.output.clone());
        record.insert("status".to_owned(), value_to_var(json!(self.status.as_str())));
        let error =
            self.error.as_deref().map_or(Value::Null, |(code, message)| json!({"code": code, "message": message}));
        record.insert("error".to_owned(), value_to_var(error));
        record.insert("attempts".to_owned(), value_to_var(json!(self.attempts)));
        record.insert("duration_ms".to_owned(), value_to_var(json!(self.duration_ms)));
        Rcvar::new(Variable::Object(record))
    }
}

#[derive(Debug, Default)]
pub(super) struct Slot {
    pub(super) state: State,
    pub(super) attempts: u32,
    pub(super) started_ms: Option<u64>,
    /// A breakpoint on this instance has already paused the run once.
    pub(super) released: bool,
    /// For a fallback step that runs: the error it handles (`error` in scope).
    pub(super) handling: Option<Rcvar>,
    /// Skipped because the step is disabled: its dependents still run.
    pub(super) disabled: bool,
}

#[derive(Debug, Default)]
pub(super) enum State {
    /// Dependencies not finished yet.
    #[default]
    Waiting,
    Ready,
    Running {
        inv: InvId,
        timeout: Option<TimerId>,
    },
    Sleeping {
        timer: TimerId,
    },
    Backoff {
        timer: TimerId,
    },
    Loop(LoopRun),
    /// Failed; its fallback (at this position) is running.
    InFallback,
    Done(StepStatus),
}

impl Scheduler {
    pub(super) fn new_frame(
        &mut self,
        list: usize,
        parent: Option<FrameId>,
        owner: Option<(FrameId, usize)>,
        path: IterationPath,
        vars: Vec<(String, Rcvar)>,
        iteration: u32,
    ) -> FrameId {
        let plan = self.plan.clone();
        let members = &plan.lists[list].members;
        let mut slots = Vec::with_capacity(members.len());
        let mut open = 0;
        for &m in members {
            let s = &plan.steps[m];
            let state = if s.fallback_of.is_some() {
                // Runs only as a fallback; not part of the frame's own progress.
                State::Done(StepStatus::Skipped)
            } else {
                open += 1;
                if s.deps.is_empty() { State::Ready } else { State::Waiting }
            };
            slots.push(Slot { state, ..Slot::default() });
        }
        let id = self.frames.push(Frame {
            list,
            parent,
            owner,
            path,
            vars,
            slots,
            outputs: HashMap::new(),
            records: HashMap::new(),
            open,
            iteration,
            closed: false,
        });
        for (pos, &m) in members.iter().enumerate() {
            if plan.steps[m].fallback_of.is_none() && plan.steps[m].deps.is_empty() {
                self.make_ready(id, pos);
            }
        }
        id
    }

    pub(super) fn frame_complete(&mut self, frame: FrameId) {
        if self.frames[frame].closed {
            return;
        }
        self.frames[frame].closed = true;
        if frame == 0 {
            self.finish_run();
        } else {
            // Before the loop hears of it: the loop may finish now, and its iteration
            // ends first.
            self.iteration_closed(frame);
            self.iteration_done(frame);
        }
    }

    pub(super) fn close_frame(&mut self, frame: FrameId) {
        let was_open = !self.frames[frame].closed;
        self.frames[frame].closed = true;
        if was_open {
            self.iteration_closed(frame);
        }
    }

    /// A traced run: tells the driver that iteration `frame` is over, once per iteration
    /// (each iteration frame is closed once: completed, or cancelled). Untraced runs get
    /// no such action, so their actions are what they were without tracing.
    fn iteration_closed(&mut self, frame: FrameId) {
        if frame == 0 || self.config.trace_id.is_none() {
            return;
        }
        let list = self.frames[frame].list;
        let Some(owner) = self.plan.lists[list].owner else { return };
        let step = self.plan.steps[owner].step.id().to_owned();
        let path = self.frames[frame].path.clone();
        self.out.push(Action::IterationClosed { step, path });
    }

    /// Cancels everything still running or pending in a frame (and its iterations).
    pub(super) fn cancel_frame(&mut self, frame: FrameId) {
        let was_open = !self.frames[frame].closed;
        self.frames[frame].closed = true;
        for pos in 0..self.frames[frame].slots.len() {
            let state = std::mem::take(&mut self.frames[frame].slots[pos].state);
            let step = self.step_name(frame, pos);
            let path = self.frames[frame].path.clone();
            match state {
                State::Running { inv, timeout } => {
                    self.invocations.remove(&inv);
                    self.limits.running_calls = self.limits.running_calls.saturating_sub(1);
                    if let Some(t) = timeout {
                        self.timers.remove(&t);
                    }
                    self.out.push(Action::Cancel { inv });
                    self.emit_finished(frame, pos, Finished::failed(err("CANCELLED", "cancelled"), None));
                    self.frames[frame].slots[pos].state = State::Done(StepStatus::Failed);
                }
                State::Loop(run) => {
                    for f in run.active {
                        self.cancel_frame(f);
                    }
                    self.emit_finished(frame, pos, Finished::failed(err("CANCELLED", "cancelled"), None));
                    self.frames[frame].slots[pos].state = State::Done(StepStatus::Failed);
                }
                State::Done(s) => self.frames[frame].slots[pos].state = State::Done(s),
                State::InFallback => self.frames[frame].slots[pos].state = State::Done(StepStatus::Failed),
                other @ (State::Waiting | State::Ready | State::Backoff { .. } | State::Sleeping { .. }) => {
                    if let State::Backoff { timer } | State::Sleeping { timer } = other {
                        self.timers.remove(&timer);
                    }
                    self.ready.remove(&(frame, pos));
                    self.emit(EventKind::StepSkipped { step, path, reason: None });
                    self.frames[frame].slots[pos].state = State::Done(StepStatus::Skipped);
                }
            }
        }
        // After its steps' ends: an iteration span ends after the spans inside it.
        if was_open {
            self.iteration_closed(frame);
        }
    }

    /// `on_error: abort` inside `frame`: cancel the frame; a loop iteration then fails
    /// its loop, the top level fails the run.
    pub(super) fn abort_frame(&mut self, frame: FrameId, error: StepError) {
        if frame == 0 {
            self.fail_run(error, RunStatus::Failed);
            return;
        }
        self.cancel_frame(frame);
        let Some((of, opos)) = self.frames[frame].owner else { return };
        if let State::Loop(run) = &mut self.frames[of].slots[opos].state {
            run.active.remove(&frame);
        }
        self.cancel_loop(of, opos);
        let iteration = self.frames[frame].iteration;
        let e = err(&error.code, format!("iteration {iteration}: {}", error.message));
        self.finish(of, opos, Outcome::Failed { error: e, retryable: false, raw: None });
    }
}
