//! The service's schedules: the pure planner, and the daemon's loop firing runs in a
//! real `App` over a temporary store.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod daemon;
mod schedule;
