//! The studio's connection to the service holding its data folder: one `api` session,
//! many calls in flight on it (answers matched by id), run events and changes as
//! notifications. When the service goes away (stopped, crashed, restarted), the calls
//! in flight fail with `SERVICE_UNAVAILABLE`, the runs followed end, and a supervisor
//! starts a service again (as `mcpflow serve` does) and reconnects, re-subscribes, and
//! reports `Blueprints` and `Servers` changed, since anything may have changed meanwhile.
//! [`Status`] says which of those it is, for the status bar.

use super::dto::{CommandError, EventBatch};
use super::local::EventStream;
use crate::{self as service, Hello, PROTOCOL, WireError};
use mcpflow_app::Change;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

/// How long a call waits for a connection while the service is being restarted.
const RECONNECT_WAIT: Duration = Duration::from_secs(10);
/// Batches of one run's events held for a slow reader; past it they are counted as lost.
const STREAM_BUFFER: usize = 256;
/// The longest pause between two attempts to reach a service again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// The connection, as the status bar tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Speaking to the service, process `pid`.
    Connected { pid: u32 },
    /// The service went away; starting one again and reconnecting. `message` says what
    /// happened.
    Reconnecting { message: String },
}

/// A connection to the service of one data folder that reconnects by itself. Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct Remote {
    shared: Arc<Shared>,
}

/// Which service a [`Remote`] speaks to.
#[derive(Debug, Clone)]
pub enum Target {
    /// The one of data folder `home`; `binary` (`mcpflow`) starts one when none answers.
    Folder { home: PathBuf, binary: Option<PathBuf> },
    /// A team service (`mcpflow service --db URL --listen ADDR`) at `addr`, which wants
    /// `token`; over TLS, its certificate checked with `tls`. Nothing starts one: its
    /// operator runs it.
    Team { addr: crate::endpoint::TeamAddress, token: crate::endpoint::Token, tls: Option<crate::tls::Connector> },
}

impl Target {
    /// "the mcpflow service of FOLDER", "the mcpflow team service at ADDR".
    fn describe(&self) -> String {
        match self {
            Target::Folder { home, .. } => format!("the mcpflow service of {}", home.display()),
            Target::Team { addr, .. } => format!("the mcpflow team service at {addr}"),
        }
    }

    /// Where to look for why it is not there.
    fn hint(&self) -> String {
        match self {
            Target::Folder { home, .. } => service::service_log_hint(home),
            Target::Team { .. } => "ask its operator whether it runs (`mcpflow service --db URL --listen ADDR`)".into(),
        }
    }
}

#[derive(Debug)]
struct Shared {
    target: Target,
    /// Who this is, in the hello (`studio`).
    client: String,
    current: watch::Sender<Option<Arc<Conn>>>,
    status: watch::Sender<Status>,
    changes: broadcast::Sender<Change>,
    stop: CancellationToken,
}

type Answer = oneshot::Sender<Result<Value, CommandError>>;

/// A call waiting for its answer; a streaming one also brings the channel its run's
/// batches go to.
enum Pending {
    Plain(Answer),
    Stream(Answer, mpsc::Sender<EventBatch>),
}

struct Followed {
    batches: mpsc::Sender<EventBatch>,
    /// Events lost because the reader fell behind, told with the next batch.
    lagged: u32,
}

/// One `api` session.
struct Conn {
    write: tokio::sync::Mutex<service::WriteHalf>,
    pending: Mutex<HashMap<u64, Pending>>,
    followed: Mutex<HashMap<String, Followed>>,
    next: AtomicU64,
    closed: CancellationToken,
    pid: u32,
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conn").field("pid", &self.pid).finish_non_exhaustive()
    }
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // What these locks hold (maps of senders) stays whole through a panic elsewhere.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unavailable(target: &Target, why: &str) -> CommandError {
    CommandError::new("SERVICE_UNAVAILABLE", format!("{} {why}; {}", target.describe(), target.hint()))
}

impl Remote {
    /// Connects to the service of data folder `home`, starting one with `binary`
    /// (`mcpflow`) when none answers; then keeps reconnecting until [`Remote::close`].
    /// The error says why no service could be reached (or that one refused).
    pub async fn connect(home: &Path, client: &str, binary: Option<PathBuf>) -> Result<Remote, WireError> {
        Remote::connect_to(Target::Folder { home: home.to_owned(), binary }, client).await
    }

