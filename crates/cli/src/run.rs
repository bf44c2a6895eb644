//! `mcpflow run FILE`: run a blueprint headless and report how it went.

use crate::app::{AppArgs, open_app_with_options};
use crate::progress::Progress;
use crate::stdout::outln;
use crate::telemetry::TelemetryArgs;
use crate::validate::{read_input, read_inputs_file, read_json_input, render, unread};
use anyhow::Context as _;
use clap::Args;
use mcpflow_app::headless::{self, HeadlessError, HeadlessRun};
use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::signals::{self, Signal, Stop};
use mcpflow_blueprint::Blueprint;
use mcpflow_blueprint::limits::{BLUEPRINT_SIZE, DEFAULT_MAX_VALUE_BYTES};
use mcpflow_engine::{EventSink, RunEvent, RunStatus};
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Exit codes (also in docs/cli.md).
const EXIT_FAILED: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;
const EXIT_PARTIAL: u8 = 3;
const EXIT_CANCELLED: u8 = 130;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The blueprint file.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// An input, typed by the blueprint's inputs schema (repeatable).
    #[arg(long = "input", value_name = "NAME=VALUE")]
    input: Vec<String>,
    /// A JSON object of inputs (`--input` entries override it).
    #[arg(long = "inputs", value_name = "FILE")]
    inputs_file: Option<PathBuf>,
    /// An `mcpServers` JSON file, as Claude Desktop and Cursor write them (repeatable).
    #[arg(long = "servers", value_name = "FILE")]
    servers: Vec<PathBuf>,
    /// Let this server's stdio command start, or let mcpflow reach the HTTP server a
    /// blueprint declares (when it sends `${env:…}` values or is not loopback)
    /// (repeatable). Nothing starts without consent.
    #[arg(long = "allow-server", value_name = "NAME")]
    allow: Vec<String>,
    /// Let every stdio command start and every blueprint's HTTP server be reached (for CI).
    #[arg(long)]
    allow_all_servers: bool,
    /// Before running, list the `--servers` servers and compare them with the lock beside
    /// FILE (`mcpflow lock`): a breaking change (LOCK_BREAKING_CHANGE) or a missing lock
    /// exits 2 and runs nothing; compatible changes are printed as notes.
    #[arg(long)]
    locked: bool,
    #[command(flatten)]
    out: Watch,
    /// Record the run in the store (`mcpflow runs` and the studio's history show it);
    /// saved values and sub-workflows then come from the store too.
    #[arg(long)]
    store: bool,
    #[command(flatten)]
    people: PeopleArgs,
    /// With `--store`: a question nobody here can answer (no `--answers` entry, no
    /// terminal) waits instead of failing with INPUT_REQUIRED. The run is `waiting` in
    /// the store; stopping this process (Ctrl-C, SIGTERM) leaves it waiting, and
    /// `mcpflow answer RUN STEP --answers FILE` answers it later and resumes it.
    #[arg(long, requires = "store")]
    wait: bool,
    /// When a server asks for a wider scope than the sign-in has (403
    /// `insufficient_scope`), open the browser to sign in again for it, as `mcpflow auth
    /// login` does, and send the request again (at most twice per server). Without it the
    /// step fails with AUTH_REQUIRED naming the scope.
    #[arg(long, conflicts_with = "store")]
    sign_in: bool,
    #[command(flatten)]
    telemetry: TelemetryArgs,
    /// Write every MCP exchange of the run (requests, results, errors, progress) to this
    /// cassette, secrets hidden, for `mcpflow test` to replay without servers.
    #[arg(long, value_name = "CASSETTE", conflicts_with = "store")]
    record: Option<PathBuf>,
    /// With `--db URL` (or `MCPFLOW_DB`): queue the run for a `mcpflow worker`, print its
    /// id and return. Without it, `run --db` (no `--store`) queues the run too, then waits
    /// for its end and prints the usual result.
    #[arg(long, conflicts_with_all = ["store", "record", "sign_in", "wait"])]
    detach: bool,
}

/// Who answers a run's questions (`input` steps, servers' elicitations).
#[derive(Debug, Args)]
pub struct PeopleArgs {
    /// Answers to the run's questions: a JSON object keyed by step id (the value, an
    /// object of fields, `true`/`false` for an approval). Without it, questions are asked
    /// on the terminal, or fail with INPUT_REQUIRED when there is none.
    #[arg(long = "answers", value_name = "FILE")]
    answers: Option<PathBuf>,
}

