//! The application every long-lived front door shares (the studio, `mcpflow serve`, the
//! scheduler, `mcpflow run --store`): one store, the configured servers with their
//! pool, and the runs in flight. The use cases live beside it: [`crate::blueprints`],
//! [`crate::runs`], [`crate::servers`].

use crate::error::{AppError, Result};
use mcpflow_mcp::{Approvals, Consent, Pool, PoolOptions, ServerConfigs};
use mcpflow_store::Store;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::broadcast;

/// How many runs may be in flight at once unless told otherwise.
pub const DEFAULT_MAX_RUNS: usize = 32;

/// How to open the application.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// `mcpServers` files merged over the servers kept in the store.
    pub server_files: Vec<PathBuf>,
    /// Servers whose stdio command may start this session (`--allow-server`).
    pub allow: Vec<String>,
    /// Every stdio command may start (`--allow-all-servers`).
    pub allow_all: bool,
    /// Runs in flight at once; past it, starting a run is refused (`RUNS_BUSY`).
    pub max_runs: Option<usize>,
    /// A folder where `workflow` steps find blueprints that are not in the store.
    pub folder: Option<PathBuf>,
    /// Blueprints sent to `mcpflow serve` may declare servers that use `${env:NAME}`
    /// (`--allow-blueprint-env`); refused otherwise ([`App::refuse_blueprint_env`]).
    pub allow_blueprint_env: bool,
    /// Whose words advice is given in: the studio's (the default) or the command line's.
    pub front: crate::advice::Front,
    /// This process's telemetry flags (`--otlp`), over the data folder's settings and the
    /// `OTEL_*` environment ([`App::telemetry`]).
    pub telemetry: crate::telemetry::TelemetryOptions,
    /// Each run in a worker process of its own (`mcpflow worker`), which a run cannot
    /// take this process down from: what the long-lived front doors (`service`, `serve`,
    /// `daemon`) set. `None`: runs run in this process (`mcpflow run`, the tests).
    pub workers: Option<mcpflow_worker::Command>,
}

/// What changed, for subscribers (e.g. `tools/list_changed` for exposed blueprints).
/// Exhaustive on purpose: the subscribers (`mcpflow-serve`, `mcpflow-service`) match on
/// every kind, so a new one is a compile error where it must be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Blueprints,
    Servers,
    /// A run started (from any front door: studio, CLI, an agent, a schedule); it is
    /// recorded already, and [`App::subscribe`] follows its events.
    RunStarted {
        run_id: String,
        blueprint: String,
        trigger: String,
        client: Option<String>,
    },
}

/// The application. Cheap to clone; every clone is the same application.
#[derive(Clone)]
pub struct App {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) options: AppOptions,
    /// The configured servers and their pool; replaced when servers or consents change.
    pub(crate) servers: RwLock<ServerState>,
    pub(crate) active: Mutex<HashMap<String, crate::runs::active::Active>>,
    pub(crate) changes: broadcast::Sender<Change>,
    /// Runs left `running` by a process that died, found when the store opened.
    pub(crate) interrupted: Vec<String>,
    /// Server log lines into the runs that use the server.
    pub(crate) logs: crate::logs::LogRouter,
    /// The servers of `options.server_files`, read once when the application opened.
    pub(crate) files: ServerConfigs,
    /// The roots of the servers that configure none: the data folder's `files/`.
    pub(crate) roots: Vec<PathBuf>,
    /// OAuth logins: the data folder's vault, shared by the pool and the sign-in.
    pub(crate) auth: Arc<mcpflow_auth::Authenticator>,
    /// Questions of runs waiting for a person, answered by any front door.
    pub(crate) questions: Arc<crate::runs::asked::Questions>,
    /// The data folder whose `settings.json` names the sampling provider.
    pub(crate) home: PathBuf,
    /// The exporter runs use, replaced when the studio changes the settings.
    pub(crate) telemetry: RwLock<crate::telemetry::TelemetryState>,
}

#[derive(Clone)]
pub(crate) struct ServerState {
    pub(crate) configs: ServerConfigs,
    pub(crate) approvals: Approvals,
    pub(crate) pool: Arc<Pool>,
}

