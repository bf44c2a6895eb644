//! One live MCP session with one server: opening it (consent, `${env:NAME}`, spawn or
//! connect, the protocol era — `server/discover` of 2026-07-28, else the `initialize`
//! handshake of 2025-11-25 — and discovery), telling whether it still lives, and closing
//! it with its process reaped.

use super::asks::AskRoutes;
use super::discovery::{DiscoveryCell, List};
use super::handler::{Handler, Roots};
use super::hidden::Hidden;
use super::lines::LineTransport;
use super::notes::ServerNotes;
use super::probe::{Probe, probe_wait};
use super::process::{self, ChildProcess};
use super::progress::{ProgressRoutes, TaskRoutes};
use super::sampling::SampleRoutes;
use super::trace::{HttpTarget, TraceInfo};
use super::{Context, http};
use crate::error::{Error, Result};
use mcpflow_blueprint::ProtocolEra;
use mcpflow_config::Error as ConfigError;
use mcpflow_config::launch::{self, TransportKind, transport_kind};
use mcpflow_config::roots;
use mcpflow_config::{Origin, ServerEntry};
use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Connection {
    server: String,
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Handler>>>,
    pub notes: Arc<ServerNotes>,
    pub progress: Arc<ProgressRoutes>,
    pub tasks: Arc<TaskRoutes>,
    /// The calls in flight that take the server's questions (elicitation).
    pub asks: Arc<AskRoutes>,
    /// The roots this session answers `roots/list` with (also inside `input_required`).
    pub roots: Roots,
    /// The calls in flight that take the server's sampling requests.
    pub samples: Arc<SampleRoutes>,
    pub discovery: Arc<DiscoveryCell>,
    /// Compiled input schemas, to check a call's arguments before it is sent.
    pub args: super::args::ArgChecks,
    /// What the client spans of this session's requests say about it (`pool/trace.rs`).
    pub trace: Arc<TraceInfo>,
    child: Mutex<Option<ChildProcess>>,
    pid: Option<u32>,
    /// 2026-07-28 only: the `subscriptions/listen` stream that carries `list_changed`.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Connection {
    /// Starts or connects to the server and lists what it offers. Nothing is spawned for
    /// a stdio command that is not approved, nothing is sent to an HTTP server a blueprint
    /// declared that needs approval and has none.
    pub async fn open(server: &str, entry: &ServerEntry, origin: Origin, cx: &Context) -> Result<Self> {
        let notes = Arc::new(ServerNotes::new(server, cx.options.log.clone()));
        let roots = match entry {
            ServerEntry::Config(config) if let Some(own) = &config.roots => {
                // A blueprint's `servers` entry was not checked when it was read.
                let own = roots::parse_list(own)
                    .map_err(|message| ConfigError::ServerConfigInvalid { server: server.to_owned(), message })?;
                Roots::Own(Arc::new(own))
            }
            _ => Roots::Shared(cx.roots.clone()),
        };
        let handler = Handler {
            notes: notes.clone(),
            progress: Arc::new(ProgressRoutes::new(notes.clone())),
            tasks: Arc::new(TaskRoutes::default()),
            discovery: Arc::new(DiscoveryCell::new(server)),
            roots,
            asks: Arc::new(AskRoutes::new(notes.clone())),
            // The switch "may ask the model": off unless the entry says so.
            samples: Arc::new(SampleRoutes::new(matches!(entry, ServerEntry::Config(c) if c.sampling))),
            server: Arc::from(server),
            http_session: Arc::default(),
        };
        // Every message about this session goes through `notes.hide`: once the launch is
        // resolved, its `${env:NAME}` values and header values show as configured.
        let pin = match entry {
            ServerEntry::Config(config) => config.protocol,
            ServerEntry::InProcess(_) => None,
        };
        let hider = notes.clone();
        let start_failed =
            |message: String| Error::ServerStartFailed { server: server.to_owned(), message: hider.hide(message) };
        let max = cx.options.max_message_bytes;
        let mut http_target = None;
        let (running, mut child) = match entry {
            ServerEntry::InProcess(connect) => {
                let stream = connect().map_err(|e| start_failed(format!("cannot connect in process: {e}")))?;
                let (read, write) = tokio::io::split(stream);
                let transport = LineTransport::new(read, write, notes.clone(), max)
                    .reading_tool_lists(handler.discovery.task_tools().clone());
                (handshake(handler.clone(), transport, cx, server, pin).await, None)
            }
            ServerEntry::Config(config) => match transport_kind(server, config)? {
                TransportKind::Stdio => {
                    cx.approvals.check(server, config, origin)?;
                    let launch = launch::stdio(server, config, &cx.options.env)?;
                    notes.set_secrets(launch.secrets.clone());
                    let (child, stdout, stdin) = process::spawn(&launch, notes.clone())
                        .map_err(|e| start_failed(format!("cannot run `{}`: {e}", launch.command)))?;
                    let transport = LineTransport::new(stdout, stdin, notes.clone(), max)
                        .reading_tool_lists(handler.discovery.task_tools().clone());
                    (handshake(handler.clone(), transport, cx, server, pin).await, Some(child))
                }
                TransportKind::Http => {
                    // Before `${env:NAME}` is resolved: an unapproved secret is never read.
                    cx.approvals.check(server, config, origin)?;
                    let launch = launch::http(server, config, &cx.options.env)?;
                    notes.set_secrets(launch.secrets.clone());
                    http_target = Some(HttpTarget::new(&launch.url, handler.http_session.clone()));
                    // With the stored sign-in, if any; a 401 ends in `AUTH_REQUIRED` here.
                    (http::open(server, config, &launch, handler.clone(), cx, notes.clone(), pin).await?, None)
                }
            },
        };
        let running = match running {
            Ok(running) => running,
            Err(message) => {
                let mut message = message;
                if let Some(child) = child.as_mut() {
                    if let Some(status) = child.exited() {
                        message.push_str(&format!(" (the process exited: {status})"));
                    }
                    child.stop(Duration::ZERO).await;
                    child.stderr_drained(Duration::from_millis(500)).await;
                }
                return Err(start_failed(format!("{message}{}", notes.context())));
            }
        };
        let peer = running.peer().clone();
        // Workflow steps must see what the server says now, never a cached or stale answer.
        peer.set_response_cache_config(ClientCacheConfig::disabled()).await;
        let pid = child.as_ref().and_then(ChildProcess::pid);
        let trace = Arc::new(TraceInfo {
            server: handler.server.clone(),
            transport: if http_target.is_some() { "tcp" } else { "pipe" },
            http: http_target,
            protocol: peer.peer_info().map(|info| Arc::from(info.protocol_version.as_str())),
            notes: notes.clone(),
        });
        let connection = Connection {
            server: server.to_owned(),
            peer,
            service: Mutex::new(Some(running)),
            notes,
            progress: handler.progress,
            tasks: handler.tasks,
            asks: handler.asks,
            roots: handler.roots,
            samples: handler.samples,
            discovery: handler.discovery,
            args: super::args::ArgChecks::default(),
            trace,
            child: Mutex::new(child),
            pid,
            listener: Mutex::new(None),
        };
        connection.listen_for_changes(cx.options.connect_timeout).await;
        let listed =
            tokio::time::timeout(cx.options.connect_timeout, connection.discovery.load(&connection.peer)).await;
        let failure = match listed {
            Ok(Ok(())) => return Ok(connection),
            Ok(Err(error)) => format!("listing its tools failed: {error}"),
            Err(_) => format!("listing its tools took longer than {} ms", cx.options.connect_timeout.as_millis()),
        };
        connection.close(Duration::ZERO).await;
        Err(start_failed(format!("{failure}{}", connection.notes.context())))
    }

    /// In the 2026-07-28 era a server sends `notifications/*/list_changed` only on a
    /// `subscriptions/listen` stream the client opened; without one, a server whose tools
    /// change would keep its old list here. Opened for the lists the server says change;
    /// best effort: a server that refuses the stream still serves calls (logged).
    async fn listen_for_changes(&self, timeout: Duration) {
        let Some(info) = self.peer.peer_info() else { return };
        if info.protocol_version.has_initialize() {
            return;
        }
        let caps = &info.capabilities;
        let mut filter = SubscriptionFilter::builder();
        let mut any = false;
        if caps.tools.as_ref().and_then(|c| c.list_changed) == Some(true) {
            filter = filter.tools_list_changed();
            any = true;
        }
        if caps.resources.as_ref().and_then(|c| c.list_changed) == Some(true) {
            filter = filter.resources_list_changed();
            any = true;
        }
        if caps.prompts.as_ref().and_then(|c| c.list_changed) == Some(true) {
            filter = filter.prompts_list_changed();
            any = true;
        }
        if !any {
            return;
        }
        let server = self.server.as_str();
        let mut subscription = match tokio::time::timeout(timeout, self.peer.listen(filter.build())).await {
            Ok(Ok(subscription)) => subscription,
            Ok(Err(error)) => {
                tracing::warn!(server, %error, "the server refused `subscriptions/listen`: its lists are not refreshed when they change");
                return;
            }
            Err(_) => {
                tracing::warn!(
                    server,
                    timeout_ms = timeout.as_millis(),
                    "no answer to `subscriptions/listen`: the server's lists are not refreshed when they change"
                );
                return;
            }
        };
        let peer = self.peer.clone();
        let discovery = self.discovery.clone();
        let server = server.to_owned();
        let task = tokio::spawn(async move {
            // Ends with the session: `next` answers `None` or an error once the transport
            // closes. The refresh runs beside the loop, so a server announcing changes
            // faster than they can be listed never fills rmcp's 64-notification buffer
            // (which would end the stream); `changed` coalesces them into one refresh.
            loop {
                let list = match subscription.next().await {
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => List::Tools,
                    Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => List::Resources,
                    Ok(Some(ServerNotification::PromptListChangedNotification(_))) => List::Prompts,
                    Ok(Some(_)) => continue,
                    Ok(None) => break,
                    Err(error) => {
                        tracing::debug!(server, %error, "the `subscriptions/listen` stream ended");
                        break;
                    }
                };
                let (peer, discovery) = (peer.clone(), discovery.clone());
                tokio::spawn(async move { discovery.changed(&peer, list).await });
            }
        });
        *self.listener.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
    }

    /// Whether `tool` runs only as a task on this session: its listing says
    /// `execution.taskSupport: "required"`, or the server refused a plain call of it.
    pub fn runs_as_task(&self, tool: &str) -> bool {
        self.discovery.task_tools().contains(tool)
    }

    /// The server refused a plain call of `tool`: called as a task from now on.
    pub fn set_runs_as_task(&self, tool: &str) {
        self.discovery.task_tools().insert(tool);
    }

    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// False once the session ended (the process exited, the transport closed).
    pub fn is_alive(&self) -> bool {
        !self.peer.is_transport_closed()
            && self.child.lock().unwrap_or_else(PoisonError::into_inner).as_mut().is_none_or(|c| c.exited().is_none())
    }

    /// Why the session ended, for a call that was in flight.
    pub async fn ended(&self, detail: &str) -> Error {
        if let Some(fatal) = self.notes.fatal() {
            return fatal;
        }
        // The pipe closes while the process exits, a moment before its status can be
        // collected: give it a short while so the error can say how it ended.
        let mut exit_and_stderr = (String::new(), None);
        for _ in 0..20 {
            // `None`: not exited yet; `Some(None)`: no child to ask; `Some(Some(..))`: exited.
            let state = {
                let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
                match child.as_mut() {
                    Some(child) => child
                        .exited()
                        .map(|status| Some((format!(" (the process exited: {status})"), child.take_stderr_reader()))),
                    None => Some(None),
                }
            };
            match state {
                Some(Some(found)) => {
                    exit_and_stderr = found;
                    break;
                }
                Some(None) => break,
                None => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
        let (exit, stderr) = exit_and_stderr;
        // A process that died usually said why on stderr just before.
        process::drain(stderr, Duration::from_millis(200)).await;
        Error::ServerDisconnected {
            server: self.server.clone(),
            message: self.notes.hide(format!("{detail}{exit}{}", self.notes.context())),
        }
    }

    /// Ends the session: closes stdin (or the HTTP session), gives the process `grace` to
    /// exit, then terminates and reaps it.
    pub async fn close(&self, grace: Duration) {
        if let Some(listener) = self.listener.lock().unwrap_or_else(PoisonError::into_inner).take() {
            listener.abort();
        }
        let service = self.service.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(service) = service {
            // Stops the session loop, which closes the transport: stdin gets EOF.
            let _ = tokio::time::timeout(Duration::from_secs(3), service.cancel()).await;
        }
        let child = self.child.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(mut child) = child {
            child.stop(grace).await;
        }
    }
}

/// The lifecycle the pool asks rmcp for: `server/discover` at 2026-07-28 first; a server
/// that answers it with a JSON-RPC error other than the 2026-07-28 rejections (a 2025-11-25
/// server answers "method not found"), or does not answer within half the connect timeout
/// (at most rmcp's fixed 10 s; `pool/probe.rs`), gets the `initialize` handshake of
/// 2025-11-25 on the same connection.
///
/// An entry's `protocol` pins the era: `2025-11-25` sends `initialize` alone (no probe),
/// `2026-07-28` sends `server/discover` alone (no fallback).
fn lifecycle(pin: Option<ProtocolEra>) -> ClientLifecycleMode {
    match pin {
        None => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
        Some(ProtocolEra::V2025_11_25) => ClientLifecycleMode::Initialize,
        Some(ProtocolEra::V2026_07_28) => {
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
        }
    }
}

/// The protocol era's opening over `transport`, within the connect timeout; the error as
/// text.
/// `server/discover` gets at most half of that time (`pool/probe.rs`), so the fallback to
/// `initialize` happens within it too.
pub(super) async fn handshake<T>(
    handler: Handler,
    transport: T,
    cx: &Context,
    server: &str,
    pin: Option<ProtocolEra>,
) -> std::result::Result<RunningService<RoleClient, Handler>, String>
where
    T: rmcp::transport::Transport<RoleClient> + 'static,
{
    handshake_or_refusal(handler, transport, cx, server, pin).await.map_err(|failure| failure.message)
}

/// Why an opening failed: the message, and whether the server refused it for want of a
/// sign-in (HTTP 401, or 403 with a challenge: `pool/http_errors.rs`).
pub(super) struct Failure {
    pub message: String,
    pub sign_in: bool,
}

/// [`handshake`], telling a refusal for want of a sign-in apart (`pool/http.rs`).
pub(super) async fn handshake_or_refusal<T>(
    handler: Handler,
    transport: T,
    cx: &Context,
    server: &str,
    pin: Option<ProtocolEra>,
) -> std::result::Result<RunningService<RoleClient, Handler>, Failure>
where
    T: rmcp::transport::Transport<RoleClient> + 'static,
{
    tracing::debug!(server, "starting the MCP session");
    let timeout = cx.options.connect_timeout;
    // Pinned to 2026-07-28, `server/discover` is all there is: it has the whole timeout.
    let wait = if pin.is_some() { timeout.saturating_mul(2) } else { probe_wait(timeout) };
    // A server's error answers may quote a secret back: hidden (`pool/hidden.rs`).
    let transport = Probe::new(Hidden::new(transport, handler.notes.clone()), wait);
    let failed = |message: String| Failure { message, sign_in: false };
    match tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, lifecycle(pin))).await {
        Ok(Ok(running)) => Ok(running),
        Ok(Err(error)) => Err(match super::http_errors::words_of(&error) {
            Some(http) => Failure {
                message: http.words().to_owned(),
                sign_in: http.kind == super::http_errors::HttpFailure::AuthRequired,
            },
            None if pin == Some(ProtocolEra::V2026_07_28)
                && matches!(error, rmcp::service::ClientInitializeError::JsonRpcError(_)) =>
            {
                failed(format!(
                    "it does not speak MCP 2026-07-28, the protocol its entry pins (`\"protocol\": \"2026-07-28\"`): it \
                     refused `server/discover` ({}); set `\"protocol\": \"2025-11-25\"` or leave `protocol` out to \
                     let mcpflow choose",
                    handshake_error(&error)
                ))
            }
            None => failed(format!("the MCP handshake failed: {}", handshake_error(&error))),
        }),
        Err(_) => Err(failed(format!(
            "no answer to `server/discover` or `initialize` within {} ms",
            cx.options.connect_timeout.as_millis()
        ))),
    }
}

/// rmcp's opening error, with both phases when the `initialize` fallback failed too (an
/// HTTP failure is told in its own words instead: `pool/http_errors.rs`).
fn handshake_error(error: &rmcp::service::ClientInitializeError) -> String {
    match error {
        rmcp::service::ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            format!("{fallback} (after `server/discover` was refused: {discover})")
        }
        other => other.to_string(),
    }
}
