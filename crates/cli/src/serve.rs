//! `mcpflow serve`: the MCP mediator over stdio, or over streamable HTTP with `--http`.

use crate::app::AppArgs;
use crate::run::cancel_on_signals;
use crate::telemetry::TelemetryArgs;
use anyhow::{Context as _, bail};
use clap::Args;
use mcpflow_app::signals::Stop;
use mcpflow_serve::http::{HttpLimits, HttpOptions, new_token, serve_http};
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at `/mcp` on this port or loopback address (e.g. `8931`,
    /// `127.0.0.1:8931`) instead of stdio.
    #[arg(long, value_name = "[HOST:]PORT")]
    http: Option<String>,
    /// Listen on this address instead of loopback (e.g. `0.0.0.0`). Clients on other
    /// machines then reach mcpflow: keep the token secret.
    #[arg(long, value_name = "IP", requires = "http")]
    bind: Option<IpAddr>,
    /// The bearer token HTTP clients must send (default: `$MCPFLOW_TOKEN`, else a new
    /// random one, printed on stderr).
    #[arg(long, value_name = "TOKEN", requires = "http")]
    token: Option<String>,
    /// Also accept this name in the `Host` header (repeatable; for a reverse proxy).
    #[arg(long = "allow-host", value_name = "NAME", requires = "http")]
    allow_host: Vec<String>,
    /// Runs in flight at once; past it, run requests get a `RUNS_BUSY` error.
    #[arg(long, value_name = "N")]
    max_runs: Option<usize>,
    /// Also fire the runs that stored blueprints' `schedule` asks for.
    #[arg(long)]
    schedule: bool,
    /// Let blueprints that clients send (`run_workflow`, `validate_workflow`,
    /// `save_workflow` with `blueprint`) declare servers that use `${env:NAME}`, i.e. that
    /// read this process's environment. Refused by default (`BLUEPRINT_ENV_REFUSED`); such
    /// servers still need consent (`--allow-server`, `--allow-all-servers`, the studio).
    #[arg(long)]
    allow_blueprint_env: bool,
    #[command(flatten)]
    app: AppArgs,
    #[command(flatten)]
    telemetry: TelemetryArgs,
}

/// Serves until the client goes away (stdio) or a stop signal (Ctrl-C, SIGTERM, SIGHUP)
/// arrives; then cancels the runs in flight, reaps every server and exits 0 — or the
/// signal's code (130, 143, 129).
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    if let Err(code) = args.telemetry.check() {
        return Ok(code);
    }
    let on_database = crate::app::database().is_some();
    if on_database && args.schedule {
        bail!(
            "--schedule fires schedules in this process; on a store in a database (--db or MCPFLOW_DB) the \
             workers' leader fires them (`mcpflow worker`): leave --schedule out"
        );
    }
    // On a database the store is the team's, not the data folder's: no bridge to the
    // folder's service.
    if args.http.is_none()
        && !on_database
        && let Some(code) = bridge(&args).await?
    {
        return Ok(code);
    }
    let signals = cancel_on_signals()?;
    let app = crate::app::open_app_sharing(&args.app, args.max_runs, args.allow_blueprint_env, &args.telemetry)?;
    let stop = tokio_util::sync::CancellationToken::new();
    if args.schedule {
        tokio::spawn(mcpflow_service::daemon::run_schedules(app.clone(), stop.clone()));
    }
    let result = Box::pin(serve(&args, app.clone(), &signals)).await;
    stop.cancel();
    app.shutdown().await;
    result
}

/// On stdio, with a service holding the data folder: the MCP session goes to it (any
/// number of hosts share its engine and store). `None`: no service answers, serve here.
#[allow(clippy::print_stderr)]
async fn bridge(args: &ServeArgs) -> anyhow::Result<Option<ExitCode>> {
    use mcpflow_service::{Hello, PROTOCOL, connect};
    let home = mcpflow_app::home::data_dir();
    let hello = Hello {
        mcpflow: PROTOCOL,
        session: "mcp".into(),
        client: "serve".into(),
        options: own_options(args),
        token: None,
    };
    let connected = match connect(&home, &hello).await {
        // No service yet: a `serve` without options of its own starts one, with its
        // telemetry flags, and shares it.
        Ok(None) if hello.options.is_empty() => match start_service(&home, &args.telemetry) {
            Ok(()) => wait_for_service(&home, &hello).await,
            Err(why) => {
                eprintln!("note: serving in this process: the mcpflow service could not start ({why})");
                Ok(None)
            }
        },
        // A service was there already: it traces as it was configured.
        Ok(Some(connected)) => {
            args.telemetry.warn_service_running(Some(connected.2.pid), &home);
            Ok(Some(connected))
        }
        other => other,
    };
    let (read, write, _welcome) = match connected {
        Ok(Some(connected)) => connected,
        Ok(None) => return Ok(None),
        Err(refused) => {
            eprintln!("error[{}]: {}", refused.code, refused.message);
            return Ok(Some(ExitCode::from(1)));
        }
    };
    match mcpflow_service::bridge(tokio::io::stdin(), tokio::io::stdout(), read, write).await {
        Ok(()) => Ok(Some(ExitCode::SUCCESS)),
        Err(e) => {
            eprintln!("error[SERVICE_UNAVAILABLE]: {e}");
            Ok(Some(ExitCode::from(1)))
        }
    }
}

