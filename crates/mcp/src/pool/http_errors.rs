//! What went wrong with a streamable HTTP server, in words a person acts on. rmcp's
//! transport errors print Rust type names and reqwest's echo the URL (secrets included);
//! [`Worded`] wraps the HTTP transport so that every error it gives rmcp is an
//! [`HttpError`]: what happened, at the URL as configured, and what to do — with the
//! launch's secrets hidden.
//!
//! | failure | words |
//! |---|---|
//! | connection refused | nothing listens at the URL: is the server running? |
//! | DNS | the host is unknown: check its name |
//! | TLS | a secure connection failed: `https` against a plain server, or a certificate |
//! | HTTP 401 / 403 with a challenge | a sign-in is needed ([`HttpFailure::AuthRequired`]) |
//! | HTTP 404 | nothing at that path: MCP endpoints usually end in `/mcp` |
//! | HTTP 405 | not a streamable HTTP endpoint (legacy SSE servers are not supported) |
//! | HTTP 429, 5xx | the server is busy or failed: its own logs say why |
//! | an HTML page or other non-MCP body | the URL is a web page, not the MCP endpoint |
//! | a broken stream | the answer broke off |

use super::notes::ServerNotes;
use mcpflow_config::launch::HttpLaunch;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::borrow::Cow;
use std::error::Error as StdError;
use std::sync::Arc;

/// The kind of an HTTP failure, for callers that act on it (o1's `AUTH_REQUIRED`: a run
/// that meets [`HttpFailure::AuthRequired`] should name the sign-in command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HttpFailure {
    /// Nothing answered: refused, DNS, TLS, a timeout.
    Unreachable,
    /// The request went out and its answer broke off (the connection closed or the body
    /// ended early): the server may have handled it.
    Broken,
    /// The server wants a sign-in (HTTP 401, or 403 with a `WWW-Authenticate` challenge).
    AuthRequired,
    /// An HTTP status that is not a success.
    Status(u16),
    /// The answer was not MCP (wrong content type, not JSON-RPC).
    NotMcp,
    /// Anything else rmcp reports (size limits keep their own text).
    Other,
}

/// A transport error in words. Its text holds no secret and no Rust type names. It keeps
/// rmcp's error as its source only for a sign-in challenge (whose text holds no URL), so
/// rmcp's `ClientInitializeError::is_authorization_required` and the challenge's
/// `WWW-Authenticate` header still work; any other source is dropped, so nothing down a
/// source chain can print the URL with its secrets.
pub(crate) struct HttpError {
    pub kind: HttpFailure,
    words: String,
    challenge: Option<Box<dyn StdError + Send + Sync>>,
}

impl HttpError {
    pub fn words(&self) -> &str {
        &self.words
    }
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.words)
    }
}

impl std::fmt::Debug for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HttpError({:?}: {})", self.kind, self.words)
    }
}

impl StdError for HttpError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.challenge.as_deref().map(|e| e as &(dyn StdError + 'static))
    }
}

/// The HTTP transport with its errors in words.
pub(crate) struct Worded<T> {
    inner: T,
    shown: Arc<Shown>,
}

/// What messages may show: the URL as configured and the notes that hide secrets.
struct Shown {
    url: String,
    notes: Arc<ServerNotes>,
}

impl<T> Worded<T> {
    pub fn new(inner: T, launch: &HttpLaunch, notes: Arc<ServerNotes>) -> Self {
        Worded { inner, shown: Arc::new(Shown { url: launch.shown_url.clone(), notes }) }
    }
}

impl<T, E> Transport<RoleClient> for Worded<T>
where
    T: Transport<RoleClient, Error = StreamableHttpError<E>>,
    E: StdError + Send + Sync + 'static,
{
    type Error = HttpError;

    fn name() -> Cow<'static, str> {
        Cow::Borrowed("streamable HTTP")
    }

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), HttpError>> + Send + 'static {
        let sending = self.inner.send(item);
        let shown = self.shown.clone();
        async move { sending.await.map_err(|error| shown.word(error)) }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), HttpError> {
        self.inner.close().await.map_err(|error| self.shown.word(error))
    }
}

