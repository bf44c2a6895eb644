//! `mcpflow serve`'s mediator over streamable HTTP, driven by rmcp clients (our pool),
//! with the testkit fixtures as the downstream servers.

// Test helpers outside #[test] functions: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod http_limits;
mod serve;
mod serve_people;
mod telemetry;

pub use mcpflow_testkit::ServersFile as Setup;
use serde_json::Value;

/// A temp dir with an `mcpServers` file naming the testkit fixtures (and `extra`).
pub fn setup(extra: Value) -> Setup {
    mcpflow_testkit::servers_file(extra).unwrap()
}
