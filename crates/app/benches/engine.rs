//! Engine overhead against real servers, measured side by side in one run:
//!
//! (a) 2,000 sequential calls through the engine ÷ a bare rmcp client making the same
//!     2,000 calls to a cluster-sim process (target ≤ 1.05);
//! (b) 1,000 calls with 10 ms server latency at concurrency 16 ÷ the ideal 625 ms
//!     (target ≤ 1.2);
//! (c) the cmdb-sync example against cluster-sim + server-memory (wall time);
//! (d) (a)'s 2,000 calls through the engine with OpenTelemetry off, on with the
//!     collector down (its port refuses; target ≤ 1.05 of off) and on with a receiver
//!     taking every export (target ≤ 1.10 of off).
//!
//! `cargo bench -p mcpflow-app --bench engine` (set `MCPFLOW_BENCH_REPS`, default 7;
//! `MCPFLOW_BENCH_RUNTIME=current` runs it on tokio's current-thread runtime, as
//! `mcpflow run` does, instead of the multi-threaded one with two workers).
//! Without `--bench` (as `cargo test --benches` runs it) it is a quick smoke run that
//! checks every path works and prints nothing meaningful.
//! Medians of alternating repetitions, so drift on a shared machine hits both sides.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use mcpflow_app::headless::{self, HeadlessRun};
use mcpflow_blueprint::{Options, check_value};
use mcpflow_engine::{
    Attr, Engine, EventSink, Measure, OpenSpan, RunConfig, RunRequest, RunStatus, SpanStart, SpanStatus, Telemetry,
    TraceContext,
};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use mcpflow_telemetry::{Config as TelemetryConfig, Flags, Otel};
use mcpflow_testkit::otlp::Receiver;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const CALLS: usize = 2_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn args() -> serde_json::Map<String, Value> {
    json!({ "kind": "nodes", "name": "node-01" }).as_object().cloned().unwrap()
}

async fn bare_client(calls: usize) -> Duration {
    let mut cmd = tokio::process::Command::new(mcpflow_testkit::binary());
    cmd.arg("cluster-sim");
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    client.list_all_tools().await.unwrap();
    let start = Instant::now();
    for _ in 0..calls {
        let r = client.call_tool(CallToolRequestParams::new("get_resource").with_arguments(args())).await.unwrap();
        assert_ne!(r.is_error, Some(true));
    }
    let took = start.elapsed();
    client.cancel().await.unwrap();
    took
}

