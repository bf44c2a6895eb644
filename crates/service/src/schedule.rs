//! Schedules: when a blueprint runs by itself. Pure: no IO, no clock, no tasks; every
//! instant comes in as an argument, so the app's driver (and the tests) decide what
//! "now" is.
//!
//! | file | what lives there |
//! |---|---|
//! | `schedule/trigger.rs` | [`Trigger`]: a blueprint's `schedule` parsed once, and its next fire after an instant (cron in a time zone across DST, `every`, `at`) |
//! | `schedule/planner.rs` | [`Planner`]: many blueprints; which fire now, when to wake next, missed fires, no overlapping runs, the [`ScheduleState`] to persist |
//!
//! The driver loop the planner is built for:
//!
//! ```text
//! start:   for each stored state: planner.restore(id, state)
//!          for each blueprint with a schedule: planner.upsert(id, Trigger::from_schedule(..)?, now)
//! loop:    sleep until planner.next_wake(now) (or a blueprint is saved / removed)
//!          for fire in planner.due(now): start a run; planner.run_started(id)
//!          persist planner.take_changed()
//! on end:  planner.run_finished(id)
//! ```

mod planner;
mod trigger;

pub use planner::{Fire, FireReason, Planner, ScheduleState};
pub use trigger::Trigger;

/// A `schedule` that cannot be turned into a [`Trigger`]. The blueprint validator
/// reports the same problems as `INVALID_SCHEDULE` diagnostics; this error is for
/// schedules that did not pass through it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// None, or more than one, of `cron`, `every`, `at`.
    #[error("schedule needs exactly one of `cron`, `every`, `at` ({given} given)")]
    Form { given: usize },
    /// One field does not parse; `reason` says why and how to write it.
    #[error("schedule.{field} {value:?}: {reason}")]
    Field { field: &'static str, value: String, reason: String },
}

impl ScheduleError {
    /// The stable code, the same as the validator's diagnostic.
    pub fn code(&self) -> &'static str {
        "INVALID_SCHEDULE"
    }

    /// Where in the blueprint: a JSON pointer such as `/schedule/cron`.
    pub fn pointer(&self) -> String {
        match self {
            ScheduleError::Form { .. } => "/schedule".to_owned(),
            ScheduleError::Field { field, .. } => format!("/schedule/{field}"),
        }
    }

    pub(crate) fn field(field: &'static str, value: &str, reason: impl Into<String>) -> Self {
        ScheduleError::Field { field, value: value.to_owned(), reason: reason.into() }
    }
}
