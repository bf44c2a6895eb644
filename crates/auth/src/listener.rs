//! The loopback redirect listener: a TCP listener on 127.0.0.1 with a port the system
//! picks, waiting for the browser's one `GET /callback?code=…&state=…`. Each connection
//! is served by hyper (HTTP/1, no keep-alive) and has [`READ_TIMEOUT`] to send its request,
//! whose head must stay under [`MAX_REQUEST_BYTES`] (else 431); other paths get a 404 and
//! the wait goes on; the callback is answered with a small page and ends the wait: with
//! the code when `state` matches, else with `AUTH_FAILED`.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::sync::Mutex;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// The read buffer for a request head (hyper's smallest): a head that fills it is refused.
pub const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// How long one connection may take to send its request head.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What the authorization server sent back through the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callback {
    pub code: String,
    /// RFC 9207's `iss`, when sent.
    pub iss: Option<String>,
}

/// Why the wait ended without a code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackError {
    /// Nothing arrived in time.
    Timeout,
    /// The callback arrived but cannot be used: the authorization server's `error`, a
    /// `state` that does not match, no `code`.
    Refused(String),
}

/// A bound listener; [`Self::redirect_uri`] is what the authorization server is told.
#[derive(Debug)]
pub struct Loopback {
    listener: TcpListener,
    port: u16,
}

impl Loopback {
    pub async fn bind() -> std::io::Result<Loopback> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        Ok(Loopback { listener, port })
    }

    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    /// Waits up to `timeout` for the callback carrying `state`.
    pub async fn wait(self, state: &str, timeout: Duration) -> Result<Callback, CallbackError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let accepted = tokio::time::timeout_at(deadline, self.listener.accept()).await;
            let (stream, _) = match accepted {
                Err(_) => return Err(CallbackError::Timeout),
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "the loopback listener could not accept a connection");
                    continue;
                }
                Ok(Ok(accepted)) => accepted,
            };
            // One connection at a time, each bounded in time and size: a stuck or hostile
            // local client delays the sign-in by READ_TIMEOUT at most.
            let read_until = deadline.min(tokio::time::Instant::now() + READ_TIMEOUT);
            if let Some(outcome) = serve(stream, state, read_until).await {
                return outcome;
            }
        }
    }
}

