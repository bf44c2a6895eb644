//! One engine per data folder: the process that holds a data folder's store (`mcpflow
//! service`, or any front door that opened it) answers the other front doors on a local
//! endpoint, so they use its engine instead of failing on the store's lock.
//!
//! **Where.** A Unix domain socket in the data folder, [`SOCKET_FILE`], mode 0600 (made
//! under another name and renamed into place, so it is never reachable with wider
//! permissions), bound only by the process holding the store's lock: the socket and the
//! lock agree. A socket file nobody answers on is a leftover of a process that died, and
//! is replaced. Where there can be no socket (another platform, a path too long for one,
//! `MCPFLOW_ENDPOINT=tcp`), a loopback port whose number and token are in
//! [`ENDPOINT_FILE`], mode 0600, the same way; a hello over it must carry the token
//! ([`endpoint`] says when which).
//!
//! **What goes over it.** Newline-delimited JSON. A connection opens with one hello line
//! ([`Hello`], at most [`MAX_HELLO`] bytes) saying which session it wants, answered by one
//! line ([`Welcome`]):
//!
//! - `"mcp"`: from then on the connection is an MCP session (the stdio framing) with the
//!   service's mediator — the same tools `mcpflow serve` offers, on the service's store,
//!   servers and runs. `mcpflow serve` on stdio is then a bridge that copies bytes
//!   (`mcpflow_service::bridge`), so any number of MCP hosts share one engine.
//! - `"api"`: JSON-RPC 2.0 requests for the application's use cases ([`rpc`]), and
//!   notifications of changes for a client that subscribed.
//!
//! Why JSON-RPC and not MCP for the API: the API is the application's own use cases —
//! typed requests and answers between our own front doors — not tools a model chooses
//! from; MCP's `tools/call` would wrap every answer in content blocks and every change in
//! a tool-list notification. JSON-RPC 2.0 is the same framing MCP uses, so one reader
//! and one writer serve both kinds of session.
//!
//! This crate also holds what runs in the service besides the endpoint: [`daemon`] the
//! loop that fires scheduled runs (its pure planner in [`schedule`]), and the studio's one
//! client interface [`api::Api`] (in process, or [`api::Remote`] over this endpoint).
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod api;
pub mod daemon;
pub mod endpoint;
pub mod install;
pub mod rpc;
pub mod schedule;
pub mod team;
pub mod tls;

use endpoint::{Connection, Token};
pub use endpoint::{ReadHalf, WriteHalf};
use mcpflow_app::app::App;
use mcpflow_serve::Mediator;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio_util::sync::CancellationToken;

/// The endpoint's socket in the data folder.
pub const SOCKET_FILE: &str = "mcpflow.sock";
/// Where the loopback port and its token are written, when the endpoint is one.
pub const ENDPOINT_FILE: &str = "mcpflow.endpoint";
/// The version of what goes over the endpoint. 2: the `api` session answers the
/// studio's use cases, concurrently, with `run/events` notifications.
pub const PROTOCOL: u32 = 2;
/// Longest hello or welcome line.
pub const MAX_HELLO: u64 = 64 * 1024;
/// How long a connection may take to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once (MCP hosts, studios, CLI commands); past it a new one is
/// closed at once, so nothing that can connect (over the loopback port, another local
/// user too, until its hello fails) can make the service hold more.
pub const MAX_CONNECTIONS: usize = 256;

/// The endpoint of data folder `home`.
pub fn socket_path(home: &Path) -> PathBuf {
    home.join(SOCKET_FILE)
}

/// The loopback endpoint's file of data folder `home`.
pub fn endpoint_file(home: &Path) -> PathBuf {
    home.join(ENDPOINT_FILE)
}

/// The first line a client sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL`].
    pub mcpflow: u32,
    /// `mcp` or `api`.
    pub session: String,
    /// Which front door: `serve`, `cli`, `studio`.
    pub client: String,
    /// Options of the front door that the service would have to honour (a `serve` bridge
    /// started with `--servers` or `--allow-server`): the service refuses a session with
    /// any, since its servers and approvals are its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Over the loopback port, the token of [`ENDPOINT_FILE`] ([`connect`] adds it); not
    /// needed over the socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
}

