//! `mcpflow worker --health ADDR`: plain HTTP/1 for an orchestrator's probes (the
//! Kubernetes manifests in `deploy/` use these two paths). `GET /healthz` answers 200
//! while the process serves; `GET /readyz` answers 200 when the store's database answers
//! a query within [`READY_WAIT`], else 503 with why. Anything else is a 404.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use mcpflow_store::Store;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long `/readyz` waits for the database.
const READY_WAIT: Duration = Duration::from_secs(2);
/// How long a connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds `addr` and serves the probes in the background; returns the bound address.
pub async fn serve(addr: SocketAddr, store: Store) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot serve --health on {addr}: {e}; pick another address or port"))?;
    let bound = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let store = store.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let store = store.clone();
                    async move { Ok::<_, Infallible>(answer(&request, store).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .keep_alive(false)
                    .serve_connection(TokioIo::new(stream), service);
                if let Ok(Err(e)) = tokio::time::timeout(READ_TIMEOUT, connection).await {
                    tracing::debug!(error = %e, "a connection to the health endpoint failed");
                }
            });
        }
    });
    Ok(bound)
}

async fn answer(request: &Request<Incoming>, store: Store) -> Response<Full<Bytes>> {
    if request.method() != Method::GET {
        return text(StatusCode::METHOD_NOT_ALLOWED, "only GET\n".to_owned());
    }
    match request.uri().path() {
        "/healthz" => text(StatusCode::OK, "ok\n".to_owned()),
        "/readyz" => {
            let pinged = tokio::time::timeout(READY_WAIT, tokio::task::spawn_blocking(move || store.ping())).await;
            match pinged {
                Ok(Ok(Ok(()))) => text(StatusCode::OK, "ready\n".to_owned()),
                Ok(Ok(Err(e))) => text(StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {e}\n")),
                Ok(Err(e)) => text(StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {e}\n")),
                Err(_) => text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("not ready: the database did not answer within {} s\n", READY_WAIT.as_secs()),
                ),
            }
        }
        _ => text(StatusCode::NOT_FOUND, "not found: the paths are /healthz and /readyz\n".to_owned()),
    }
}

fn text(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
}
