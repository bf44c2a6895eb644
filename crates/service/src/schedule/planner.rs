//! [`Planner`]: the schedules of many blueprints; which fire now, when to wake next,
//! and the [`ScheduleState`] the app persists between sessions.

use super::Trigger;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What the planner remembers about one blueprint's schedule; the app stores it (the
/// store's `schedules` tree) and hands it back to [`Planner::restore`] on the next start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleState {
    /// The schedule this state belongs to, as [`Trigger`]'s canonical text. A state
    /// whose trigger differs from the blueprint's current one is not resumed.
    pub trigger: String,
    /// When the schedule was first seen; `every` counts its slots from here.
    pub anchor: DateTime<Utc>,
    /// The slot the planner waits for; `None` when the schedule will not fire again
    /// (an `at` that fired or had passed, a cron expression matching no date).
    pub next_fire: Option<DateTime<Utc>>,
    /// The slot of the last fire (its `scheduled_for`, not when the run started).
    #[serde(default)]
    pub last_fire: Option<DateTime<Utc>>,
    /// Fires not started because the blueprint's previous run was still running.
    #[serde(default)]
    pub skipped_overlaps: u64,
}

/// Why a blueprint fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FireReason {
    /// Its slot came while the planner was watching.
    Due,
    /// One or more slots came while the app was closed; this one run stands for all.
    Missed,
}

/// A blueprint to start now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fire {
    pub blueprint: String,
    /// The slot this fire is for; for several slots coalesced into one fire, the
    /// earliest.
    pub scheduled_for: DateTime<Utc>,
    pub reason: FireReason,
}

#[derive(Debug)]
struct Entry {
    trigger: Trigger,
    state: ScheduleState,
    /// Restored from a previous session and not yet looked at by [`Planner::due`]: a
    /// slot already past is one missed while the app was closed.
    restored: bool,
}

/// The schedules of many blueprints, keyed by blueprint id.
///
/// # Policies
///
/// - **Missed fires.** When one or more slots came due while the app was closed (a
///   [`restore`](Planner::restore)d state whose `next_fire` is past), the first
///   [`due`](Planner::due) fires the blueprint **once** ([`FireReason::Missed`], for
///   the earliest missed slot), not once per missed slot, and the schedule continues
///   with its first slot after now. The same coalescing applies while open (a machine
///   that slept through several slots fires once, [`FireReason::Due`]): fires are
///   never queued.
/// - **No overlap.** A slot that comes due while a run of the same blueprint is still
///   running (between [`run_started`](Planner::run_started) and
///   [`run_finished`](Planner::run_finished), which also count manual runs) is not
///   started and not queued: it adds one to
///   [`skipped_overlaps`](ScheduleState::skipped_overlaps), and the schedule moves on
///   to its next slot after now.
/// - **Schedule changes.** [`upsert`](Planner::upsert) with the same trigger keeps the
///   state (anchor, next fire); a different trigger starts afresh from now: new
///   anchor, next fire after now, nothing counted as missed. `last_fire` and
///   `skipped_overlaps` are history and carry over.
/// - **`at`** fires once. Afterwards `next_fire` is `None`, which the saved state
///   remembers, so a restart does not fire it again. An `at` already past when the
///   schedule is first seen never fires; one that passed while the app was closed
///   fires once, as missed.
/// - Fires come out in slot order (then blueprint id), so equal inputs give equal
///   outputs.
#[derive(Debug, Default)]
pub struct Planner {
    entries: BTreeMap<String, Entry>,
    /// States restored before their blueprint was upserted.
    parked: BTreeMap<String, ScheduleState>,
    /// Runs in progress per blueprint.
    running: BTreeMap<String, u32>,
    /// Blueprints whose state changed since the last [`Planner::take_changed`].
    changed: BTreeSet<String>,
}

impl Planner {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a blueprint's schedule or replaces it. The same trigger as before keeps its
    /// state; a new or different one starts from `now` (see the policies). A state
    /// restored for this blueprint is resumed when it belongs to the same trigger.
    pub fn upsert(&mut self, blueprint: &str, trigger: Trigger, now: DateTime<Utc>) {
        if let Some(entry) = self.entries.get_mut(blueprint) {
            if entry.trigger == trigger {
                return;
            }
            entry.state = fresh(&trigger, now, Some(&entry.state));
            entry.trigger = trigger;
            entry.restored = false;
        } else {
            let parked = self.parked.remove(blueprint);
            let key = trigger.to_string();
            let entry = match parked {
                Some(state) if state.trigger == key => Entry { trigger, state, restored: true },
                other => Entry { state: fresh(&trigger, now, other.as_ref()), trigger, restored: false },
            };
            self.entries.insert(blueprint.to_owned(), entry);
        }
        self.changed.insert(blueprint.to_owned());
    }

