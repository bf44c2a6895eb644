//! Engine tests. `scheduler` drives the pure state machine with an explicit clock (no
//! IO, no sleeps).

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod input;
mod rerun;
mod sampling;
mod scheduler;
mod sim;
mod telemetry;
mod until;
