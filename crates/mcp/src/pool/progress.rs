//! Routes `notifications/progress` to the call that asked for them, by progress token, and
//! task status notifications (`notifications/tasks/status`, the 2026-07-28
//! `notifications/tasks`) to the call following that task, by task id.
//!
//! rmcp gives every request a progress token, but the token is known only once the request
//! is on its way, so a fast server's first notification may arrive before the call has
//! registered its sink; a few such early notifications are kept and handed over on
//! registration.

use mcpflow_engine::{Progress, ProgressSink};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

/// Notifications kept for tokens nobody has registered (yet).
const EARLY: usize = 32;

#[derive(Default)]
pub(crate) struct ProgressRoutes {
    inner: Mutex<Routes>,
}

#[derive(Default)]
struct Routes {
    sinks: HashMap<ProgressToken, ProgressSink>,
    early: VecDeque<ProgressNotificationParam>,
}

impl std::fmt::Debug for ProgressRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressRoutes").finish_non_exhaustive()
    }
}

impl ProgressRoutes {
    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the progress of `token` to `sink` until the registration is dropped.
    pub fn register(self: &Arc<Self>, token: ProgressToken, sink: ProgressSink) -> Registration {
        let early: VecDeque<ProgressNotificationParam> = {
            let mut routes = self.routes();
            routes.sinks.insert(token.clone(), sink.clone());
            let (mine, others) = routes.early.drain(..).partition(|p| p.progress_token == token);
            routes.early = others;
            mine
        };
        for params in early {
            sink(progress(params));
        }
        Registration { routes: self.clone(), token }
    }

    pub fn deliver(&self, params: ProgressNotificationParam) {
        let sink = {
            let mut routes = self.routes();
            match routes.sinks.get(&params.progress_token) {
                Some(sink) => sink.clone(),
                None => {
                    if routes.early.len() == EARLY {
                        routes.early.pop_front();
                    }
                    routes.early.push_back(params);
                    return;
                }
            }
        };
        // Called outside the lock: the sink is the caller's code.
        sink(progress(params));
    }
}

fn progress(params: ProgressNotificationParam) -> Progress {
    Progress { progress: params.progress, total: params.total, message: params.message }
}

/// Unregisters its sink when dropped.
pub(crate) struct Registration {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.routes.routes().sinks.remove(&self.token);
    }
}

/// Task status notifications waiting for their task's call, at most: a server that sends
/// them faster than they are read loses the surplus (the next poll tells the same).
const TASK_QUEUE: usize = 16;

/// The calls following a task, by task id.
#[derive(Default)]
pub(crate) struct TaskRoutes {
    inner: Mutex<HashMap<String, tokio::sync::mpsc::Sender<serde_json::Value>>>,
}

impl std::fmt::Debug for TaskRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRoutes").finish_non_exhaustive()
    }
}

impl TaskRoutes {
    fn routes(&self) -> std::sync::MutexGuard<'_, HashMap<String, tokio::sync::mpsc::Sender<serde_json::Value>>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The status notifications of task `id` (their params, a task), until the
    /// registration is dropped.
    pub fn register(self: &Arc<Self>, id: &str) -> (TaskRegistration, tokio::sync::mpsc::Receiver<serde_json::Value>) {
        let (tx, rx) = tokio::sync::mpsc::channel(TASK_QUEUE);
        self.routes().insert(id.to_owned(), tx);
        (TaskRegistration { routes: self.clone(), id: id.to_owned() }, rx)
    }

    /// Hands a status notification's params to the call following its task, if any.
    pub fn deliver(&self, params: serde_json::Value) {
        let Some(id) = params.get("taskId").and_then(serde_json::Value::as_str) else { return };
        let sender = self.routes().get(id).cloned();
        if let Some(sender) = sender {
            let _ = sender.try_send(params);
        }
    }
}

/// Stops routing a task's notifications when dropped.
pub(crate) struct TaskRegistration {
    routes: Arc<TaskRoutes>,
    id: String,
}

impl Drop for TaskRegistration {
    fn drop(&mut self) {
        self.routes.routes().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn early_and_later_notifications_reach_the_registered_sink_only_while_registered() {
        let routes = Arc::new(ProgressRoutes::default());
        let token = ProgressToken(NumberOrString::Number(1));
        let seen = Arc::new(Mutex::new(Vec::new()));
        routes.deliver(ProgressNotificationParam::new(token.clone(), 1.0));
        routes.deliver(ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(2)), 9.0));
        let sink_seen = seen.clone();
        let registration =
            routes.register(token.clone(), Arc::new(move |p: Progress| sink_seen.lock().unwrap().push(p.progress)));
        routes.deliver(ProgressNotificationParam::new(token.clone(), 2.0));
        drop(registration);
        routes.deliver(ProgressNotificationParam::new(token, 3.0));
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0]);
    }
}
