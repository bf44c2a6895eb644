//! Signing in and keeping signed in: discovery (the server's 401 and its
//! `WWW-Authenticate: Bearer resource_metadata=…`, else the well-known URLs), the
//! authorization code grant with PKCE S256 through the browser and the loopback
//! redirect, the client credentials grant, refresh (60 s before expiry, and once after a
//! 401), the `AUTH_REQUIRED` a connection gets when none of that can help, and signing
//! out: the login deleted here, then revoked at the authorization server (RFC 7009)
//! when it offers that, within [`REVOKE_TIMEOUT`].
//!
//! Every request to an authorization server has a 30 s timeout and its answer is read
//! within [`MAX_ANSWER_BYTES`]. Tokens and secrets are never logged nor put in an error.
//!
//! The [`Authenticator`]'s methods, one concern a file: `current.rs` the token the pool
//! asks for; `code.rs` the authorization code grant; `machine.rs` client credentials;
//! `refresh.rs`; `revoke.rs` signing out; `client.rs` which client signs in and how it
//! authenticates; `token.rs` token requests. Discovery is `discovery.rs`, the step-up
//! `step_up.rs`.

mod client;
mod code;
mod current;
mod machine;
mod refresh;
mod revoke;
mod token;

use super::browser::Browser;
use super::client_auth::ClientAuth;
use super::discovery::Discovered;
use super::vault::{Login, Vault, now_ms};
use crate::error::{Error, Result};
use crate::trust::Clients;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The largest answer read from an authorization server or a metadata URL.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// A token that expires within this is refreshed before it is used.
pub const REFRESH_MARGIN_MS: i64 = 60_000;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long signing out waits for the authorization server to revoke the token.
pub const REVOKE_TIMEOUT: Duration = Duration::from_secs(5);

/// What signing out told the authorization server (RFC 7009). The login is gone from
/// this machine in every case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// There was no login to forget.
    NoLogin,
    /// The authorization server accepted the revocation of the refresh (else access)
    /// token.
    Revoked,
    /// Its metadata names no `revocation_endpoint`: the tokens stay valid there until
    /// they expire.
    NotOffered,
    /// Asking failed (why: unreachable, a refusal, no answer in time).
    Failed(String),
}

/// What to tell a person about server `NAME` that needs a sign-in, in the words of their
/// front door (`mcpflow auth login NAME`, or the studio's Servers panel).
pub type Advice = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Signs in, keeps tokens fresh, and answers the pool's "what do I send" questions.
#[derive(Clone)]
pub struct Authenticator {
    pub(super) vault: Vault,
    /// Built when a sign-in, refresh or probe first sends a request
    /// ([`crate::trust`]): a run that never needs one never loads the trust store.
    http: Arc<Clients>,
    advice: Advice,
    /// One refresh at a time: connections opening together refresh a login once (a
    /// second refresh with a rotated refresh token would be refused).
    refreshing: Arc<tokio::sync::Mutex<()>>,
    /// Whether a server asking for a wider scope may open the browser
    /// ([`super::step_up`]).
    pub(super) sign_in: Option<super::step_up::SignIn>,
    /// Step-ups done per server, one at a time.
    pub(super) stepped_up: Arc<tokio::sync::Mutex<std::collections::HashMap<String, u32>>>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").field("vault", &self.vault.path()).finish_non_exhaustive()
    }
}

/// One sign-in to run.
pub struct LoginRequest<'a> {
    pub server: &'a str,
    /// The server's URL, `${env:NAME}` resolved.
    pub url: &'a str,
    pub oauth: Option<&'a OAuthConfig>,
    pub env: &'a EnvLookup,
    /// How long the browser has to come back to the loopback redirect.
    pub timeout: Duration,
    pub browser: &'a Browser,
}

impl std::fmt::Debug for LoginRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRequest").field("server", &self.server).field("url", &self.url).finish_non_exhaustive()
    }
}

/// What a server said when it refused a request: its status and `WWW-Authenticate`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    pub status: u16,
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    pub fn is_insufficient_scope(&self) -> bool {
        self.status == 403 && self.error.as_deref() == Some("insufficient_scope")
    }
}

