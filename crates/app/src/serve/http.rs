//! `mcpflow serve --http`: the mediator over streamable HTTP at `/mcp`.
//!
//! Every request passes a guard first: its `Host` must name this server (loopback names,
//! or the `--bind` address), an `Origin`, when a browser sends one, must be this
//! server's own (else 403: no DNS rebinding, no cross-site calls), and it must carry
//! `Authorization: Bearer <token>` (else 401). The token is compared in constant time.

use super::Mediator;
use crate::app::App;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen; loopback unless the user chose otherwise (`--bind`).
    pub addr: SocketAddr,
    /// The bearer token clients must send.
    pub token: String,
    /// Extra names clients may use in `Host` (beyond loopback names and the bind address).
    pub hosts: Vec<String>,
}

/// A fresh random token (256 bits, hex).
pub fn new_token() -> String {
    let a = uuid::Uuid::new_v4().simple().to_string();
    let b = uuid::Uuid::new_v4().simple().to_string();
    format!("{a}{b}")
}

/// The accepted `Host` values and the one accepted `Origin` family.
#[derive(Debug)]
struct Guard {
    token: String,
    hosts: Vec<String>,
    port: u16,
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    pub addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// Stops accepting requests and ends open sessions.
    pub async fn stop(self) -> std::io::Result<()> {
        self.stop.cancel();
        self.task.await.map_err(std::io::Error::other)?
    }

    /// Serves until the server fails or is stopped.
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.map_err(std::io::Error::other)?
    }
}

/// Binds and starts serving. Port 0 picks a free port (see [`HttpServer::addr`]).
pub async fn serve_http(app: App, options: HttpOptions) -> std::io::Result<HttpServer> {
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let addr = listener.local_addr()?;
    let stop = CancellationToken::new();
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()];
    if !addr.ip().is_unspecified() {
        hosts.push(match addr {
            SocketAddr::V4(a) => a.ip().to_string(),
            SocketAddr::V6(a) => format!("[{}]", a.ip()),
        });
    }
    hosts.extend(options.hosts.iter().cloned());
    hosts.dedup();
    let guard = Arc::new(Guard { token: options.token.clone(), hosts, port: addr.port() });
    let mediator = Mediator::new(app);
    // Our guard checks Host and Origin; rmcp's own host check would refuse the names
    // `--bind` adds, so it is turned off in favour of ours.
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .disable_allowed_hosts()
        .with_sse_keep_alive(Some(std::time::Duration::from_secs(15)));
    let service =
        StreamableHttpService::new(move || Ok(mediator.clone()), Arc::new(LocalSessionManager::default()), config);
    let router = Router::new().nest_service("/mcp", service).layer(middleware::from_fn_with_state(guard, check));
    let shutdown = stop.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener, router).with_graceful_shutdown(async move { shutdown.cancelled().await }).await
    });
    Ok(HttpServer { addr, stop, task })
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Err(refusal) = guard.admit(request.headers()) {
        return refusal.into_response();
    }
    next.run(request).await
}

impl Guard {
    fn admit(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !self.host_ok(host) {
            return Err(Refusal::forbidden(
                "HOST_REFUSED",
                format!("Host `{host}` is not this server; connect to 127.0.0.1:{} or localhost", self.port),
            ));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.origin_ok(origin) {
                return Err(Refusal::forbidden(
                    "ORIGIN_REFUSED",
                    format!("requests from the web page `{origin}` are refused"),
                ));
            }
        }
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("bearer ")));
        match presented {
            Some(token) if constant_time_eq(token.trim().as_bytes(), self.token.as_bytes()) => Ok(()),
            Some(_) => Err(Refusal::unauthorized("the bearer token is wrong")),
            None => Err(Refusal::unauthorized(
                "a bearer token is required: send `Authorization: Bearer <token>` (printed by `mcpflow serve`)",
            )),
        }
    }

    /// `host` or `host:port`, where the port (if given) is ours.
    fn host_ok(&self, value: &str) -> bool {
        let (name, port) = split_host(value);
        port.is_none_or(|p| p == self.port) && self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    /// Only a page served by this very address may call (there is none, but a browser
    /// extension or a tool opened at it would send this).
    fn origin_ok(&self, origin: &str) -> bool {
        let Some(rest) = origin.strip_prefix("http://") else { return false };
        let (name, port) = split_host(rest);
        port == Some(self.port) && self.hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }
}

/// Splits `name:port`, `[v6]:port`, `name` or `[v6]`.
fn split_host(value: &str) -> (&str, Option<u16>) {
    if value.starts_with('[') {
        return match value.find(']') {
            Some(end) => {
                let name = &value[..=end];
                let port = value[end + 1..].strip_prefix(':').and_then(|p| p.parse().ok());
                (name, port)
            }
            None => (value, None),
        };
    }
    match value.rsplit_once(':') {
        Some((name, port)) => match port.parse() {
            Ok(p) => (name, Some(p)),
            Err(_) => (value, Some(0)),
        },
        None => (value, None),
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Why the guard turned a request away.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn forbidden(code: &'static str, message: String) -> Self {
        Refusal { status: StatusCode::FORBIDDEN, code, message }
    }

    fn unauthorized(message: &str) -> Self {
        Refusal { status: StatusCode::UNAUTHORIZED, code: "UNAUTHORIZED", message: message.to_owned() }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": { "code": self.code, "message": self.message } });
        let mut response =
            (self.status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, axum::http::HeaderValue::from_static("Bearer"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard {
            token: "secret".into(),
            hosts: vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()],
            port: 8931,
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), v.parse().unwrap());
        }
        h
    }

    fn status(r: Result<(), Refusal>) -> Option<StatusCode> {
        r.err().map(|r| r.status)
    }

    #[test]
    fn loopback_host_with_the_token_is_admitted() {
        let h = headers(&[(header::HOST, "127.0.0.1:8931"), (header::AUTHORIZATION, "Bearer secret")]);
        assert_eq!(status(guard().admit(&h)), None);
        let h = headers(&[(header::HOST, "[::1]:8931"), (header::AUTHORIZATION, "Bearer secret")]);
        assert_eq!(status(guard().admit(&h)), None);
    }

    #[test]
    fn a_foreign_host_or_port_is_forbidden_even_with_the_token() {
        for host in ["evil.example:8931", "127.0.0.1:9999", "127.0.0.1.evil.example", ""] {
            let h = headers(&[(header::HOST, host), (header::AUTHORIZATION, "Bearer secret")]);
            assert_eq!(status(guard().admit(&h)), Some(StatusCode::FORBIDDEN), "{host}");
        }
    }

    #[test]
    fn a_foreign_origin_is_forbidden() {
        let h = headers(&[
            (header::HOST, "localhost:8931"),
            (header::ORIGIN, "https://evil.example"),
            (header::AUTHORIZATION, "Bearer secret"),
        ]);
        assert_eq!(status(guard().admit(&h)), Some(StatusCode::FORBIDDEN));
    }

    #[test]
    fn a_missing_or_wrong_token_is_unauthorized() {
        let h = headers(&[(header::HOST, "localhost:8931")]);
        assert_eq!(status(guard().admit(&h)), Some(StatusCode::UNAUTHORIZED));
        let h = headers(&[(header::HOST, "localhost:8931"), (header::AUTHORIZATION, "Bearer secreT")]);
        assert_eq!(status(guard().admit(&h)), Some(StatusCode::UNAUTHORIZED));
    }
}
