//! The client pool: one lazily started MCP session per configured server, routing by
//! tool name, per-call timeouts, cancellation and progress, per-server concurrency
//! limits, restart after a crash, and reaping on shutdown.
//!
//! | piece | file |
//! |---|---|
//! | a configured server: lazy start, restart, concurrency limit | `pool/server.rs` |
//! | one live session: consent, spawn/connect, `initialize`, discovery, close | `pool/connection.rs` |
//! | the era probe (`server/discover`) within the connect timeout | `pool/probe.rs` |
//! | one call: timeout, cancellation, progress, results as JSON | `pool/call.rs` |
//! | tool calls run as tasks: poll, progress, cancel, resume | `pool/tasks.rs` |
//! | call timeouts, one timer task for all calls | `pool/deadlines.rs` |
//! | tool name → server | `pool/routing.rs` |
//! | client capabilities, roots, notifications (progress, `list_changed`, logging) | `pool/handler.rs`, `pool/progress.rs` |
//! | tools/resources/prompts lists | `pool/discovery.rs` |
//! | stdio: bounded newline-delimited JSON-RPC, processes | `pool/lines.rs`, `pool/process.rs` |
//! | reading `tools/call` answers in one pass | `pool/answers.rs` |
//! | streamable HTTP, with the same answer bound | `pool/http.rs` |
//! | re-issuing a safe request whose response stream broke | `pool/reissue.rs` |
//! | a launch's secrets hidden from the servers' error answers | `pool/hidden.rs` |
//! | HTTP failures in words (refused, DNS, TLS, statuses, not MCP), secrets hidden | `pool/http_errors.rs` |
//! | client spans, `traceparent` in `_meta`, call metrics (telemetry on) | `pool/trace.rs` |
//!
//! Nothing starts before it is needed: creating a pool, reading configs or building a
//! catalog of an unapproved server starts no process. One broken server never breaks the
//! others: each has its own session, limit and error.

mod answers;
mod args;
mod asks;
mod call;
mod client_tasks;
mod connection;
mod deadlines;
mod discovery;
mod handler;
mod hidden;
mod http;
mod http_errors;
mod lines;
mod listed;
mod notes;
mod probe;
mod process;
mod progress;
mod reissue;
mod routing;
mod sampling;
mod server;
mod signed;
mod tasks;
mod trace;
mod weigh;

pub use call::STACK_META;
pub use discovery::Discovery;

use crate::catalog::Catalog;
use crate::consent::Approvals;
use crate::error::{Error, Result};
use deadlines::Deadlines;
use futures::future::BoxFuture;
use handler::SharedRoots;
use indexmap::IndexMap;
use mcpflow_config::Error as ConfigError;
use mcpflow_config::env::process_env;
use mcpflow_config::roots;
use mcpflow_config::{EnvLookup, ServerConfigs};
use mcpflow_engine::{CallError, CallRequest, Servers};
use serde_json::Value;
use server::Server;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;

/// One line a server wrote besides its MCP messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLog {
    pub server: String,
    pub stream: LogStream,
    pub line: String,
    /// When the line was read (before any MCP message that came after it on the same
    /// stream was handed on), so a router can tell which calls were in flight then.
    pub at: std::time::Instant,
}

/// Where a [`ServerLog`] line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogStream {
    /// The process's stderr (where stdio servers log).
    Stderr,
    /// Text on stdout that is not an MCP message (skipped by the protocol).
    Stdout,
    /// An MCP `notifications/message` log message.
    Notification,
}