/// `WWW-Authenticate: Bearer k="v", …`: the Bearer challenge's parameters.
pub fn parse_challenge(status: u16, header: &str) -> Option<Challenge> {
    let rest = header.trim_start();
    let scheme_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    if !rest[..scheme_end].eq_ignore_ascii_case("bearer") {
        return None;
    }
    let mut challenge = Challenge { status, ..Challenge::default() };
    let mut rest = rest[scheme_end..].trim_start();
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().trim_start_matches(',').trim().to_ascii_lowercase();
        rest = rest[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, c)) = chars.next() {
                            out.push(c);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => out.push(c),
                }
            }
            value = out;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_owned();
            rest = &rest[end..];
        }
        rest = rest.trim_start().trim_start_matches(',').trim_start();
        match key.as_str() {
            "resource_metadata" => challenge.resource_metadata = Some(value),
            "scope" => challenge.scope = Some(value),
            "error" => challenge.error = Some(value),
            _ => {}
        }
    }
    Some(challenge)
}

/// The canonical URI of an MCP server (RFC 8707, the MCP spec): scheme and host in
/// lower case, no fragment. What tokens are keyed by and the `resource` parameter.
pub fn canonical_resource(url: &str) -> std::result::Result<String, String> {
    let mut parsed = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("`{url}` is not an http(s) URL"));
    }
    parsed.set_fragment(None);
    Ok(parsed.to_string())
}

impl Authenticator {
    /// An authenticator over `vault`; people needing a sign-in are told
    /// `mcpflow auth login NAME` unless [`Self::with_advice`] says otherwise.
    pub fn new(vault: Vault) -> Authenticator {
        Authenticator {
            vault,
            http: Arc::new(Clients::new(oauth_client)),
            advice: Arc::new(|server| format!("run `mcpflow auth login {server}`")),
            refreshing: Arc::new(tokio::sync::Mutex::new(())),
            sign_in: None,
            stepped_up: Arc::default(),
        }
    }

    /// The client for a request to `url` (`TLS_ROOTS_MISSING` when it is `https://` and
    /// the system has no root certificates).
    pub(super) fn http(&self, url: &str) -> Result<reqwest::Client> {
        self.http.for_url(url, || format!("the OAuth endpoint at {}", origin(url)))
    }

    pub fn with_advice(mut self, advice: Advice) -> Self {
        self.advice = advice;
        self
    }

    /// Lets a server that asks for a wider scope open the browser to sign in again
    /// (`mcpflow run --sign-in`: the person allowed it).
    pub fn with_sign_in(mut self, sign_in: super::step_up::SignIn) -> Self {
        self.sign_in = Some(sign_in);
        self
    }

    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    /// `AUTH_REQUIRED` for `server`, in the front door's words.
    pub fn required(&self, server: &str, reason: impl Into<String>, scope: Option<String>) -> Error {
        Error::AuthRequired { server: server.to_owned(), reason: reason.into(), scope, advice: (self.advice)(server) }
    }

    pub(super) fn failed(server: &str, message: impl Into<String>) -> Error {
        Error::AuthFailed { server: server.to_owned(), message: message.into() }
    }

    /// The login stored for `url`, if any.
    pub fn login_for(&self, url: &str) -> Result<Option<Login>> {
        match canonical_resource(url) {
            Ok(resource) => self.vault.get(&resource),
            Err(_) => Ok(None),
        }
    }

    /// Forgets the login for `url`; whether there was one. The authorization server is
    /// not told: see [`Self::logout_revoking`].
    pub fn logout(&self, url: &str) -> Result<bool> {
        match canonical_resource(url) {
            Ok(resource) => self.vault.remove(&resource),
            Err(_) => Ok(false),
        }
    }

    /// Sends nothing but a probe (see [`probe`]).
    pub async fn probe(&self, url: &str, token: Option<&str>) -> std::result::Result<Option<Challenge>, String> {
        let http = self.http(url).map_err(|e| e.to_string())?;
        probe(&http, url, token).await
    }
}

