//! A server's requests for a model completion (MCP `sampling/createMessage`) routed to the
//! call they belong to, as its questions are (`asks.rs`): to the call this session started
//! last among those in flight. The request is answered through that call's
//! [`SampleSink`]: the engine records it on the step, refuses it when the server's switch
//! is off (`"sampling": true` absent from its entry: `SAMPLING_NOT_ALLOWED`, the provider
//! never hears of it), else asks the run's sampler. While a request is open the call's
//! timeout waits: the model's thinking time is not the server's.

// Sampling is deprecated upstream (SEP-2577) but servers still use it.
#![expect(deprecated)]

use mcpflow_engine::{CallError, SampleRequest, SampleSink};
use rmcp::model::{CreateMessageRequestParams, CreateMessageResult, ErrorCode, ErrorData};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::time::Instant;

/// The error code of a refused sampling request (the spec's "user rejected").
const REJECTED: ErrorCode = ErrorCode(-1);

/// The calls of one session that take its sampling requests, newest last, and the
/// server's switch.
#[derive(Default)]
pub(crate) struct SampleRoutes {
    calls: Mutex<Vec<(u64, Arc<Sampling>)>>,
    next: AtomicU64,
    /// The server's switch ("may ask the model"): `"sampling": true` on its entry.
    allowed: bool,
}

impl std::fmt::Debug for SampleRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleRoutes").field("allowed", &self.allowed).finish_non_exhaustive()
    }
}

/// One call's sink, and what its timeout needs to know: requests open, the last answer.
pub(crate) struct Sampling {
    sink: SampleSink,
    open: AtomicUsize,
    answered: Mutex<Option<Instant>>,
}

impl Sampling {
    /// Whether the call's deadline should wait: a request is open, or one was answered
    /// less than `timeout` ago (the time left is counted from the answer).
    pub fn extends(&self, timeout: std::time::Duration) -> Option<Instant> {
        if self.open.load(Ordering::Acquire) > 0 {
            return Some(Instant::now() + timeout);
        }
        let answered = *self.answered.lock().unwrap_or_else(PoisonError::into_inner);
        answered.map(|at| at + timeout).filter(|until| *until > Instant::now())
    }
}

impl SampleRoutes {
    pub fn new(allowed: bool) -> Self {
        SampleRoutes { allowed, ..Self::default() }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Arc<Sampling>)>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes this session's sampling requests to `sink` while the registration lives.
    pub fn register(self: &Arc<Self>, sink: SampleSink) -> SampleRegistration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let sampling = Arc::new(Sampling { sink, open: AtomicUsize::new(0), answered: Mutex::new(None) });
        self.calls().push((id, sampling.clone()));
        SampleRegistration { routes: self.clone(), id, sampling }
    }

    /// Asks the newest call's sampler; refuses when no call can take the request, when
    /// the server may not ask, or when nobody answered (the call then ends with why).
    pub async fn create_message(
        &self,
        server: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(sampling) = self.calls().last().map(|(_, s)| s.clone()) else {
            tracing::debug!(server, "a sampling request outside any workflow call is refused");
            return Err(ErrorData::new(
                REJECTED,
                "mcpflow answers sampling requests only during a workflow's call to this server",
                None,
            ));
        };
        self.answer(&sampling, server, params).await
    }

    /// Asks `sampling`'s sampler (one call's): the server's switch applies.
    pub async fn answer(
        &self,
        sampling: &Sampling,
        server: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(&params).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let request = SampleRequest {
            step: String::new(),
            path: Vec::new(),
            server: server.to_owned(),
            allowed: self.allowed,
            params,
            ask: None,
        };
        sampling.open.fetch_add(1, Ordering::AcqRel);
        let answer: Result<serde_json::Value, CallError> = (sampling.sink)(request).await;
        *sampling.answered.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        sampling.open.fetch_sub(1, Ordering::AcqRel);
        match answer {
            Ok(result) => serde_json::from_value(result).map_err(|e| {
                ErrorData::internal_error(format!("the model's answer is not a CreateMessageResult: {e}"), None)
            }),
            Err(e) => Err(ErrorData::new(REJECTED, format!("{}: {}", e.code, e.message), None)),
        }
    }
}

/// Removes its call's sink when dropped.
pub(crate) struct SampleRegistration {
    routes: Arc<SampleRoutes>,
    id: u64,
    pub sampling: Arc<Sampling>,
}

impl Drop for SampleRegistration {
    fn drop(&mut self) {
        self.routes.calls().retain(|(id, _)| *id != self.id);
    }
}