impl Shown {
    fn word<E: StdError + Send + Sync + 'static>(&self, error: StreamableHttpError<E>) -> HttpError {
        let (kind, words) = describe(&error, &self.url);
        let challenge =
            matches!(error, StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_))
                || error.to_string().starts_with("Auth error");
        HttpError {
            kind,
            words: self.notes.hide(words),
            challenge: challenge.then(|| Box::new(error) as Box<dyn StdError + Send + Sync>),
        }
    }
}

/// What `error` means for a server configured at `url`, and what to do.
pub(crate) fn describe<E: StdError + Send + Sync + 'static>(
    error: &StreamableHttpError<E>,
    url: &str,
) -> (HttpFailure, String) {
    match error {
        StreamableHttpError::Client(client) => connection(client, url),
        StreamableHttpError::Io(io) => connection(io, url),
        StreamableHttpError::HttpStatus(status) => status_words(status.status, url, status.retry_after.as_deref()),
        StreamableHttpError::AuthRequired(_) => status_words(401, url, None),
        StreamableHttpError::InsufficientScope(scope) => (
            HttpFailure::AuthRequired,
            format!(
                "the server at {url} refused the request for lack of permission (HTTP 403, insufficient scope{}): \
                 sign in again with the permissions it asks for",
                scope.required_scope.as_deref().map(|s| format!("; it asks for `{s}`")).unwrap_or_default()
            ),
        ),
        StreamableHttpError::UnexpectedServerResponse(text) => match http_status_of(text) {
            Some(code) => status_words(code, url, None),
            None => (
                HttpFailure::NotMcp,
                format!(
                    "the server at {url} answered something that is not MCP ({}): check that the URL is the \
                     server's MCP endpoint (usually ending in `/mcp`)",
                    preview(text)
                ),
            ),
        },
        StreamableHttpError::UnexpectedContentType(content_type) => (
            HttpFailure::NotMcp,
            match content_type.as_deref() {
                Some(ct) if ct.starts_with("text/html") => format!(
                    "the server at {url} answered with a web page (text/html), not MCP: the URL is not the server's \
                     MCP endpoint — check its path (usually ending in `/mcp`)"
                ),
                Some(ct) => format!(
                    "the server at {url} answered with `{}`, not MCP (JSON or an event stream): check that the URL \
                     is the server's MCP endpoint (usually ending in `/mcp`)",
                    preview(ct)
                ),
                None => format!(
                    "the server at {url} answered without a content type, not MCP: check that the URL is the \
                     server's MCP endpoint (usually ending in `/mcp`)"
                ),
            },
        ),
        StreamableHttpError::Deserialize(e) => (
            HttpFailure::NotMcp,
            format!("the server at {url} answered JSON that is not a JSON-RPC message ({e}): is it an MCP server?"),
        ),
        StreamableHttpError::Sse(e) => (
            HttpFailure::Broken,
            format!(
                "the event stream from {url} broke ({}): the server or a proxy in front of it closed it; try again",
                innermost(e)
            ),
        ),
        StreamableHttpError::UnexpectedEndOfStream => (
            HttpFailure::Broken,
            format!(
                "the answer from {url} broke off before it was complete: the server or a proxy closed it; try again"
            ),
        ),
        StreamableHttpError::SessionExpired => (
            HttpFailure::Status(404),
            format!(
                "the server at {url} no longer knows this session (HTTP 404 on a session): it was restarted or \
                 ended the session; the next call connects again"
            ),
        ),
        StreamableHttpError::ServerDoesNotSupportSse => {
            (HttpFailure::Status(405), format!("the server at {url} does not offer an event stream (HTTP 405)"))
        }
        other => (HttpFailure::Other, other.to_string()),
    }
}

