//! `mcpflow serve --http`: the mediator over streamable HTTP at `/mcp`.
//!
//! Every request passes a guard first: it must carry one `Host` (two are 400: a proxy
//! and this server could each read a different one), naming this server (loopback names,
//! or the `--bind` address), an `Origin`, when a browser sends one, must be this
//! server's own (else 403: no DNS rebinding, no cross-site calls), and it must carry
//! `Authorization: Bearer <token>` (else 401). The token is compared in constant time.
//!
//! Slow or idle clients cannot hold the server ([`HttpLimits`]): a request's headers
//! must arrive within [`HEADER_READ_TIMEOUT`] (the same clock closes a kept-alive
//! connection that sends no next request), its whole body within [`BODY_READ_TIMEOUT`]
//! and at most [`MAX_BODY_BYTES`]; past [`MAX_CONNECTIONS`] open connections a new one
//! is answered 503 and closed at once. These bound reading requests only: an answer
//! streamed back (the progress of a long run) is never cut.

use super::Mediator;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use mcpflow_app::app::App;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// How long a client has to send a request's headers, from the moment the server waits
/// for them: on a new connection, and between requests on a kept-alive one (so this is
/// also the idle keep-alive timeout). Past it the connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request's whole body may take to arrive once its headers have. Past it the
/// answer is 408 `BODY_TIMEOUT` and the connection is closed.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest request body read (JSON-RPC messages; a 5 MB blueprint sent as a string
/// does not fit — save it as an object). Past it: 413 `BODY_TOO_LARGE`.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// Connections open at once. Past it a new connection is answered 503
/// `TOO_MANY_CONNECTIONS` and closed at once (not queued: a queue would let slow clients
/// hold honest ones in the kernel's backlog just the same).
pub const MAX_CONNECTIONS: usize = 256;
/// How long open connections get to finish when the server stops (runs in flight are
/// cancelled by then; a client still sending its headers is simply dropped after it), so
/// a stop signal is not held up by slow clients.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How to serve over HTTP.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen; loopback unless the user chose otherwise (`--bind`).
    pub addr: SocketAddr,
    /// The bearer token clients must send.
    pub token: String,
    /// Extra names clients may use in `Host` (beyond loopback names and the bind address).
    pub hosts: Vec<String>,
    /// Read timeouts and caps on connections and bodies.
    pub limits: HttpLimits,
}

/// What a client may hold of the server: read timeouts and caps. The defaults are the
/// constants of this module; tests shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// See [`BODY_READ_TIMEOUT`].
    pub body_read_timeout: Duration,
    /// See [`MAX_BODY_BYTES`].
    pub max_body_bytes: usize,
    /// See [`MAX_CONNECTIONS`] (at least 1).
    pub max_connections: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            header_read_timeout: HEADER_READ_TIMEOUT,
            body_read_timeout: BODY_READ_TIMEOUT,
            max_body_bytes: MAX_BODY_BYTES,
            max_connections: MAX_CONNECTIONS,
        }
    }
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
    /// Stops accepting requests, ends open sessions and waits (a few seconds at most)
    /// for open connections to close.
    pub async fn stop(self) -> std::io::Result<()> {
        self.stop.cancel();
        self.task.await.map_err(std::io::Error::other)?
    }

    /// Serves until the server fails or is stopped. Cancel-safe: [`HttpServer::stop`]
    /// may follow.
    pub async fn wait(&mut self) -> std::io::Result<()> {
        (&mut self.task).await.map_err(std::io::Error::other)?
    }
}

/// Binds and starts serving. Port 0 picks a free port (see [`HttpServer::addr`]).
pub async fn serve_http(app: App, options: HttpOptions) -> std::io::Result<HttpServer> {
    let listener = TcpListener::bind(options.addr).await?;
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
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_max_request_body_bytes(options.limits.max_body_bytes);
    let service =
        StreamableHttpService::new(move || Ok(mediator.clone()), Arc::new(LocalSessionManager::default()), config);
    // Layers run outside in: the guard first (it reads no body), then the body reader.
    let router = Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(options.limits, read_body))
        .layer(middleware::from_fn_with_state(guard, check));
    let task = tokio::spawn(accept(listener, router, options.limits, stop.clone()));
    Ok(HttpServer { addr, stop, task })
}