/// Serves one connection: `None` when it was not the callback (answered and closed).
async fn serve(stream: TcpStream, state: &str, until: tokio::time::Instant) -> Option<Result<Callback, CallbackError>> {
    let outcome = Mutex::new(None);
    let service = hyper::service::service_fn(|request: Request<Incoming>| {
        let (status, text, got) = answer(&request, state);
        if let Some(got) = got {
            *outcome.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(got);
        }
        std::future::ready(Ok::<_, Infallible>(page(status, &text)))
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .max_buf_size(MAX_REQUEST_BYTES)
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service);
    if let Ok(Err(e)) = tokio::time::timeout_at(until, connection).await {
        tracing::debug!(error = %e, "a connection to the loopback listener failed");
    }
    outcome.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The status and text a request gets, and the outcome when it was the callback.
fn answer(request: &Request<Incoming>, state: &str) -> (StatusCode, String, Option<Result<Callback, CallbackError>>) {
    if request.method() != Method::GET {
        return (StatusCode::BAD_REQUEST, "mcpflow expected the sign-in redirect here.".to_owned(), None);
    }
    if request.uri().path() != "/callback" {
        return (StatusCode::NOT_FOUND, "Nothing here.".to_owned(), None);
    }
    let outcome = callback(request.uri().query().unwrap_or_default(), state);
    let (status, text) = match &outcome {
        Ok(_) => (StatusCode::OK, "Signed in. You can close this window and go back to mcpflow.".to_owned()),
        Err(CallbackError::Refused(why)) => {
            (StatusCode::BAD_REQUEST, format!("Signing in failed: {why}. Go back to mcpflow."))
        }
        Err(CallbackError::Timeout) => (StatusCode::REQUEST_TIMEOUT, String::new()),
    };
    (status, text, Some(outcome))
}

fn callback(query: &str, state: &str) -> Result<Callback, CallbackError> {
    let mut code = None;
    let mut got_state = None;
    let mut iss = None;
    let mut error = None;
    let mut description = None;
    for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
        let slot = match &*key {
            "code" => &mut code,
            "state" => &mut got_state,
            "iss" => &mut iss,
            "error" => &mut error,
            "error_description" => &mut description,
            _ => continue,
        };
        *slot = Some(value.chars().take(2048).collect::<String>());
    }
    if got_state.as_deref() != Some(state) {
        return Err(CallbackError::Refused(
            "the redirect's `state` does not match the sign-in mcpflow started (a stale or forged redirect)".to_owned(),
        ));
    }
    if let Some(error) = error {
        let description = description.map(|d| format!(" ({d})")).unwrap_or_default();
        return Err(CallbackError::Refused(format!("the authorization server answered `{error}`{description}")));
    }
    match code {
        Some(code) if !code.is_empty() => Ok(Callback { code, iss }),
        _ => Err(CallbackError::Refused("the redirect carries no `code`".to_owned())),
    }
}

/// A small HTML page with `text`, never cached.
fn page(status: StatusCode, text: &str) -> Response<Full<Bytes>> {
    let text = text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcpflow</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><p>{text}</p></body></html>"
    );
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(hyper::header::CACHE_CONTROL, hyper::header::HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn get(port: u16, request: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        // The listener may close before reading everything: a refused write is fine.
        let _ = s.write_all(request).await;
        let mut out = String::new();
        let _ = s.read_to_string(&mut out).await;
        out
    }

    #[tokio::test]
    async fn the_code_comes_back_when_state_matches_and_other_paths_wait() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        assert_eq!(lb.redirect_uri(), format!("http://127.0.0.1:{port}/callback"));
        let wait = tokio::spawn(async move { lb.wait("s1", Duration::from_secs(20)).await });
        assert!(get(port, b"GET /favicon.ico HTTP/1.1\r\n\r\n").await.starts_with("HTTP/1.1 404"));
        let page = get(port, b"GET /callback?code=abc&state=s1&iss=http%3A%2F%2Fas HTTP/1.1\r\nHost: x\r\n\r\n").await;
        assert!(page.starts_with("HTTP/1.1 200") && page.contains("Signed in"), "{page}");
        let got = wait.await.unwrap().unwrap();
        assert_eq!(got, Callback { code: "abc".into(), iss: Some("http://as".into()) });
    }

    #[tokio::test]
    async fn a_bad_state_is_refused() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        let wait = tokio::spawn(async move { lb.wait("expected", Duration::from_secs(20)).await });
        let page = get(port, b"GET /callback?code=abc&state=forged HTTP/1.1\r\n\r\n").await;
        assert!(page.starts_with("HTTP/1.1 400"), "{page}");
        let Err(CallbackError::Refused(why)) = wait.await.unwrap() else { panic!("accepted a forged state") };
        assert!(why.contains("state"), "{why}");
    }

    #[tokio::test]
    async fn an_oversize_request_is_refused_and_the_wait_goes_on() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        let wait = tokio::spawn(async move { lb.wait("s", Duration::from_secs(20)).await });
        // A head that fills the buffer, and no more than the listener reads before refusing
        // it (so the socket closes cleanly and the answer is not lost to a reset).
        let mut huge = b"GET /callback?code=".to_vec();
        huge.extend(std::iter::repeat_n(b'a', MAX_REQUEST_BYTES - huge.len()));
        let page = get(port, &huge).await;
        assert!(page.starts_with("HTTP/1.1 431"), "{page}");
        assert!(!wait.is_finished());
        get(port, b"GET /callback?code=c&state=s HTTP/1.1\r\n\r\n").await;
        assert_eq!(wait.await.unwrap().unwrap().code, "c");
    }

    /// On tokio's paused clock (it moves when every task waits): the wait ends at its
    /// deadline, not after the silent connection's `READ_TIMEOUT`.
    #[tokio::test(start_paused = true)]
    async fn it_times_out_even_with_a_silent_connection_open() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        let _silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let started = tokio::time::Instant::now();
        let timeout = Duration::from_secs(1);
        assert_eq!(lb.wait("s", timeout).await, Err(CallbackError::Timeout));
        let waited = started.elapsed();
        assert!(waited >= timeout && waited < READ_TIMEOUT, "{waited:?}");
    }

    #[tokio::test]
    async fn the_servers_error_is_reported() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        let wait = tokio::spawn(async move { lb.wait("s", Duration::from_secs(20)).await });
        get(port, b"GET /callback?error=access_denied&error_description=no%20way&state=s HTTP/1.1\r\n\r\n").await;
        let Err(CallbackError::Refused(why)) = wait.await.unwrap() else { panic!() };
        assert!(why.contains("access_denied") && why.contains("no way"), "{why}");
    }
}
