//! Server log lines — stderr, stray stdout, MCP log messages — into the runs that use
//! the server, where the engine turns them into `Log` events (`[server] line`).
//!
//! The app's pool is shared by every run, so a line cannot name the run it belongs to.
//! It goes to each active run whose blueprint names that server in a step; a blueprint
//! with a step that names no server (a tool found by name) or a sub-workflow hears
//! every server.

use mcpflow_blueprint::{Blueprint, Step, StepKind};
use mcpflow_mcp::ServerLog;
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

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
            StepKind::Transform(_) | StepKind::Switch(_) | StepKind::Wait(_) => continue,
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

type Routes = Arc<Mutex<HashMap<String, (Listen, UnboundedSender<(String, String)>)>>>;

/// Hands out the pools' log sender and routes what arrives to the runs listening.
#[derive(Debug)]
pub(crate) struct LogRouter {
    tx: UnboundedSender<ServerLog>,
    /// Taken by the routing task when the first run joins (a run needs a runtime anyway).
    rx: Mutex<Option<UnboundedReceiver<ServerLog>>>,
    routes: Routes,
}

impl LogRouter {
    pub(crate) fn new() -> Self {
        let (tx, rx) = unbounded_channel();
        Self { tx, rx: Mutex::new(Some(rx)), routes: Arc::default() }
    }

    /// Where the pools send their servers' lines.
    pub(crate) fn sender(&self) -> UnboundedSender<ServerLog> {
        self.tx.clone()
    }

    /// Registers run `id`; the lines it hears arrive on the returned receiver as
    /// `(server, line)`. Call from inside the tokio runtime.
    pub(crate) fn join(&self, id: &str, listen: Listen) -> UnboundedReceiver<(String, String)> {
        if let Some(mut rx) = self.rx.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let routes = self.routes.clone();
            tokio::spawn(async move {
                while let Some(log) = rx.recv().await {
                    let routes = routes.lock().unwrap_or_else(PoisonError::into_inner);
                    for (listen, tx) in routes.values() {
                        if listen.hears(&log.server) {
                            let _ = tx.send((log.server.clone(), log.line.clone()));
                        }
                    }
                }
            });
        }
        let (tx, rx) = unbounded_channel();
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), (listen, tx));
        rx
    }

    /// Unregisters run `id` (it has ended).
    pub(crate) fn leave(&self, id: &str) {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
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
        };
        router.sender().send(log("cluster", "c1")).unwrap();
        router.sender().send(log("echo", "e1")).unwrap();
        assert_eq!(all.recv().await.unwrap(), ("cluster".to_owned(), "c1".to_owned()));
        assert_eq!(all.recv().await.unwrap(), ("echo".to_owned(), "e1".to_owned()));
        assert_eq!(echo.recv().await.unwrap(), ("echo".to_owned(), "e1".to_owned()));
        router.leave("r1");
        router.sender().send(log("echo", "e2")).unwrap();
        assert_eq!(all.recv().await.unwrap(), ("echo".to_owned(), "e2".to_owned()));
        assert!(echo.recv().await.is_none(), "a run that left gets nothing more (its sender is gone)");
    }
}