/// The service's answer to a hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welcome {
    pub mcpflow: u32,
    pub ok: bool,
    /// The service's process id.
    pub pid: u32,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
}

/// An error over the endpoint: a stable code and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireError {
    pub code: String,
    pub message: String,
}

/// One line of at most `max` bytes, held to it while it is read: `Ok(None)` at the end of
/// the stream, an `InvalidData` error for a longer line.
pub(crate) async fn read_line_within<R: AsyncRead + Unpin>(
    read: &mut BufReader<R>,
    max: u64,
) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    if (&mut *read).take(max + 1).read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    if line.len() as u64 > max {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a line is longer than {max} bytes")));
    }
    Ok(Some(line))
}

/// Reads the hello (or welcome) line.
async fn read_hello_line<R: AsyncRead + Unpin>(read: &mut BufReader<R>) -> std::io::Result<String> {
    read_line_within(read, MAX_HELLO)
        .await?
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the connection closed before its hello"))
}

/// Whether a stored blueprint has a schedule (the service stays up to fire it).
pub fn has_schedules(app: &App) -> bool {
    app.blueprints().unwrap_or_default().iter().any(|meta| {
        matches!(app.store().blueprint(&meta.id), Ok(Some(stored)) if stored.json.get("schedule").is_some_and(|s| !s.is_null()))
    })
}

/// What the service is doing, for its idle exit.
#[derive(Debug, Default)]
pub struct Activity {
    connections: AtomicUsize,
    last: std::sync::Mutex<Option<Instant>>,
}

impl Activity {
    fn enter(self: &Arc<Self>) -> ActivityGuard {
        self.connections.fetch_add(1, Ordering::AcqRel);
        ActivityGuard(self.clone())
    }

    /// Open connections now.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::Acquire)
    }

    /// How long since the last connection closed (or the service started).
    pub fn idle_for(&self, started: Instant) -> Duration {
        let last = *self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        last.unwrap_or(started).elapsed()
    }
}

struct ActivityGuard(Arc<Activity>);

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
        *self.0.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
    }
}

/// Answers the endpoint of `app`'s data folder until `stop`: binds the socket (the app
/// holds the store, so no other process can) and serves each connection on its own task.
/// The socket file is removed when this returns.
pub async fn host(app: App, home: PathBuf, activity: Arc<Activity>, stop: CancellationToken) -> std::io::Result<()> {
    host_with(app, home, activity, stop, None).await
}

/// [`host`], and a client's `service/stop` cancels `stoppable` when no run is in flight
/// (`mcpflow service`: the studio takes the folder over from an idle service). `None`:
/// refused (a studio is a person's window, not to be closed by another process).
pub async fn host_with(
    app: App,
    home: PathBuf,
    activity: Arc<Activity>,
    stop: CancellationToken,
    stoppable: Option<CancellationToken>,
) -> std::io::Result<()> {
    let listener = endpoint::bind(&home)?;
    host_on(app, listener, Door::Folder(home), activity, stop, stoppable).await
}

/// Which endpoint a service answers on: the one of a data folder, or a team's.
#[derive(Debug, Clone)]
pub enum Door {
    /// The data folder's socket, or its loopback port and endpoint file.
    Folder(PathBuf),
    /// A team service's address (`mcpflow service --db URL --listen ADDR`).
    Team,
}

impl Door {
    /// Where a client finds the token this endpoint wants.
    fn token_hint(&self) -> String {
        match self {
            Door::Folder(home) => format!(
                "this mcpflow service answers on a loopback port and wants the token written in {}",
                endpoint_file(home).display()
            ),
            Door::Team => format!(
                "this mcpflow team service wants the token its operator gave it in {}",
                endpoint::TEAM_TOKEN_ENV
            ),
        }
    }

    /// What to do about a wrong token.
    fn token_advice(&self) -> &'static str {
        match self {
            Door::Folder(_) => "use the mcpflow of the user who runs the service, which reads it from there",
            Door::Team => "ask the service's operator for it and set the same in your environment",
        }
    }
}