    /// Connects to `target`'s service; then keeps reconnecting until [`Remote::close`].
    pub async fn connect_to(target: Target, client: &str) -> Result<Remote, WireError> {
        let (status, _) = watch::channel(Status::Reconnecting { message: "connecting".into() });
        let shared = Arc::new(Shared {
            target,
            client: client.to_owned(),
            current: watch::channel(None).0,
            status,
            changes: broadcast::channel(256).0,
            stop: CancellationToken::new(),
        });
        let first = open(&shared).await?;
        tokio::spawn(supervise(shared.clone(), first));
        Ok(Remote { shared })
    }

    /// The team service's address, when this speaks to one ([`Target::Team`]).
    pub fn team(&self) -> Option<String> {
        match &self.shared.target {
            Target::Team { addr, .. } => Some(addr.to_string()),
            Target::Folder { .. } => None,
        }
    }

    /// The connection's state now, and as it changes.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.shared.status.subscribe()
    }

    pub fn subscribe_changes(&self) -> broadcast::Receiver<Change> {
        self.shared.changes.subscribe()
    }

    /// Stops reconnecting and closes the session (the service goes on for its other
    /// clients, and exits when idle).
    pub fn close(&self) {
        self.shared.stop.cancel();
        if let Some(conn) = self.shared.current.send_replace(None) {
            conn.closed.cancel();
        }
    }

    /// The live connection, waiting for a reconnection for up to [`RECONNECT_WAIT`].
    async fn connection(&self) -> Result<Arc<Conn>, CommandError> {
        let mut current = self.shared.current.subscribe();
        let live = async {
            loop {
                if let Some(conn) = current.borrow_and_update().clone().filter(|c| !c.closed.is_cancelled()) {
                    return Some(conn);
                }
                if current.changed().await.is_err() {
                    return None;
                }
            }
        };
        match tokio::time::timeout(RECONNECT_WAIT, live).await {
            Ok(Some(conn)) => Ok(conn),
            _ => Err(unavailable(
                &self.shared.target,
                &format!("did not answer within {} s (it is being started again)", RECONNECT_WAIT.as_secs()),
            )),
        }
    }

    async fn request(
        &self,
        method: &str,
        params: Value,
        batches: Option<mpsc::Sender<EventBatch>>,
    ) -> Result<Value, CommandError> {
        let conn = self.connection().await?;
        let id = conn.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer, answered) = oneshot::channel();
        let pending = match batches {
            Some(batches) => Pending::Stream(answer, batches),
            None => Pending::Plain(answer),
        };
        locked(&conn.pending).insert(id, pending);
        let line = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        if let Err(e) = send(&conn, &line).await {
            locked(&conn.pending).remove(&id);
            return Err(unavailable(&self.shared.target, &format!("could not be written to ({e})")));
        }
        answered.await.unwrap_or_else(|_| Err(unavailable(&self.shared.target, "went away during the call")))
    }

    /// Calls a plain use case: its result, or its error as the service's application
    /// gave it.
    pub(crate) async fn call(&self, method: &str, params: Value) -> Result<Value, CommandError> {
        self.request(method, params, None).await
    }

    /// Calls a use case whose run streams back: the run, and its batches from now on.
    pub(crate) async fn stream(
        &self,
        method: &str,
        params: Value,
    ) -> Result<(super::dto::RunStarted, EventStream), CommandError> {
        let (batches, receiver) = mpsc::channel(STREAM_BUFFER);
        let value = self.request(method, params, Some(batches)).await?;
        let started = serde_json::from_value(value).map_err(|e| {
            CommandError::new("SERVICE_MISMATCH", format!("the mcpflow service answered `{method}` unreadably: {e}"))
        })?;
        Ok((started, EventStream::remote(receiver)))
    }
}

async fn send(conn: &Conn, message: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    conn.write.lock().await.write_all(&line).await
}