/// How the pool behaves. `PoolOptions::default()` and then the `with_*` methods.
#[derive(Clone)]
#[non_exhaustive]
pub struct PoolOptions {
    /// Receives the stderr lines, stray stdout lines and MCP log messages of every server,
    /// within each server's budget (see `pool/notes.rs`: 100 lines or 128 KiB a second
    /// after a burst of 1,000 lines or 1 MiB, lines cut at 16 KiB, and a note saying how
    /// many were dropped). A line that finds the channel full is dropped, not waited for.
    /// Without it they go to `tracing` at debug level.
    pub log: Option<Sender<ServerLog>>,
    /// Where `${env:NAME}` values come from; the process environment by default.
    pub env: EnvLookup,
    /// Timeout of a call that sets none and whose server sets no `timeout_ms` (60 s, as
    /// the MCP TypeScript SDK).
    pub default_timeout: Duration,
    /// Longest wait for a server to start, answer `initialize` and list its tools (30 s).
    pub connect_timeout: Duration,
    /// Largest incoming message (and so tool result) accepted from a server (64 MiB). A
    /// larger one is discarded while it is read and the call fails with
    /// `OUTPUT_TOO_LARGE`. Over HTTP, plain JSON answers are also capped by rmcp at 16 MiB.
    pub max_message_bytes: usize,
    /// How long a stdio server may take to exit after its stdin closes on shutdown, before
    /// it is terminated (2 s).
    pub shutdown_grace: Duration,
    /// The roots (`roots/list`) of the servers whose entry has no `roots`: absolute
    /// folders, e.g. the folder of the blueprint being run. None by default.
    pub roots: Vec<PathBuf>,
    /// Signs HTTP servers in with their stored OAuth logins (refreshed as needed, never
    /// through a browser). Without it a server that answers 401 fails with `AUTH_REQUIRED`.
    pub auth: Option<Arc<mcpflow_auth::Authenticator>>,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions {
            log: None,
            env: process_env(),
            default_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(30),
            max_message_bytes: 64 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(2),
            roots: Vec::new(),
            auth: None,
        }
    }
}

impl PoolOptions {
    pub fn with_log(mut self, log: Sender<ServerLog>) -> Self {
        self.log = Some(log);
        self
    }

    pub fn with_env(mut self, env: EnvLookup) -> Self {
        self.env = env;
        self
    }

    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    pub fn with_max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }

    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    pub fn with_roots(mut self, roots: Vec<PathBuf>) -> Self {
        self.roots = roots;
        self
    }

    pub fn with_auth(mut self, auth: Arc<mcpflow_auth::Authenticator>) -> Self {
        self.auth = Some(auth);
        self
    }
}

impl fmt::Debug for PoolOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolOptions")
            .field("log", &self.log.is_some())
            .field("default_timeout", &self.default_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("roots", &self.roots)
            .field("auth", &self.auth.is_some())
            .finish_non_exhaustive()
    }
}

/// What opening a session needs from the pool.
#[derive(Debug)]
pub(crate) struct Context {
    pub approvals: Approvals,
    pub options: PoolOptions,
    /// Cancelled by [`Pool::shutdown`]: starts in progress give up.
    pub closing: CancellationToken,
    /// The deadlines of the calls in flight.
    pub deadlines: Deadlines,
    /// The roots of the servers that configure none.
    pub roots: Arc<SharedRoots>,
    /// `tasks/cancel` requests on their way (see `pool/tasks.rs`).
    pub cancels: tasks::Cancels,
}

/// MCP servers by name, started on first use. Cheap to clone; clones share the servers.
#[derive(Debug, Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    servers: IndexMap<String, Arc<Server>>,
    cx: Context,
}

impl Pool {
    /// A pool over `configs`. Starts nothing.
    pub fn new(configs: ServerConfigs, approvals: Approvals, options: PoolOptions) -> Self {
        let roots = Arc::new(SharedRoots::new(default_roots(&options.roots)));
        let servers = configs
            .iter()
            .map(|(name, entry)| (name.to_owned(), Arc::new(Server::new(name, entry.clone(), configs.origin(name)))))
            .collect();
        Pool {
            inner: Arc::new(Inner {
                servers,
                cx: Context {
                    approvals,
                    options,
                    closing: CancellationToken::new(),
                    deadlines: Deadlines::default(),
                    roots,
                    cancels: tasks::Cancels::default(),
                },
            }),
        }
    }

    /// The configured servers, in configuration order.
    pub fn server_names(&self) -> Vec<String> {
        self.inner.servers.keys().cloned().collect()
    }

    fn server(&self, name: &str) -> Result<&Arc<Server>> {
        self.inner
            .servers
            .get(name)
            .ok_or_else(|| Error::ServerNotConfigured { server: name.to_owned(), known: self.server_names() })
    }