impl PeopleArgs {
    /// The answers file, when one was given.
    pub(crate) fn file(&self) -> Option<&std::path::Path> {
        self.answers.as_deref()
    }

    /// The people of a headless run; `Err` is the message of a file that cannot be used.
    pub(crate) fn people(&self) -> Result<mcpflow_app::people::Headless, String> {
        let answers = match &self.answers {
            None => None,
            Some(path) => {
                let value = read_json_input(path, &mcpflow_blueprint::limits::ANSWERS_FILE_SIZE)?;
                Some(mcpflow_app::people::Answers::from_value(path, value).map_err(|m| format!("{m}\n"))?)
            }
        };
        Ok(mcpflow_app::people::Headless::new(answers))
    }
}

/// How a run is watched and reported (`run` and `rerun`).
#[derive(Debug, Args)]
pub struct Watch {
    /// Print the result envelope as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Write every event as NDJSON to FILE (`-`: stdout).
    #[arg(long, value_name = "FILE|-")]
    events: Option<PathBuf>,
    /// Stop the run after this long (e.g. `30s`, `5m`); overrides `limits.timeout_ms`.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    timeout: Option<std::time::Duration>,
    /// Print nothing while running.
    #[arg(long, short)]
    quiet: bool,
}

impl Watch {
    /// `--json` and `--events -` both want stdout: a usage error, before anything runs.
    #[allow(clippy::print_stderr)]
    pub(crate) fn conflict(&self) -> Option<ExitCode> {
        (self.json && self.events.as_deref() == Some(std::path::Path::new("-"))).then(|| {
            eprintln!("error: --json and --events - both write to stdout; send the events to a file");
            ExitCode::from(EXIT_USAGE)
        })
    }

    pub(crate) fn is_quiet(&self) -> bool {
        self.quiet
    }

