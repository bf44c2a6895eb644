//! Server log lines — stderr, stray stdout, MCP log messages — into the runs that use
//! the server, where the engine turns them into `Log` events (`[server] line`).
//!
//! The app's pool is shared by every run, so a line cannot name the run it belongs to.
//! It goes to the runs that have a call in flight on that server ([`Tracked`] counts
//! them); when none has, to each active run whose blueprint names that server in a step.
//! A blueprint with a step that names no server (a tool found by name) or a sub-workflow
//! hears every server, and a call routed by tool name counts as in flight on every
//! server. So with twenty runs sharing a server, a line written while one of them is
//! calling it reaches that run, not all twenty.
//!
//! Bounded everywhere: the pool rate-limits each server (`mcpflow_mcp`'s notes), the
//! channels are bounded and a full one drops the line, and one run takes at most
//! [`RUN_MAX_LINES`] lines and [`RUN_MAX_BYTES`] bytes of server lines, then one note that
//! the rest are dropped.

use mcpflow_blueprint::{Blueprint, Step, StepKind};
use mcpflow_engine::{CallError, CallRequest, CallTarget, Servers};
use mcpflow_mcp::ServerLog;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::sync::mpsc::{Receiver, Sender, channel};

/// Lines from the pools waiting to be routed, at most.
const ROUTER_QUEUE: usize = 4096;
/// Server lines one run takes, at most, in count and in bytes.
pub(crate) const RUN_MAX_LINES: u64 = 10_000;
pub(crate) const RUN_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// What a run listens to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Listen {
    /// Every server (a step names none, or a sub-workflow may use any).
    All,
    /// These servers only.
    Servers(BTreeSet<String>),
}

impl Listen {
    /// The servers `blueprint`'s steps (loop bodies included) name.
    pub(crate) fn of(blueprint: &Blueprint) -> Listen {
        let mut names = BTreeSet::new();
        if collect(&blueprint.steps, &mut names) { Listen::Servers(names) } else { Listen::All }
    }

    fn hears(&self, server: &str) -> bool {
        match self {
            Listen::All => true,
            Listen::Servers(names) => names.contains(server),
        }
    }
}

/// Adds the servers `steps` name to `out`; false when one of them could reach any server.
fn collect(steps: &[Step], out: &mut BTreeSet<String>) -> bool {
    for step in steps {
        let named = match &step.kind {
            StepKind::Tool(t) => t.server.as_deref(),
            StepKind::Resource(r) => Some(r.server.as_str()),
            StepKind::Prompt(p) => Some(p.server.as_str()),
            StepKind::Loop(l) => {
                if !collect(&l.steps, out) {
                    return false;
                }
                continue;
            }
            StepKind::Workflow(_) => None,
            StepKind::Transform(_) | StepKind::Switch(_) | StepKind::Wait(_) | StepKind::Input(_) => continue,
        };
        match named {
            Some(name) => {
                out.insert(name.to_owned());
            }
            None => return false,
        }
    }
    true
}

/// A run's place in the router: what it listens to, where its lines go, and when it had
/// calls in flight, by server (`None`: calls routed by tool name, on any server).
#[derive(Debug)]
struct Route {
    listen: Listen,
    tx: Sender<(String, String)>,
    busy: HashMap<Option<String>, Busy>,
    /// Lines and bytes sent to this run so far.
    lines: u64,
    bytes: u64,
}

impl Route {
    /// Sends `line` unless the run's share is used up; the line that reaches the limit
    /// is replaced by the note saying so. A full channel drops the line.
    fn send(&mut self, server: &str, line: &str) {
        if self.lines > RUN_MAX_LINES {
            return;
        }
        self.lines += 1;
        self.bytes += line.len() as u64;
        let line = if self.lines > RUN_MAX_LINES || self.bytes > RUN_MAX_BYTES {
            self.lines = RUN_MAX_LINES + 1;
            format!(
                "this run has received {RUN_MAX_LINES} lines or {} MiB of server output; further lines from any server are dropped",
                RUN_MAX_BYTES / (1024 * 1024)
            )
        } else {
            line.to_owned()
        };
        let _ = self.tx.try_send((server.to_owned(), line));
    }
}

/// Calls of one run on one server: how many are in flight, since when, and the last
/// stretch of time with calls in flight before this one (a line read during a call is
/// routed a moment later, when that call may have ended).
#[derive(Debug, Clone, Copy)]
struct Busy {
    calls: usize,
    since: Instant,
    last: Option<(Instant, Instant)>,
}

impl Busy {
    fn at(&self, t: Instant) -> bool {
        (self.calls > 0 && self.since <= t) || self.last.is_some_and(|(from, to)| from <= t && t <= to)
    }
}

impl Route {
    /// Whether this run had a call in flight on `server` at `t`.
    fn calling(&self, server: &str, t: Instant) -> bool {
        self.busy.iter().any(|(s, b)| s.as_deref().is_none_or(|s| s == server) && b.at(t))
    }
}

