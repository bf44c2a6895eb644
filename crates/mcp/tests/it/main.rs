//! Integration tests of the pool against real MCP servers: the testkit fixtures (in
//! process and as child processes) and the npm reference servers (started with `node`
//! from `node_modules`; run `npm ci` first).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod config;
mod era_pin;
mod eras;
mod faults;
mod fixtures;
mod flood;
mod http_bridge;
mod http_words;
mod npm;
mod probe;
mod reissue;
mod roots;
mod secrets;
mod sse_resume;
mod step_up;
mod support;
mod tasks;
mod trace;