    pub(crate) fn timeout_ms(&self) -> Option<u64> {
        self.timeout.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    /// The sink that draws progress and writes `--events`, for `total` top-level steps.
    pub(crate) fn sink(&self, total: u64) -> anyhow::Result<(EventSink, Option<Writer>)> {
        let progress = Arc::new(Progress::new(total, std::io::stderr().is_terminal(), self.quiet));
        let writer = open_events(self.events.as_deref())?;
        let sink: EventSink = {
            let writer = writer.clone();
            Arc::new(move |e: &RunEvent| {
                progress.on_event(e);
                if let Some(w) = &writer
                    && let Ok(mut w) = w.lock()
                    && let Ok(line) = serde_json::to_string(e)
                {
                    let _ = writeln!(w, "{line}");
                }
            })
        };
        Ok((sink, writer))
    }

    /// Prints the result (`--json`, the errors) and maps its status to the exit code. A
    /// run that did not succeed after a stop signal exits with that signal's code (130
    /// Ctrl-C, 143 SIGTERM, 129 SIGHUP); one that succeeded anyway says so with 0.
    pub(crate) fn finish(
        &self,
        envelope: &mcpflow_engine::Envelope,
        writer: Option<&Writer>,
        signal: Option<Signal>,
    ) -> anyhow::Result<ExitCode> {
        if let Some(w) = writer
            && let Ok(mut w) = w.lock()
        {
            crate::stdout::unless_closed(w.flush()).context("writing the events")?;
        }
        if self.json {
            // A reader gone (`| head`) takes nothing from the run's exit code.
            crate::stdout::unless_closed(outln!("{}", serde_json::to_string_pretty(envelope)?))?;
        }
        for e in &envelope.errors {
            let at = if e.step.is_empty() { String::new() } else { format!(" in step `{}`", e.step) };
            // Not eprintln!: after SIGHUP the terminal may be gone, and that must not panic.
            let _ = writeln!(std::io::stderr(), "error[{}]{at}: {}", e.code, e.message);
        }
        Ok(ExitCode::from(match (envelope.status, signal) {
            (RunStatus::Succeeded, _) => 0,
            (_, Some(signal)) => signal.exit_code(),
            (RunStatus::Partial, None) => EXIT_PARTIAL,
            (RunStatus::Cancelled, None) => EXIT_CANCELLED,
            (RunStatus::Failed | RunStatus::Interrupted, None) => EXIT_FAILED,
        }))
    }
}

pub fn run(args: RunArgs) -> ExitCode {
    if let Some(code) = args.out.conflict() {
        return code;
    }
    // `--store` runs in the application, which starts its own exporter from the same
    // flags (or in the service, which has its own).
    let started = if args.store { args.telemetry.check().map(|()| None) } else { args.telemetry.start(true) };
    let telemetry = match started {
        Ok(t) => t,
        Err(code) => return code,
    };
    let exit = block_on(execute(args, telemetry.clone().map(|t| t as _)));
    // Off the runtime, once the run and its servers are done: the last spans are sent
    // within the shutdown's cap.
    if let Some(otel) = telemetry {
        otel.shutdown();
    }
    exit
}

/// Runs a command's future on a fresh runtime; an error exits 2 (usage).
///
/// A run is one driver task talking to its servers' sessions: on one thread every hop of
/// a call (driver → rmcp's session task → its send task → the pipe, and the answer back)
/// is a task switch, not a thread wake-up, and a run of sequential calls makes about one
/// context switch per call instead of six (see docs/performance.md). Parallel calls wait on
/// their servers, not on this process's CPU, so they lose nothing. `MCPFLOW_RUNTIME=multi`
/// picks tokio's multi-threaded runtime instead, for comparing the two.
#[allow(clippy::print_stderr)]
pub(crate) fn block_on(command: impl Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    let multi = std::env::var_os("MCPFLOW_RUNTIME").is_some_and(|v| v == "multi");
    let mut builder =
        if multi { tokio::runtime::Builder::new_multi_thread() } else { tokio::runtime::Builder::new_current_thread() };
    let runtime = match builder.enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    match runtime.block_on(command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The folder of a blueprint file, where its `workflow` steps find other blueprints.
/// The blueprint's `limits.max_value_bytes`, which its inputs must fit in.
fn max_value_bytes(blueprint: &Blueprint) -> u64 {
    blueprint.limits.as_ref().and_then(|l| l.max_value_bytes).unwrap_or(DEFAULT_MAX_VALUE_BYTES)
}

pub(crate) fn folder_of(file: &std::path::Path) -> Option<PathBuf> {
    file.parent().map(|p| if p.as_os_str().is_empty() { PathBuf::from(".") } else { p.to_owned() })
}

/// Watches SIGINT, SIGTERM and SIGHUP: the first cancels the returned token (the run
/// then ends cancelled and its servers are reaped), a second quits at once.
pub(crate) fn cancel_on_signals() -> anyhow::Result<Stop> {
    signals::watch().context("cannot watch for Ctrl-C, SIGTERM and SIGHUP")
}

#[allow(clippy::print_stderr)]
async fn execute(args: RunArgs, telemetry: Option<Arc<dyn mcpflow_engine::Telemetry>>) -> anyhow::Result<ExitCode> {
    let shown = args.file.display().to_string();
    let bytes = match read_input(&args.file, &BLUEPRINT_SIZE) {
        Ok(bytes) => bytes,
        Err(message) => return Ok(unread(&message)),
    };
    let checked = match headless::check(&bytes) {
        Ok(c) => c,
        Err(HeadlessError::Invalid(diagnostics)) => {
            for d in &diagnostics {
                eprint!("{}", render(&shown, d));
            }
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err(e) => return Err(e.into()),
    };
    for d in &checked.warnings {
        eprint!("{}", render(&shown, d));
    }
    if args.locked
        && let Some(code) =
            crate::lock::check_before_run(&args.file, &bytes, &args.servers, &args.allow, args.allow_all_servers)
                .await?
    {
        return Ok(code);
    }
    let inputs = match &args.inputs_file {
        None => Default::default(),
        Some(path) => match read_inputs_file(path, max_value_bytes(&checked.blueprint)) {
            Ok(serde_json::Value::Object(inputs)) => inputs,
            Ok(_) => anyhow::bail!("{} is not a JSON object of inputs", path.display()),
            Err(message) => return Ok(unread(&message)),
        },
    };
    let people = match args.people.people() {
        Ok(p) => p,
        Err(message) => return Ok(unread(&message)),
    };
    let spec = HeadlessRun {
        people: Some(people),
        folder: folder_of(&args.file),
        server_files: args.servers.clone(),
        allow: args.allow.clone(),
        allow_all: args.allow_all_servers,
        inputs,
        assignments: args.input.clone(),
        timeout_ms: args.out.timeout_ms(),
        saved_dir: Some(mcpflow_app::home::saved_dir()),
        file: Some(args.file.clone()).filter(|f| f.as_os_str() != "-"),
        // The provider of the data folder's settings.json, else SAMPLING_UNAVAILABLE.
        sampling: Some(mcpflow_app::sampling::Model::configured(&mcpflow_app::home::data_dir(), false)),
        telemetry,
        sign_in: args.sign_in.then(step_up_sign_in),
        record: args.record.as_ref().map(|_| Arc::default()),
        replay: None,
    };
    for warning in headless::missing_commands(&checked, &spec) {
        eprintln!("warning[SERVER_COMMAND_MISSING]: {warning}");
    }

    match (crate::app::database(), args.store) {
        (Some(url), false) => return crate::queue::run(url, &args.out, args.detach, &bytes, &checked, &spec).await,
        (None, _) if args.detach => {
            eprintln!("error: --detach queues the run in a database: give --db URL (or set MCPFLOW_DB)");
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        _ => {}
    }
    let top_level = checked.plan.lists.first().map_or(0, |l| l.members.len()) as u64;
    let (sink, writer) = args.out.sink(top_level)?;
    let stop = cancel_on_signals()?;
    let cancel = stop.token().clone();

    let outcome = if args.store {
        recorded(&args, &bytes, &checked, &spec, sink, cancel).await
    } else {
        headless::run(&checked, &spec, sink, cancel).await.map_err(|e| (e.code(), e.to_string(), usage_error(&e)))
    };
    let envelope = match outcome {
        Ok(e) => e,
        Err((code, message, true)) => {
            // A refusal of the reader names its file and code already (`file:1:1: error[CODE]: …`).
            if message.contains(&format!(": error[{code}]: ")) {
                eprintln!("{message}");
            } else {
                eprintln!("error[{code}]: {message}");
            }
            return Ok(ExitCode::from(EXIT_USAGE));
        }
        Err((code, message, false)) => anyhow::bail!("{code}: {message}"),
    };
    if let (Some(path), Some(record)) = (&args.record, &spec.record) {
        let cassette = record.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        mcpflow_app::cassette::record::write(path, &cassette)
            .with_context(|| format!("CASSETTE_UNWRITABLE: cannot write the cassette {}", path.display()))?;
    }
    args.out.finish(&envelope, writer.as_ref(), stop.signal())
}

/// Whether a headless error is the user's to fix (exit 2) rather than a failure.
fn usage_error(e: &HeadlessError) -> bool {
    matches!(e, HeadlessError::Inputs(_) | HeadlessError::Servers(_) | HeadlessError::Start(_))
}

/// `--sign-in`: the system's browser (`$BROWSER`), 5 minutes to come back, said on stderr.
#[allow(clippy::print_stderr)]
fn step_up_sign_in() -> mcpflow_app::auth::SignIn {
    const WAIT: std::time::Duration = std::time::Duration::from_secs(300);
    mcpflow_app::auth::SignIn {
        browser: mcpflow_app::auth::Browser::System,
        timeout: WAIT,
        notice: Arc::new(|server, scope| {
            eprintln!(
                "`{server}` asks for more scope ({scope}): opening the browser to sign in again (waiting up to {} s)…",
                WAIT.as_secs()
            );
        }),
    }
}

/// `--store`: the run goes through the application, which records it.
async fn recorded(
    args: &RunArgs,
    bytes: &[u8],
    checked: &headless::Checked,
    spec: &HeadlessRun,
    sink: EventSink,
    cancel: CancellationToken,
) -> Result<mcpflow_engine::Envelope, (&'static str, String, bool)> {
    let app_args =
        AppArgs { servers: args.servers.clone(), allow: args.allow.clone(), allow_all_servers: args.allow_all_servers };
    if let Some(api) = crate::through::service().await {
        args.telemetry.warn_service_running(None, &mcpflow_app::home::data_dir());
        return through_service(&api, args, &app_args, bytes, checked, spec, sink, &cancel).await;
    }
    let app =
        open_app_with_options(&app_args, None, spec.folder.clone(), false, Some(&args.telemetry)).map_err(|e| {
            // A servers file refused (LIMIT_SIZE, …) keeps its own code; the rest is the store.
            let code = e.downcast_ref::<mcpflow_app::AppError>().map_or("STORE_UNAVAILABLE", |a| a.code());
            (code, format!("{e:#}"), true)
        })?;
    let inputs = headless::assemble_inputs(&checked.blueprint, spec).map_err(|e| (e.code(), e.to_string(), true))?;
    // The strict reader again (these bytes passed it in `check`), never serde's last-key-wins.
    let doc = mcpflow_blueprint::source::parse(bytes)
        .map(|p| p.value)
        .map_err(|d| ("BLUEPRINT_INVALID", d.to_string(), true))?;
    let mut start = StartRun::new(Target::Inline(doc), inputs, Trigger::Cli);
    start.timeout_ms = spec.timeout_ms;
    start.people = spec.people.clone().map(|p| Arc::new(p) as _);
    start.wait = args.wait;
    let sink = match (&start.people, args.wait) {
        (Some(people), true) => {
            let (sink, people) = say_when_waiting(sink, people.clone());
            start.people = Some(people);
            sink
        }
        _ => sink,
    };
    drive(&app, start, sink, cancel).await.map_err(|e| (e.code(), e.to_string(), true))
}

/// `--store` while the data folder's service holds the store: the run is the service's.
#[allow(clippy::too_many_arguments, reason = "the same run as `recorded`, handed over whole")]
async fn through_service(
    api: &mcpflow_service::api::Api,
    args: &RunArgs,
    app_args: &AppArgs,
    bytes: &[u8],
    checked: &headless::Checked,
    spec: &HeadlessRun,
    sink: EventSink,
    cancel: &CancellationToken,
) -> Result<mcpflow_engine::Envelope, (&'static str, String, bool)> {
    // The service's code as this command's (one string for the life of the process).
    let refused = |e: mcpflow_service::api::dto::CommandError| (&*Box::leak(e.code.into_boxed_str()), e.message, true);
    if let Some(e) = crate::through::options_refused(app_args) {
        return Err(refused(e));
    }
    let inputs = headless::assemble_inputs(&checked.blueprint, spec).map_err(|e| (e.code(), e.to_string(), true))?;
    let doc = mcpflow_blueprint::source::parse(bytes)
        .map(|p| p.value)
        .map_err(|d| ("BLUEPRINT_INVALID", d.to_string(), true))?;
    let answers = match args.people.file() {
        Some(path) => Some(
            read_json_input(path, &mcpflow_blueprint::limits::ANSWERS_FILE_SIZE)
                .map_err(|m| ("FILE_UNREADABLE", m, true))?,
        ),
        None => None,
    };
    let request = mcpflow_service::api::CliRun {
        doc: mcpflow_service::api::dto::Json(doc),
        inputs: mcpflow_service::api::dto::Json(inputs),
        timeout_ms: spec.timeout_ms,
        answers,
        answers_file: args.people.file().map(|p| p.display().to_string()),
        wait: args.wait,
    };
    let (started, events) = api.run_cli(request).await.map_err(refused)?;
    crate::through::watch(api, &started.run_id, events, &sink, cancel).await.map_err(refused)
}

/// Starts a run through the application (recorded), shows its events on `sink`, and
/// waits for its end; `cancel` cancels it. Shuts the app's servers down after.
pub(crate) async fn drive(
    app: &mcpflow_app::App,
    mut start: StartRun,
    sink: EventSink,
    cancel: CancellationToken,
) -> Result<mcpflow_engine::Envelope, mcpflow_app::AppError> {
    start.observer = Some(sink);
    let started = match app.start_run(start) {
        Ok(s) => s,
        Err(e) => {
            app.shutdown().await;
            return Err(e);
        }
    };
    let run_id = started.run_id.clone();
    let watcher = {
        let app = app.clone();
        tokio::spawn(async move {
            cancel.cancelled().await;
            // A run waiting for an answer (`--wait`) is left waiting; any other ends.
            if !app.park(&run_id).await {
                let _ = app.control(&run_id, mcpflow_engine::Control::Cancel);
            }
        })
    };
    let envelope = started.finish().await;
    watcher.abort();
    app.shutdown().await;
    Ok(envelope)
}

/// For `--wait`: `sink` and `people`, and a line on stderr once a question `people`
/// cannot answer waits and is on record: how to leave the run waiting and answer it later.
pub(crate) fn say_when_waiting(
    sink: EventSink,
    people: Arc<dyn mcpflow_engine::People>,
) -> (EventSink, Arc<dyn mcpflow_engine::People>) {
    let notes = Arc::new(Mutex::new(Notes::default()));
    let seen = notes.clone();
    let sink: EventSink = Arc::new(move |e: &RunEvent| {
        sink(e);
        // The observer hears an event once it is in the store.
        let Ok(mut notes) = seen.lock() else { return };
        match &e.kind {
            mcpflow_engine::EventKind::RunStarted { run_id, .. } => run_id.clone_into(&mut notes.run_id),
            mcpflow_engine::EventKind::StepWaiting { question, .. } => notes.recorded(question),
            _ => {}
        }
    });
    (sink, Arc::new(SayWhenWaiting { people, notes }))
}

/// The questions on record and those that wait (each is said when it is both).
#[derive(Default)]
struct Notes {
    run_id: String,
    recorded: std::collections::HashSet<String>,
    waiting: std::collections::HashMap<String, mcpflow_engine::Question>,
}

impl Notes {
    fn recorded(&mut self, question: &mcpflow_engine::Question) {
        match self.waiting.remove(&question.id) {
            Some(q) => self.say(&q),
            None => {
                self.recorded.insert(question.id.clone());
            }
        }
    }

    fn waiting(&mut self, question: mcpflow_engine::Question) {
        if self.recorded.remove(&question.id) {
            self.say(&question);
        } else {
            self.waiting.insert(question.id.clone(), question);
        }
    }

    fn say(&self, q: &mcpflow_engine::Question) {
        let (run, step) = (&self.run_id, &q.step);
        let _ = writeln!(
            std::io::stderr(),
            "run {run} waits for an answer at step `{step}`: {}\n  stop this process (Ctrl-C) to leave it waiting, then answer it with `mcpflow answer {run} {step} --answers FILE`",
            q.message
        );
    }
}

struct SayWhenWaiting {
    people: Arc<dyn mcpflow_engine::People>,
    notes: Arc<Mutex<Notes>>,
}

impl mcpflow_engine::People for SayWhenWaiting {
    fn ask(
        &self,
        question: mcpflow_engine::Question,
        cancel: CancellationToken,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<mcpflow_engine::Answer, mcpflow_engine::CallError>> + Send>> {
        let (people, notes) = (self.people.clone(), self.notes.clone());
        Box::pin(async move {
            let answer = people.ask(question.clone(), cancel).await;
            if let Err(e) = &answer
                && e.code == "INPUT_REQUIRED"
                && let Ok(mut notes) = notes.lock()
            {
                // The question now waits in the application (the run's `wait`).
                notes.waiting(question);
            }
            answer
        })
    }
}

type Writer = Arc<Mutex<Box<dyn std::io::Write + Send>>>;

fn open_events(path: Option<&std::path::Path>) -> anyhow::Result<Option<Writer>> {
    let Some(path) = path else { return Ok(None) };
    let w: Box<dyn std::io::Write + Send> = if path == std::path::Path::new("-") {
        Box::new(std::io::LineWriter::new(std::io::stdout()))
    } else {
        let f = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
        Box::new(std::io::BufWriter::new(f))
    };
    Ok(Some(Arc::new(Mutex::new(w))))
}

/// The top-level steps of a blueprint document (the total of the progress display).
pub(crate) fn top_level(doc: &serde_json::Value) -> u64 {
    doc.get("steps").and_then(serde_json::Value::as_array).map_or(0, |s| s.len() as u64)
}

/// The top-level steps of the blueprint a run started here runs (0 when it cannot be read).
pub(crate) fn steps_of_target(app: &mcpflow_app::App, target: &Target) -> u64 {
    match target {
        Target::Inline(doc) => top_level(doc),
        Target::Stored(id) => app.blueprint(id).map(|b| top_level(&b.json)).unwrap_or(0),
    }
}