type Routes = Arc<Mutex<HashMap<String, Route>>>;

/// Sends a line to the runs that were calling its server when it was read, else to every
/// run that hears that server.
fn route(routes: &mut HashMap<String, Route>, log: &ServerLog) {
    let calling = routes.values().any(|r| r.listen.hears(&log.server) && r.calling(&log.server, log.at));
    for r in routes.values_mut() {
        if r.listen.hears(&log.server) && (!calling || r.calling(&log.server, log.at)) {
            r.send(&log.server, &log.line);
        }
    }
}

/// Hands out the pools' log sender and routes what arrives to the runs listening.
#[derive(Debug)]
pub(crate) struct LogRouter {
    tx: Sender<ServerLog>,
    /// Taken by the routing task when the first run joins (a run needs a runtime anyway).
    rx: Mutex<Option<Receiver<ServerLog>>>,
    routes: Routes,
}

impl LogRouter {
    pub(crate) fn new() -> Self {
        let (tx, rx) = channel(ROUTER_QUEUE);
        Self { tx, rx: Mutex::new(Some(rx)), routes: Arc::default() }
    }

    /// Where the pools send their servers' lines.
    pub(crate) fn sender(&self) -> Sender<ServerLog> {
        self.tx.clone()
    }

    /// Registers run `id`; the lines it hears arrive on the returned receiver as
    /// `(server, line)`. Call from inside the tokio runtime.
    pub(crate) fn join(&self, id: &str, listen: Listen) -> Receiver<(String, String)> {
        if let Some(mut rx) = self.rx.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let routes = self.routes.clone();
            tokio::spawn(async move {
                while let Some(log) = rx.recv().await {
                    route(&mut routes.lock().unwrap_or_else(PoisonError::into_inner), &log);
                }
            });
        }
        let (tx, rx) = channel(mcpflow_engine::driver::LOG_QUEUE);
        let route = Route { listen, tx, busy: HashMap::new(), lines: 0, bytes: 0 };
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), route);
        rx
    }

    /// `servers` as run `id` uses them: each call counts as in flight on its server
    /// while it runs, so that server's lines meanwhile go to this run.
    pub(crate) fn track(&self, id: &str, servers: Arc<dyn Servers>) -> Arc<dyn Servers> {
        Arc::new(Tracked { inner: servers, routes: self.routes.clone(), id: id.to_owned() })
    }

    /// Unregisters run `id` (it has ended).
    pub(crate) fn leave(&self, id: &str) {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }
}

/// A run's servers, counting its calls in flight in the router (see [`LogRouter::track`]).
struct Tracked {
    inner: Arc<dyn Servers>,
    routes: Routes,
    id: String,
}

/// One call in flight; dropping it (the call ended or was dropped) counts it out.
struct InFlight {
    routes: Routes,
    id: String,
    server: Option<String>,
}

impl InFlight {
    fn begin(routes: Routes, id: &str, server: Option<String>) -> Self {
        let now = Instant::now();
        if let Some(route) = routes.lock().unwrap_or_else(PoisonError::into_inner).get_mut(id) {
            let busy = route.busy.entry(server.clone()).or_insert(Busy { calls: 0, since: now, last: None });
            if busy.calls == 0 {
                busy.since = now;
            }
            busy.calls += 1;
        }
        InFlight { routes, id: id.to_owned(), server }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let now = Instant::now();
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(busy) = routes.get_mut(&self.id).and_then(|r| r.busy.get_mut(&self.server)) {
            busy.calls = busy.calls.saturating_sub(1);
            if busy.calls == 0 {
                busy.last = Some((busy.since, now));
            }
        }
    }
}