/// One attempt: connect (starting a service when none answers and a binary is known),
/// read on a task of its own, subscribe to changes; then it is the current connection.
async fn open(shared: &Arc<Shared>) -> Result<Arc<Conn>, WireError> {
    let hello = Hello {
        mcpflow: PROTOCOL,
        session: "api".into(),
        client: shared.client.clone(),
        options: Vec::new(),
        token: None,
    };
    let (home, binary) = match &shared.target {
        Target::Folder { home, binary } => (home, binary),
        Target::Team { addr, token, tls } => {
            // The hello carries the token: `connect_team` puts the connection's in it.
            let (read, write, welcome) = service::connect_team(addr, token.clone(), tls.as_ref(), &hello).await?;
            return opened(shared, read, write, welcome).await;
        }
    };
    let connected = match service::connect(home, &hello).await? {
        Some(connected) => Some(connected),
        None => match binary {
            Some(binary) => {
                service::start_service(home, binary)
                    .map_err(|why| WireError { code: "SERVICE_UNAVAILABLE".into(), message: why })?;
                service::wait_for_service(home, &hello).await?
            }
            None => None,
        },
    };
    let Some((read, write, welcome)) = connected else {
        return Err(WireError {
            code: "SERVICE_UNAVAILABLE".into(),
            message: format!(
                "no mcpflow service answers for {}, and none could be started ({})",
                home.display(),
                service::service_log_hint(home)
            ),
        });
    };
    opened(shared, read, write, welcome).await
}

/// A connection past its welcome becomes the current one, subscribed to changes.
async fn opened(
    shared: &Arc<Shared>,
    read: tokio::io::BufReader<service::ReadHalf>,
    write: service::WriteHalf,
    welcome: service::Welcome,
) -> Result<Arc<Conn>, WireError> {
    let conn = Arc::new(Conn {
        write: tokio::sync::Mutex::new(write),
        pending: Mutex::new(HashMap::new()),
        followed: Mutex::new(HashMap::new()),
        next: AtomicU64::new(0),
        closed: CancellationToken::new(),
        pid: welcome.pid,
    });
    tokio::spawn(read_loop(conn.clone(), read, shared.changes.clone(), shared.target.clone()));
    shared.current.send_replace(Some(conn.clone()));
    let remote = Remote { shared: shared.clone() };
    if let Err(e) = remote.call("subscribe", json!({})).await {
        conn.closed.cancel();
        return Err(WireError { code: e.code, message: e.message });
    }
    shared.status.send_replace(Status::Connected { pid: welcome.pid });
    Ok(conn)
}

