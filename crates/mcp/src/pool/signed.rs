//! The HTTP client of a signed-in server: rmcp's reqwest client, with the current token
//! put on every request instead of one fixed when the session opened. A long session (the
//! studio, `mcpflow serve`, the daemon) outlives its access token: the token is refreshed
//! when it expires within a minute, and a request the server refuses with 401 is sent
//! once more with a refreshed token (it was refused, so it was not processed). Every token
//! the session holds joins its notes' secrets, so a server that quotes it back in an error
//! shows `<OAuth access token>` instead.

use super::notes::ServerNotes;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use mcpflow_auth::trust::Clients;
use mcpflow_auth::vault::Login;
use mcpflow_auth::{Authenticator, flow};
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// reqwest, signing each request with the server's current token.
#[derive(Clone)]
pub(crate) struct Signed {
    http: reqwest::Client,
    tokens: Arc<Tokens>,
}

/// The token of one server's session, and how to get a new one.
pub(crate) struct Tokens {
    auth: Arc<Authenticator>,
    server: String,
    url: String,
    oauth: Option<OAuthConfig>,
    env: EnvLookup,
    /// The token in use and when it expires (unix ms), if it does.
    current: Mutex<Option<(String, Option<i64>)>>,
    /// Why the last refused token could not be renewed (`AUTH_REQUIRED` …).
    refusal: Mutex<Option<crate::Error>>,
    /// The session's notes, whose secrets learn every token this session holds.
    notes: Arc<ServerNotes>,
}

/// What a message shows instead of a token of the session.
const ACCESS_TOKEN_SHOWN: &str = "<OAuth access token>";
const REFRESH_TOKEN_SHOWN: &str = "<OAuth refresh token>";
const CLIENT_SECRET_SHOWN: &str = "<OAuth client secret>";

impl Tokens {
    pub(crate) fn new(
        auth: Arc<Authenticator>,
        server: &str,
        url: &str,
        oauth: Option<OAuthConfig>,
        env: EnvLookup,
        first: Option<&Login>,
        notes: Arc<ServerNotes>,
    ) -> Tokens {
        let tokens = Tokens {
            auth,
            server: server.to_owned(),
            url: url.to_owned(),
            oauth,
            env,
            current: Mutex::new(None),
            refusal: Mutex::new(None),
            notes,
        };
        if let Some(login) = first {
            learn_refresh(&tokens.notes, login);
        }
        tokens.hold(first.map(|login| (login.access_token.clone(), login.expires_at_ms)));
        tokens
    }

    /// The token in use.
    pub(crate) fn token(&self) -> Option<String> {
        self.held().map(|(token, _)| token)
    }