/// A failure below HTTP: refused, DNS, TLS, timeout, reset. Only the causes below the
/// client's own error are read: reqwest's top error prints the resolved URL.
fn connection(error: &(dyn StdError + 'static), url: &str) -> (HttpFailure, String) {
    let mut io_kind = None;
    let mut text = String::new();
    let mut current: Option<&(dyn StdError + 'static)> = error.source();
    if current.is_none() {
        // An io::Error of its own (no client above it) holds no URL.
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        text = error.to_string();
    }
    while let Some(cause) = current {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            io_kind.get_or_insert(io.kind());
        }
        text.push_str(" | ");
        text.push_str(&cause.to_string());
        current = cause.source();
    }
    let lower = text.to_ascii_lowercase();
    let cause = innermost(error);
    // The client's own error says whether a body was being read; only classified, never
    // shown (it prints the resolved URL).
    let top = error.to_string().to_ascii_lowercase();
    let top = top.split(" for url (").next().unwrap_or_default();
    let body = top.contains("body") || top.contains("decod");
    use std::io::ErrorKind;
    if body {
        return (
            HttpFailure::Broken,
            format!(
                "the answer from {url} broke off before it was complete ({cause}): the server or a proxy in front of \
                 it closed it; check the server's logs"
            ),
        );
    }
    let mut kind = HttpFailure::Unreachable;
    let words = if io_kind == Some(ErrorKind::ConnectionRefused) || lower.contains("connection refused") {
        format!("connection refused at {url}: nothing listens there — is the server running, on that host and port?")
    } else if lower.contains("dns error")
        || lower.contains("failed to lookup address")
        || lower.contains("name or service not known")
    {
        format!("cannot find the host of {url} (DNS: {cause}): check the host name in the URL and your network")
    } else if lower.contains("tls")
        || lower.contains("ssl")
        || lower.contains("certificate")
        || lower.contains("invalidcontenttype")
        || lower.contains("corrupt message")
    {
        format!(
            "a secure connection to {url} failed (TLS: {cause}): check `https` against `http` (a plain server does \
             not speak TLS) and that its certificate is valid for that host"
        )
    } else if io_kind == Some(ErrorKind::TimedOut) || lower.contains("timed out") {
        format!("connecting to {url} timed out: the host does not answer — check the address and any firewall")
    } else if matches!(
        io_kind,
        Some(ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::UnexpectedEof)
    ) || lower.contains("connection closed")
        || lower.contains("incomplete message")
    {
        kind = HttpFailure::Broken;
        format!(
            "the connection to {url} closed before an answer ({cause}): the server or a proxy in front of it ended it; \
             check the server's logs"
        )
    } else {
        format!("cannot reach {url} ({cause}): check the URL and that the server is up")
    };
    (kind, words)
}

/// The last cause of `error`: the one that says what really happened.
fn innermost(error: &(dyn StdError + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    preview(&current.to_string()).into_owned()
}

fn status_words(code: u16, url: &str, retry_after: Option<&str>) -> (HttpFailure, String) {
    let words = match code {
        401 => {
            return (
                HttpFailure::AuthRequired,
                format!(
                    "the server at {url} needs a sign-in (HTTP 401): give it credentials (`headers` with \
                     `${{env:NAME}}`, or its sign-in when mcpflow offers one for it)"
                ),
            );
        }
        403 => format!("the server at {url} refused access (HTTP 403): the credentials it was sent lack permission"),
        404 => format!(
            "nothing at {url} (HTTP 404): the path is wrong — MCP endpoints usually end in `/mcp`; check the \
             server's documentation"
        ),
        405 => format!(
            "the server at {url} does not accept MCP requests there (HTTP 405): it is not a streamable HTTP \
             endpoint (servers that only speak the legacy SSE transport are not supported)"
        ),
        406 | 415 => format!("the server at {url} refused the request's format (HTTP {code}): is it an MCP server?"),
        408 | 504 => {
            format!("the server at {url} (or a proxy in front of it) timed out (HTTP {code}): try again later")
        }
        429 => format!(
            "the server at {url} is rate limiting (HTTP 429){}: wait and try again",
            retry_after.map(|r| format!(", retry after {}", preview(r))).unwrap_or_default()
        ),
        502 | 503 => format!(
            "the server at {url} is unavailable (HTTP {code}): it or a proxy in front of it is down or starting; \
             try again later{}",
            retry_after.map(|r| format!(" (retry after {})", preview(r))).unwrap_or_default()
        ),
        500..=599 => format!(
            "the server at {url} failed with an error of its own (HTTP {code}): its logs say why; mcpflow's \
             request was not at fault unless they say so"
        ),
        400..=499 => format!("the server at {url} refused the request (HTTP {code}): check the URL and the headers"),
        _ => format!("the server at {url} answered HTTP {code}, not MCP: check that the URL is its MCP endpoint"),
    };
    (HttpFailure::Status(code), words)
}

/// `HTTP 404 Not Found: …` (rmcp's text for a failed POST) → 404.
fn http_status_of(text: &str) -> Option<u16> {
    let rest = text.strip_prefix("HTTP ")?;
    rest.get(..3)?.parse().ok().filter(|code| (100..600).contains(code))
}

/// At most 120 characters of `text` on one line.
fn preview(text: &str) -> Cow<'_, str> {
    const MAX: usize = 120;
    if text.len() <= MAX && !text.contains(['\n', '\r']) {
        return Cow::Borrowed(text);
    }
    let one_line: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let cut: String = one_line.chars().take(MAX).collect();
    Cow::Owned(if one_line.chars().count() > MAX { format!("{cut}…") } else { cut })
}

/// The words of an rmcp opening error, when it came from this transport.
pub(crate) fn words_of(error: &rmcp::service::ClientInitializeError) -> Option<&HttpError> {
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, .. } => error.error.downcast_ref::<HttpError>(),
        rmcp::service::ClientInitializeError::LegacyFallbackFailed { fallback, discover } => {
            words_of(fallback).or_else(|| words_of(discover))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_say_what_to_do() {
        let url = "http://h/x";
        assert!(status_words(404, url, None).1.contains("usually end in `/mcp`"));
        assert_eq!(status_words(401, url, None).0, HttpFailure::AuthRequired);
        assert!(status_words(500, url, None).1.contains("HTTP 500"));
        assert!(status_words(429, url, Some("7")).1.contains("retry after 7"));
        assert_eq!(http_status_of("HTTP 404 Not Found: <html>"), Some(404));
        assert_eq!(http_status_of("HTTP/1.1 garbage"), None);
    }

    #[test]
    fn a_challenge_stays_visible_to_rmcp_and_nothing_else_is_kept() {
        use rmcp::service::ClientInitializeError;
        use rmcp::transport::DynamicTransportError;
        use rmcp::transport::streamable_http_client::AuthRequiredError;
        let shown = Shown { url: "https://h/mcp?k=${env:K}".to_owned(), notes: Arc::new(ServerNotes::new("s", None)) };
        let wrap = |error: HttpError| ClientInitializeError::TransportError {
            error: DynamicTransportError::from_parts("streamable HTTP", std::any::TypeId::of::<()>(), Box::new(error)),
            context: "send discover request".into(),
        };
        let challenge = StreamableHttpError::<std::io::Error>::AuthRequired(AuthRequiredError::new(
            "Bearer resource_metadata=\"https://h/.well-known/oauth-protected-resource\"".to_owned(),
        ));
        let worded = shown.word(challenge);
        assert_eq!(worded.kind, HttpFailure::AuthRequired);
        assert!(worded.words().contains("needs a sign-in (HTTP 401)"), "{}", worded.words());
        assert!(wrap(worded).is_authorization_required());
        let refused =
            shown.word(StreamableHttpError::<std::io::Error>::Io(std::io::ErrorKind::ConnectionRefused.into()));
        assert!(refused.source().is_none());
        assert!(!wrap(refused).is_authorization_required());
    }

    #[test]
    fn previews_are_one_short_line() {
        let long = "a\nb".repeat(100);
        let shown = preview(&long);
        assert!(!shown.contains('\n') && shown.chars().count() <= 121, "{shown}");
    }
}
