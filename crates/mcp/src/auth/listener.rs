//! The loopback redirect listener: a TCP listener on 127.0.0.1 with a port the system
//! picks, waiting for the browser's one `GET /callback?code=…&state=…`. Each connection
//! has [`READ_TIMEOUT`] to send its request head of at most [`MAX_REQUEST_BYTES`]; other
//! paths get a 404 and the wait goes on; the callback is answered with a small page and
//! ends the wait: with the code when `state` matches, else with `AUTH_FAILED`.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The largest request head read from the browser.
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
async fn serve(
    mut stream: TcpStream,
    state: &str,
    until: tokio::time::Instant,
) -> Option<Result<Callback, CallbackError>> {
    let head = match tokio::time::timeout_at(until, read_head(&mut stream)).await {
        Ok(Ok(head)) => head,
        Ok(Err(status)) => {
            respond(&mut stream, status, "mcpflow could not read this request.").await;
            return None;
        }
        Err(_) => return None,
    };
    let target = match head.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["GET", target, version, ..] if version.starts_with("HTTP/") => (*target).to_owned(),
        _ => {
            respond(&mut stream, "400 Bad Request", "mcpflow expected the sign-in redirect here.").await;
            return None;
        }
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    if path != "/callback" {
        respond(&mut stream, "404 Not Found", "Nothing here.").await;
        return None;
    }
    let outcome = callback(query, state);
    match &outcome {
        Ok(_) => respond(&mut stream, "200 OK", "Signed in. You can close this window and go back to mcpflow.").await,
        Err(CallbackError::Refused(why)) => {
            respond(&mut stream, "400 Bad Request", &format!("Signing in failed: {why}. Go back to mcpflow.")).await
        }
        Err(CallbackError::Timeout) => {}
    }
    Some(outcome)
}

/// The request line and headers, up to the blank line, within [`MAX_REQUEST_BYTES`].
async fn read_head(stream: &mut TcpStream) -> Result<String, &'static str> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).await.map_err(|_| "400 Bad Request")?;
        if n == 0 {
            return Err("400 Bad Request");
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") || buf.windows(2).any(|w| w == b"\n\n") {
            break;
        }
        if buf.len() > MAX_REQUEST_BYTES {
            return Err("431 Request Header Fields Too Large");
        }
    }
    if buf.len() > MAX_REQUEST_BYTES {
        return Err("431 Request Header Fields Too Large");
    }
    let line_end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    String::from_utf8(buf[..line_end].to_vec()).map_err(|_| "400 Bad Request")
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

async fn respond(stream: &mut TcpStream, status: &str, text: &str) {
    let text = text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcpflow</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><p>{text}</p></body></html>"
    );
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, request: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(request).await.unwrap();
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
        let mut huge = b"GET /callback?code=".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 64 * 1024));
        let page = get(port, &huge).await;
        assert!(page.starts_with("HTTP/1.1 431"), "{page}");
        assert!(!wait.is_finished());
        get(port, b"GET /callback?code=c&state=s HTTP/1.1\r\n\r\n").await;
        assert_eq!(wait.await.unwrap().unwrap().code, "c");
    }

    #[tokio::test]
    async fn it_times_out_even_with_a_silent_connection_open() {
        let lb = Loopback::bind().await.unwrap();
        let port = lb.port;
        let _silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let started = std::time::Instant::now();
        assert_eq!(lb.wait("s", Duration::from_millis(300)).await, Err(CallbackError::Timeout));
        assert!(started.elapsed() < Duration::from_secs(5));
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
