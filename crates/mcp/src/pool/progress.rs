//! Routes `notifications/progress` to the call that asked for them, by progress token, and
//! task status notifications (`notifications/tasks/status`, the 2026-07-28
//! `notifications/tasks`) to the call following that task, by task id.
//!
//! rmcp gives every request a progress token, but the token is known only once the request
//! is on its way, so a fast server's first notification may arrive before the call has
//! registered its sink; a few such early notifications are kept and handed over on
//! registration.
//!
//! A server decides how much progress it sends, and each notification is recorded on the
//! call's step, so each call is bounded here: [`BURST`] notifications at once, then
//! [`PER_SECOND`] (a token bucket), each message cut at [`MAX_MESSAGE`] bytes; the rest
//! are counted and reported in one note when the call ends ("N progress notifications
//! dropped from server X").

use super::LogStream;
use super::notes::{ServerNotes, cut};
use mcpflow_engine::{Progress, ProgressSink};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// Notifications kept for tokens nobody has registered (yet).
const EARLY: usize = 32;
/// Progress notifications one call passes on at once, and per second after that.
pub(crate) const BURST: f64 = 100.0;
pub(crate) const PER_SECOND: f64 = 5.0;
/// Longest progress message passed on; the rest of a longer one is cut.
pub(crate) const MAX_MESSAGE: usize = 1024;

pub(crate) struct ProgressRoutes {
    inner: Mutex<Routes>,
    /// Where the note of dropped notifications goes.
    notes: Arc<ServerNotes>,
}

#[derive(Default)]
struct Routes {
    sinks: HashMap<ProgressToken, Arc<CallProgress>>,
    early: VecDeque<ProgressNotificationParam>,
}

/// One call's sink and its budget.
struct CallProgress {
    sink: ProgressSink,
    budget: Mutex<Bucket>,
}

/// The token bucket of one call's progress, and how many it dropped.
struct Bucket {
    tokens: f64,
    at: Instant,
    dropped: u64,
}

impl Bucket {
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let secs = now.saturating_duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + secs * PER_SECOND).min(BURST);
        if self.tokens < 1.0 {
            self.dropped += 1;
            return false;
        }
        self.tokens -= 1.0;
        true
    }
}

impl CallProgress {
    /// Passes `params` on (its message cut) unless the call's budget is spent.
    fn pass(&self, params: ProgressNotificationParam) {
        if !self.budget.lock().unwrap_or_else(PoisonError::into_inner).take() {
            return;
        }
        let mut progress = progress(params);
        if let Some(message) = &mut progress.message {
            cut(message, MAX_MESSAGE);
        }
        // Called outside the lock: the sink is the caller's code.
        (self.sink)(progress);
    }
}

impl std::fmt::Debug for ProgressRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressRoutes").finish_non_exhaustive()
    }
}

impl ProgressRoutes {
    pub fn new(notes: Arc<ServerNotes>) -> Self {
        ProgressRoutes { inner: Mutex::default(), notes }
    }

    fn routes(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends the progress of `token` to `sink` until the registration is dropped.
    pub fn register(self: &Arc<Self>, token: ProgressToken, sink: ProgressSink) -> Registration {
        let call = Arc::new(CallProgress {
            sink,
            budget: Mutex::new(Bucket { tokens: BURST, at: Instant::now(), dropped: 0 }),
        });
        let early: VecDeque<ProgressNotificationParam> = {
            let mut routes = self.routes();
            routes.sinks.insert(token.clone(), call.clone());
            let (mine, others) = routes.early.drain(..).partition(|p| p.progress_token == token);
            routes.early = others;
            mine
        };
        for params in early {
            call.pass(params);
        }
        Registration { routes: self.clone(), token, call }
    }

    pub fn deliver(&self, params: ProgressNotificationParam) {
        let call = {
            let mut routes = self.routes();
            match routes.sinks.get(&params.progress_token) {
                Some(call) => call.clone(),
                None => {
                    if routes.early.len() == EARLY {
                        routes.early.pop_front();
                    }
                    routes.early.push_back(params);
                    return;
                }
            }
        };
        call.pass(params);
    }
}

fn progress(params: ProgressNotificationParam) -> Progress {
    Progress { progress: params.progress, total: params.total, message: params.message }
}

/// Unregisters its sink when dropped, and notes what the call's budget dropped.
pub(crate) struct Registration {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
    call: Arc<CallProgress>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.routes.routes().sinks.remove(&self.token);
        let dropped = self.call.budget.lock().unwrap_or_else(PoisonError::into_inner).dropped;
        if dropped > 0 {
            let server = self.routes.notes.server().to_owned();
            self.routes.notes.log(
                LogStream::Notification,
                format!(
                    "{dropped} progress notifications dropped from server {server} for one call: it sent more than \
                     {BURST} at once or {PER_SECOND} a second"
                ),
            );
        }
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
        let routes = Arc::new(ProgressRoutes::new(Arc::new(ServerNotes::new("s", None))));
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
