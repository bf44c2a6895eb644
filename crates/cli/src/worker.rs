//! `mcpflow worker --db URL`: a stateless worker on the run queue of a store in
//! PostgreSQL (docs/scale-out.md). It shares the store ([`mcpflow_store::Mode::Shared`]),
//! claims queued runs up to `--concurrency` at a time and runs each with the same engine
//! and journal as `run --store` (`App::start_claimed`), renewing its lease every third of
//! `--lease` while the run goes on. On each turn of its loop it reaps: runs whose lease
//! expired become `interrupted` and a run resuming each is queued. It waits for work on
//! `LISTEN/NOTIFY` and polls every `--poll` as well. One worker at a time also fires the
//! stored blueprints' schedules (`lead.rs`). `--health ADDR` serves `/healthz`
//! and `/readyz` (`health.rs`). The first SIGINT/SIGTERM stops claiming and lets the runs
//! in flight finish; a second quits at once (their leases then expire and they resume
//! elsewhere).
//!
//! Without a database, `mcpflow worker` is the run containment of `service` and `serve`
//! (`mcpflow_worker::serve`, one run over stdio).

use crate::app::AppArgs;
use anyhow::Context as _;
use clap::Args;
use mcpflow_app::{App, AppOptions};
use mcpflow_store::{RunRecord, Store};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, Semaphore};

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Runs this worker runs at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    concurrency: u32,
    /// Serve `GET /healthz` (the process is alive) and `GET /readyz` (the database
    /// answers) over plain HTTP at ADDR, e.g. `0.0.0.0:8080` (port 0: any free port; the
    /// address is said on stderr).
    #[arg(long, value_name = "ADDR")]
    health: Option<SocketAddr>,
    /// How long a claimed run stays this worker's without a renewal (renewed every third
    /// of it): after a worker dies, its runs resume elsewhere within about this long.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    lease: Duration,
    /// How often an idle worker looks at the queue (and reaps) without being woken.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = humantime::parse_duration)]
    poll: Duration,
    #[command(flatten)]
    app: AppArgs,
}

/// Runs the worker on `url` until stopped.
pub fn run(args: WorkerArgs, url: &str) -> ExitCode {
    crate::run::block_on(serve(args, url.to_owned()))
}

#[allow(clippy::print_stderr)]
async fn serve(args: WorkerArgs, url: String) -> anyhow::Result<ExitCode> {
    if args.lease < Duration::from_millis(300) {
        anyhow::bail!("--lease {:?} is too short to renew in time; give at least 300ms", args.lease);
    }
    let store = Store::connect_shared(&url)
        .context("starting a worker on the store in the database of --db (or MCPFLOW_DB)")?
        .store;
    let app = open(&args.app, store.clone(), args.concurrency)?;
    let owner = owner();
    let woken = Arc::new(Notify::new());
    let _listener = {
        let woken = woken.clone();
        store.listen_for_queued(move || woken.notify_one()).context("listening for queued runs")?
    };
    if let Some(addr) = args.health {
        let bound = crate::health::serve(addr, store.clone()).await?;
        eprintln!("health: http://{bound}/healthz and /readyz");
    }
    eprintln!("worker {owner} on {} (up to {} runs at once)", store.path().display(), args.concurrency);
    let stop = crate::run::cancel_on_signals()?;
    let scheduler = tokio::spawn(crate::lead::lead(app.clone(), store.clone(), stop.token().clone(), args.poll));
    let slots = Arc::new(Semaphore::new(args.concurrency as usize));
    let lease = Lease { store: store.clone(), owner: owner.clone(), length: args.lease };
    let mut servers = StoredServers::read(&app);
    while !stop.token().is_cancelled() {
        reap(&store);
        servers.check(&app, args.poll);
        let Ok(slot) = slots.clone().acquire_owned().await else { break };
        match store.claim(&owner, args.lease) {
            Ok(Some(claimed)) => {
                let (app, lease) = (app.clone(), lease.clone());
                tokio::spawn(async move {
                    run_claimed(&app, &lease, claimed).await;
                    drop(slot);
                });
                continue;
            }
            Ok(None) => drop(slot),
            Err(e) => {
                drop(slot);
                tracing::error!(error = %e, "could not claim a queued run; trying again");
            }
        }
        tokio::select! {
            () = woken.notified() => {}
            () = tokio::time::sleep(args.poll) => {}
            () = stop.token().cancelled() => {}
        }
    }
    // Stopped: the scheduler lets its lock go, the runs in flight finish (each holds a slot).
    let _ = scheduler.await;
    let _all = slots.acquire_many(args.concurrency).await;
    app.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// The application the worker runs on: the shared store, the servers of `args`.
fn open(args: &AppArgs, store: Store, concurrency: u32) -> anyhow::Result<App> {
    let options = AppOptions {
        server_files: args.servers.clone(),
        allow: args.allow.clone(),
        allow_all: args.allow_all_servers,
        max_runs: Some(concurrency as usize),
        front: mcpflow_app::advice::Front::Cli,
        ..AppOptions::default()
    };
    App::with_store(store, Vec::new(), options).context("starting the worker's application")
}

/// This worker's name on the leases it holds: `HOST:PID:RANDOM` (the random part tells a
/// restarted container from the one before it, which may have had the same pid).
fn owner() -> String {
    let host = std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "localhost".to_owned());
    let random = mcpflow_app::headless::new_run_id();
    let tail = random.get(random.len().saturating_sub(6)..).unwrap_or_default();
    format!("{host}:{}:{tail}", std::process::id())
}