/// Starts `mcpflow service` with this binary and `telemetry`'s flags (see
/// [`mcpflow_service::start_service`]).
fn start_service(home: &std::path::Path, telemetry: &TelemetryArgs) -> Result<(), String> {
    let binary = std::env::current_exe().map_err(|e| format!("cannot tell where this binary is: {e}"))?;
    mcpflow_service::start_service_with(home, &binary, &telemetry.service_args())
}

/// Connects to the service just started, for up to 10 s; `None` (serve here) when it
/// did not answer.
async fn wait_for_service(
    home: &std::path::Path,
    hello: &mcpflow_service::Hello,
) -> Result<Option<mcpflow_service::Connected>, mcpflow_service::WireError> {
    let connected = mcpflow_service::wait_for_service(home, hello).await?;
    if connected.is_none() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "note: serving in this process: the mcpflow service did not answer within 10 s ({})",
                mcpflow_service::service_log_hint(home)
            );
        }
    }
    Ok(connected)
}

/// The options of this `serve` that only a process of its own could honour.
fn own_options(args: &ServeArgs) -> Vec<String> {
    let mut options = Vec::new();
    if !args.app.servers.is_empty() {
        options.push("--servers".to_owned());
    }
    if !args.app.allow.is_empty() {
        options.push("--allow-server".to_owned());
    }
    if args.app.allow_all_servers {
        options.push("--allow-all-servers".to_owned());
    }
    if args.allow_blueprint_env {
        options.push("--allow-blueprint-env".to_owned());
    }
    options
}

/// Runs the scheduler alone until a stop signal (`mcpflow daemon`); runs in flight are
/// cancelled — those waiting for a person are left waiting — and their servers reaped,
/// then it exits with the signal's code. Says on start which runs wait for an answer.
#[allow(clippy::print_stderr)]
pub async fn daemon(app_args: AppArgs, max_runs: Option<usize>, telemetry: TelemetryArgs) -> anyhow::Result<ExitCode> {
    if let Err(code) = telemetry.check() {
        return Ok(code);
    }
    let signals = cancel_on_signals()?;
    let app = crate::app::open_app_with_options(&app_args, max_runs, None, false, Some(&telemetry))?;
    let stop = tokio_util::sync::CancellationToken::new();
    let scheduler = tokio::spawn(mcpflow_service::daemon::run_schedules(app.clone(), stop.clone()));
    // The scheduler logs the runs an earlier process left waiting for a person, and each
    // question a run it starts comes to.
    eprintln!("mcpflow fires scheduled runs (Ctrl-C or SIGTERM stops)");
    let signal = signals.received().await;
    stop.cancel();
    let _ = scheduler.await;
    app.shutdown().await;
    Ok(ExitCode::from(signal.exit_code()))
}

#[allow(clippy::print_stderr)]
async fn serve(args: &ServeArgs, app: mcpflow_app::App, signals: &Stop) -> anyhow::Result<ExitCode> {
    let Some(http) = &args.http else {
        tokio::select! {
            served = mcpflow_serve::serve_stdio(app) => served.context("serving MCP over stdio")?,
            signal = signals.received() => return Ok(ExitCode::from(signal.exit_code())),
        }
        return Ok(ExitCode::SUCCESS);
    };
    let mut addr = parse_addr(http)?;
    if let Some(ip) = args.bind {
        addr.set_ip(ip);
    } else if !addr.ip().is_loopback() {
        bail!("{http} is not a loopback address; to listen on other interfaces, say so with `--bind {}`", addr.ip());
    }
    let token = match args.token.clone().or_else(|| std::env::var("MCPFLOW_TOKEN").ok().filter(|t| !t.is_empty())) {
        Some(t) => t,
        None => {
            let t = new_token();
            eprintln!("token: {t}");
            t
        }
    };
    let options = HttpOptions { addr, token, hosts: args.allow_host.clone(), limits: HttpLimits::default() };
    let mut server = serve_http(app, options).await.with_context(|| format!("cannot listen on {addr}"))?;
    eprintln!("mcpflow serves MCP at http://{}/mcp (Ctrl-C stops)", server.addr);
    tokio::select! {
        r = server.wait() => {
            r.context("the HTTP server stopped")?;
            Ok(ExitCode::SUCCESS)
        }
        signal = signals.received() => {
            let _ = server.stop().await;
            Ok(ExitCode::from(signal.exit_code()))
        }
    }
}

/// `PORT` or `HOST:PORT`.
fn parse_addr(text: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = text.strip_prefix("localhost:").and_then(|p| p.parse::<u16>().ok()) {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().with_context(|| format!("`{text}` is neither a port nor an address like 127.0.0.1:8931"))
}
