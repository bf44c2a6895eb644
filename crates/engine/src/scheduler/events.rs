//! The event stream: every event gets its sequence number and time here, a step
//! instance's one `StepFinished`, and when a call must wait for the journal to sync what
//! it reads.

use super::{Action, FrameId, Scheduler};
use crate::event::{EventKind, RunEvent, StepError, StepStatus};
use mcpflow_blueprint::StepIdx;
use serde_json::Value;
use std::collections::HashSet;

/// What one `apply` returns, the numbering of events across the run, and the steps the
/// journal has not synced.
#[derive(Debug, Default)]
pub(super) struct Out {
    /// The actions of the current input.
    actions: Vec<Action>,
    /// The last event's sequence number.
    pub(super) seq: u64,
    /// Steps with an instance finished since the journal last synced (see `needs_sync`).
    pub(super) unsynced: HashSet<StepIdx>,
}

/// Most actions the next batch has room for before it grows: what one busy batch of a
/// loop holds, not what a rare huge one did.
const ROOM: usize = 4_096;

impl Out {
    #[inline]
    pub(super) fn push(&mut self, action: Action) {
        self.actions.push(action);
    }

    /// The actions so far, to hand to the driver. The next input's actions start with
    /// room for as many (up to [`ROOM`]): a loop's batches are alike, and a vector grown
    /// by doubling would copy every action several times.
    #[inline]
    pub(super) fn take(&mut self) -> Vec<Action> {
        let room = Vec::with_capacity(self.actions.len().min(ROOM));
        std::mem::replace(&mut self.actions, room)
    }
}

/// What a `StepFinished` event reports.
pub(super) struct Finished {
    pub(super) status: StepStatus,
    pub(super) output: Option<Value>,
    pub(super) error: Option<StepError>,
    pub(super) raw: Option<Value>,
    pub(super) recovered_by: Option<String>,
}

impl Finished {
    pub(super) fn succeeded(output: Value, raw: Option<Value>, recovered_by: Option<String>) -> Self {
        Finished { status: StepStatus::Succeeded, output: Some(output), error: None, raw, recovered_by }
    }

    pub(super) fn failed(error: StepError, raw: Option<Value>) -> Self {
        Finished { status: StepStatus::Failed, output: None, error: Some(error), raw, recovered_by: None }
    }
}

impl Scheduler {
    #[inline]
    pub(super) fn emit(&mut self, kind: EventKind) {
        self.out.seq += 1;
        let at_ms = self.now.saturating_sub(self.started_at);
        self.out.push(Action::Emit(RunEvent { seq: self.out.seq, at_ms, kind }));
    }

    /// Emits the one `StepFinished` of a step instance; attempts and duration come from
    /// its slot.
    pub(super) fn emit_finished(&mut self, frame: FrameId, pos: usize, f: Finished) {
        let idx = self.id_of(frame, pos);
        self.out.unsynced.insert(idx);
        let slot = &self.frames[frame].slots[pos];
        let attempts = slot.attempts;
        let duration_ms = self.now.saturating_sub(slot.started_ms.unwrap_or(self.now));
        let step = self.step_name(frame, pos);
        let path = self.frames[frame].path.clone();
        let Finished { status, output, error, raw, recovered_by } = f;
        self.emit(EventKind::StepFinished {
            step,
            path,
            status,
            output,
            error,
            attempts,
            duration_ms,
            raw,
            recovered_by,
        });
    }

    /// Inlined: small and called from every module of the scheduler, which codegen may
    /// place in different units (it was one file when they were written).
    #[inline]
    pub(super) fn id_of(&self, frame: FrameId, pos: usize) -> StepIdx {
        self.plan.lists[self.frames[frame].list].members[pos]
    }

    #[inline]
    pub(super) fn step_name(&self, frame: FrameId, pos: usize) -> String {
        self.plan.steps[self.id_of(frame, pos)].step.id().to_owned()
    }

    /// Whether a call of the step at `frame`/`pos` reads a step that finished since the
    /// journal last synced: one of its dependencies, or of the loops around it (a loop
    /// makes no call of its own, so what it waited for may not be on disk yet). When so,
    /// the journal syncs first, and everything finished so far counts as synced.
    ///
    /// Direct dependencies suffice: a dependency's own dependencies finished before it
    /// did, and were synced before its call — or it made none and is unsynced itself.
    /// Iterations of a loop whose body steps depend on nothing in it call without a
    /// sync after the first, however many finish meanwhile.
    pub(super) fn needs_sync(&mut self, frame: FrameId, pos: usize) -> bool {
        if self.out.unsynced.is_empty() {
            return false;
        }
        let mut at = Some((frame, pos));
        let mut needed = false;
        while let Some((f, p)) = at {
            let idx = self.id_of(f, p);
            if self.plan.steps[idx].deps.iter().any(|d| self.out.unsynced.contains(d)) {
                needed = true;
                break;
            }
            at = self.frames.get(f).and_then(|fr| fr.owner);
        }
        if needed {
            self.out.unsynced.clear();
        }
        needed
    }
}
