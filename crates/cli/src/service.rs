//! `mcpflow service [--keep]`: the one owner of a data folder — its store, its servers,
//! its runs and schedules — answering the other front doors on the folder's endpoint
//! (`mcpflow_service`; its socket, or a loopback port and token file where there can
//! be no socket): `mcpflow serve` bridges MCP hosts to it, `mcpflow list` and `runs`
//! read through it. It exits once idle — no connection, no run in flight, no
//! scheduled blueprint — for `--idle` (default 5 minutes), unless `--keep`.

use crate::app::AppArgs;
use crate::run::cancel_on_signals;
use crate::stdout::out;
use anyhow::Context as _;
use clap::Args;
use mcpflow_app::Change;
use mcpflow_service::endpoint::Transport;
use mcpflow_service::install::Flavour;
use mcpflow_service::{Activity, endpoint_file, has_schedules, host_with, socket_path};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::broadcast::error::RecvError;

#[derive(Debug, Args)]
pub struct ServiceArgs {
    #[command(subcommand)]
    action: Option<Action>,
    /// Never exit when idle (a user service, `systemd --user`).
    #[arg(long)]
    keep: bool,
    /// How long to stay up with nothing to do, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    idle: u64,
    /// Runs in flight at once; past it, run requests get a `RUNS_BUSY` error.
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    /// Be a team's service on the store in the database of `--db` (or `MCPFLOW_DB`),
    /// answering studios at this address (`127.0.0.1:PORT`, port 0 picks one; another
    /// than loopback only with `--tls-cert`), each hello carrying the token in
    /// `MCPFLOW_SERVICE_TOKEN`. Never exits when idle.
    #[arg(long, value_name = "ADDR")]
    listen: Option<std::net::SocketAddr>,
    /// With `--listen`: serve TLS with this certificate chain (PEM); needed for an address
    /// other than loopback. Studios then connect to `tls://HOST:PORT`.
    #[arg(long, value_name = "FILE", requires = "listen", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// With `--tls-cert`: its private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    #[command(flatten)]
    app: AppArgs,
    #[command(flatten)]
    telemetry: crate::telemetry::TelemetryArgs,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Write a user service (a systemd user unit on Linux, a LaunchAgent on macOS) that
    /// runs `mcpflow service --keep` from login, with this binary and data folder; says
    /// the command that enables it. Starts nothing.
    Install {
        /// Show the file and where it goes; write nothing.
        #[arg(long)]
        print: bool,
    },
    /// Stop and disable the user service (`systemctl --user disable --now`, `launchctl
    /// unload -w`), then remove the file `install` wrote.
    Uninstall,
}

impl ServiceArgs {
    /// A team's service (`--listen`), on the store in the database of `--db`.
    pub fn is_team(&self) -> bool {
        self.listen.is_some()
    }
}

