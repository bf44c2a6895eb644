//! Run containment: one run in a worker process.
//!
//! `mcpflow service` and `mcpflow serve` hold every run of a data folder in one process.
//! A run whose template work overflows a stack, exhausts memory or aborts would take
//! every other run, the studio's connection and every agent's session with it. So each
//! of their runs runs in a worker process of its own ([`supervisor::run`] starts
//! `mcpflow worker`, whose [`worker::serve`] runs the engine): the run's scheduler and
//! templates are in the worker, and everything outside the run — the MCP client pool,
//! people, the sampler, the store, telemetry — stays in the supervisor, reached over
//! the worker's standard input and output ([`wire`]). A worker that dies leaves its run
//! `interrupted`, and `mcpflow resume` continues it.

#![forbid(unsafe_code)]

mod link;
pub mod supervisor;
pub mod wire;
pub mod worker;

pub use supervisor::{Command, run};
pub use worker::serve;