    /// What `server` offers, starting it if needed ("test a connection").
    pub async fn discover(&self, server: &str) -> Result<Arc<Discovery>> {
        let connection = self.server(server)?.connection(&self.inner.cx).await?;
        Ok(connection.discovery.get())
    }

    /// A snapshot of every server's tools and prompts for the validator and the palette.
    /// Starts the servers that may start; those that cannot (not approved, bad config,
    /// failing) are listed as unreachable with the reason.
    pub async fn catalog(&self) -> Catalog {
        let cx = &self.inner.cx;
        let found = futures::future::join_all(self.inner.servers.iter().map(|(name, server)| async move {
            (name.clone(), server.connection(cx).await.map(|c| c.discovery.get()))
        }))
        .await;
        Catalog::from_results(found)
    }

    /// What is known of every server without starting any: the lists of those that were
    /// started (by a call, a connection test, [`Pool::catalog`]), and `NotListed` for the
    /// others. For validating while editing: opening a blueprint never starts a process.
    pub fn listed_catalog(&self) -> Catalog {
        Catalog::listed(self.inner.servers.iter().map(|(name, server)| (name.clone(), server.listed())))
    }

    /// Changes the roots of the servers whose entry has no `roots` (another blueprint's
    /// folder). The running ones among them are sent `notifications/roots/list_changed`
    /// (and ask `roots/list` again); nothing is sent when the roots are the same. A folder
    /// that cannot be a root (not absolute, `..` above `/`) is refused and nothing changes.
    pub async fn set_roots(&self, folders: &[PathBuf]) -> Result<()> {
        let roots = folders
            .iter()
            .map(|folder| {
                roots::from_path(folder).map_err(|message| ConfigError::ConfigInvalid {
                    origin: "the default roots".to_owned(),
                    message: format!("{}: {message}", folder.display()),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if !self.inner.cx.roots.set(roots) {
            return Ok(());
        }
        for server in self.inner.servers.values().filter(|s| !s.has_own_roots()) {
            if let Some(connection) = server.live().await
                && let Err(error) = connection.peer().notify_roots_list_changed().await
            {
                tracing::debug!(server = %server.name, %error, "could not send roots/list_changed");
            }
        }
        Ok(())
    }

    /// The secrets of every live session (their `${env:NAME}` values, header values and
    /// OAuth tokens, each with what stands for it), for hiding what leaves the pool another
    /// way than its messages (a recorded cassette) exactly as the pool hides them.
    pub async fn secrets(&self) -> mcpflow_config::launch::Secrets {
        let mut secrets = mcpflow_config::launch::Secrets::default();
        for server in self.inner.servers.values() {
            if let Some(connection) = server.live().await {
                secrets.join(&connection.notes.secrets());
            }
        }
        secrets
    }

    /// The process id of a stdio server's live process, if it runs.
    pub async fn pid(&self, server: &str) -> Option<u32> {
        self.inner.servers.get(server)?.pid().await
    }

    /// Ends every session: stdin is closed, each process gets
    /// [`PoolOptions::shutdown_grace`] to exit, then is terminated and reaped. Calls after
    /// this fail with `POOL_SHUT_DOWN`.
    pub async fn shutdown(&self) {
        // The tasks of cancelled calls are told before their sessions close.
        self.inner.cx.cancels.settle().await;
        self.inner.cx.closing.cancel();
        let grace = self.inner.cx.options.shutdown_grace;
        futures::future::join_all(self.inner.servers.values().map(|server| server.shutdown(grace))).await;
    }
}

/// The default roots as given; a folder that cannot be one is left out with a warning
/// (they come from the front door, never from a file).
fn default_roots(folders: &[PathBuf]) -> Vec<roots::Root> {
    folders
        .iter()
        .filter_map(|folder| {
            roots::from_path(folder)
                .inspect_err(|why| tracing::warn!(folder = %folder.display(), why, "not a root; left out"))
                .ok()
        })
        .collect()
}

impl Servers for Pool {
    fn call(&self, request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move { Pool::call(self, request).await.map_err(CallError::from) })
    }
}
