//! Browser sign-ins the Servers panel can stop: each `auth_login` runs the app's sign-in
//! (`mcpflow_app::auth`: the flow, the vault, refreshing) as a task registered by
//! server, so `auth_cancel` can abort it — its loopback redirect listener closes with
//! it, and a late redirect finds nobody.

use super::dto::CommandError;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

type Waiting = HashMap<String, (u64, tokio::task::AbortHandle)>;

/// The sign-ins waiting on the browser, by server.
#[derive(Debug, Default)]
pub struct Logins {
    next: AtomicU64,
    waiting: Mutex<Waiting>,
}

impl Logins {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // A panic while holding this lock leaves only a map of abort handles behind.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs the sign-in `login` to `server` until it ends or [`Self::cancel`] stops it
    /// (`AUTH_CANCELLED`). A sign-in already waiting for the same server is stopped first.
    pub async fn run<T, E>(
        &self,
        server: &str,
        login: impl Future<Output = Result<T, E>> + Send + 'static,
    ) -> Result<T, CommandError>
    where
        T: Send + 'static,
        E: Into<CommandError> + Send + 'static,
    {
        let task = tokio::spawn(login);
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Some((_, previous)) = self.lock().insert(server.to_owned(), (id, task.abort_handle())) {
            previous.abort();
        }
        let result = task.await;
        {
            let mut waiting = self.lock();
            if waiting.get(server).is_some_and(|(at, _)| *at == id) {
                waiting.remove(server);
            }
        }
        match result {
            Ok(done) => done.map_err(Into::into),
            Err(e) if e.is_cancelled() => Err(CommandError::new(
                "AUTH_CANCELLED",
                format!("signing in to `{server}` was cancelled; press Sign in to start again"),
            )),
            Err(e) => Err(CommandError::new(
                "AUTH_FAILED",
                format!("signing in to `{server}` stopped unexpectedly ({e}); press Sign in to try again"),
            )),
        }
    }

    /// Stops the sign-in waiting for `server`; true when one was.
    pub fn cancel(&self, server: &str) -> bool {
        let found = self.lock().remove(server);
        found.map(|(_, handle)| handle.abort()).is_some()
    }

    /// Stops every sign-in still waiting (the studio is closing).
    pub fn abort_all(&self) {
        for (_, (_, handle)) in self.lock().drain() {
            handle.abort();
        }
    }
}