/// `POST url` with an `initialize` and `token`: the challenge if the server refused it
/// (401, or 403 with a Bearer challenge), `None` if it did not.
pub async fn probe(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
) -> std::result::Result<Option<Challenge>, String> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "mcpflow", "version": env!("CARGO_PKG_VERSION")}}});
    let mut request = http
        .post(url)
        .timeout(REQUEST_TIMEOUT)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| format!("cannot reach {url}: {}", without_url(&e)))?;
    let status = response.status().as_u16();
    let header = response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).map(str::to_owned);
    drop(response);
    Ok(match (status, header) {
        (401, Some(h)) => Some(parse_challenge(401, &h).unwrap_or(Challenge { status, ..Challenge::default() })),
        (401, None) => Some(Challenge { status, ..Challenge::default() }),
        (403, Some(h)) => parse_challenge(403, &h),
        _ => None,
    })
}

/// An authorization server's URL must be `https://`, or `http://` to this machine
/// (`localhost`, `127.0.0.0/8`, `[::1]`), as OAuth 2.1 and the MCP spec require.
pub(super) fn secure_url(url: &str) -> std::result::Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|e| format!("the authorization server's `{url}` is not a URL: {e}"))?;
    let loopback = match parsed.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "the authorization server's `{url}` is neither https:// nor on this machine; mcpflow sends codes and \
             tokens only over HTTPS"
        )),
    }
}

/// RFC 9207: the authorization response names the issuer that sent it. Checked when it
/// is there; required when the authorization server promises it.
fn check_iss(iss: Option<&str>, issuer: &str, promised: bool) -> std::result::Result<(), String> {
    match iss {
        Some(iss) if !same_issuer(iss, issuer) => {
            Err(format!("the redirect came from issuer `{iss}`, not `{issuer}` (a mix-up attack?)"))
        }
        None if promised => Err("the redirect carries no `iss` though the authorization server promises it".to_owned()),
        _ => Ok(()),
    }
}

/// Whether a login must be refreshed before use.
pub(crate) fn expiring(login: &Login) -> bool {
    login.expires_at_ms.is_some_and(|at| at - REFRESH_MARGIN_MS <= now_ms())
}

/// The scopes asked for: the config's, else the challenge's, else the metadata's; with
/// those an earlier login had (a step-up widens, never narrows).
fn wanted_scopes(
    oauth: Option<&OAuthConfig>,
    challenge: Option<&Challenge>,
    found: &Discovered,
    previous: Option<&Login>,
) -> Vec<String> {
    let mut scopes: Vec<String> = match oauth.map(|o| o.scopes.clone()).filter(|s| !s.is_empty()) {
        Some(own) => own,
        None => match challenge.and_then(|c| c.scope.clone()) {
            Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
            None => found.scopes.clone(),
        },
    };
    let earlier = previous.map(|p| p.scopes.iter().chain(&p.step_up).cloned().collect::<Vec<_>>());
    for extra in earlier.unwrap_or_default() {
        if !scopes.contains(&extra) {
            scopes.push(extra);
        }
    }
    scopes
}

#[allow(clippy::too_many_arguments)]
fn login_from(
    server: &str,
    found: &Discovered,
    grant: &str,
    auth: &ClientAuth,
    client_secret: Option<String>,
    answer: Value,
    previous: Option<&Login>,
    asked: Vec<String>,
) -> Result<Login> {
    let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
    let access_token = text("access_token")
        .filter(|t| !t.is_empty())
        .ok_or_else(|| Authenticator::failed(server, "the token answer has no `access_token`"))?;
    if let Some(kind) = text("token_type")
        && !kind.eq_ignore_ascii_case("bearer")
    {
        return Err(Authenticator::failed(server, format!("the token is of type `{kind}`, not a Bearer token")));
    }
    let now = now_ms();
    let expires_at_ms = answer
        .get("expires_in")
        .and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok())))
        .map(|secs| now.saturating_add(secs.clamp(0, 10 * 365 * 86_400) * 1000));
    let scopes = match text("scope") {
        Some(scope) => scope.split_whitespace().map(str::to_owned).collect(),
        None => asked,
    };
    Ok(Login {
        resource: found.key.clone(),
        audience: (found.resource != found.key).then(|| found.resource.clone()),
        server: server.to_owned(),
        grant: grant.to_owned(),
        access_token,
        refresh_token: text("refresh_token").or_else(|| previous.and_then(|p| p.refresh_token.clone())),
        expires_at_ms,
        scopes,
        step_up: Vec::new(),
        account: account(&answer).or_else(|| previous.and_then(|p| p.account.clone())),
        client_id: auth.client_id.clone(),
        client_secret,
        token_auth_method: Some(auth.method.as_str().to_owned()),
        token_endpoint: found.token_endpoint.clone(),
        issuer: (!found.issuer.is_empty()).then(|| found.issuer.clone()),
        updated_ms: now,
    })
}

