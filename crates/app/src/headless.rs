//! Running one blueprint file headless: validate it, assemble its inputs, start the
//! servers it may start (consent), run it to the end and reap every process.

use crate::advice::Front;
use crate::cassette::Cassette;
use crate::cassette::record::Recorder;
use crate::cassette::replay::Replay;
use crate::logs::{Listen, LogRouter};
use mcpflow_blueprint::inputs::parse_assignment;
use mcpflow_blueprint::{Blueprint, Diagnostic, Options, Plan, check_bytes};
use mcpflow_engine::{Engine, Envelope, EventSink, FileSaved, FolderSource, RunRequest, StartError};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A checked blueprint, ready to run.
#[derive(Debug, Clone)]
pub struct Checked {
    pub blueprint: Arc<Blueprint>,
    pub plan: Arc<Plan>,
    /// Warnings (errors stop at [`check`]).
    pub warnings: Vec<Diagnostic>,
}

/// What to run and with what.
#[derive(Debug, Clone, Default)]
pub struct HeadlessRun {
    /// Folder where `workflow` steps find other blueprints (the file's folder); also the
    /// MCP root of the servers that configure no `roots`.
    pub folder: Option<PathBuf>,
    /// `mcpServers` files, merged in order; the blueprint's own `servers` win.
    pub server_files: Vec<PathBuf>,
    /// Servers whose stdio command may start, or whose endpoint declared by the blueprint
    /// may be reached (`--allow-server`).
    pub allow: Vec<String>,
    /// Every stdio command may start, every endpoint be reached (`--allow-all-servers`).
    pub allow_all: bool,
    /// Inputs from a file (`--inputs`).
    pub inputs: Map<String, Value>,
    /// `name=value` assignments (`--input`), typed by the inputs schema.
    pub assignments: Vec<String>,
    /// Overrides `limits.timeout_ms`.
    pub timeout_ms: Option<u64>,
    /// Where saved values live.
    pub saved_dir: Option<PathBuf>,
    /// The blueprint's file, when it has one: what to tell `mcpflow auth login` to sign
    /// in to a server the blueprint declares (`--blueprint FILE`).
    pub file: Option<PathBuf>,
    /// Who answers the run's questions (`input` steps, servers' elicitations): the
    /// `--answers` file, then the terminal; `None`: nobody (`INPUT_REQUIRED`).
    pub people: Option<crate::people::Headless>,
    /// Who answers servers' sampling requests: the provider of the data folder's
    /// `settings.json` (`crate::sampling::Model::configured`); `None`: nobody
    /// (`SAMPLING_UNAVAILABLE`).
    pub sampling: Option<crate::sampling::Model>,
    /// Where the run's spans go (`--otlp`, settings, `OTEL_*`); `None`: telemetry is off.
    pub telemetry: Option<Arc<dyn mcpflow_engine::Telemetry>>,
    /// A server that asks for a wider scope may open the browser to sign in again
    /// (`--sign-in`); `None`: the step fails with `AUTH_REQUIRED`.
    pub sign_in: Option<mcpflow_auth::SignIn>,
    /// `--record`: every MCP exchange of the run is kept here, secrets hidden; filled when
    /// the run ends, before its servers stop.
    pub record: Option<Recording>,
    /// `mcpflow test`: the run's servers are a cassette's; no server is configured,
    /// started or reached.
    pub replay: Option<Arc<Replay>>,
}

