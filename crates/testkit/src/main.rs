//! `mcpflow-testkit <echo|cluster-sim|faulty>`: serves one fixture MCP server over stdio; logs go to stderr.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

use std::time::Duration;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use mcpflow_testkit::{ClusterConfig, Fixture};

/// Serve a fixture MCP server over stdio (stdout is the protocol; logs go to stderr, level from RUST_LOG).
#[derive(Debug, Parser)]
#[command(name = "mcpflow-testkit", version)]
struct Cli {
    /// Which fixture to serve.
    fixture: Name,
    /// cluster-sim: delay added to every tool call, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// cluster-sim: number of namespaces.
    #[arg(long, default_value_t = ClusterConfig::default().namespaces)]
    namespaces: usize,
    /// cluster-sim: number of nodes.
    #[arg(long, default_value_t = ClusterConfig::default().nodes)]
    nodes: usize,
    /// cluster-sim: multiplier for the workloads in team namespaces.
    #[arg(long, default_value_t = ClusterConfig::default().scale)]
    scale: f64,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Name {
    Echo,
    ClusterSim,
    Faulty,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let level = std::env::var("RUST_LOG").ok().and_then(|l| l.parse().ok()).unwrap_or(tracing::Level::WARN);
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_ansi(false).with_max_level(level).init();
    let fixture = match cli.fixture {
        Name::Echo => Fixture::Echo,
        Name::ClusterSim => Fixture::ClusterSim(ClusterConfig {
            namespaces: cli.namespaces,
            nodes: cli.nodes,
            scale: cli.scale,
            latency: Duration::from_millis(cli.latency_ms),
        }),
        Name::Faulty => Fixture::Faulty,
    };
    let name = fixture.name();
    mcpflow_testkit::serve_stdio(fixture).await.with_context(|| format!("serving the {name} fixture over stdio"))
}