/// The same calls as (b) from a bare rmcp client, 16 in flight: the floor set by the
/// server and the transport.
async fn bare_concurrent(calls: usize, concurrency: usize, latency_ms: u64) -> Duration {
    use futures::StreamExt as _;
    let mut cmd = tokio::process::Command::new(mcpflow_testkit::binary());
    cmd.args(["cluster-sim", "--latency-ms", &latency_ms.to_string()]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    client.list_all_tools().await.unwrap();
    let start = Instant::now();
    let peer = client.peer().clone();
    futures::stream::iter(0..calls)
        .map(|_| {
            let peer = peer.clone();
            async move { peer.call_tool(CallToolRequestParams::new("get_resource").with_arguments(args())).await.unwrap() }
        })
        .buffer_unordered(concurrency)
        .for_each(|_| async {})
        .await;
    let took = start.elapsed();
    client.cancel().await.unwrap();
    took
}

fn loop_blueprint(n: usize, concurrency: u32) -> (Arc<mcpflow_blueprint::Blueprint>, Arc<mcpflow_blueprint::Plan>) {
    let doc = json!({ "blueprint": 1, "id": "bench", "limits": { "concurrency": 16, "max_step_runs": 1_000_000 }, "steps": [
        { "id": "each", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": concurrency, "max_iterations": n,
          "steps": [{ "id": "get", "kind": "tool", "server": "cluster", "tool": "get_resource", "args": { "kind": "nodes", "name": "node-01" } }],
          "collect": "{{ get.metadata.name }}" }
    ] });
    let report = check_value(doc, &Options::default());
    (Arc::new(report.blueprint.unwrap()), Arc::new(report.plan.unwrap()))
}

async fn engine_loop(n: usize, concurrency: u32, latency_ms: u64) -> Duration {
    let pool = cluster_pool(latency_ms).await;
    let took = run_loop(&pool, n, concurrency, None).await;
    pool.shutdown().await;
    took
}

/// A `Telemetry` that records nothing: what the engine's and the pool's own
/// instrumentation cost (span bookkeeping, `_meta.traceparent`), without the SDK.
#[derive(Debug)]
struct Noop(TraceContext);

struct NoopSpan(TraceContext);

impl OpenSpan for NoopSpan {
    fn context(&self) -> &TraceContext {
        &self.0
    }
    fn set(&mut self, _: &'static str, _: Attr) {}
    fn end(self: Box<Self>, _: SpanStatus) {}
}

impl Telemetry for Noop {
    fn start(&self, _: SpanStart<'_>) -> Box<dyn OpenSpan> {
        Box::new(NoopSpan(self.0.clone()))
    }
    fn measure(&self, _: Measure) {}
    fn capture_payloads(&self) -> bool {
        false
    }
}

/// The telemetry modes of case (d).
#[derive(Clone, Copy, Debug)]
enum Otlp {
    Off,
    /// The engine's and the pool's instrumentation into a [`Noop`].
    Noop,
    /// The collector's port refuses connections.
    Down,
    /// A receiver on loopback takes every export.
    Up,
}

/// An exporter for `mode` (`None` for `Off` and `Noop`), configured as
/// `mcpflow run --otlp URL` configures it (defaults, no export retries).
fn telemetry(mode: Otlp, up: &str, down: &str) -> Option<Arc<Otel>> {
    let base = match mode {
        Otlp::Off | Otlp::Noop => return None,
        Otlp::Down => down,
        Otlp::Up => up,
    };
    let flags = Flags { otlp: Some(base.to_owned()), capture_payloads: false };
    let mut config = TelemetryConfig::resolve(&flags, None, |_| None).unwrap().unwrap();
    config.retries = false;
    Some(Arc::new(Otel::start(&config, Arc::new(|_: &str| {})).unwrap()))
}

/// A pool with one cluster-sim server (`latency_ms` per call), discovered.
async fn cluster_pool(latency_ms: u64) -> Arc<Pool> {
    let mut configs = ServerConfigs::new();
    let bin = mcpflow_testkit::binary().display().to_string();
    let cfg = json!({ "mcpServers": { "cluster": { "command": bin, "args": ["cluster-sim", "--latency-ms", latency_ms.to_string()] } } });
    configs.merge(ServerConfigs::parse(&cfg.to_string(), "bench").unwrap());
    let pool = Arc::new(Pool::new(configs, Approvals::allow_all(), PoolOptions::default()));
    pool.discover("cluster").await.unwrap();
    pool
}

/// The time of one run of the loop blueprint over `pool`.
async fn run_loop(pool: &Arc<Pool>, n: usize, concurrency: u32, telemetry: Option<Arc<dyn Telemetry>>) -> Duration {
    let mut engine = Engine::new(pool.clone());
    engine.telemetry = telemetry;
    let (bp, plan) = loop_blueprint(n, concurrency);
    let config = RunConfig {
        run_id: "bench".into(),
        inputs: json!({ "items": (0..n).collect::<Vec<_>>() }),
        saved: json!({}),
        started_at: String::new(),
        breakpoints: Default::default(),
        start_paused: false,
        timeout_ms: None,
        ..Default::default()
    };
    let sink: EventSink = Arc::new(|_| {});
    let start = Instant::now();
    let env = engine
        .run(
            RunRequest { blueprint: bp, plan, config, stack: Vec::new(), origin: Default::default() },
            sink,
            None,
            CancellationToken::new(),
        )
        .await;
    let took = start.elapsed();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.summary.tool_calls, n as u64);
    took
}

async fn cmdb_sync(repo: &Path) -> Option<(Duration, u64, Value)> {
    let file = repo.join("workflows/cmdb-sync.blueprint.json");
    let servers = repo.join("demo/servers.json");
    if !file.exists() || !repo.join("node_modules/@modelcontextprotocol/server-memory").exists() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    // SAFETY-free: the variable is read by the server-memory child when it starts.
    let memory = dir.path().join("memory.jsonl");
    let servers_text =
        std::fs::read_to_string(&servers).unwrap().replace("${env:MCPFLOW_MEMORY_FILE}", &memory.display().to_string());
    let servers_file = dir.path().join("servers.json");
    std::fs::write(&servers_file, servers_text).unwrap();
    let checked = headless::check(&std::fs::read(&file).unwrap()).unwrap();
    let spec = HeadlessRun { server_files: vec![servers_file], allow_all: true, ..HeadlessRun::default() };
    let start = Instant::now();
    let env = headless::run(&checked, &spec, Arc::new(|_| {}), CancellationToken::new()).await.unwrap();
    let took = start.elapsed();
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    Some((took, env.summary.tool_calls, env.output))
}

fn main() {
    // Run from the repository root so relative server paths resolve.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    std::env::set_current_dir(&repo).unwrap();
    let measuring = std::env::args().any(|a| a == "--bench");
    let reps: usize =
        if measuring { std::env::var("MCPFLOW_BENCH_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(7) } else { 1 };
    let calls = if measuring { CALLS } else { 50 };
    let current = std::env::var_os("MCPFLOW_BENCH_RUNTIME").is_some_and(|v| v == "current");
    let rt = if current {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    };
    println!("runtime: {}", if current { "current_thread" } else { "multi_thread, 2 workers" });
    // `MCPFLOW_BENCH_CASES=d` (a comma list of a, b, c, d) runs only those cases.
    let cases = std::env::var("MCPFLOW_BENCH_CASES").unwrap_or_else(|_| "a,b,c,d".into());
    let case = |c: &str| cases.split(',').any(|x| x.trim() == c);
    rt.block_on(async {
        // Warm up both paths once (process start, page cache).
        bare_client(100).await;
        engine_loop(100, 1, 0).await;
        if case("a") {
        let (mut bare, mut eng) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            bare.push(bare_client(calls).await);
            eng.push(engine_loop(calls, 1, 0).await);
        }
        let (b, e) = (median(bare), median(eng));
        println!("(a) {calls} sequential calls to cluster-sim, median of {reps}:");
        println!("    bare rmcp client  {:>9.1} ms  ({:.0} µs/call)", b.as_secs_f64() * 1e3, b.as_secs_f64() * 1e6 / calls as f64);
        println!("    mcpflow engine    {:>9.1} ms  ({:.0} µs/call)", e.as_secs_f64() * 1e3, e.as_secs_f64() * 1e6 / calls as f64);
        println!("    ratio engine/bare {:>9.3}   (target ≤ 1.05)", e.as_secs_f64() / b.as_secs_f64());
        }
        if case("b") {

        let n = if measuring { 1_000 } else { 32 };
        let ideal = n as f64 / 16.0 * 0.010;
        let (mut lat, mut floor) = (Vec::new(), Vec::new());
        for _ in 0..reps.min(5) {
            floor.push(bare_concurrent(n, 16, 10).await);
            lat.push(engine_loop(n, 16, 10).await);
        }
        let (l, f) = (median(lat), median(floor));
        println!("(b) {n} calls, 10 ms latency, concurrency 16, median of {}:", reps.min(5));
        println!(
            "    bare rmcp client  {:>9.1} ms;  ideal {:.1} ms;  ratio {:.3}   (the server + transport floor)",
            f.as_secs_f64() * 1e3,
            ideal * 1e3,
            f.as_secs_f64() / ideal
        );
        println!(
            "    mcpflow engine    {:>9.1} ms;  ideal {:.1} ms;  ratio {:.3}   (target ≤ 1.2)",
            l.as_secs_f64() * 1e3,
            ideal * 1e3,
            l.as_secs_f64() / ideal
        );
        }

        // (d) telemetry: off, no SDK, collector down, collector up, one run of each per
        // rep. Each mode's ratio is the median over reps of its time over the same rep's
        // "off": the machine's drift (which moves "off" itself by 10% between minutes
        // here) falls on both sides of each ratio. The order of the modes turns by one
        // each rep, so no mode always runs first or after the same one. Each traced run
        // makes its own exporter (as a `mcpflow run` does) and shuts it down outside the
        // timing. The receiver only takes the bodies while the runs go (it decodes them
        // when read, after): a collector's own work is not the engine's overhead.
        if case("d") {
        let mut receiver = Receiver::start(0).unwrap();
        let up = receiver.url();
        let mut closed = Receiver::start(0).unwrap();
        let down = closed.url();
        closed.stop();
        const MODES: [Otlp; 4] = [Otlp::Off, Otlp::Noop, Otlp::Down, Otlp::Up];
        // Per rep, each mode's time (`None`: not measured).
        let mut times: Vec<[Option<Duration>; 4]> = Vec::new();
        // One server for every mode: its process's placement on the cores does not
        // differ between them.
        let pool = cluster_pool(0).await;
        let noop = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None).unwrap();
        // `MCPFLOW_BENCH_OTLP=off,noop` (a comma list) measures only those modes: one mode
        // alone is what a profiler (`valgrind --tool=callgrind`) should see.
        let only = std::env::var("MCPFLOW_BENCH_OTLP").unwrap_or_else(|_| "off,noop,down,up".into());
        let wanted = |mode: Otlp| only.split(',').any(|m| m.trim().eq_ignore_ascii_case(&format!("{mode:?}")));
        for rep in 0..reps {
            let mut took: [Option<Duration>; 4] = [None; 4];
            for turn in 0..MODES.len() {
                let i = (rep + turn) % MODES.len();
                let mode = MODES[i];
                if !wanted(mode) {
                    continue;
                }
                let otel = telemetry(mode, &up, &down);
                let traced: Option<Arc<dyn Telemetry>> = match mode {
                    Otlp::Noop => Some(Arc::new(Noop(noop.clone()))),
                    _ => otel.clone().map(|t| t as _),
                };
                took[i] = Some(run_loop(&pool, calls, 1, traced).await);
                if let Some(otel) = otel {
                    tokio::task::spawn_blocking(move || otel.shutdown()).await.unwrap();
                }
            }
            times.push(took);
        }
        pool.shutdown().await;
        let received = receiver.spans().len();
        receiver.stop();
        println!("(d) {calls} sequential calls with telemetry, {reps} reps (order turning each rep):");
        let mode_median = |i: usize| {
            let all: Vec<Duration> = times.iter().filter_map(|t| t[i]).collect();
            (!all.is_empty()).then(|| median(all))
        };
        // The median and quartiles of mode `i`'s per-rep ratio to "off".
        let ratios = |i: usize| {
            let mut r: Vec<f64> =
                times.iter().filter_map(|t| Some(t[i]?.as_secs_f64() / t[0]?.as_secs_f64())).collect();
            r.sort_by(f64::total_cmp);
            (!r.is_empty()).then(|| (r[r.len() / 2], r[r.len() / 4], r[(r.len() * 3) / 4]))
        };
        if let Some(off) = mode_median(0) {
            println!("    {:<17} {:>9.1} ms", "off", off.as_secs_f64() * 1e3);
        }
        let rows = [
            (1, "no SDK (no-op)", "noop/off", "the engine's and pool's own part".to_owned()),
            (2, "collector down", "down/off", "target ≤ 1.05".to_owned()),
            (3, "collector up", "up/off", format!("target ≤ 1.10; {received} spans received")),
        ];
        for (i, label, ratio, note) in rows {
            let Some(took) = mode_median(i) else { continue };
            match ratios(i) {
                Some((mid, q1, q3)) => println!(
                    "    {label:<17} {:>9.1} ms;  ratio {ratio:<8} {mid:.3}  (quartiles {q1:.3}–{q3:.3}; {note})",
                    took.as_secs_f64() * 1e3
                ),
                None => println!("    {label:<17} {:>9.1} ms", took.as_secs_f64() * 1e3),
            }
        }
        let received = if mode_median(3).is_some() { received } else { 1 };
        assert!(received > 0 || calls == 0, "the receiver got no spans: telemetry did not reach it");
        }

        if !measuring {
            println!("smoke run done (pass --bench, i.e. `cargo bench`, to measure)");
            return;
        }
        if !case("c") {
            return;
        }
        match cmdb_sync(&repo).await {
            Some((t, calls, out)) => {
                println!("(c) cmdb-sync against cluster-sim + server-memory: {:.1} ms wall, {calls} tool calls, output {out}", t.as_secs_f64() * 1e3)
            }
            None => println!("(c) cmdb-sync skipped: workflows/cmdb-sync.blueprint.json or node_modules missing (run `npm ci`)"),
        }
    });
}
