//! One configured server: its session, started on first use and started again when the
//! last one ended (a crashed stdio process restarts on the next call), and its limit on
//! calls in flight (`max_concurrency`).

use super::Context;
use super::connection::Connection;
use super::discovery::{Discovery, DiscoveryCell};
use crate::error::{Error, Result};
use mcpflow_config::{Origin, ServerEntry};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

#[derive(Debug)]
pub(crate) struct Server {
    pub name: String,
    entry: ServerEntry,
    /// Who declared it, for consent.
    origin: Origin,
    limit: Option<Arc<Semaphore>>,
    /// The entry's `timeout_ms`.
    pub timeout: Option<Duration>,
    /// Held while a session starts, so concurrent first calls start one process.
    state: Mutex<State>,
    /// The lists of the latest session, kept apart from `state` so that reading them
    /// ([`Server::listed`]) never waits for a session starting or a call taking one.
    listed: std::sync::Mutex<Option<Arc<DiscoveryCell>>>,
}

#[derive(Debug)]
enum State {
    Idle,
    Live(Arc<Connection>),
    Closed,
}

impl Server {
    pub fn new(name: &str, entry: ServerEntry, origin: Origin) -> Self {
        let (limit, timeout) = match &entry {
            ServerEntry::Config(config) => (
                config.max_concurrency.map(|n| Arc::new(Semaphore::new(n.max(1) as usize))),
                config.timeout_ms.map(Duration::from_millis),
            ),
            ServerEntry::InProcess(_) => (None, None),
        };
        Server {
            name: name.to_owned(),
            entry,
            origin,
            limit,
            timeout,
            state: Mutex::new(State::Idle),
            listed: std::sync::Mutex::new(None),
        }
    }

    /// The live session, started (or started again) if needed.
    pub async fn connection(&self, cx: &Context) -> Result<Arc<Connection>> {
        let mut state = self.state.lock().await;
        match &*state {
            State::Closed => return Err(Error::ShutDown),
            State::Live(connection) if connection.is_alive() => return Ok(connection.clone()),
            State::Live(ended) => {
                tracing::info!(server = %self.name, "the server's session ended; starting it again");
                let ended = ended.clone();
                *state = State::Idle;
                Box::pin(ended.close(Duration::ZERO)).await;
            }
            State::Idle => {}
        }
        // Boxed: starting a session is a large future that the common case (a live
        // session) should not carry into every call.
        let opened = tokio::select! {
            opened = Box::pin(Connection::open(&self.name, &self.entry, self.origin, cx)) => opened?,
            () = cx.closing.cancelled() => return Err(Error::ShutDown),
        };
        let connection = Arc::new(opened);
        *self.listed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(connection.discovery.clone());
        *state = State::Live(connection.clone());
        Ok(connection)
    }

    /// A place among the calls in flight, when the server limits them.
    pub async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        match &self.limit {
            Some(limit) => limit.clone().acquire_owned().await.ok(),
            None => None,
        }
    }

    /// The entry it was configured with.
    pub fn entry(&self) -> &ServerEntry {
        &self.entry
    }

    /// What the server listed, when a session was started (its last one, if it ended
    /// since; kept up to date by `list_changed`). Starts nothing and never waits.
    pub fn listed(&self) -> Option<Arc<Discovery>> {
        self.listed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref().map(|cell| cell.get())
    }

    /// Whether the entry has `roots` of its own, `[]` too (the pool's defaults are not
    /// its roots).
    pub fn has_own_roots(&self) -> bool {
        matches!(&self.entry, ServerEntry::Config(config) if config.roots.is_some())
    }

    /// The live session, if one runs; starts nothing.
    pub async fn live(&self) -> Option<Arc<Connection>> {
        match &*self.state.lock().await {
            State::Live(connection) if connection.is_alive() => Some(connection.clone()),
            _ => None,
        }
    }

    pub async fn pid(&self) -> Option<u32> {
        match &*self.state.lock().await {
            State::Live(connection) if connection.is_alive() => connection.pid(),
            _ => None,
        }
    }

    /// Ends the session for good, reaping its process.
    pub async fn shutdown(&self, grace: Duration) {
        let previous = std::mem::replace(&mut *self.state.lock().await, State::Closed);
        if let State::Live(connection) = previous {
            connection.close(grace).await;
        }
    }
}
