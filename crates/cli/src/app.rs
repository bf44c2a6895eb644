//! Opening the application (the store in the data folder, or in the database `--db` /
//! `MCPFLOW_DB` names, with its servers) from the command line.

use anyhow::Context as _;
use clap::Args;
use mcpflow_app::{App, AppOptions};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The database the store is in, when not the data folder: chosen once, at start.
static DATABASE: OnceLock<Option<String>> = OnceLock::new();

/// Chooses where the store is for this process: the `--db` URL, else `MCPFLOW_DB` (when
/// `from_env`, set and not empty), else the data folder.
pub fn choose_database(flag: Option<String>, from_env: bool) {
    let env = || std::env::var("MCPFLOW_DB").ok().filter(|_| from_env);
    let url = flag.or_else(env).filter(|url| !url.is_empty());
    let _ = DATABASE.set(url);
}

/// The PostgreSQL URL of the store, when `--db` or `MCPFLOW_DB` gave one. The data
/// folder's service (which holds the folder's store) is then never asked.
pub fn database() -> Option<&'static str> {
    DATABASE.get().and_then(Option::as_deref)
}

/// Servers and consent for commands that run blueprints from the store.
#[derive(Debug, Args, Clone, Default)]
pub struct AppArgs {
    /// An `mcpServers` JSON file merged over the servers in the store (repeatable).
    #[arg(long = "servers", value_name = "FILE")]
    pub servers: Vec<PathBuf>,
    /// Let this server's stdio command start, or let mcpflow reach the HTTP server a
    /// blueprint declares (when it sends `${env:…}` values or is not loopback)
    /// (repeatable). Nothing starts without consent.
    #[arg(long = "allow-server", value_name = "NAME")]
    pub allow: Vec<String>,
    /// Let every stdio command start and every blueprint's HTTP server be reached (for CI).
    #[arg(long)]
    pub allow_all_servers: bool,
}

/// Opens the application for a command that only reads the store (`list`, `runs`,
/// `show`, `export`). On a database it shares the store ([`mcpflow_store::Mode::Shared`]),
/// so it reads while workers run; on the data folder it is [`open_app`].
pub fn open_reader() -> anyhow::Result<App> {
    let Some(url) = database() else { return open_app(&AppArgs::default(), None) };
    let options = AppOptions { front: mcpflow_app::advice::Front::Cli, ..AppOptions::default() };
    App::open_database_shared(&mcpflow_app::home::data_dir(), url, options)
        .context("reading the store in the database of --db (or MCPFLOW_DB)")
}

/// Opens the store in the data folder (`MCPFLOW_HOME`, else the platform's).
pub fn open_app(args: &AppArgs, max_runs: Option<usize>) -> anyhow::Result<App> {
    open_app_with(args, max_runs, None)
}

/// Opens the store for a command that continues a recorded run (`rerun`, `resume`,
/// `answer`): the data folder's, or the database's shared with the workers.
pub fn open_app_with(args: &AppArgs, max_runs: Option<usize>, folder: Option<PathBuf>) -> anyhow::Result<App> {
    open(args, max_runs, folder, false, None, Database::Share)
}

/// [`open_app_with`], whether blueprints from clients may declare servers that use
/// `${env:NAME}` (`serve --allow-blueprint-env`), and the telemetry flags of a front door
/// that has them (`--otlp`; without them the settings and the `OTEL_*` environment).
pub fn open_app_with_options(
    args: &AppArgs,
    max_runs: Option<usize>,
    folder: Option<PathBuf>,
    allow_blueprint_env: bool,
    telemetry: Option<&crate::telemetry::TelemetryArgs>,
) -> anyhow::Result<App> {
    open(args, max_runs, folder, allow_blueprint_env, telemetry, Database::Own)
}

/// [`open_app_with_options`] sharing the store in the database of `--db` with the
/// workers and other front doors (`serve --db`, `service --db --listen`) instead of
/// owning it; on the data folder the same.
pub fn open_app_sharing(
    args: &AppArgs,
    max_runs: Option<usize>,
    allow_blueprint_env: bool,
    telemetry: &crate::telemetry::TelemetryArgs,
) -> anyhow::Result<App> {
    open(args, max_runs, None, allow_blueprint_env, Some(telemetry), Database::Share)
}

/// How a command holds a store in a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Database {
    /// Alone ([`mcpflow_store::Mode::Owner`]): `import`, `run --store`.
    Own,
    /// With the workers and other processes ([`mcpflow_store::Mode::Shared`]).
    Share,
}

fn open(
    args: &AppArgs,
    max_runs: Option<usize>,
    folder: Option<PathBuf>,
    allow_blueprint_env: bool,
    telemetry: Option<&crate::telemetry::TelemetryArgs>,
    database_mode: Database,
) -> anyhow::Result<App> {
    let home = mcpflow_app::home::data_dir();
    let options = AppOptions {
        server_files: args.servers.clone(),
        allow: args.allow.clone(),
        allow_all: args.allow_all_servers,
        max_runs,
        folder,
        allow_blueprint_env,
        front: mcpflow_app::advice::Front::Cli,
        telemetry: telemetry.cloned().unwrap_or_default().options(),
        // The long-lived front doors (the ones with telemetry flags) hold many runs: each
        // runs in a worker process, so no run takes the others down.
        workers: telemetry.and_then(|_| workers()),
    };
    match database() {
        Some(url) if database_mode == Database::Share => App::open_database_shared(&home, url, options)
            .context("starting mcpflow on the store in the database of --db (or MCPFLOW_DB)"),
        Some(url) => App::open_database(&home, url, options)
            .context("starting mcpflow with the store in the database of --db (or MCPFLOW_DB)"),
        None => App::open(&home, options).with_context(|| format!("starting mcpflow (data folder {})", home.display())),
    }
}

/// How this program starts a worker (`mcpflow worker`); `None` (with a warning) when its
/// own path cannot be found: runs then run in this process.
fn workers() -> Option<mcpflow_worker::Command> {
    match mcpflow_worker::Command::this_program() {
        Ok(command) => Some(command),
        Err(e) => {
            tracing::warn!(error = %e, "this program's path is unknown, so runs run in this process, not in workers");
            None
        }
    }
}
