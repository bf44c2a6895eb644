//! `mcpflow-testkit <echo|cluster-sim|faulty>`: serves one fixture MCP server over stdio; logs go to stderr.
//! `mcpflow-testkit otlp [--grpc] [--port P] [--tree]`: an OTLP/HTTP (or OTLP/gRPC) receiver on loopback that
//! prints the spans it receives (NDJSON, or as trees).
//! `mcpflow-testkit postgres`: starts a throwaway PostgreSQL cluster (a Unix socket in a temporary folder, no
//! port), prints the URL of an empty database in it, and keeps it until stdin closes (the end-to-end tests).
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
    /// otlp: the loopback port to listen on (0: any free port, printed first) [default: 4318; 4317 with --grpc].
    #[arg(long)]
    port: Option<u16>,
    /// otlp: receive OTLP/gRPC (plain-text HTTP/2) instead of OTLP/HTTP.
    #[arg(long)]
    grpc: bool,
    /// otlp: print the received spans as trees (reprinted as more arrive) instead of NDJSON.
    #[arg(long)]
    tree: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Name {
    Echo,
    ClusterSim,
    Faulty,
    /// An OTLP/HTTP or OTLP/gRPC receiver (not MCP): prints the spans sent to it.
    Otlp,
    /// A throwaway PostgreSQL cluster (not MCP): prints a database's URL, stops when stdin closes.
    Postgres,
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
        Name::Otlp => {
            let port = cli.port.unwrap_or(if cli.grpc { 4317 } else { 4318 });
            return receive(port, cli.grpc, cli.tree).await;
        }
        Name::Postgres => return postgres(),
    };
    let name = fixture.name();
    mcpflow_testkit::serve_stdio(fixture).await.with_context(|| format!("serving the {name} fixture over stdio"))
}

/// Starts the cluster, prints a database's URL, and waits for stdin to close; the cluster
/// stops as this process exits (its watchdog's stdin is a pipe from it).
#[allow(clippy::print_stdout)]
fn postgres() -> anyhow::Result<()> {
    let cluster = mcpflow_testkit::postgres::Cluster::shared()
        .context("PostgreSQL is not installed (Debian: apt-get install postgresql)")?;
    println!("{}", cluster.database());
    std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new()).context("reading stdin")?;
    Ok(())
}

/// Runs the OTLP receiver until the process is stopped, printing what arrives.
#[allow(clippy::print_stdout)]
async fn receive(port: u16, grpc: bool, tree: bool) -> anyhow::Result<()> {
    use mcpflow_testkit::otlp::Receiver;
    let receiver = if grpc { Receiver::start_grpc(port) } else { Receiver::start(port) }
        .with_context(|| format!("listening on 127.0.0.1:{port} (is another collector there? try --port 0)"))?;
    let what = if grpc { "OTLP/gRPC, OTEL_EXPORTER_OTLP_PROTOCOL=grpc" } else { "POST /v1/traces" };
    println!("listening on {} ({what})", receiver.url());
    let mut shown = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let spans = receiver.spans();
        if spans.len() == shown {
            continue;
        }
        if tree {
            println!("{}", mcpflow_testkit::otlp::tree(&spans));
        } else {
            for span in &spans[shown..] {
                println!("{}", serde_json::to_string(span).context("writing a span as JSON")?);
            }
        }
        shown = spans.len();
    }
}