impl App {
    /// Opens the store in `home` (created if missing) with the servers it keeps plus
    /// `options.server_files`. Starts no process.
    /// The server files are read first: a file that cannot be had (too large, not JSON)
    /// is refused before the store is opened.
    pub fn open(home: &std::path::Path, options: AppOptions) -> Result<App> {
        Self::open_on(home, options, || Store::open(&home.join("store")))
    }

    /// [`App::open`] with the store in the PostgreSQL database at `url` (`--db`,
    /// `MCPFLOW_DB`) instead of the data folder's; the folder still holds the settings,
    /// the server files' root and the logins.
    pub fn open_database(home: &std::path::Path, url: &str, options: AppOptions) -> Result<App> {
        Self::open_on(home, options, || Store::connect(url))
    }

    /// [`App::open_database`] sharing the store with other processes (workers, other
    /// readers) instead of owning it: for the commands that read it.
    pub fn open_database_shared(home: &std::path::Path, url: &str, options: AppOptions) -> Result<App> {
        Self::open_on(home, options, || Store::connect_shared(url))
    }

    fn open_on(
        home: &std::path::Path,
        options: AppOptions,
        store: impl FnOnce() -> mcpflow_store::Result<mcpflow_store::Opened>,
    ) -> Result<App> {
        let files = read_server_files(&options)?;
        crate::home::prepare(home)?;
        let opened = store()?;
        let auth = app_authenticator(home, &options);
        Self::build(opened.store, opened.interrupted, options, files, (files_root(home), home.to_owned()), auth)
    }

    /// An application over an already open store; logins live in the data folder
    /// ([`crate::home::data_dir`]).
    pub fn with_store(store: Store, interrupted: Vec<String>, options: AppOptions) -> Result<App> {
        let files = read_server_files(&options)?;
        let auth = app_authenticator(&crate::home::data_dir(), &options);
        Self::build(store, interrupted, options, files, (Vec::new(), crate::home::data_dir()), auth)
    }

    fn build(
        store: Store,
        interrupted: Vec<String>,
        options: AppOptions,
        files: ServerConfigs,
        (roots, home): (Vec<PathBuf>, PathBuf),
        auth: Arc<mcpflow_auth::Authenticator>,
    ) -> Result<App> {
        let logs = crate::logs::LogRouter::new();
        let state = build_servers(&store, &files, &options, &logs, &roots, &auth)?;
        let (changes, _) = broadcast::channel(64);
        let telemetry = crate::telemetry::start_state(&options.telemetry, &home);
        Ok(App {
            inner: Arc::new(Inner {
                store,
                options,
                servers: RwLock::new(state),
                active: Mutex::new(HashMap::new()),
                changes,
                interrupted,
                logs,
                files,
                roots,
                auth,
                questions: Arc::default(),
                home,
                telemetry: RwLock::new(telemetry),
            }),
        })
    }

    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Runs that were left `running` by a process that died (now `interrupted`).
    pub fn interrupted(&self) -> &[String] {
        &self.inner.interrupted
    }

    /// Changes to blueprints and servers, as they happen.
    pub fn subscribe_changes(&self) -> broadcast::Receiver<Change> {
        self.inner.changes.subscribe()
    }

    pub(crate) fn changed(&self, change: Change) {
        let _ = self.inner.changes.send(change);
    }

    /// Tells this process's subscribers of a change another process made in a shared
    /// store (a team's database): a run a worker started, a blueprint saved elsewhere.
    pub fn announce(&self, change: Change) {
        self.changed(change);
    }

    /// The shared pool (servers start lazily, on first use).
    pub fn pool(&self) -> Arc<Pool> {
        self.server_state().pool
    }