/// Where `--record` puts the run's exchanges.
pub type Recording = Arc<std::sync::Mutex<Cassette>>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HeadlessError {
    /// The blueprint has errors; they are in the list.
    #[error("the blueprint has {} error(s)", .0.iter().filter(|d| d.is_error()).count())]
    Invalid(Vec<Diagnostic>),
    #[error("{}", .0.join("; "))]
    Inputs(Vec<String>),
    #[error(transparent)]
    Servers(#[from] mcpflow_mcp::Error),
    #[error("{0}")]
    Start(#[from] StartError),
}

/// A configuration or sign-in error is a servers error, as the pool reports it.
impl From<mcpflow_config::Error> for HeadlessError {
    fn from(error: mcpflow_config::Error) -> Self {
        HeadlessError::Servers(error.into())
    }
}

impl HeadlessError {
    /// A stable code for scripts.
    pub fn code(&self) -> &'static str {
        match self {
            HeadlessError::Invalid(_) => "BLUEPRINT_INVALID",
            HeadlessError::Inputs(_) => "INPUTS_INVALID",
            HeadlessError::Servers(e) => e.code(),
            HeadlessError::Start(e) => e.code(),
        }
    }
}

/// Validates blueprint text. Errors stop here, with every diagnostic.
pub fn check(bytes: &[u8]) -> Result<Checked, HeadlessError> {
    let report = check_bytes(bytes, &Options::default());
    let has_errors = report.has_errors();
    match (report.blueprint, report.plan) {
        (Some(bp), Some(plan)) if !has_errors => {
            Ok(Checked { blueprint: Arc::new(bp), plan: Arc::new(plan), warnings: report.diagnostics })
        }
        _ => Err(HeadlessError::Invalid(report.diagnostics)),
    }
}

/// The inputs of a run: the file's inputs, then each assignment typed by the schema.
pub fn assemble_inputs(bp: &Blueprint, spec: &HeadlessRun) -> Result<Value, HeadlessError> {
    let mut inputs = spec.inputs.clone();
    let mut errors = Vec::new();
    for a in &spec.assignments {
        match parse_assignment(bp.inputs.as_ref(), a) {
            Ok((k, v)) => {
                inputs.insert(k, v);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() { Ok(Value::Object(inputs)) } else { Err(HeadlessError::Inputs(errors)) }
}

/// What the servers of `server_files` offer, for validating against them (`mcpflow
/// validate --servers`): the servers that may start (`allow`, `allow_all`) are started
/// and listed, the others are reported unreachable with the reason (not approved). Every
/// process is reaped before this returns.
pub async fn live_catalog(
    server_files: &[PathBuf],
    allow: &[String],
    allow_all: bool,
) -> Result<mcpflow_mcp::Catalog, HeadlessError> {
    live_catalog_with(server_files, None, allow, allow_all).await
}

/// [`live_catalog`] with the servers a blueprint declares as well (they win over the
/// files', as in a run).
pub async fn live_catalog_with(
    server_files: &[PathBuf],
    blueprint: Option<&Blueprint>,
    allow: &[String],
    allow_all: bool,
) -> Result<mcpflow_mcp::Catalog, HeadlessError> {
    let mut configs = read_server_files(server_files)?;
    if let Some(bp) = blueprint {
        configs = configs.with_blueprint(&bp.servers);
    }
    let approvals = consent(&configs, allow, allow_all)?;
    let options =
        PoolOptions::default().with_auth(crate::authenticator::authenticator(&crate::home::data_dir(), Front::Cli));
    let pool = Pool::new(configs, approvals, options);
    let catalog = pool.catalog().await;
    pool.shutdown().await;
    Ok(catalog)
}

/// The servers of `mcpServers` files, later files over earlier ones.
fn read_server_files(files: &[PathBuf]) -> Result<ServerConfigs, HeadlessError> {
    let mut configs = ServerConfigs::new();
    for file in files {
        configs.merge(ServerConfigs::read(file)?);
    }
    Ok(configs)
}

/// What may start or be reached: everything with `allow_all`, else the servers named (their
/// command line, or the endpoint the blueprint declared: see `mcpflow_mcp::consent`).
fn consent(configs: &ServerConfigs, allow: &[String], allow_all: bool) -> Result<Approvals, HeadlessError> {
    let mut approvals = if allow_all { Approvals::allow_all() } else { Approvals::new() };
    for name in allow {
        approvals.approve_server(configs, name)?;
    }
    Ok(approvals)
}

/// A new run id: time-ordered (UUID v7), so runs sort by when they started.
pub fn new_run_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The logins of the data folder; `AUTH_REQUIRED` names the `mcpflow auth login` that
/// finds the server where this run found it: the blueprint's file or the servers files.
/// With `sign_in`, a server asking for a wider scope opens the browser instead.
fn run_authenticator(bp: &Blueprint, spec: &HeadlessRun) -> Arc<mcpflow_auth::Authenticator> {
    let declared: std::collections::BTreeSet<String> = bp.servers.keys().cloned().collect();
    let files = crate::authenticator::servers_flags(&spec.server_files);
    let blueprint = spec
        .file
        .as_ref()
        .map(|f| format!(" --blueprint {}", crate::authenticator::shell_word(&f.display().to_string())));
    let advice: mcpflow_auth::Advice = Arc::new(move |server| {
        let flags = match &blueprint {
            Some(blueprint) if declared.contains(server) => blueprint.as_str(),
            _ => files.as_str(),
        };
        crate::authenticator::cli_login_advice(server, flags)
    });
    let vault = mcpflow_auth::Vault::in_data_dir(&crate::home::data_dir());
    let auth = mcpflow_auth::Authenticator::new(vault).with_advice(advice);
    Arc::new(match &spec.sign_in {
        Some(sign_in) => auth.with_sign_in(sign_in.clone()),
        None => auth,
    })
}

/// `SERVER_COMMAND_MISSING` warnings (the messages): a server the blueprint's steps call (its own entry,
/// else the `--servers` files') starts a command given as an absolute path that does not
/// exist on this machine — as a blueprint exported elsewhere may. Each names the server,
/// the path and the steps calling it. Starts nothing; servers files that cannot be read
/// are left to the run to report.
pub fn missing_commands(checked: &Checked, spec: &HeadlessRun) -> Vec<String> {
    let Ok(configs) = read_server_files(&spec.server_files).map(|c| c.with_blueprint(&checked.blueprint.servers))
    else {
        return Vec::new();
    };
    let doc = serde_json::to_value(&*checked.blueprint).unwrap_or(Value::Null);
    let mut calls: Vec<(String, Vec<String>)> = Vec::new();
    servers_by_step(doc.get("steps"), &mut calls);
    calls
        .into_iter()
        .filter_map(|(server, steps)| {
            let Some(mcpflow_mcp::ServerEntry::Config(config)) = configs.get(&server) else { return None };
            let command = config.command.as_deref()?;
            let path = std::path::Path::new(command);
            (path.is_absolute() && !path.exists()).then(|| {
                let steps: Vec<String> = steps.iter().map(|s| format!("`{s}`")).collect();
                format!(
                    "server `{server}` (step {}) starts {command}, which does not exist on \
                     this machine; install it there, or change the server's `command` (in the blueprint's `servers` \
                     or your --servers file)",
                    steps.join(", ")
                )
            })
        })
        .collect()
}

/// Each server the steps call, with the ids of the steps calling it, in order.
fn servers_by_step(steps: Option<&Value>, out: &mut Vec<(String, Vec<String>)>) {
    crate::steps::each_step(steps, &mut |step| {
        if let (Some(server), Some(id)) =
            (step.get("server").and_then(Value::as_str), step.get("id").and_then(Value::as_str))
        {
            match out.iter_mut().find(|(name, _)| name == server) {
                Some((_, ids)) => ids.push(id.to_owned()),
                None => out.push((server.to_owned(), vec![id.to_owned()])),
            }
        }
    });
}

/// Runs a checked blueprint to the end. Every server process is reaped before this
/// returns, whatever happened.
pub async fn run(
    checked: &Checked,
    spec: &HeadlessRun,
    events: EventSink,
    cancel: CancellationToken,
) -> Result<Envelope, HeadlessError> {
    let bp = &checked.blueprint;
    let inputs = assemble_inputs(bp, spec)?;
    if let Some(replay) = &spec.replay {
        return start(replay.clone(), checked, spec, inputs, events, None, cancel).await;
    }
    let configs = read_server_files(&spec.server_files)?.with_blueprint(&bp.servers);
    let approvals = consent(&configs, &spec.allow, spec.allow_all)?;
    // The one run here hears every server.
    let logs = LogRouter::new();
    let line_rx = logs.join("headless", Listen::All);
    // The servers that configure no `roots` get the blueprint's folder.
    let roots = spec.folder.iter().filter_map(|folder| std::path::absolute(folder).ok()).collect();
    let options =
        PoolOptions::default().with_log(logs.sender()).with_roots(roots).with_auth(run_authenticator(bp, spec));
    let pool = Arc::new(Pool::new(configs, approvals, options));
    let advised = Front::Cli.advise(pool.clone());
    let recorder = spec.record.as_ref().map(|_| {
        let pool = pool.clone();
        Arc::new(Recorder::new(
            advised.clone(),
            Arc::new(move || {
                let pool = pool.clone();
                Box::pin(async move { pool.secrets().await })
            }),
        ))
    });
    let servers = recorder.clone().map_or(advised, |r| r as _);
    let result = start(servers, checked, spec, inputs, events, Some(line_rx), cancel).await;
    if let (Some(recorder), Some(record)) = (&recorder, &spec.record) {
        *record.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = recorder.cassette();
    }
    pool.shutdown().await;
    result
}

/// Starts the run on an engine over `servers` and waits for its end.
async fn start(
    servers: Arc<dyn mcpflow_engine::Servers>,
    checked: &Checked,
    spec: &HeadlessRun,
    inputs: Value,
    events: EventSink,
    line_rx: Option<tokio::sync::mpsc::Receiver<(String, String)>>,
    cancel: CancellationToken,
) -> Result<Envelope, HeadlessError> {
    let engine = Engine {
        servers,
        source: spec.folder.clone().map(|d| Arc::new(FolderSource::new(d)) as _),
        saved: spec.saved_dir.clone().map(|d| Arc::new(FileSaved::new(d)) as _),
        journal: None,
        people: spec.people.clone().map(|p| Arc::new(p) as _),
        sampler: spec.sampling.clone().map(|m| Arc::new(m) as _),
        telemetry: spec.telemetry.clone(),
    };
    let bp = &checked.blueprint;
    let mut config = engine.config(bp, new_run_id(), inputs)?;
    config.timeout_ms = spec.timeout_ms;
    let request = RunRequest {
        blueprint: bp.clone(),
        plan: checked.plan.clone(),
        config,
        stack: Vec::new(),
        origin: Default::default(),
    };
    Ok(match line_rx {
        Some(line_rx) => engine.run_with_logs(request, events, None, line_rx, cancel).await,
        None => engine.run(request, events, None, cancel).await,
    })
}
