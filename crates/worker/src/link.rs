//! One side of the line between a worker and its supervisor: messages out (queued, written
//! by a task or thread of the side's own), requests waiting for their reply, and the
//! other side's requests being served here.

use futures::future::BoxFuture;
use mcpflow_engine::CallError;
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

pub type Reply = Result<Value, CallError>;

type Waiter = Box<dyn FnOnce(Reply) + Send>;

/// One side's link. `Out`: the messages it sends.
pub struct Link<Out> {
    out: mpsc::UnboundedSender<Vec<u8>>,
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Waiter>>,
    /// The other side's requests being served here, each with its token: cancelled by the
    /// other side's `Cancel`, or when the line closes.
    served: Mutex<HashMap<u64, CancellationToken>>,
    closed: AtomicBool,
    _out: PhantomData<fn(Out)>,
}

impl<Out> std::fmt::Debug for Link<Out> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("closed", &self.closed.load(Ordering::Relaxed)).finish_non_exhaustive()
    }
}

fn gone() -> CallError {
    CallError::new(
        "WORKER_GONE",
        "the run's worker process and its supervisor lost each other (one of them stopped)",
        false,
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<Out: Serialize> Link<Out> {
    /// A link whose messages go, one line each, to `out`'s receiver.
    pub fn new(out: mpsc::UnboundedSender<Vec<u8>>) -> Self {
        Link {
            out,
            next: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
            served: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
            _out: PhantomData,
        }
    }

    /// Sends a message; once the line is closed, nothing is sent.
    pub fn send(&self, message: &Out) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        match serde_json::to_vec(message) {
            Ok(mut line) => {
                line.push(b'\n');
                let _ = self.out.send(line);
            }
            Err(e) => tracing::error!(error = %e, "a worker message could not be written"),
        }
    }

    /// A new request id.
    pub fn id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends request `message` (made with `id`) and waits for its reply. Dropped before
    /// the reply, it sends `cancel` so the other side stops serving it.
    pub fn request(self: &Arc<Self>, id: u64, message: &Out, cancel: Out) -> Asked<Out> {
        let (tx, rx) = oneshot::channel();
        self.wait_for(
            id,
            Box::new(move |reply| {
                let _ = tx.send(reply);
            }),
        );
        self.send(message);
        Asked { link: self.clone(), id, rx, cancel: Some(cancel) }
    }

    /// Sends request `message` and blocks this thread until its reply: for the engine's
    /// parts whose methods are not async (a journal's flush, a span's start). The reply
    /// is read by another thread, so this never waits on itself.
    pub fn request_blocking(&self, id: u64, message: &Out) -> Reply {
        let (tx, rx) = std::sync::mpsc::channel();
        self.wait_for(
            id,
            Box::new(move |reply| {
                let _ = tx.send(reply);
            }),
        );
        self.send(message);
        rx.recv().unwrap_or_else(|_| Err(gone()))
    }

    fn wait_for(&self, id: u64, waiter: Waiter) {
        if self.closed.load(Ordering::Acquire) {
            waiter(Err(gone()));
            return;
        }
        lock(&self.waiting).insert(id, waiter);
    }

    /// The reply to request `id`, from the other side (a reply no one waits for — its
    /// request was dropped — is let go).
    pub fn replied(&self, id: u64, reply: Reply) {
        let waiter = lock(&self.waiting).remove(&id);
        if let Some(waiter) = waiter {
            waiter(reply);
        }
    }

    /// Serves the other side's request `id` on a task of `runtime`: `serve` gets a token
    /// cancelled when the other side calls it off (or the line closes), and its result
    /// is sent as `reply(id, result)` — unless it was called off, when nothing is sent.
    pub fn serve(
        self: &Arc<Self>,
        runtime: &tokio::runtime::Handle,
        id: u64,
        serve: impl FnOnce(CancellationToken) -> BoxFuture<'static, Reply>,
        reply: fn(u64, Reply) -> Out,
    ) where
        Out: Send + 'static,
    {
        let token = CancellationToken::new();
        if self.closed.load(Ordering::Acquire) {
            token.cancel();
        }
        lock(&self.served).insert(id, token.clone());
        let work = serve(token.clone());
        let link = self.clone();
        runtime.spawn(async move {
            let result = work.await;
            lock(&link.served).remove(&id);
            if !token.is_cancelled() {
                link.send(&reply(id, result));
            }
        });
    }

    /// The other side called off its request `id`.
    pub fn cancel_served(&self, id: u64) {
        if let Some(token) = lock(&self.served).get(&id) {
            token.cancel();
        }
    }

    /// The line is closed (the other side stopped): every request waiting fails with
    /// `WORKER_GONE`, every request being served is cancelled, and nothing more is sent.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let waiting: Vec<Waiter> = lock(&self.waiting).drain().map(|(_, w)| w).collect();
        for waiter in waiting {
            waiter(Err(gone()));
        }
        for token in lock(&self.served).values() {
            token.cancel();
        }
    }
}

/// A request waiting for its reply.
pub struct Asked<Out: Serialize> {
    link: Arc<Link<Out>>,
    id: u64,
    rx: oneshot::Receiver<Reply>,
    cancel: Option<Out>,
}

impl<Out: Serialize> Asked<Out> {
    pub async fn reply(mut self) -> Reply {
        let reply = (&mut self.rx).await.unwrap_or_else(|_| Err(gone()));
        self.cancel = None;
        reply
    }
}

impl<Out: Serialize> Drop for Asked<Out> {
    fn drop(&mut self) {
        if let Some(cancel) = self.cancel.take() {
            lock(&self.link.waiting).remove(&self.id);
            self.link.send(&cancel);
        }
    }
}

/// Reads one line of at most `max` bytes (without its newline); `None` at the end.
/// A longer line is an error: the other side is not the program it should be.
pub fn read_line(input: &mut impl std::io::BufRead, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let n = std::io::BufRead::read_until(&mut std::io::Read::take(&mut *input, limit(max)), b'\n', &mut line)?;
    whole(line, n, max)
}

/// [`read_line`] for an async reader.
pub async fn read_line_async(
    input: &mut (impl tokio::io::AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    use tokio::io::AsyncBufReadExt;
    let mut line = Vec::new();
    let n = tokio::io::AsyncReadExt::take(&mut *input, limit(max)).read_until(b'\n', &mut line).await?;
    whole(line, n, max)
}

/// What is read at most for a line of `max` bytes: one more, to tell a longer one.
fn limit(max: usize) -> u64 {
    u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1)
}

/// The line read (`n` bytes), without its newline; an error when it was cut at `max`.
fn whole(mut line: Vec<u8>, n: usize, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    if n == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > max {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a message longer than {max} bytes")));
    }
    Ok(Some(line))
}