#[allow(clippy::print_stderr)]
pub async fn run(args: ServiceArgs) -> anyhow::Result<ExitCode> {
    match &args.action {
        Some(Action::Install { print }) => return install(*print),
        Some(Action::Uninstall) => return uninstall(),
        None => {}
    }
    if let Err(code) = args.telemetry.check() {
        return Ok(code);
    }
    let signals = cancel_on_signals()?;
    if let Some(addr) = args.listen {
        return team(&args, addr, signals).await;
    }
    let home = mcpflow_app::home::data_dir();
    let transport = Transport::for_home(&home).context("choosing the service's endpoint")?;
    let app = crate::app::open_app_with_options(&args.app, args.max_runs, None, false, Some(&args.telemetry))?;
    let stop = tokio_util::sync::CancellationToken::new();
    let scheduler = tokio::spawn(mcpflow_service::daemon::run_schedules(app.clone(), stop.clone()));
    let activity = Arc::new(Activity::default());
    let started = Instant::now();
    // A client's `service/stop` (the studio taking the folder over) ends it like idleness.
    let asked_to_stop = tokio_util::sync::CancellationToken::new();
    let hosting =
        tokio::spawn(host_with(app.clone(), home.clone(), activity.clone(), stop.clone(), Some(asked_to_stop.clone())));
    let at = match transport {
        Transport::Unix => socket_path(&home).display().to_string(),
        Transport::Tcp => format!("a loopback port (its number and token in {})", endpoint_file(&home).display()),
    };
    eprintln!("mcpflow service (pid {}) for {} answers at {at}", std::process::id(), home.display());
    let idle = Duration::from_secs(args.idle);
    // Whether a stored blueprint has a schedule: read again when the blueprints change,
    // not on every tick.
    let mut changes = app.subscribe_changes();
    let mut scheduled = has_schedules(&app);
    let code = loop {
        tokio::select! {
            signal = signals.received() => break ExitCode::from(signal.exit_code()),
            change = changes.recv() => {
                if matches!(change, Ok(Change::Blueprints) | Err(RecvError::Lagged(_))) {
                    scheduled = has_schedules(&app);
                }
            }
            () = asked_to_stop.cancelled() => {
                eprintln!("mcpflow service: asked to stop by a client, exiting");
                break ExitCode::SUCCESS;
            }
            () = tokio::time::sleep(Duration::from_millis(500)) => {
                if hosting.is_finished() {
                    break ExitCode::from(1);
                }
                let busy = activity.connections() > 0 || !app.active_runs().is_empty();
                if !args.keep && !busy && activity.idle_for(started) >= idle && !scheduled {
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

/// `mcpflow service --db URL --listen ADDR`: a team's service. It shares the store with
/// the workers (it does not own it), runs what its studios start, and announces to them
/// what the workers and other front doors do ([`mcpflow_service::team::watch`]); the
/// schedules are the workers' leader's.
#[allow(clippy::print_stderr)]
async fn team(
    args: &ServiceArgs,
    addr: std::net::SocketAddr,
    signals: mcpflow_app::signals::Stop,
) -> anyhow::Result<ExitCode> {
    use mcpflow_service::endpoint::{Listener, TEAM_TOKEN_ENV, Token};
    if crate::app::database().is_none() {
        anyhow::bail!("--listen makes a team's service, on a store in PostgreSQL: give --db URL (or MCPFLOW_DB) too");
    }
    let secret = std::env::var(TEAM_TOKEN_ENV).unwrap_or_default();
    let token = Token::from_secret(&secret).map_err(anyhow::Error::msg)?;
    let app = crate::app::open_app_sharing(&args.app, args.max_runs, false, &args.telemetry)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(mcpflow_service::tls::acceptor(cert, key).map_err(anyhow::Error::msg)?),
        _ => None,
    };
    let scheme = if tls.is_some() { "tls://" } else { "" };
    let listener = Listener::team(addr, token, tls).await.with_context(|| format!("listening on {addr}"))?;
    let port = listener.port().unwrap_or(addr.port());
    let stop = tokio_util::sync::CancellationToken::new();
    let watching = tokio::spawn(mcpflow_service::team::watch(app.clone(), stop.clone()));
    let door = mcpflow_service::Door::Team;
    let hosting = tokio::spawn(mcpflow_service::host_on(
        app.clone(),
        listener,
        door,
        Arc::new(Activity::default()),
        stop.clone(),
        None,
    ));
    eprintln!(
        "mcpflow team service (pid {}) on {} answers at {scheme}{}:{port}",
        std::process::id(),
        app.store().path().display(),
        addr.ip()
    );
    let code = tokio::select! {
        signal = signals.received() => ExitCode::from(signal.exit_code()),
        ended = hosting => {
            match ended {
                Ok(Err(e)) => eprintln!("error: the team service's endpoint: {e}"),
                Err(e) => eprintln!("error: the team service's endpoint: {e}"),
                Ok(Ok(())) => {}
            }
            ExitCode::from(1)
        }
    };
    stop.cancel();
    let _ = watching.await;
    app.shutdown().await;
    Ok(code)
}

/// Where this platform's user service file goes.
fn service_file() -> anyhow::Result<(Flavour, PathBuf)> {
    let flavour = Flavour::here().ok_or_else(|| {
        anyhow::anyhow!(
            "no user service for this platform: run `mcpflow service --keep` from your session's startup instead"
        )
    })?;
    let (Some(home), Some(config)) = (dirs::home_dir(), dirs::config_dir()) else {
        anyhow::bail!("no home folder to install the user service in");
    };
    Ok((flavour, flavour.file(&home, &config)))
}

#[allow(clippy::print_stderr)]
fn install(print: bool) -> anyhow::Result<ExitCode> {
    let (flavour, file) = service_file()?;
    let binary = std::env::current_exe().context("cannot tell where this mcpflow binary is")?;
    let data_folder = std::env::var_os("MCPFLOW_HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let data_folder = data_folder.map(|f| std::path::absolute(&f).unwrap_or(f));
    let text = flavour.render(&binary, data_folder.as_deref());
    if print {
        out!("{text}")?;
        eprintln!("belongs in {}", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    }
    let before = std::fs::read_to_string(&file).ok();
    std::fs::write(&file, &text).with_context(|| format!("cannot write {}", file.display()))?;
    match before {
        Some(old) if old == text => eprintln!("{} is already this service", file.display()),
        Some(_) => eprintln!("replaced {}", file.display()),
        None => eprintln!("wrote {}", file.display()),
    }
    eprintln!("start it now and at every login with:");
    for command in flavour.enable_commands(&file) {
        eprintln!("  {command}");
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::print_stderr)]
fn uninstall() -> anyhow::Result<ExitCode> {
    let (flavour, file) = service_file()?;
    if !file.exists() {
        eprintln!("no user service at {}: nothing to remove", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    // Stopped and disabled first, while its file is there (the service manager needs it).
    for command in flavour.disable_commands(&file) {
        let words: Vec<&str> = command.split(' ').collect();
        let ran = std::process::Command::new(words[0]).args(&words[1..]).stdin(std::process::Stdio::null()).output();
        match ran {
            Ok(out) if out.status.success() => eprintln!("ran `{command}`"),
            Ok(out) => eprintln!(
                "note: `{command}` failed ({}); if the service runs, stop it yourself",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => eprintln!("note: could not run `{command}` ({e}); if the service runs, stop it yourself"),
        }
    }
    std::fs::remove_file(&file).with_context(|| format!("cannot remove {}", file.display()))?;
    eprintln!("removed {}", file.display());
    Ok(ExitCode::SUCCESS)
}