    pub(crate) fn server_state(&self) -> ServerState {
        match self.inner.servers.read() {
            Ok(s) => s.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Rebuilds the server configs and the pool after servers or consents changed (here,
    /// or in a store another process shares: [`App::stored_servers_fingerprint`]). The old
    /// pool's processes are reaped once its runs let go of it.
    pub fn reload_servers(&self) -> Result<()> {
        let inner = &self.inner;
        let fresh = build_servers(&inner.store, &inner.files, &inner.options, &inner.logs, &inner.roots, &inner.auth)?;
        let old = {
            let mut guard = match self.inner.servers.write() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            std::mem::replace(&mut *guard, fresh)
        };
        tokio::spawn(async move { old.pool.shutdown().await });
        self.changed(Change::Servers);
        Ok(())
    }

    /// Ends every run in flight — a run waiting for a person is left waiting ([`App::park`]) —
    /// reaps every server process, and sends the last spans (telemetry is off after).
    pub async fn shutdown(&self) {
        // Runs waiting for a person are left waiting, to be answered after a restart.
        self.park_waiting().await;
        let tokens: Vec<_> = match self.inner.active.lock() {
            Ok(active) => active.values().map(|a| a.cancel.clone()).collect(),
            Err(_) => Vec::new(),
        };
        for t in tokens {
            t.cancel();
        }
        self.wait_idle().await;
        self.pool().shutdown().await;
        self.shutdown_telemetry().await;
    }

    /// Waits until no run is in flight.
    async fn wait_idle(&self) {
        while !self.active_runs().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

/// The logins of data folder `home`; on the command line, `AUTH_REQUIRED` names the
/// `auth login` that finds the server as this application does (`--store`, its files).
fn app_authenticator(home: &std::path::Path, options: &AppOptions) -> Arc<mcpflow_auth::Authenticator> {
    match options.front {
        crate::advice::Front::Studio => crate::authenticator::authenticator(home, options.front),
        crate::advice::Front::Cli => {
            let flags = format!(" --store{}", crate::authenticator::servers_flags(&options.server_files));
            crate::authenticator::authenticator_advising(
                home,
                Arc::new(move |server| crate::authenticator::cli_login_advice(server, &flags)),
            )
        }
    }
}

/// The servers of `options.server_files`, later files over earlier ones.
fn read_server_files(options: &AppOptions) -> Result<ServerConfigs> {
    let mut configs = ServerConfigs::new();
    for file in &options.server_files {
        configs.merge(ServerConfigs::read(file)?);
    }
    Ok(configs)
}

/// Server configs from the store, then the files; approvals from the store's consents,
/// then `--allow-server` names.
fn build_servers(
    store: &Store,
    files: &ServerConfigs,
    options: &AppOptions,
    logs: &crate::logs::LogRouter,
    roots: &[PathBuf],
    auth: &Arc<mcpflow_auth::Authenticator>,
) -> Result<ServerState> {
    let mut configs = stored_configs(store)?;
    configs.merge(files.clone());
    let mut approvals = if options.allow_all { Approvals::allow_all() } else { Approvals::new() };
    for consent in store.consents()? {
        approvals.approve_hash(consent.hash);
    }
    for name in &options.allow {
        approvals.approve_server(&configs, name)?;
    }
    let options = PoolOptions::default().with_log(logs.sender()).with_roots(roots.to_vec()).with_auth(auth.clone());
    let pool = Arc::new(Pool::new(configs.clone(), approvals.clone(), options));
    Ok(ServerState { configs, approvals, pool })
}

/// The default root of the studio and `mcpflow serve`: the data folder's `files/`,
/// created if missing. None (with a warning) when it cannot be made.
fn files_root(home: &std::path::Path) -> Vec<PathBuf> {
    let files = home.join("files");
    match crate::home::create_private(&files).and_then(|()| std::path::absolute(&files)) {
        Ok(files) => vec![files],
        Err(error) => {
            tracing::warn!(folder = %files.display(), %error, "cannot create the files folder; servers get no default root");
            Vec::new()
        }
    }
}

/// The servers kept in the store, as one `mcpServers` document.
pub(crate) fn stored_configs(store: &Store) -> Result<ServerConfigs> {
    let servers: Map<String, Value> = store.servers()?.into_iter().collect();
    if servers.is_empty() {
        return Ok(ServerConfigs::new());
    }
    let doc = serde_json::json!({ "mcpServers": servers });
    Ok(ServerConfigs::parse(&doc.to_string(), "the store")?)
}

/// What server `name` needs approved before it starts or is reached: a stdio server's
/// exact command line, or the endpoint of an HTTP server a blueprint declared that sends
/// a variable or is not loopback (`None`: it needs nothing).
pub(crate) fn consent(configs: &ServerConfigs, name: &str) -> Option<Consent> {
    Consent::of_server(configs, name)
}

impl From<mcpflow_store::Error> for AppError {
    fn from(e: mcpflow_store::Error) -> Self {
        AppError::Store(e.to_string())
    }
}
