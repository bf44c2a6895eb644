//! `mcpflow service [--keep]`: the one owner of a data folder — its store, its servers,
//! its runs and schedules — answering the other front doors on the folder's endpoint
//! (`mcpflow_app::service`): `mcpflow serve` bridges MCP hosts to it, `mcpflow list` and
//! `runs` read through it. It exits once idle — no connection, no run in flight, no
//! scheduled blueprint — for `--idle` (default 5 minutes), unless `--keep`.

use crate::app::{AppArgs, open_app};
use crate::run::cancel_on_signals;
use clap::Args;
use mcpflow_app::service::{Activity, has_schedules, host, socket_path};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Args)]
pub struct ServiceArgs {
    /// Never exit when idle (a user service, `systemd --user`).
    #[arg(long)]
    keep: bool,
    /// How long to stay up with nothing to do, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    idle: u64,
    /// Runs in flight at once; past it, run requests get a `RUNS_BUSY` error.
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    #[command(flatten)]
    app: AppArgs,
}

#[allow(clippy::print_stderr)]
pub async fn run(args: ServiceArgs) -> anyhow::Result<ExitCode> {
    let signals = cancel_on_signals()?;
    let home = mcpflow_app::home::data_dir();
    let app = open_app(&args.app, args.max_runs)?;
    let stop = tokio_util::sync::CancellationToken::new();
    let scheduler = tokio::spawn(mcpflow_app::daemon::run_schedules(app.clone(), stop.clone()));
    let activity = Arc::new(Activity::default());
    let started = Instant::now();
    let hosting = tokio::spawn(host(app.clone(), home.clone(), activity.clone(), stop.clone()));
    eprintln!(
        "mcpflow service (pid {}) for {} answers at {}",
        std::process::id(),
        home.display(),
        socket_path(&home).display()
    );
    let idle = Duration::from_secs(args.idle);
    let code = loop {
        tokio::select! {
            signal = signals.received() => break ExitCode::from(signal.exit_code()),
            () = tokio::time::sleep(Duration::from_millis(500)) => {
                if hosting.is_finished() {
                    break ExitCode::from(1);
                }
                let busy = activity.connections() > 0 || !app.active_runs().is_empty();
                if !args.keep && !busy && activity.idle_for(started) >= idle && !has_schedules(&app) {
                    eprintln!("mcpflow service: idle for {} s, exiting", args.idle);
                    break ExitCode::SUCCESS;
                }
            }
        }
    };
    stop.cancel();
    let _ = scheduler.await;
    match hosting.await {
        Ok(Err(e)) => eprintln!("error: the service endpoint: {e}"),
        Err(e) => eprintln!("error: the service endpoint: {e}"),
        Ok(Ok(())) => {}
    }
    app.shutdown().await;
    Ok(code)
}