impl Servers for Tracked {
    fn call(
        &self,
        request: CallRequest,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<serde_json::Value, CallError>> + Send + '_>> {
        let server = match &request.target {
            CallTarget::Tool { server, .. } => server.clone(),
            CallTarget::Resource { server, .. } | CallTarget::Prompt { server, .. } => Some(server.clone()),
        };
        let in_flight = InFlight::begin(self.routes.clone(), &self.id, server);
        Box::pin(async move {
            let _in_flight = in_flight;
            self.inner.call(request).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpflow_blueprint::{Options, check_value};
    use serde_json::json;

    fn listen(doc: serde_json::Value) -> Listen {
        Listen::of(&check_value(doc, &Options::default()).blueprint.unwrap())
    }

    #[test]
    fn a_run_hears_the_servers_its_steps_name_loop_bodies_included() {
        let l = listen(json!({ "blueprint": 1, "id": "x", "steps": [
            { "id": "a", "kind": "tool", "server": "echo", "tool": "echo" },
            { "id": "r", "kind": "resource", "server": "everything", "uri": "demo://x" },
            { "id": "l", "kind": "loop", "for_each": [1], "steps": [
                { "id": "b", "kind": "prompt", "server": "memory", "prompt": "p" }
            ] },
            { "id": "t", "kind": "transform", "value": 1 }
        ] }));
        assert_eq!(l, Listen::Servers(["echo", "everything", "memory"].map(str::to_owned).into()));
        assert!(l.hears("memory") && !l.hears("cluster"));
    }

    #[test]
    fn a_tool_found_by_name_or_a_sub_workflow_hears_every_server() {
        let by_name = listen(json!({ "blueprint": 1, "id": "x", "steps": [
            { "id": "l", "kind": "loop", "for_each": [1], "steps": [{ "id": "a", "kind": "tool", "tool": "echo" }] }
        ] }));
        assert_eq!(by_name, Listen::All);
        let sub = listen(json!({ "blueprint": 1, "id": "x", "steps": [
            { "id": "w", "kind": "workflow", "workflow": "other" }
        ] }));
        assert_eq!(sub, Listen::All);
    }

    #[tokio::test]
    async fn lines_reach_the_runs_that_listen_until_they_leave() {
        let router = LogRouter::new();
        let mut echo = router.join("r1", Listen::Servers(["echo".to_owned()].into()));
        let mut all = router.join("r2", Listen::All);
        let log = |server: &str, line: &str| ServerLog {
            server: server.to_owned(),
            stream: mcpflow_mcp::LogStream::Stderr,
            line: line.to_owned(),
            at: Instant::now(),
        };
        router.sender().try_send(log("cluster", "c1")).unwrap();
        router.sender().try_send(log("echo", "e1")).unwrap();
        assert_eq!(all.recv().await.unwrap(), ("cluster".to_owned(), "c1".to_owned()));
        assert_eq!(all.recv().await.unwrap(), ("echo".to_owned(), "e1".to_owned()));
        assert_eq!(echo.recv().await.unwrap(), ("echo".to_owned(), "e1".to_owned()));
        router.leave("r1");
        router.sender().try_send(log("echo", "e2")).unwrap();
        assert_eq!(all.recv().await.unwrap(), ("echo".to_owned(), "e2".to_owned()));
        assert!(echo.recv().await.is_none(), "a run that left gets nothing more (its sender is gone)");
    }

    #[tokio::test]
    async fn a_line_goes_to_the_runs_calling_its_server_and_to_every_listener_when_none_is() {
        let router = LogRouter::new();
        let echo = || Listen::Servers(["echo".to_owned()].into());
        let (mut a, mut b, mut c) = (router.join("a", echo()), router.join("b", echo()), router.join("c", Listen::All));
        let log = |server: &str, line: &str| ServerLog {
            server: server.into(),
            stream: mcpflow_mcp::LogStream::Stderr,
            line: line.into(),
            at: Instant::now(),
        };
        let send = |server: &str, line: &str| router.sender().try_send(log(server, line)).unwrap();
        let got = |rx: &mut Receiver<(String, String)>| {
            let mut lines = Vec::new();
            while let Ok((_, line)) = rx.try_recv() {
                lines.push(line);
            }
            lines
        };
        let calling =
            |id: &str, server: Option<&str>| InFlight::begin(router.routes.clone(), id, server.map(str::to_owned));
        let settle = || tokio::time::sleep(std::time::Duration::from_millis(20));

        send("echo", "nobody calls");
        settle().await;
        assert_eq!(
            (got(&mut a), got(&mut b), got(&mut c)),
            (vec!["nobody calls".into()], vec!["nobody calls".into()], vec!["nobody calls".into()])
        );

        let call = calling("a", Some("echo"));
        send("echo", "during a's call");
        send("cluster", "cluster, nobody calls");
        settle().await;
        assert_eq!(got(&mut a), ["during a's call"]);
        assert!(got(&mut b).is_empty());
        assert_eq!(got(&mut c), ["cluster, nobody calls"], "c hears every server, and nobody was calling cluster");

        // A call routed by tool name may be on any server.
        let by_name = calling("c", None);
        send("echo", "a and c calling");
        settle().await;
        assert_eq!(
            (got(&mut a), got(&mut b), got(&mut c)),
            (vec!["a and c calling".into()], vec![], vec!["a and c calling".into()])
        );

        // A line read during a's call but routed after it ended is still a's.
        let read_during = log("echo", "read during, routed after");
        drop((call, by_name));
        router.sender().try_send(read_during).unwrap();
        settle().await;
        assert_eq!(
            (got(&mut a), got(&mut b), got(&mut c)),
            (vec!["read during, routed after".into()], vec![], vec!["read during, routed after".into()])
        );

        send("echo", "calls over");
        settle().await;
        assert_eq!((got(&mut a).len(), got(&mut b).len(), got(&mut c).len()), (1, 1, 1));
    }
}