/// The servers and consents in the store this worker runs with. Another process may
/// change them (the studio approving a server on the team's service): they are read again
/// at most every `--poll`, and the pool rebuilt when they changed.
struct StoredServers {
    fingerprint: Option<u64>,
    read_at: std::time::Instant,
}

impl StoredServers {
    fn read(app: &App) -> Self {
        StoredServers { fingerprint: app.stored_servers_fingerprint().ok(), read_at: std::time::Instant::now() }
    }

    #[allow(clippy::print_stderr)]
    fn check(&mut self, app: &App, every: Duration) {
        if self.read_at.elapsed() < every {
            return;
        }
        self.read_at = std::time::Instant::now();
        match app.stored_servers_fingerprint() {
            Ok(now) if self.fingerprint == Some(now) => {}
            Ok(now) => match app.reload_servers() {
                Ok(()) => {
                    self.fingerprint = Some(now);
                    eprintln!("worker: the servers or consents in the store changed; the next runs use them");
                }
                Err(e) => tracing::error!(error = %e, "could not reload the servers after they changed in the store"),
            },
            Err(e) => tracing::error!(error = %e, "could not read the servers and consents in the store"),
        }
    }
}

fn reap(store: &Store) {
    match store.reap() {
        Ok(reaped) => {
            for r in reaped {
                match &r.resumed_by {
                    Some(by) => tracing::warn!(run = %r.interrupted, resumed_by = %by, attempts = r.attempts,
                        "a run's lease expired (its worker is gone): interrupted, and queued to resume"),
                    None => tracing::error!(run = %r.interrupted, attempts = r.attempts,
                        "a run's lease expired again: interrupted, and not queued again (`mcpflow show` it)"),
                }
            }
        }
        Err(e) => tracing::error!(error = %e, "could not reap runs whose lease expired"),
    }
}

/// A worker's hold on the runs it claimed.
#[derive(Clone)]
struct Lease {
    store: Store,
    owner: String,
    length: Duration,
}

/// Parks run `id` ([`App::park`]) when it asks a person: nobody answers on a worker, so
/// the run is left `waiting` in the store and its slot freed. True when it was parked.
async fn park_when_asked(
    app: App,
    id: String,
    mut events: tokio::sync::broadcast::Receiver<Arc<mcpflow_engine::RunEvent>>,
) -> bool {
    use mcpflow_engine::EventKind;
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let asked = match events.recv().await {
            Ok(event) => match event.kind {
                EventKind::StepWaiting { .. } => true,
                EventKind::RunFinished { .. } => return false,
                _ => false,
            },
            // Events were missed: whether it asks is in the registry.
            Err(RecvError::Lagged(_)) => !app.questions(Some(&id)).is_empty(),
            Err(RecvError::Closed) => return false,
        };
        if asked && app.park(&id).await {
            return true;
        }
    }
}

/// Runs a claimed run to its end, renewing the lease meanwhile, then lets the lease go.
async fn run_claimed(app: &App, lease: &Lease, claimed: RunRecord) {
    let id = claimed.id.clone();
    let started = match app.start_claimed(&claimed) {
        Ok(started) => started,
        Err(e) => {
            tracing::error!(run = %id, error = %e, "a claimed run could not start; it fails");
            if let Err(e) = app.fail_claimed(&claimed, &e) {
                tracing::error!(run = %id, error = %e, "could not record that a claimed run failed to start");
            }
            let _ = lease.store.release_lease(&id, &lease.owner);
            return;
        }
    };
    let renewing = {
        let (lease, id, app) = (lease.clone(), id.clone(), app.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(lease.length / 3);
            every.tick().await;
            loop {
                every.tick().await;
                match lease.store.renew_lease(&id, &lease.owner, lease.length) {
                    Ok(true) => {}
                    Ok(false) => {
                        // The reaper took it: another worker resumes it; this one stops.
                        tracing::error!(run = %id, "this worker lost the run's lease; cancelling it here");
                        let _ = app.control(&id, mcpflow_engine::Control::Cancel);
                        return;
                    }
                    Err(e) => tracing::error!(run = %id, error = %e, "could not renew a run's lease"),
                }
            }
        })
    };
    let mcpflow_app::runs::Started { run_id, blueprint, events, done, .. } = started;
    let parking = tokio::spawn(park_when_asked(app.clone(), id.clone(), events));
    let envelope = done.await.unwrap_or_else(|_| mcpflow_engine::Envelope::lost(run_id, blueprint));
    renewing.abort();
    if parking.await.unwrap_or(false) {
        tracing::info!(run = %id, "a queued run asks a person: left waiting (`mcpflow answer RUN STEP --db URL` resumes it)");
    } else {
        tracing::info!(run = %id, status = envelope.status.as_str(), "a queued run ended");
    }
    if let Err(e) = lease.store.release_lease(&id, &lease.owner) {
        tracing::error!(run = %id, error = %e, "could not release a run's lease");
    }
}