/// Answers `listener` until `stop`, as [`host_with`] does.
pub async fn host_on(
    app: App,
    listener: endpoint::Listener,
    door: Door,
    activity: Arc<Activity>,
    stop: CancellationToken,
    stoppable: Option<CancellationToken>,
) -> std::io::Result<()> {
    let mediator = Mediator::new(app.clone());
    let local = api::Local::new(app.clone());
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => {
                let connection = match accepted {
                    Ok(connection) => connection,
                    Err(error) => {
                        tracing::warn!(%error, "accepting a connection on the service endpoint failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if connections.len() >= MAX_CONNECTIONS {
                    tracing::warn!(
                        "{MAX_CONNECTIONS} connections are open on the service endpoint; a new one was closed"
                    );
                    drop(connection);
                    continue;
                }
                let (local, mediator, guard) = (local.clone(), mediator.clone(), activity.enter());
                let (stop, stoppable, door) = (stop.clone(), stoppable.clone(), door.clone());
                connections.spawn(async move {
                    let _guard = guard;
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = serve_connection(local, mediator, connection, &door, stoppable) => {}
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections.shutdown().await;
    Ok(())
}

/// One connection: its hello, then its session. Over the loopback port the hello's token
/// is checked before anything else.
async fn serve_connection(
    local: api::Local,
    mediator: Mediator,
    connection: Connection,
    door: &Door,
    stoppable: Option<CancellationToken>,
) {
    // Over TLS, the handshake first (within the hello's time).
    let Ok(connection) = connection.handshake(HELLO_TIMEOUT).await else { return };
    let expected = connection.token().cloned();
    let (read, mut write) = connection.split();
    let mut read = BufReader::new(read);
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, read_hello_line(&mut read)).await {
        Ok(Ok(line)) => serde_json::from_str::<Hello>(&line).map_err(|e| format!("its hello is not one: {e}")),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("it said no hello within {} s", HELLO_TIMEOUT.as_secs())),
    };
    let refusal = match &hello {
        Err(why) => Some(WireError { code: "BAD_HELLO".into(), message: why.clone() }),
        Ok(hello) if expected.as_ref().is_some_and(|token| !token.admits(hello.token.as_ref())) => Some(WireError {
            code: "BAD_TOKEN".into(),
            message: format!(
                "{}, which the hello {}: {}",
                door.token_hint(),
                if hello.token.is_some() { "got wrong" } else { "did not carry" },
                door.token_advice()
            ),
        }),
        Ok(hello) if hello.mcpflow != PROTOCOL => Some(WireError {
            code: "PROTOCOL_MISMATCH".into(),
            message: format!(
                "this mcpflow service (pid {}) speaks endpoint protocol {PROTOCOL}, the client {}: they are different \
                 versions of mcpflow. Use the same mcpflow for both: the service exits by itself when idle, or stop it \
                 with `kill {}` (its runs in flight are then marked interrupted), then start again",
                std::process::id(),
                hello.mcpflow,
                std::process::id()
            ),
        }),
        Ok(hello) if !hello.options.is_empty() => Some(WireError {
            code: "SERVICE_OPTIONS_DIFFER".into(),
            message: format!(
                "this data folder is held by a running mcpflow (pid {}), which uses its own servers and approvals; \
                 {} cannot change them for one session. Configure the servers in the studio's Servers panel (or \
                 `mcpflow import`), or use another data folder (MCPFLOW_HOME) for a `serve` with options of its own",
                std::process::id(),
                hello.options.join(", ")
            ),
        }),
        Ok(hello) if hello.session != "mcp" && hello.session != "api" => Some(WireError {
            code: "BAD_HELLO".into(),
            message: format!("unknown session `{}`: `mcp` or `api`", hello.session),
        }),
        Ok(_) => None,
    };
    let welcome = Welcome {
        mcpflow: PROTOCOL,
        ok: refusal.is_none(),
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").into(),
        error: refusal,
    };
    let Ok(mut line) = serde_json::to_vec(&welcome) else { return };
    line.push(b'\n');
    if write.write_all(&line).await.is_err() || !welcome.ok {
        return;
    }
    let Ok(hello) = hello else { return };
    match hello.session.as_str() {
        "mcp" => {
            use rmcp::ServiceExt as _;
            match mediator.serve((read, write)).await {
                Ok(session) => {
                    let _ = session.waiting().await;
                }
                Err(error) => tracing::debug!(%error, "an MCP session over the service endpoint did not start"),
            }
        }
        _ => rpc::serve(local, read, write, stoppable).await,
    }
}

/// A connection to the endpoint, past its welcome: its halves and the welcome.
pub type Connected = (BufReader<ReadHalf>, WriteHalf, Welcome);

/// A connection to the service of data folder `home`, past its welcome: `Ok(None)` when
/// no service answers there (no endpoint, or a leftover one). Over the loopback port the
/// hello carries the token of the endpoint file.
pub async fn connect(home: &Path, hello: &Hello) -> Result<Option<Connected>, WireError> {
    let connection = match endpoint::connect(home).await {
        Ok(Some(connection)) => connection,
        Ok(None) => return Ok(None),
        Err(refused) => return Err(WireError { code: refused.code().into(), message: refused.message }),
    };
    greet(connection, hello, &format!("the mcpflow service of {}", home.display())).await.map(Some)
}

/// A connection to the team service at `to`, past its welcome; the hello carries
/// `token`, over TLS checked with `tls`.
pub async fn connect_team(
    to: &endpoint::TeamAddress,
    token: Token,
    tls: Option<&tls::Connector>,
    hello: &Hello,
) -> Result<Connected, WireError> {
    let what = format!("the mcpflow team service at {to}");
    let connection = endpoint::connect_team(to, token, tls).await.map_err(|e| WireError {
        code: "SERVICE_UNAVAILABLE".into(),
        message: format!("{what} did not answer: {e}"),
    })?;
    greet(connection, hello, &what).await
}

/// Says `hello` on `connection` (with its token, over TCP) and reads the welcome.
async fn greet(connection: Connection, hello: &Hello, what: &str) -> Result<Connected, WireError> {
    let mut hello = hello.clone();
    if let Some(token) = connection.token() {
        hello.token = Some(token.clone());
    }
    let (read, mut write) = connection.split();
    let mut read = BufReader::new(read);
    let lost = |e: std::io::Error| WireError {
        code: "SERVICE_UNAVAILABLE".into(),
        message: format!("{what} did not answer: {e}"),
    };
    let mut line = serde_json::to_vec(&hello).map_err(|e| lost(std::io::Error::other(e)))?;
    line.push(b'\n');
    write.write_all(&line).await.map_err(lost)?;
    let answer = tokio::time::timeout(HELLO_TIMEOUT, read_hello_line(&mut read))
        .await
        .map_err(|_| lost(std::io::Error::new(std::io::ErrorKind::TimedOut, "no welcome")))?
        .map_err(lost)?;
    let welcome: Welcome =
        serde_json::from_str(&answer).map_err(|e| lost(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    match &welcome.error {
        Some(error) if !welcome.ok => Err(error.clone()),
        _ => Ok((read, write, welcome)),
    }
}

/// `mcpflow serve` as a bridge: copies an MCP session between `input`/`output` (stdio)
/// and the service's endpoint until either side ends.
pub async fn bridge<R, W>(
    mut input: R,
    mut output: W,
    mut service_read: BufReader<ReadHalf>,
    mut service_write: WriteHalf,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    let upstream = async {
        let copied = tokio::io::copy(&mut input, &mut service_write).await;
        let _ = service_write.shutdown().await;
        copied
    };
    let downstream = async {
        let copied = tokio::io::copy_buf(&mut service_read, &mut output).await;
        let _ = output.flush().await;
        copied
    };
    // The client closing its side ends the session once the service has answered what
    // was sent; the service going away ends it at once.
    tokio::pin!(upstream, downstream);
    tokio::select! {
        result = &mut upstream => {
            result?;
            downstream.await.map(drop)
        }
        result = &mut downstream => match result {
            Ok(_) => Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "the mcpflow service closed the session (it stopped or restarted)",
            )),
            Err(e) => Err(e),
        },
    }
}

/// A front door's `api` session with the service.
pub struct Client {
    read: BufReader<ReadHalf>,
    write: WriteHalf,
    next: u64,
    /// The service's process id.
    pub pid: u32,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("pid", &self.pid).field("next", &self.next).finish_non_exhaustive()
    }
}

impl Client {
    /// An `api` session with the service of data folder `home`; `Ok(None)` when no
    /// service answers there.
    pub async fn connect(home: &Path, client: &str) -> Result<Option<Client>, WireError> {
        let hello =
            Hello { mcpflow: PROTOCOL, session: "api".into(), client: client.into(), options: Vec::new(), token: None };
        Ok(connect(home, &hello).await?.map(|(read, write, welcome)| Client { read, write, next: 0, pid: welcome.pid }))
    }

    /// Calls `method`; its result, or the service's error (`code` is the application's).
    /// Notifications that arrive meanwhile are dropped.
    pub async fn call(&mut self, method: &str, params: serde_json::Value) -> Result<serde_json::Value, WireError> {
        self.next += 1;
        let id = self.next;
        let request = serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut line = serde_json::to_vec(&request).map_err(|e| lost(&e.to_string()))?;
        line.push(b'\n');
        self.write.write_all(&line).await.map_err(|e| lost(&e.to_string()))?;
        loop {
            let message = self.next_message().await?;
            if message.get("id").and_then(serde_json::Value::as_u64) != Some(id) {
                continue; // a notification
            }
            if let Some(error) = message.get("error") {
                let code = error.pointer("/data/code").and_then(serde_json::Value::as_str).unwrap_or("SERVICE_ERROR");
                let text = error.get("message").and_then(serde_json::Value::as_str).unwrap_or("failed");
                return Err(WireError { code: code.into(), message: text.into() });
            }
            return Ok(message.get("result").cloned().unwrap_or(serde_json::Value::Null));
        }
    }

    /// The next notification (after `subscribe`): `{method, params}`.
    pub async fn notification(&mut self) -> Result<serde_json::Value, WireError> {
        loop {
            let message = self.next_message().await?;
            if message.get("id").is_none() {
                return Ok(message);
            }
        }
    }

    async fn next_message(&mut self) -> Result<serde_json::Value, WireError> {
        let answer = read_line_within(&mut self.read, rpc::MAX_ANSWER).await.map_err(|e| lost(&e.to_string()))?;
        let answer = answer.ok_or_else(|| lost("it closed the connection (it stopped or restarted)"))?;
        serde_json::from_str(&answer).map_err(|e| lost(&e.to_string()))
    }
}

fn lost(why: &str) -> WireError {
    WireError { code: "SERVICE_UNAVAILABLE".into(), message: format!("the mcpflow service: {why}") }
}

/// Frees data folder `home` from an idle service (`service/stop`), for a front door that
/// must hold the store itself (the studio, for now): `Ok(false)` when no service answers,
/// `Ok(true)` once the one that did stopped answering (its process may hold the store's
/// lock a moment longer), the service's refusal otherwise (runs in flight, or the folder
/// held by a studio).
pub async fn take_over(home: &Path) -> Result<bool, WireError> {
    let Some(mut client) = Client::connect(home, "studio").await? else { return Ok(false) };
    client.call("service/stop", serde_json::json!({})).await?;
    drop(client);
    // Its endpoint goes first; the store's lock a moment later, with its process (a front
    // door opening the store retries for a while).
    let deadline = Instant::now() + Duration::from_secs(15);
    while matches!(endpoint::connect(home).await, Ok(Some(_))) {
        if Instant::now() >= deadline {
            return Err(WireError {
                code: "SERVICE_UNAVAILABLE".into(),
                message: format!("the mcpflow service of {} was asked to stop and is still there", home.display()),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(true)
}

/// The service's log in the data folder; kept to one earlier file past this size.
const SERVICE_LOG_LIMIT: u64 = 5 * 1024 * 1024;

/// Where to read why the service of `home` did not answer: its `service.log` when one
/// was written, else how to see it (a service never started here wrote none).
pub fn service_log_hint(home: &Path) -> String {
    let log = home.join("service.log");
    if log.is_file() {
        format!("see {}", log.display())
    } else {
        format!(
            "no service.log was written in {0}; run `MCPFLOW_HOME={0} mcpflow service` in a terminal to see why it does not start",
            home.display()
        )
    }
}

/// Starts `binary service` (`mcpflow service`) for data folder `home` in a process group
/// of its own (a Ctrl-C to the front door that started it does not reach it), logging to
/// `service.log` there; it exits after `--idle` seconds with nothing to do
/// (`MCPFLOW_SERVICE_IDLE`, default 300). Two front doors starting one at once start two;
/// the store's lock lets one win, the other exits.
pub fn start_service(home: &Path, binary: &Path) -> Result<(), String> {
    start_service_with(home, binary, &[])
}

/// [`start_service`] with more arguments for `mcpflow service` (the telemetry flags of
/// the `mcpflow serve` that starts it: `--otlp URL`).
pub fn start_service_with(home: &Path, binary: &Path, args: &[String]) -> Result<(), String> {
    mcpflow_app::home::prepare(home).map_err(|e| format!("error[{}]: {e}", e.code()))?;
    let log = home.join("service.log");
    if std::fs::metadata(&log).is_ok_and(|m| m.len() > SERVICE_LOG_LIMIT) {
        let _ = std::fs::rename(&log, home.join("service.log.1"));
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    // The user's alone, whatever the umask.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let log_file = options.open(&log).map_err(|e| format!("cannot open {}: {e}", log.display()))?;
    let idle = std::env::var("MCPFLOW_SERVICE_IDLE").ok().filter(|v| v.parse::<u64>().is_ok());
    let mut command = std::process::Command::new(binary);
    command.arg("service").env("MCPFLOW_HOME", home);
    if let Some(idle) = idle {
        command.args(["--idle", &idle]);
    }
    command.args(args);
    command.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(log_file);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    // Windows: a process group of its own (CREATE_NEW_PROCESS_GROUP), and no console
    // window (CREATE_NO_WINDOW).
    #[cfg(windows)]
    std::os::windows::process::CommandExt::creation_flags(&mut command, 0x0000_0200 | 0x0800_0000);
    let mut child = command.spawn().map_err(|e| format!("cannot start `{} service`: {e}", binary.display()))?;
    // Reaped when it exits, whether the front door that started it is still there or not.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// How long a front door waits for the service it started to answer.
pub const START_WAIT: Duration = Duration::from_secs(10);

/// Connects to the service just started, trying for up to [`START_WAIT`]; `Ok(None)`
/// when it did not answer by then.
pub async fn wait_for_service(home: &Path, hello: &Hello) -> Result<Option<Connected>, WireError> {
    let deadline = tokio::time::Instant::now() + START_WAIT;
    loop {
        if let Some(connected) = connect(home, hello).await? {
            return Ok(Some(connected));
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `mcpflow` CLI beside executable `exe` (an installed package, a build's target
/// folder), or the first on `PATH`; `None` when there is none.
pub fn cli_beside(exe: &Path) -> Option<PathBuf> {
    let beside = exe.parent().map(|dir| dir.join("mcpflow")).filter(|p| p.is_file());
    beside.or_else(|| {
        std::env::var_os("PATH")
            .and_then(|paths| std::env::split_paths(&paths).map(|dir| dir.join("mcpflow")).find(|p| p.is_file()))
    })
}

#[cfg(test)]
mod tests {
    use super::service_log_hint;

    #[test]
    fn the_log_hint_names_service_log_only_when_one_was_written() {
        let home = tempfile::tempdir().expect("a temp dir");
        let none = service_log_hint(home.path());
        assert!(none.starts_with("no service.log was written in "), "{none}");
        assert!(none.contains(&format!("run `MCPFLOW_HOME={} mcpflow service`", home.path().display())), "{none}");
        std::fs::write(home.path().join("service.log"), "started\n").expect("write service.log");
        let some = service_log_hint(home.path());
        assert_eq!(some, format!("see {}", home.path().join("service.log").display()));
    }
}