/// Watches the connection; when it goes, starts a service again and reconnects (with a
/// growing pause between attempts) until the remote is closed.
async fn supervise(shared: Arc<Shared>, mut conn: Arc<Conn>) {
    loop {
        tokio::select! {
            () = shared.stop.cancelled() => return,
            () = conn.closed.cancelled() => {}
        }
        shared.current.send_replace(None);
        let pid = conn.pid;
        let message = match &shared.target {
            Target::Folder { .. } => format!(
                "the mcpflow service (pid {pid}) went away; runs it had in flight are marked interrupted. Starting it again…"
            ),
            Target::Team { addr, .. } => {
                format!("the mcpflow team service at {addr} went away; reconnecting (runs on its workers go on)…")
            }
        };
        shared.status.send_replace(Status::Reconnecting { message });
        let mut pause = Duration::from_millis(100);
        conn = loop {
            if shared.stop.is_cancelled() {
                return;
            }
            match open(&shared).await {
                Ok(conn) => break conn,
                Err(e) => {
                    shared.status.send_replace(Status::Reconnecting {
                        message: format!(
                            "the mcpflow service (pid {pid}) went away; reconnecting: {} [{}]",
                            e.message, e.code
                        ),
                    });
                    tokio::select! {
                        () = shared.stop.cancelled() => return,
                        () = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(MAX_BACKOFF);
                }
            }
        };
        // Whatever changed while nobody listened.
        let _ = shared.changes.send(Change::Blueprints);
        let _ = shared.changes.send(Change::Servers);
    }
}

/// Reads the session's lines until it ends: answers to their callers, run batches to
/// their streams, changes to the subscribers. Then every call still waiting fails and
/// every followed run's stream ends.
async fn read_loop(
    conn: Arc<Conn>,
    mut read: tokio::io::BufReader<service::ReadHalf>,
    changes: broadcast::Sender<Change>,
    target: Target,
) {
    loop {
        let line = tokio::select! {
            () = conn.closed.cancelled() => break,
            line = service::read_line_within(&mut read, service::rpc::MAX_ANSWER) => line,
        };
        let Ok(Some(line)) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            tracing::warn!("the mcpflow service sent a line that is not JSON; ignored");
            continue;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            answered(&conn, id, &message);
            continue;
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        match message.get("method").and_then(Value::as_str) {
            Some("notifications/changed") => {
                if let Some(change) = change_of(&params) {
                    let _ = changes.send(change);
                }
            }
            Some("run/events") => deliver(&conn, params),
            _ => {}
        }
    }
    conn.closed.cancel();
    let waiting: Vec<Pending> = locked(&conn.pending).drain().map(|(_, p)| p).collect();
    for pending in waiting {
        let (Pending::Plain(answer) | Pending::Stream(answer, _)) = pending;
        let _ = answer.send(Err(unavailable(&target, "went away during the call")));
    }
    locked(&conn.followed).clear();
}

/// The answer to call `id`: to its caller; a streaming call's run is followed from now.
fn answered(conn: &Conn, id: u64, message: &Value) {
    let Some(pending) = locked(&conn.pending).remove(&id) else { return };
    let result = match message.get("error") {
        Some(error) => Err(error_of(error)),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    };
    let answer = match pending {
        Pending::Plain(answer) => answer,
        Pending::Stream(answer, batches) => {
            if let Some(run_id) = result.as_ref().ok().and_then(|v| v.get("run_id")).and_then(Value::as_str) {
                locked(&conn.followed).insert(run_id.to_owned(), Followed { batches, lagged: 0 });
            }
            answer
        }
    };
    let _ = answer.send(result);
}

/// A batch of a followed run's events, to its stream. A reader that fell behind loses
/// batches (counted in the next one's `lagged`); the last batch always arrives.
fn deliver(conn: &Conn, params: Value) {
    let Some(run_id) = params.get("run_id").and_then(Value::as_str).map(str::to_owned) else { return };
    let Some(batch) = params.get("batch").cloned().and_then(|b| serde_json::from_value::<EventBatch>(b).ok()) else {
        return;
    };
    let mut followed = locked(&conn.followed);
    let Some(stream) = followed.get_mut(&run_id) else { return };
    let mut batch = batch;
    batch.lagged = batch.lagged.saturating_add(stream.lagged);
    if batch.done {
        let batches = followed.remove(&run_id).map(|f| f.batches);
        if let Some(batches) = batches {
            tokio::spawn(async move { batches.send(batch).await });
        }
        return;
    }
    match stream.batches.try_send(batch) {
        Ok(()) => stream.lagged = 0,
        Err(mpsc::error::TrySendError::Full(lost)) => {
            let count = lost.events.0.as_array().map_or(0, Vec::len);
            stream.lagged =
                stream.lagged.saturating_add(u32::try_from(count).unwrap_or(u32::MAX)).saturating_add(lost.lagged);
        }
        Err(mpsc::error::TrySendError::Closed(_)) => {
            followed.remove(&run_id);
        }
    }
}

/// The service's error as the application gave it (`error.data` is the whole
/// [`CommandError`]; an older or foreign service gives at least `data.code`).
fn error_of(error: &Value) -> CommandError {
    if let Some(full) = error.get("data").cloned().and_then(|d| serde_json::from_value::<CommandError>(d).ok()) {
        return full;
    }
    let code = error.pointer("/data/code").and_then(Value::as_str).unwrap_or("SERVICE_ERROR");
    let message = error.get("message").and_then(Value::as_str).unwrap_or("the mcpflow service refused the call");
    CommandError::new(code, message)
}

fn change_of(params: &Value) -> Option<Change> {
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    match params.get("what").and_then(Value::as_str)? {
        "blueprints" => Some(Change::Blueprints),
        "servers" => Some(Change::Servers),
        "runs" => Some(Change::RunStarted {
            run_id: text("run_id")?,
            blueprint: text("blueprint").unwrap_or_default(),
            trigger: text("trigger").unwrap_or_default(),
            client: text("client"),
        }),
        _ => None,
    }
}