/// Accepts connections until `stop`, each served by hyper with the header read timeout,
/// at most `limits.max_connections` at once; then waits for open ones to finish.
async fn accept(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout).keep_alive(true);
    let max = limits.max_connections.clamp(1, Semaphore::MAX_PERMITS);
    let open = Arc::new(Semaphore::new(max));
    // Whether connections are being turned away now (logged once per such stretch).
    let mut full = false;
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!(%error, "could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            if !full {
                tracing::warn!(max, "turning connections away: too many are open");
                full = true;
            }
            turn_away(&stream, max);
            continue;
        };
        full = false;
        let _ = stream.set_nodelay(true);
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(router.clone()));
        let stop = stop.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
                }
            }
        });
    }
    let all = u32::try_from(max).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, open.acquire_many(all)).await;
    Ok(())
}

/// Answers a connection past the cap with 503, as far as its socket takes it without
/// waiting, and closes it.
fn turn_away(stream: &TcpStream, max: usize) {
    let body = serde_json::json!({ "error": { "code": "TOO_MANY_CONNECTIONS", "message":
        format!("mcpflow serves at most {max} connections at once; try again later") } })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\nretry-after: 1\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(answer.as_bytes());
}

/// Reads the whole request body within the body timeout and size limit, before the MCP
/// service sees the request.
async fn read_body(State(limits): State<HttpLimits>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body_bytes as u64) {
        return Refusal::too_large(limits.max_body_bytes).closing();
    }
    let read = tokio::time::timeout(limits.body_read_timeout, axum::body::to_bytes(body, limits.max_body_bytes));
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) if declared.is_none() => return Refusal::too_large(limits.max_body_bytes).closing(),
        Ok(Err(error)) => {
            return Refusal {
                status: StatusCode::BAD_REQUEST,
                code: "BODY_UNREADABLE",
                message: format!("the request body could not be read: {error}"),
            }
            .closing();
        }
        Err(_) => {
            let seconds = limits.body_read_timeout.as_secs_f64();
            return Refusal {
                status: StatusCode::REQUEST_TIMEOUT,
                code: "BODY_TIMEOUT",
                message: format!("the request body did not arrive whole within {seconds} s; send it at once"),
            }
            .closing();
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Err(refusal) = guard.admit(request.headers()) {
        return refusal.into_response();
    }
    next.run(request).await
}

impl Guard {
    fn admit(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let hosts = headers.get_all(header::HOST).iter().count();
        if hosts > 1 {
            return Err(Refusal {
                status: StatusCode::BAD_REQUEST,
                code: "HOST_REPEATED",
                message: format!("the request has {hosts} `Host` headers; send exactly one, naming this server"),
            });
        }
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

/// Whether `a` and `b` are equal, in a time that does not depend on where they differ
/// (their lengths are not secret).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
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

    fn too_large(max: usize) -> Self {
        Refusal {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            code: "BODY_TOO_LARGE",
            message: format!("the request body is larger than {max} bytes; send less at once"),
        }
    }

    /// The answer, with the connection closed after it (its body was not read whole).
    fn closing(self) -> Response {
        let mut response = self.into_response();
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        response
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": { "code": self.code, "message": self.message } });
        let mut response =
            (self.status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
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
    fn a_second_host_is_a_bad_request_even_when_both_are_ours() {
        let mut h = headers(&[(header::HOST, "127.0.0.1:8931"), (header::AUTHORIZATION, "Bearer secret")]);
        h.append(header::HOST, "localhost:8931".parse().unwrap());
        let refusal = guard().admit(&h).unwrap_err();
        assert_eq!((refusal.status, refusal.code), (StatusCode::BAD_REQUEST, "HOST_REPEATED"));
        assert!(refusal.message.contains("2 `Host` headers"), "{}", refusal.message);
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
