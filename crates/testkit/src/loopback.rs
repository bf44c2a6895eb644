//! A fixture's server on a thread of its own: a current-thread tokio runtime serving a
//! listener on `127.0.0.1` until [`Served::stop`] (or drop). Stopping drops the runtime,
//! which ends every connection's task and closes its socket, and the listener with it: a
//! client is refused from then on. So a fixture works the same from a sync test and beside
//! any async runtime.

use axum::body::{Body, Bytes};
use std::future::Future;
use std::io;
use std::thread::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A server running on its thread.
#[derive(Debug)]
pub(crate) struct Served {
    stop: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl Served {
    /// Runs `serve` on `listener` (from [`bind`]), on a thread named `name`, until
    /// stopped.
    pub fn start<F, Fut>(listener: std::net::TcpListener, name: &str, serve: F) -> io::Result<Served>
    where
        F: FnOnce(tokio::net::TcpListener) -> Fut + Send + 'static,
        Fut: Future<Output = ()>,
    {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let thread = std::thread::Builder::new().name(name.to_owned()).spawn(move || {
            runtime.block_on(async move {
                tokio::select! {
                    () = serve(listener) => {}
                    () = stopped.cancelled() => {}
                }
            });
        })?;
        Ok(Served { stop, thread: Some(thread) })
    }

    /// Closes the port and the open connections, and waits until they are closed.
    pub fn stop(&mut self) {
        self.stop.cancel();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A listener on `127.0.0.1:port` (0: a port the system picks), for [`Served::start`].
pub(crate) fn bind(port: u16) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves `router` over HTTP/1.1 with hyper (through axum) on `listener`.
pub(crate) async fn serve_http(listener: tokio::net::TcpListener, router: axum::Router) {
    let _ = axum::serve(listener, router).await;
}

/// A request with its body read whole; `None` when the body is larger than `max` bytes or
/// could not be read.
pub(crate) async fn read_whole(request: axum::extract::Request, max: usize) -> Option<http::Request<Bytes>> {
    let (parts, body): (_, Body) = request.into_parts();
    let body = axum::body::to_bytes(body, max).await.ok()?;
    Some(http::Request::from_parts(parts, body))
}
