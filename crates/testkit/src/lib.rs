//! Fixture MCP servers for mcpflow's tests, benches and demo: `echo`, `cluster-sim` and `faulty`.
//!
//! | fixture | tools | also |
//! |---|---|---|
//! | [`Fixture::Echo`] | `echo`, `add`, `multiply`, `sleep`, `record`, `progress`, `add_tool`, `meta` | resource `echo://hello`, prompt `greet`; `add_tool` adds a tool and sends `tools/list_changed`; `meta` returns its request's `_meta`; `add` declares an `outputSchema`, and `MCPFLOW_TESTKIT_ECHO_DRIFT=breaking|compatible` serves a later version of it (lock drift tests) |
//! | [`Fixture::ClusterSim`] | `list_namespaces`, `list_nodes`, `list_resource_types`, `list_resources`, `get_resource` | resource `cluster://summary` |
//! | [`Fixture::Faulty`] | `fail_n_times`, `hang`, `crash`, `crash_once`, `garbage`, `huge`, `drip`, `flood_progress`, `flood_questions`, `flood_pings`, `ask_with_defaults`, `shout_env`, `is_error`, `echo` | |
//!
//! Run one in-process with [`spawn_in_process`] (the client serves over the returned stream), or as a
//! child process: [`binary`] is the path of `mcpflow-testkit <echo|cluster-sim|faulty>`, which serves
//! MCP over stdio ([`Fixture::args`] gives its arguments).
//!
//! `faulty`'s `hang` appends a line to the file named by [`HANG_MARK`] when a call comes in, so
//! a test can wait for the call to be in flight.
//!
//! [`oauth::OAuthServer`] is an OAuth-protected MCP server with its authorization server on loopback.
//!
//! [`postgres::Cluster`] is a throwaway PostgreSQL cluster on a Unix socket in a temporary folder.
//!
//! [`otlp::Receiver`] is an OTLP/HTTP receiver on loopback that decodes spans with `opentelemetry-proto`.
//!
//! Tools whose result is an object return it both as `structuredContent` and as one text item with the
//! same JSON; tool failures are results with `isError: true`.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

mod binary;
mod cluster;
mod echo;
mod faulty;
mod loopback;
pub mod oauth;
pub mod otlp;
mod pace;
pub mod postgres;
pub mod procs;
mod pump;
mod reply;
mod serve;
mod servers_file;

use std::time::Duration;

pub use binary::binary;
pub use faulty::HANG_MARK;
pub use serve::{serve_stdio, spawn_in_process};
pub use servers_file::{ServersFile, servers_file};

/// Which fixture server to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Fixture {
    /// Trivial tools, a resource and a prompt.
    Echo,
    /// A deterministic synthetic Kubernetes-like cluster.
    ClusterSim(ClusterConfig),
    /// Tools that fail, hang, crash or corrupt the stream on purpose.
    Faulty,
}

impl Fixture {
    /// The name the binary takes: `echo`, `cluster-sim` or `faulty`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::ClusterSim(_) => "cluster-sim",
            Self::Faulty => "faulty",
        }
    }

    /// Arguments for [`binary`] that start this fixture with this configuration.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec![self.name().to_owned()];
        if let Self::ClusterSim(config) = self {
            args.extend([
                "--namespaces".to_owned(),
                config.namespaces.to_string(),
                "--nodes".to_owned(),
                config.nodes.to_string(),
                "--scale".to_owned(),
                config.scale.to_string(),
                "--latency-ms".to_owned(),
                config.latency.as_millis().to_string(),
            ]);
        }
        args
    }
}

/// Shape of the simulated cluster. The same configuration always produces the same objects.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// Number of namespaces (8 system namespaces first, then team namespaces).
    pub namespaces: usize,
    /// Number of nodes (at least 1 is generated).
    pub nodes: usize,
    /// Multiplier for the workloads in team namespaces (1.0 gives about 1,200 objects in total).
    pub scale: f64,
    /// Delay added to every tool call.
    pub latency: Duration,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self { namespaces: 38, nodes: 13, scale: 1.0, latency: Duration::ZERO }
    }
}

/// Why a fixture server could not be served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The MCP handshake with the client failed.
    #[error("MCP initialization failed: {0}")]
    Initialize(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The server task panicked or was aborted.
    #[error("the server task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