/// Who signed in, as the token answer says: an OpenID `id_token`'s `email`,
/// `preferred_username` or `sub` (read for display only, not verified), else a
/// top-level `account` / `username` / `user_id`.
fn account(answer: &Value) -> Option<String> {
    if let Some(claims) = answer.get("id_token").and_then(Value::as_str).and_then(jwt_claims) {
        for key in ["email", "preferred_username", "sub"] {
            if let Some(v) = claims.get(key).and_then(Value::as_str) {
                return Some(v.chars().take(256).collect());
            }
        }
    }
    ["account", "username", "user_id", "sub"]
        .iter()
        .find_map(|k| answer.get(*k).and_then(Value::as_str))
        .map(|v| v.chars().take(256).collect())
}

fn jwt_claims(jwt: &str) -> Option<Value> {
    let payload = jwt.split('.').nth(1)?;
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?).ok()
}

pub(super) fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// `text` (what an authorization server said) without the secrets of the request it
/// answers — the client secret, the refresh token, the authorization code and its
/// verifier, a client assertion — should the server quote one back.
fn hide_sent_secrets(text: &str, form: &[(&str, String)], auth: &ClientAuth) -> String {
    let mut secrets = mcpflow_config::launch::Secrets::default();
    for (key, value) in form.iter().map(|(k, v)| (*k, v)).chain(auth.hidden().iter().map(|(k, v)| (*k, v))) {
        if matches!(
            key,
            "client_secret"
                | "refresh_token"
                | "code"
                | "code_verifier"
                | "client_assertion"
                | "token"
                | "authorization"
        ) {
            secrets.add(value, format!("<{key}>"));
        }
    }
    secrets.redact(text)
}

/// A form, `application/x-www-form-urlencoded`.
fn form_body(form: &[(&str, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
}

/// ` — error (description)` of an OAuth error answer.
fn oauth_error(body: &Value) -> String {
    let error = body.get("error").and_then(Value::as_str);
    let description = body.get("error_description").and_then(Value::as_str);
    match (error, description) {
        (Some(e), Some(d)) => format!(": `{e}`, {}", d.chars().take(500).collect::<String>()),
        (Some(e), None) => format!(": `{e}`"),
        _ => String::new(),
    }
}

/// The settings of the client that talks to authorization servers.
fn oauth_client() -> reqwest::ClientBuilder {
    crate::trust::client_builder()
        .timeout(REQUEST_TIMEOUT)
        .connect_timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::limited(3))
}

/// `scheme://host:port` of `url`, for a message (never its path or query).
fn origin(url: &str) -> String {
    url::Url::parse(url).map(|u| u.origin().ascii_serialization()).unwrap_or_else(|_| "(an unreadable URL)".into())
}

/// A reqwest error without the URL it carries (a token endpoint URL may hold nothing
/// secret, but a query might).
pub(super) fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(url.as_str(), "…");
    }
    text
}

/// The body as JSON, read within [`MAX_ANSWER_BYTES`].
pub(super) async fn read_json(mut response: reqwest::Response) -> std::result::Result<Value, String> {
    let mut bytes = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(format!("the answer is larger than {} KiB", MAX_ANSWER_BYTES / 1024));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => return Err(format!("reading the answer failed: {}", without_url(&e))),
        }
    }
    serde_json::from_slice(&bytes).map_err(|e| format!("the answer is not JSON ({e})"))
}