    /// Forgets a blueprint's schedule (its runs in progress are still counted).
    pub fn remove(&mut self, blueprint: &str) {
        let had = self.entries.remove(blueprint).is_some() | self.parked.remove(blueprint).is_some();
        if had {
            self.changed.insert(blueprint.to_owned());
        }
    }

    /// Hands back a state saved in a previous session, before or after the blueprint's
    /// [`upsert`](Planner::upsert). A state for a different trigger than the one
    /// upserted keeps only its history (`last_fire`, `skipped_overlaps`).
    pub fn restore(&mut self, blueprint: &str, state: ScheduleState) {
        let Some(entry) = self.entries.get_mut(blueprint) else {
            self.parked.insert(blueprint.to_owned(), state);
            return;
        };
        if state.trigger == entry.state.trigger {
            entry.state = state;
            entry.restored = true;
        } else {
            entry.state.last_fire = state.last_fire;
            entry.state.skipped_overlaps = state.skipped_overlaps;
            self.changed.insert(blueprint.to_owned());
        }
    }

    /// The state to persist for a blueprint.
    pub fn state(&self, blueprint: &str) -> Option<ScheduleState> {
        match self.entries.get(blueprint) {
            Some(entry) => Some(entry.state.clone()),
            None => self.parked.get(blueprint).cloned(),
        }
    }

    /// The states changed since the last call, to write back: `Some` to save, `None`
    /// to delete (the schedule was removed).
    pub fn take_changed(&mut self) -> Vec<(String, Option<ScheduleState>)> {
        std::mem::take(&mut self.changed)
            .into_iter()
            .map(|id| {
                let state = self.state(&id);
                (id, state)
            })
            .collect()
    }

    /// The blueprints to start now, and each schedule moved to its first slot after
    /// `now`. Slots that come while a run of the same blueprint is still going are
    /// skipped and counted instead (see the policies).
    pub fn due(&mut self, now: DateTime<Utc>) -> Vec<Fire> {
        let mut fires = Vec::new();
        for (id, entry) in &mut self.entries {
            let restored = std::mem::take(&mut entry.restored);
            let Some(slot) = entry.state.next_fire.filter(|t| *t <= now) else { continue };
            entry.state.next_fire = entry.trigger.next_after(now, entry.state.anchor);
            if self.running.get(id).is_some_and(|n| *n > 0) {
                entry.state.skipped_overlaps += 1;
            } else {
                entry.state.last_fire = Some(slot);
                let reason = if restored { FireReason::Missed } else { FireReason::Due };
                fires.push(Fire { blueprint: id.clone(), scheduled_for: slot, reason });
            }
            self.changed.insert(id.clone());
        }
        fires.sort_by(|a, b| (a.scheduled_for, &a.blueprint).cmp(&(b.scheduled_for, &b.blueprint)));
        fires
    }

    /// When [`due`](Planner::due) next has something to do: the earliest next fire of
    /// any blueprint, never before `now` (a fire already due means "at once"). `None`
    /// when no schedule will fire again.
    pub fn next_wake(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.entries.values().filter_map(|e| e.state.next_fire).min().map(|t| t.max(now))
    }

    /// A run of `blueprint` started (scheduled or not); until it finishes, its slots are
    /// skipped.
    pub fn run_started(&mut self, blueprint: &str) {
        *self.running.entry(blueprint.to_owned()).or_default() += 1;
    }

    /// A run of `blueprint` ended, however it ended.
    pub fn run_finished(&mut self, blueprint: &str) {
        if let Some(n) = self.running.get_mut(blueprint) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.running.remove(blueprint);
            }
        }
    }
}

/// A state starting at `now`, keeping the history of `before`.
fn fresh(trigger: &Trigger, now: DateTime<Utc>, before: Option<&ScheduleState>) -> ScheduleState {
    ScheduleState {
        trigger: trigger.to_string(),
        anchor: now,
        next_fire: trigger.next_after(now, now),
        last_fire: before.and_then(|b| b.last_fire),
        skipped_overlaps: before.map_or(0, |b| b.skipped_overlaps),
    }
}