    /// Why the last refused token could not be renewed, once.
    pub(crate) fn take_refusal(&self) -> Option<crate::Error> {
        self.refusal.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn held(&self) -> Option<(String, Option<i64>)> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Holds `token` as the one to send; hidden from every message of the session from now on.
    fn hold(&self, token: Option<(String, Option<i64>)>) {
        if let Some((token, _)) = &token {
            self.notes.add_secret(token, ACCESS_TOKEN_SHOWN);
        }
        *self.current.lock().unwrap_or_else(PoisonError::into_inner) = token;
    }

    /// The token to send now: the one held, unless it expires within the margin.
    async fn header(&self) -> Option<String> {
        let held = self.held();
        let fresh_enough = match &held {
            Some((_, Some(at))) => at - flow::REFRESH_MARGIN_MS > mcpflow_auth::vault::now_ms(),
            Some((_, None)) => true,
            None => false,
        };
        if fresh_enough {
            return held.map(|(token, _)| token);
        }
        match self.auth.current(&self.server, &self.url, self.oauth.as_ref(), &self.env).await {
            Ok(login) => {
                if let Some(login) = &login {
                    learn_refresh(&self.notes, login);
                }
                let token = login.map(|l| (l.access_token, l.expires_at_ms));
                self.hold(token.clone());
                token.map(|(token, _)| token)
            }
            Err(error) => {
                tracing::debug!(server = self.server, code = error.code(), "no fresh token; sending the one held");
                held.map(|(token, _)| token)
            }
        }
    }

    /// After the server refused `sent` for want of a scope (403 `insufficient_scope`): a
    /// token with it to try once, when the person allowed signing in again
    /// (`mcpflow_auth::step_up`).
    async fn after_scope_refusal(&self, sent: Option<&str>, www_authenticate: &str) -> Option<String> {
        let challenge = flow::parse_challenge(403, www_authenticate)?;
        match self.auth.step_up(&self.server, &self.url, self.oauth.as_ref(), &self.env, sent, &challenge).await {
            Ok(Some(login)) => {
                learn_refresh(&self.notes, &login);
                self.hold(Some((login.access_token.clone(), login.expires_at_ms)));
                Some(login.access_token)
            }
            Ok(None) => None,
            Err(error) => {
                tracing::debug!(server = self.server, code = error.code(), "signing in for more scope failed");
                *self.refusal.lock().unwrap_or_else(PoisonError::into_inner) = Some(error.into());
                None
            }
        }
    }

    /// After the server refused `sent` with `www_authenticate`: a new token to try once.
    async fn after_refusal(&self, sent: Option<&str>, www_authenticate: &str) -> Option<String> {
        let challenge = flow::parse_challenge(401, www_authenticate)
            .unwrap_or(flow::Challenge { status: 401, ..flow::Challenge::default() });
        match self.auth.unauthorized(&self.server, &self.url, self.oauth.as_ref(), &self.env, sent, &challenge).await {
            Ok(token) => {
                let login = self.auth.login_for(&self.url).ok().flatten();
                if let Some(login) = &login {
                    learn_refresh(&self.notes, login);
                }
                let expires = login.and_then(|l| l.expires_at_ms);
                self.hold(Some((token.clone(), expires)));
                Some(token)
            }
            Err(error) => {
                tracing::debug!(server = self.server, code = error.code(), "the refused token could not be renewed");
                *self.refusal.lock().unwrap_or_else(PoisonError::into_inner) = Some(error.into());
                None
            }
        }
    }
}

/// Hides `login`'s refresh token and the client secret a registration issued from every
/// message of the session from now on (its access token is hidden when it is held:
/// [`Tokens::hold`]; a configured secret is one of the launch's).
fn learn_refresh(notes: &ServerNotes, login: &Login) {
    if let Some(refresh) = &login.refresh_token {
        notes.add_secret(refresh, REFRESH_TOKEN_SHOWN);
    }
    if let Some(secret) = &login.client_secret {
        notes.add_secret(secret, CLIENT_SECRET_SHOWN);
    }
}

impl Signed {
    /// `TLS_ROOTS_MISSING` when the server is `https://` and the system has no roots.
    pub(crate) fn new(tokens: Arc<Tokens>) -> crate::Result<Signed> {
        Ok(Signed { http: plain_client(&tokens.server, &tokens.url)?, tokens })
    }
}

/// The clients of HTTP servers, built when the first server is reached.
static CLIENTS: Clients = Clients::new(plain_builder);

/// The client to reach server `server` at `url` with (`TLS_ROOTS_MISSING` when `url`
/// is `https://` and the system has no root certificates).
pub(crate) fn plain_client(server: &str, url: &str) -> crate::Result<reqwest::Client> {
    Ok(CLIENTS.for_url(url, || format!("server `{server}`"))?)
}

/// The client rmcp would use by default: no idle connections kept (rmcp: they stall on
/// delayed ACKs), and redirects followed only when they keep the method and the origin
/// (307, 308; at most 10): a token or session never goes to another host.
fn plain_builder() -> reqwest::ClientBuilder {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        let keeps_method = matches!(attempt.status().as_u16(), 307 | 308);
        if attempt.previous().len() <= 10 && same_origin && keeps_method { attempt.follow() } else { attempt.stop() }
    });
    mcpflow_auth::trust::client_builder().pool_max_idle_per_host(0).redirect(policy)
}

type Error = StreamableHttpError<reqwest::Error>;

impl StreamableHttpClient for Signed {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let token = self.tokens.header().await;
        let sent = self
            .http
            .post_message(uri.clone(), message.clone(), session_id.clone(), token.clone(), custom_headers.clone())
            .await;
        match sent {
            Err(StreamableHttpError::AuthRequired(refused)) => {
                match self.tokens.after_refusal(token.as_deref(), &refused.www_authenticate_header).await {
                    Some(fresh) => self.http.post_message(uri, message, session_id, Some(fresh), custom_headers).await,
                    None => Err(StreamableHttpError::AuthRequired(refused)),
                }
            }
            Err(StreamableHttpError::InsufficientScope(refused)) => {
                match self.tokens.after_scope_refusal(token.as_deref(), &refused.www_authenticate_header).await {
                    Some(fresh) => self.http.post_message(uri, message, session_id, Some(fresh), custom_headers).await,
                    None => Err(StreamableHttpError::InsufficientScope(refused)),
                }
            }
            other => other,
        }
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let token = self.tokens.header().await;
        let sent = self
            .http
            .post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
            .await;
        // Refused: a token renewed (401) or one for a wider scope (403), when one can be
        // had, and the message sent once more with it.
        let fresh = match &sent {
            Err(StreamableHttpError::AuthRequired(refused)) => {
                self.tokens.after_refusal(token.as_deref(), &refused.www_authenticate_header).await
            }
            Err(StreamableHttpError::InsufficientScope(refused)) => {
                self.tokens.after_scope_refusal(token.as_deref(), &refused.www_authenticate_header).await
            }
            _ => None,
        };
        match fresh {
            Some(fresh) => {
                self.http
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        Some(fresh),
                        custom_headers,
                        max_sse_event_size,
                    )
                    .await
            }
            None => sent,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let token = self.tokens.header().await;
        self.http.delete_session(uri, session_id, token, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let token = self.tokens.header().await;
        self.http.get_stream(uri, session_id, last_event_id, token, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        let token = self.tokens.header().await;
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                token,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