/// 64 random hex characters (32 bytes from the operating system's random source), for
/// PKCE and `state`.
fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(hex::encode(bytes))
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_authorization_servers_words_never_quote_the_secrets_sent_to_it() {
        let form = [
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", "rt-0123456789abcdef".to_owned()),
            ("client_secret", "cs-fedcba9876543210".to_owned()),
        ];
        let said = serde_json::json!({ "error": "invalid_grant",
            "error_description": "refresh token RT-0123456789ABCDEF unknown for secret cs-fedcba9876543210" });
        let auth = ClientAuth::choose("c".into(), None, None, None, &[]).unwrap();
        let shown = hide_sent_secrets(&oauth_error(&said), &form, &auth);
        assert!(!shown.to_ascii_lowercase().contains("0123456789abcdef"), "{shown}");
        assert!(!shown.contains("fedcba9876543210"), "{shown}");
        assert!(
            shown.contains("<refresh_token>") && shown.contains("<client_secret>") && shown.contains("refresh_token"),
            "{shown}"
        );
    }
    use super::*;

    #[test]
    fn bearer_challenges_are_parsed() {
        let c = parse_challenge(
            401,
            r#"Bearer error="invalid_token", error_description="x, y", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/.well-known/oauth-protected-resource/mcp"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        let c = parse_challenge(403, r#"Bearer error="insufficient_scope", scope="files:read files:write""#).unwrap();
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert!(parse_challenge(401, "Basic realm=x").is_none());
    }

    #[test]
    fn resources_are_canonical() {
        assert_eq!(canonical_resource("HTTP://Example.COM:8080/mcp#x").unwrap(), "http://example.com:8080/mcp");
        assert_eq!(canonical_resource("https://h").unwrap(), "https://h/");
        assert!(canonical_resource("file:///x").is_err());
    }

    #[test]
    fn authorization_servers_use_https_or_this_machine() {
        assert!(secure_url("https://as.example/token").is_ok());
        assert!(secure_url("http://localhost:3001/token").is_ok());
        assert!(secure_url("http://127.0.0.1:3001/token").is_ok());
        assert!(secure_url("http://[::1]/token").is_ok());
        assert!(secure_url("http://as.example/token").is_err());
        assert!(secure_url("file:///etc/passwd").is_err());
        assert!(secure_url("javascript:alert(1)").is_err());
    }

    #[test]
    fn the_issuer_of_the_redirect_is_checked() {
        assert!(check_iss(Some("https://as.example/"), "https://as.example", true).is_ok());
        assert!(check_iss(None, "https://as.example", false).is_ok());
        assert!(check_iss(Some("https://evil.example"), "https://as.example", false).unwrap_err().contains("mix-up"));
        assert!(check_iss(None, "https://as.example", true).unwrap_err().contains("promises"));
    }

    #[test]
    fn a_step_up_widens_the_next_sign_in() {
        let login: Login = serde_json::from_value(serde_json::json!({
            "resource": "http://h/mcp", "server": "s", "grant": "authorization_code", "access_token": "t",
            "client_id": "c", "token_endpoint": "http://as/token", "updated_ms": 0}))
        .unwrap();
        let mut found = Discovered::of_login(&login);
        found.scopes = vec!["mcp:tools".into()];
        assert_eq!(wanted_scopes(None, None, &found, None), ["mcp:tools"]);
        let challenge = Challenge { status: 401, scope: Some("read".into()), ..Challenge::default() };
        assert_eq!(wanted_scopes(None, Some(&challenge), &found, None), ["read"]);
        let previous: Login = serde_json::from_value(serde_json::json!({
            "resource": "http://h/mcp", "server": "s", "grant": "authorization_code", "access_token": "t",
            "scopes": ["read"], "step_up": ["write"], "client_id": "c", "token_endpoint": "x", "updated_ms": 0}))
        .unwrap();
        assert_eq!(wanted_scopes(None, Some(&challenge), &found, Some(&previous)), ["read", "write"]);
        let own = OAuthConfig { scopes: vec!["admin".into()], ..OAuthConfig::default() };
        assert_eq!(wanted_scopes(Some(&own), Some(&challenge), &found, None), ["admin"]);
    }

    #[test]
    fn the_account_comes_from_the_id_token() {
        let jwt = format!("e30.{}.sig", URL_SAFE_NO_PAD.encode(br#"{"sub":"u1","email":"me@x"}"#));
        assert_eq!(account(&serde_json::json!({"id_token": jwt})).as_deref(), Some("me@x"));
        assert_eq!(account(&serde_json::json!({"access_token": "t"})), None);
    }
}
