//! `mcpflow`: validate, run and serve MCP workflow blueprints. Each subcommand decodes
//! its arguments, calls the library and maps the outcome to output and an exit code.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

mod answer;
mod app;
mod auth;
mod backup;
mod health;
mod history;
mod lead;
mod lock;
mod progress;
mod queue;
mod rerun;
mod resume;
mod run;
mod serve;
mod servers;
mod service;
mod setup;
mod stdout;
mod telemetry;
mod test;
mod through;
mod validate;
mod worker;

#[derive(Debug, Parser)]
#[command(name = "mcpflow", version, about = "Design, validate and run MCP workflow blueprints", long_about = None)]
#[command(propagate_version = true, arg_required_else_help = true)]
struct Cli {
    /// Log on stderr as plain lines or as JSON objects (with the run's trace id when
    /// telemetry is on). Without it nothing is logged beyond the command's own output.
    #[arg(long, global = true, value_name = "FORMAT")]
    log_format: Option<LogFormatArg>,
    /// The store in this PostgreSQL database instead of the data folder:
    /// `postgresql://USER:PASSWORD@HOST:PORT/DB` (also `MCPFLOW_DB`). For `list`, `runs`,
    /// `show`, `export`, `import`, `run` (queues for `worker`s; `run --store` runs here),
    /// `rerun`, `resume`, `answer`, `serve`, `worker` and `service --listen`; see
    /// docs/scale-out.md.
    #[arg(long, global = true, value_name = "URL")]
    db: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum LogFormatArg {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check blueprint files: errors block running, warnings do not.
    ///
    /// Prints `file:line:col: level[CODE]: message` and a hint per finding. Exits 1 when
    /// any file has errors, 0 when there are only warnings, 2 when a file cannot be read.
    Validate {
        /// Blueprint files (`-` reads standard input).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print the findings as JSON (one object per file) instead of text.
        #[arg(long)]
        json: bool,
        /// A JSON tool catalog (`{"servers": {name: {"tools": [...]}}}`) for the tool warnings.
        #[arg(long, value_name = "FILE", conflicts_with = "servers")]
        catalog: Option<PathBuf>,
        /// Check tools against live servers: an `mcpServers` JSON file (repeatable). Only
        /// the servers `--allow-server` / `--allow-all-servers` let start are started
        /// (and stopped after); the others are reported as not reachable.
        #[arg(long = "servers", value_name = "FILE")]
        servers: Vec<PathBuf>,
        /// Let this server's stdio command start to list its tools (repeatable).
        #[arg(long = "allow-server", value_name = "NAME", requires = "servers")]
        allow: Vec<String>,
        /// Let every stdio command of the `--servers` files start to list its tools.
        #[arg(long, requires = "servers")]
        allow_all_servers: bool,
        /// Compare the live servers with the lock beside each file (`mcpflow lock`):
        /// LOCK_BREAKING_CHANGE is an error, LOCK_COMPATIBLE_CHANGE a note.
        #[arg(long)]
        locked: bool,
    },
    /// Lock the tools a blueprint uses: write `FILE.lock.json` beside it (`greet.json` →
    /// `greet.lock.json`) with the input and output schemas of each tool and the
    /// arguments of each prompt, as the live servers list them, and their SHA-256.
    /// `validate --locked` and `run --locked` then report how the servers changed.
    Lock {
        /// The blueprint file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// An `mcpServers` JSON file (repeatable).
        #[arg(long = "servers", value_name = "FILE", required = true)]
        servers: Vec<PathBuf>,
        /// Let this server's stdio command start to list its tools (repeatable).
        #[arg(long = "allow-server", value_name = "NAME")]
        allow: Vec<String>,
        /// Let every stdio command of the `--servers` files start.
        #[arg(long)]
        allow_all_servers: bool,
        /// Rewrite an existing lock from the live servers (accept their new schemas).
        #[arg(long)]
        update: bool,
    },
    /// Run a blueprint against its MCP servers, headless.
    ///
    /// Exit codes: 0 succeeded, 1 failed, 2 invalid blueprint or usage, 3 partial
    /// (steps with `on_error: continue` failed), 130 cancelled (Ctrl-C), 143 SIGTERM,
    /// 129 SIGHUP (the run is cancelled and its servers stopped first).
    Run(run::RunArgs),
    /// Run tests over recorded cassettes, starting no server.
    ///
    /// A test file names a blueprint, its inputs, a cassette (`run --record`) and what to
    /// expect. Prints one line per test. Exit codes: 0 all passed, 1 any failed.
    Test(test::TestArgs),
    /// Run a step of a recorded run again, with the other steps pinned to that run's
    /// outputs and its inputs: the step alone, or with every step after it
    /// (`--from-here`). Recorded, with the run it came from. Exit codes as for `run`.
    Rerun(rerun::RerunArgs),
    /// Go on with a run the process was killed in (`interrupted`): finished steps keep
    /// their outputs, a tool the server ran as a task is polled again rather than called
    /// twice (`TASK_LOST` when the server forgot it), the rest runs. Recorded, with the
    /// run it resumes. Exit codes as for `run`.
    Resume(resume::ResumeArgs),
    /// Print the JSON Schema of the blueprint format.
    Schema,
    /// Serve mcpflow to agents as an MCP server (stdio; `--http` for streamable HTTP).
    ///
    /// Tools: list_servers, list_tools, call_tool, validate_workflow, save_workflow,
    /// list_workflows, get_workflow, run_workflow, run_pipeline, get_run, and every
    /// stored blueprint with `"expose": true`.
    Serve(serve::ServeArgs),
    /// The one owner of the data folder: its store, servers, runs and schedules, answering
    /// the other front doors on a socket in the folder (mode 0600; else a loopback port
    /// and a token file) — `mcpflow serve` bridges MCP hosts to it, `list` and `runs`
    /// read through it. Exits when idle (no connection, no run, no schedule) unless
    /// `--keep`.
    Service(service::ServiceArgs),
    /// Fire the runs that stored blueprints' `schedule` asks for, until Ctrl-C or SIGTERM (like
    /// `serve --schedule`, without serving MCP). A fire missed while mcpflow was not
    /// running fires once on start; runs of one blueprint never overlap.
    Daemon {
        #[command(flatten)]
        app: app::AppArgs,
        #[command(flatten)]
        telemetry: telemetry::TelemetryArgs,
    },
    /// List the configured servers: how each is reached, whether it may start, its auth.
    /// Starts nothing. `servers test [NAME]...` connects to each and says what it
    /// answered, or why it failed and what to do (exit 1 when one failed).
    Servers(servers::ServersArgs),
    /// Sign in to OAuth servers (`login SERVER`), see the logins (`status`), forget one
    /// (`logout SERVER`). Tokens live in the OS keyring where one is available, else in a
    /// file in the data folder readable by you alone (`auth status` says which).
    Auth(auth::AuthArgs),
    /// List the blueprints in the store.
    List {
        #[arg(long)]
        json: bool,
    },
    /// List recorded runs, newest first (of one blueprint when given). A run that cannot
    /// be read back is skipped with a warning on stderr naming `mcpflow runs --remove RUN`.
    Runs {
        #[arg(value_name = "BLUEPRINT")]
        blueprint: Option<String>,
        /// How many runs to show.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Only the runs waiting for an answer: each question, its fields, and the
        /// `mcpflow answer` that answers it.
        #[arg(long, conflicts_with_all = ["blueprint", "limit"])]
        waiting: bool,
        /// Remove run RUN from the store with all its events — also one that cannot be
        /// read back, which `runs`, `show` and `export` skip and name.
        #[arg(long, value_name = "RUN", conflicts_with_all = ["blueprint", "limit", "waiting", "json"])]
        remove: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Answer the question a waiting run asks at STEP (`mcpflow runs --waiting` lists
    /// them), from an answers file keyed by step id, and resume the run: finished steps
    /// keep their outputs, the step that asked gets the answer. Exit codes as for `run`.
    Answer(answer::AnswerArgs),
    /// Show a recorded run: its steps, or every event (`--events`, NDJSON).
    Show {
        #[arg(value_name = "RUN")]
        run: String,
        #[arg(long)]
        events: bool,
        #[arg(long, conflicts_with = "events")]
        json: bool,
    },
    /// Write the whole store (blueprints with revisions, runs, saved values, servers) as JSON.
    /// Runs (or events) that cannot be read back are left out and named on stderr, with
    /// `mcpflow runs --remove RUN`; the backup of everything else is written, exit 3.
    Export {
        /// Where to write (default: stdout).
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Write one stored blueprint: as it is stored (stdout, or `--out FILE`), or with
    /// `--portable` into a folder another machine runs it from — the servers it uses
    /// copied into it (secrets and environment values as `${env:NAME}`, never their
    /// values), the blueprints it calls alongside, and a README with the variables to set
    /// and the `mcpflow run` command.
    ExportBlueprint {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(long)]
        portable: bool,
        /// The file (or with `--portable` the folder, default `./ID`) to write; never
        /// overwrites a file.
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        #[command(flatten)]
        app: app::AppArgs,
    },
    /// Add mcpflow to an MCP host (`claude-desktop`, `cursor`, `vscode`): the entry that
    /// launches `mcpflow serve`, written into the host's configuration file with the rest
    /// of the file kept as it is (`--print` shows it and changes nothing).
    Setup(setup::SetupArgs),
    /// With `--db URL` (or `MCPFLOW_DB`): a worker on the store's run queue — claims
    /// queued runs (`mcpflow run FILE --db URL --detach`) and runs them; see
    /// docs/scale-out.md. Without: one run sent on standard input, for `mcpflow service`
    /// and `serve`, which start it (each of their runs in a worker process of its own).
    Worker(worker::WorkerArgs),
    /// Import a blueprint file or a store backup into the store. Starts no server.
    Import {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The long-lived processes are watched through their logs (the service's is its
    // `service.log`): they log in text unless told otherwise.
    let long_lived = matches!(cli.command, Command::Daemon { .. } | Command::Service(_));
    let log_format = cli.log_format.or(long_lived.then_some(LogFormatArg::Text));
    if let Some(format) = log_format {
        mcpflow_app::telemetry::init_log(match format {
            LogFormatArg::Text => mcpflow_app::telemetry::LogFormat::Text,
            LogFormatArg::Json => mcpflow_app::telemetry::LogFormat::Json,
        });
    }
    // The commands not wired to a database yet refuse `--db` and keep to the data folder
    // whatever `MCPFLOW_DB` says (the studio starts `service`, whose store is the folder's).
    let unwired = cli.command.without_database();
    if let (Some(name), Some(_)) = (unwired, &cli.db) {
        return report(Err(anyhow::anyhow!(
            "`mcpflow {name}` cannot use a store in a database yet: --db is for list, runs, show, export, import, \
             run, rerun, resume, answer, serve, worker and service --listen (docs/scale-out.md); leave it out to use the data folder's store"
        )));
    }
    app::choose_database(cli.db, unwired.is_none());
    match cli.command {
        Command::Lock { file, servers, allow, allow_all_servers, update } => {
            lock::run(&file, validate::Tools::Live { servers, allow, allow_all: allow_all_servers }, update)
        }
        Command::Validate { files, json, catalog, servers, allow, allow_all_servers, locked } => {
            let source = match (catalog, servers.is_empty()) {
                (Some(file), _) => validate::Tools::File(file),
                (None, false) => validate::Tools::Live { servers, allow, allow_all: allow_all_servers },
                (None, true) => validate::Tools::None,
            };
            validate::run(&files, json, source, locked)
        }
        Command::Run(args) => run::run(args),
        Command::Test(args) => test::run(args),
        Command::Rerun(args) => rerun::run(args),
        Command::Resume(args) => resume::run(args),
        Command::Serve(args) => with_runtime(serve::run(args)),
        Command::Servers(args) => with_runtime(servers::run(args)),
        Command::Auth(args) => with_runtime(auth::run(args)),
        Command::Service(args) => with_runtime(service::run(args)),
        Command::Daemon { app, telemetry } => with_runtime(serve::daemon(app, None, telemetry)),
        Command::List { json } => report(history::list(json)),
        Command::Runs { remove: Some(run), .. } => report(history::remove(&run)),
        Command::Runs { waiting: true, json, .. } => report(history::waiting(json)),
        Command::Runs { blueprint, limit, json, .. } => report(history::runs(blueprint.as_deref(), limit, json)),
        Command::Answer(args) => answer::run(args),
        Command::Show { run, events, json } => report(history::show(&run, events, json)),
        Command::Export { file } => report(backup::export(file.as_deref())),
        Command::ExportBlueprint { id, portable, out, app } => {
            report(backup::export_blueprint(&id, portable, out.as_deref(), &app))
        }
        Command::Setup(args) => report(setup::run(&args)),
        Command::Worker(args) => match app::database() {
            Some(url) => worker::run(args, url),
            None => ExitCode::from(mcpflow_worker::serve(std::io::stdin(), std::io::stdout())),
        },
        Command::Import { file } => with_runtime(async move { backup::import(&file) }),
        Command::Schema => match stdout::out!("{}", mcpflow_blueprint::schema::blueprint_schema_text()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => stdout::failed(&e),
        },
    }
}

impl Command {
    /// The name of a command that uses the store but not yet one in a database.
    fn without_database(&self) -> Option<&'static str> {
        match self {
            Command::Daemon { .. } => Some("daemon"),
            Command::Service(args) if !args.is_team() => Some("service"),
            Command::Servers(_) => Some("servers"),
            Command::Auth(_) => Some("auth"),
            Command::ExportBlueprint { .. } => Some("export-blueprint"),
            _ => None,
        }
    }
}

/// Prints an error (with its causes) and exits 2.
#[allow(clippy::print_stderr)]
fn report(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        // The reader went away (`| head`): it has what it wanted.
        Err(e) if stdout::closed_in(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs an async command on a fresh multi-threaded runtime. A stdin read still blocked
/// in its thread (`serve` stopped by a signal while its client keeps stdin open) cannot be
/// cancelled, so the runtime is not waited for past a moment.
#[allow(clippy::print_stderr)]
fn with_runtime(work: impl Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => {
            let result = runtime.block_on(work);
            runtime.shutdown_timeout(std::time::Duration::from_millis(200));
            report(result)
        }
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            ExitCode::from(1)
        }
    }
}
