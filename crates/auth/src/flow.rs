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

use super::assertion::SigningKey;
use super::browser::Browser;
use super::client_auth::{ClientAuth, Method};
use super::discovery::Discovered;
use super::listener::{CallbackError, Loopback};
use super::vault::{Login, Vault, now_ms};
use crate::error::{Error, Result};
use crate::trust::Clients;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcpflow_blueprint::{OAuthConfig, OAuthGrant};
use mcpflow_config::EnvLookup;
use mcpflow_config::env::resolve;
use serde_json::Value;
use sha2::{Digest, Sha256};
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

    /// Forgets the login for `url` here, then asks its authorization server to revoke
    /// the refresh token (else the access token) when its metadata names a
    /// `revocation_endpoint` (RFC 7009): best effort, within [`REVOKE_TIMEOUT`]. The
    /// local delete comes first and stands whatever the authorization server does.
    pub async fn logout_revoking(
        &self,
        server: &str,
        url: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> Result<Revocation> {
        let Ok(resource) = canonical_resource(url) else { return Ok(Revocation::NoLogin) };
        // An unreadable vault is still emptied of this login; there is nothing to revoke.
        let login = self.vault.get(&resource).ok().flatten();
        let removed = self.vault.remove(&resource)?;
        let Some(login) = login.filter(|_| removed) else { return Ok(Revocation::NoLogin) };
        match tokio::time::timeout(REVOKE_TIMEOUT, self.revoke(server, &login, oauth, env)).await {
            Ok(told) => Ok(told),
            Err(_) => Ok(Revocation::Failed(format!(
                "the authorization server did not answer within {} s",
                REVOKE_TIMEOUT.as_secs()
            ))),
        }
    }

    /// RFC 7009: `POST revocation_endpoint` with the refresh token (else the access
    /// token) and the client's identification.
    async fn revoke(&self, server: &str, login: &Login, oauth: Option<&OAuthConfig>, env: &EnvLookup) -> Revocation {
        let Some(issuer) = &login.issuer else {
            return Revocation::Failed("the login does not name its authorization server".to_owned());
        };
        let metadata = match self.server_metadata(issuer).await {
            Ok(metadata) => metadata,
            Err(why) => return Revocation::Failed(why),
        };
        let Some(endpoint) = metadata.get("revocation_endpoint").and_then(Value::as_str) else {
            return Revocation::NotOffered;
        };
        if let Err(why) = secure_url(endpoint) {
            return Revocation::Failed(why);
        }
        let (token, hint) = match &login.refresh_token {
            Some(refresh) => (refresh.clone(), "refresh_token"),
            None => (login.access_token.clone(), "access_token"),
        };
        let auth = match self.login_client(server, login, oauth, env) {
            Ok(auth) => auth,
            Err(e) => return Revocation::Failed(e.to_string()),
        };
        let http = match self.http(endpoint) {
            Ok(http) => http,
            Err(e) => return Revocation::Failed(e.to_string()),
        };
        let mut form = vec![("token", token), ("token_type_hint", hint.to_owned())];
        let request = match auth.apply(&mut form, http.post(endpoint), issuer) {
            Ok(request) => request,
            Err(why) => return Revocation::Failed(why),
        };
        let sent = request
            .timeout(REVOKE_TIMEOUT)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json")
            .body(form_body(&form))
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => return Revocation::Failed(format!("cannot reach {endpoint}: {}", without_url(&e))),
        };
        let status = response.status();
        if status.is_success() {
            return Revocation::Revoked;
        }
        let said = read_json(response)
            .await
            .map(|body| hide_sent_secrets(&oauth_error(&body), &form, &auth))
            .unwrap_or_default();
        Revocation::Failed(format!("{endpoint} answered {status}{said}"))
    }

    /// The access token to send to `url` now: the stored one, refreshed first when it
    /// expires within [`REFRESH_MARGIN_MS`]; a client-credentials token fetched when
    /// there is none. `None`: no login (the server may need none).
    pub async fn bearer(
        &self,
        server: &str,
        url: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> Result<Option<String>> {
        Ok(self.current(server, url, oauth, env).await?.map(|login| login.access_token))
    }

    /// [`Self::bearer`], with the whole login (its expiry, to know when to ask again).
    pub async fn current(
        &self,
        server: &str,
        url: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> Result<Option<Login>> {
        let resource = canonical_resource(url).map_err(|m| Self::failed(server, m))?;
        let login = self.vault.get(&resource)?;
        let machine = oauth.is_some_and(|o| o.grant == Some(OAuthGrant::ClientCredentials));
        match login {
            Some(login) if !expiring(&login) => Ok(Some(login)),
            Some(login) if login.refresh_token.is_some() => match self.refresh(server, login.clone(), oauth, env).await
            {
                Ok(fresh) => Ok(Some(fresh)),
                // The server decides whether the old token still works; a refused
                // refresh of an expired token is a sign-in needed.
                Err(error @ Error::AuthRequired { .. }) if login.expires_at_ms.is_some_and(|t| t <= now_ms()) => {
                    Err(error)
                }
                Err(error) => {
                    tracing::warn!(
                        server,
                        code = error.code(),
                        "refreshing the sign-in failed; the stored token is sent"
                    );
                    Ok(Some(login))
                }
            },
            _ if machine => Ok(Some(self.client_credentials(server, url, oauth, env, None).await?)),
            Some(login) => Ok(Some(login)),
            None => Ok(None),
        }
    }

    /// After the server refused `sent` (or no token) with `challenge`: a new token to try
    /// once (refreshed, or fetched by client credentials), else `AUTH_REQUIRED`.
    pub async fn unauthorized(
        &self,
        server: &str,
        url: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
        sent: Option<&str>,
        challenge: &Challenge,
    ) -> Result<String> {
        if challenge.is_insufficient_scope() {
            // Remembered, so the next sign-in asks for it (the step-up: `step_up.rs`).
            self.remember_step_up(url, challenge)?;
            let how = match oauth {
                Some(o) if !o.scopes.is_empty() => "add it to the entry's `oauth.scopes`, then sign in again",
                _ => "signing in again asks for it",
            };
            return Err(self.required(
                server,
                format!("the server asks for a wider scope than the sign-in has; {how}"),
                challenge.scope.clone(),
            ));
        }
        let machine = oauth.is_some_and(|o| o.grant == Some(OAuthGrant::ClientCredentials));
        if machine {
            return Ok(self.client_credentials(server, url, oauth, env, Some(challenge)).await?.access_token);
        }
        let resource = canonical_resource(url).map_err(|m| Self::failed(server, m))?;
        match (sent, self.vault.get(&resource)?) {
            (None, None) => Err(self.required(server, "it answered 401 and mcpflow holds no sign-in for it", None)),
            // Signed in or refreshed meanwhile (another connection, `auth login`).
            (sent, Some(login)) if sent != Some(login.access_token.as_str()) && !expiring(&login) => {
                Ok(login.access_token)
            }
            (Some(_), Some(login)) if login.refresh_token.is_some() => {
                Ok(self.refresh(server, login, oauth, env).await?.access_token)
            }
            _ => Err(self.required(server, "its sign-in was refused and cannot be refreshed", None)),
        }
    }

    /// Sends nothing but a probe (see [`probe`]).
    pub async fn probe(&self, url: &str, token: Option<&str>) -> std::result::Result<Option<Challenge>, String> {
        let http = self.http(url).map_err(|e| e.to_string())?;
        probe(&http, url, token).await
    }

    /// Signs in through the browser (or, for `client_credentials`, without one) and
    /// stores the login.
    pub async fn login(&self, request: LoginRequest<'_>) -> Result<Login> {
        let LoginRequest { server, url, oauth, env, timeout, browser } = request;
        if oauth.is_some_and(|o| o.grant == Some(OAuthGrant::ClientCredentials)) {
            return self.client_credentials(server, url, oauth, env, None).await;
        }
        let challenge = self.probe(url, None).await.map_err(|m| Self::failed(server, m))?;
        let found = self.discover(server, url, challenge.as_ref()).await?;
        if !found.pkce_s256 {
            return Err(Self::failed(
                server,
                format!("the authorization server {} does not offer PKCE with S256, which MCP requires", found.issuer),
            ));
        }
        let Some(authorization_endpoint) = found.authorization_endpoint.clone() else {
            return Err(Self::failed(
                server,
                format!("the authorization server {} has no authorization endpoint", found.issuer),
            ));
        };
        let loopback = Loopback::bind()
            .await
            .map_err(|e| Self::failed(server, format!("cannot listen on 127.0.0.1 for the redirect: {e}")))?;
        let redirect_uri = loopback.redirect_uri();
        let previous = self.vault.get(&found.key)?;
        let scopes = wanted_scopes(oauth, challenge.as_ref(), &found, previous.as_ref());
        let (client_id, issued_secret, registered) = self.client(server, oauth, &found, &redirect_uri, &scopes).await?;
        let auth =
            self.client_auth(server, oauth, env, client_id.clone(), issued_secret.clone(), registered, &found)?;
        let (verifier, state) = random_token().and_then(|v| Ok((v, random_token()?))).map_err(|e| {
            Self::failed(server, format!("no random bytes from the operating system for the sign-in: {e}"))
        })?;
        let mut authorize = url::Url::parse(&authorization_endpoint)
            .map_err(|e| Self::failed(server, format!("the authorization endpoint is not a URL: {e}")))?;
        {
            let mut q = authorize.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("state", &state)
                .append_pair("code_challenge", &URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())))
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", &found.resource);
            if !scopes.is_empty() {
                q.append_pair("scope", &scopes.join(" "));
            }
        }
        browser.open(authorize.as_str()).map_err(|m| {
            Self::failed(server, format!("{m}; set `$BROWSER` to a browser command, then sign in again"))
        })?;
        let callback = match loopback.wait(&state, timeout).await {
            Ok(callback) => callback,
            Err(CallbackError::Timeout) => {
                return Err(Error::AuthTimeout { server: server.to_owned(), after: timeout });
            }
            Err(CallbackError::Refused(why)) => return Err(Self::failed(server, why)),
        };
        check_iss(callback.iss.as_deref(), &found.issuer, found.iss_supported).map_err(|m| Self::failed(server, m))?;
        let form = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", callback.code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
            ("resource", found.resource.clone()),
        ];
        let answer = self.token_request(server, &found, form, &auth).await?;
        let login = login_from(server, &found, "authorization_code", &auth, issued_secret, answer, None, scopes)?;
        self.vault.put(login.clone())?;
        Ok(login)
    }

    /// A fresh access token from the refresh token; stored. `AUTH_REQUIRED` when the
    /// authorization server refuses it (the person must sign in again).
    async fn refresh(&self, server: &str, login: Login, oauth: Option<&OAuthConfig>, env: &EnvLookup) -> Result<Login> {
        let _one_at_a_time = self.refreshing.lock().await;
        // Refreshed by someone else while this waited: theirs is the login now.
        if let Some(current) = self.vault.get(&login.resource)?
            && current.access_token != login.access_token
            && !expiring(&current)
        {
            return Ok(current);
        }
        let Some(refresh_token) = login.refresh_token.clone() else {
            return Err(self.required(server, "its sign-in expired and cannot be refreshed", None));
        };
        let form = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", login.audience.clone().unwrap_or_else(|| login.resource.clone())),
        ];
        let auth = self.login_client(server, &login, oauth, env)?;
        let found = Discovered::of_login(&login);
        let answer = match self.token_request_raw(server, &found, form, &auth).await? {
            Ok(answer) => answer,
            Err(refusal) => {
                return Err(self.required(server, format!("refreshing its sign-in was refused ({refusal})"), None));
            }
        };
        let fresh = login_from(
            server,
            &found,
            &login.grant,
            &auth,
            login.client_secret.clone(),
            answer,
            Some(&login),
            login.scopes.clone(),
        )?;
        self.vault.put(fresh.clone())?;
        tracing::info!(server, "refreshed the sign-in");
        Ok(fresh)
    }

    /// The client credentials grant: `client_id` and the secret from `${env:NAME}`.
    async fn client_credentials(
        &self,
        server: &str,
        url: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
        challenge: Option<&Challenge>,
    ) -> Result<Login> {
        let Some(config) = oauth else {
            return Err(Self::failed(server, "the client credentials grant needs an `oauth` object"));
        };
        let Some(client_id) = config.client_id.clone() else {
            return Err(Self::failed(server, "the client credentials grant needs `oauth.client_id`"));
        };
        let challenge = match challenge {
            Some(c) => Some(c.clone()),
            None => self.probe(url, None).await.map_err(|m| Self::failed(server, m))?,
        };
        let found = self.discover(server, url, challenge.as_ref()).await?;
        let auth = self.client_auth(server, oauth, env, client_id, None, None, &found)?;
        if auth.method == Method::None {
            return Err(Self::failed(
                server,
                "the client credentials grant needs `oauth.client_secret` (`${env:NAME}`) or `oauth.private_key`",
            ));
        }
        let scopes = wanted_scopes(oauth, challenge.as_ref(), &found, None);
        let mut form = vec![("grant_type", "client_credentials".to_owned()), ("resource", found.resource.clone())];
        if !scopes.is_empty() {
            form.push(("scope", scopes.join(" ")));
        }
        let answer = self.token_request(server, &found, form, &auth).await?;
        let mut login = login_from(server, &found, "client_credentials", &auth, None, answer, None, scopes)?;
        // A new client-credentials token is had without anyone: never refreshed.
        login.refresh_token = None;
        self.vault.put(login.clone())?;
        Ok(login)
    }

    /// The configured `client_secret` (`${env:NAME}` resolved) when `client_id` is the
    /// configured client.
    fn configured_secret(
        &self,
        server: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
        client_id: &str,
    ) -> Result<Option<String>> {
        match oauth {
            Some(o) if o.client_id.as_deref() == Some(client_id) => o
                .client_secret
                .as_deref()
                .map(|s| resolve(s, env, server, "oauth.client_secret"))
                .transpose()
                .map_err(Error::from),
            _ => Ok(None),
        }
    }

    /// The configured `private_key` when `client_id` is the configured client: the PEM in
    /// `${env:NAME}`, or a user-only file.
    fn configured_key(
        &self,
        server: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
        client_id: &str,
    ) -> Result<Option<SigningKey>> {
        let Some(reference) =
            oauth.filter(|o| o.client_id.as_deref() == Some(client_id)).and_then(|o| o.private_key.as_deref())
        else {
            return Ok(None);
        };
        let from_env = if mcpflow_config::env::references(reference).is_empty() {
            None
        } else {
            Some(resolve(reference, env, server, "oauth.private_key")?)
        };
        SigningKey::load(reference, from_env).map(Some).map_err(|m| Self::failed(server, m))
    }

    /// How `client_id` authenticates to `found`'s token endpoint: with the configured
    /// secret or key, else the secret it was issued; as it `registered`, else as the
    /// metadata offers.
    #[allow(clippy::too_many_arguments)]
    fn client_auth(
        &self,
        server: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
        client_id: String,
        issued_secret: Option<String>,
        registered: Option<Method>,
        found: &Discovered,
    ) -> Result<ClientAuth> {
        let secret = self.configured_secret(server, oauth, env, &client_id)?.or(issued_secret);
        let key = self.configured_key(server, oauth, env, &client_id)?;
        let auth = ClientAuth::choose(client_id, secret, key, registered, &found.auth_methods)
            .map_err(|m| Self::failed(server, m))?;
        auth.check_algorithm(&found.signing_algs).map_err(|m| Self::failed(server, m))?;
        Ok(auth)
    }

    /// How the client of `login` authenticates when it refreshes or revokes: as it did
    /// when it signed in (a login kept before the method was recorded sent its secret in
    /// the form).
    fn login_client(
        &self,
        server: &str,
        login: &Login,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> Result<ClientAuth> {
        let secret = self.configured_secret(server, oauth, env, &login.client_id)?.or(login.client_secret.clone());
        let key = self.configured_key(server, oauth, env, &login.client_id)?;
        let method = match login.token_auth_method.as_deref().and_then(Method::parse) {
            Some(method) => method,
            None if secret.is_some() => Method::Post,
            None => Method::None,
        };
        ClientAuth::choose(login.client_id.clone(), secret, key, Some(method), &[]).map_err(|m| Self::failed(server, m))
    }

    /// Which client signs in: the configured one, a Client ID Metadata Document, or one
    /// registered now: `(client_id, the secret it was issued, the method it registered)`.
    async fn client(
        &self,
        server: &str,
        oauth: Option<&OAuthConfig>,
        found: &Discovered,
        redirect_uri: &str,
        scopes: &[String],
    ) -> Result<(String, Option<String>, Option<Method>)> {
        if let Some(client_id) = oauth.and_then(|o| o.client_id.clone()) {
            return Ok((client_id, None, None));
        }
        if found.cimd_supported
            && let Some(url) = oauth.and_then(|o| o.client_metadata_url.clone())
        {
            return Ok((url, None, None));
        }
        let Some(endpoint) = &found.registration_endpoint else {
            return Err(Self::failed(
                server,
                format!(
                    "the authorization server {} offers no dynamic client registration; register mcpflow there \
                     (redirect URI http://127.0.0.1/callback, any port) and set `oauth.client_id` in the server's config",
                    found.issuer
                ),
            ));
        };
        let mut metadata = serde_json::json!({
            "client_name": "mcpflow",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": Method::to_register(&found.auth_methods).as_str(),
        });
        if !scopes.is_empty() {
            metadata["scope"] = Value::String(scopes.join(" "));
        }
        let response = self
            .http(endpoint)?
            .post(endpoint)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .body(metadata.to_string())
            .send()
            .await
            .map_err(|e| {
                Self::failed(server, format!("registering mcpflow at {endpoint} failed: {}", without_url(&e)))
            })?;
        let status = response.status();
        let body = read_json(response).await.map_err(|m| Self::failed(server, format!("registration: {m}")))?;
        if !status.is_success() {
            return Err(Self::failed(
                server,
                format!("the authorization server refused to register mcpflow ({status}{})", oauth_error(&body)),
            ));
        }
        let client_id = body
            .get("client_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Self::failed(server, "the registration answer has no `client_id`"))?
            .to_owned();
        let secret = body.get("client_secret").and_then(Value::as_str).map(str::to_owned);
        let registered = body.get("token_endpoint_auth_method").and_then(Value::as_str).and_then(Method::parse);
        Ok((client_id, secret, registered))
    }

    /// POSTs a token request; the answer's JSON, or `AUTH_FAILED` with what the
    /// authorization server said.
    async fn token_request(
        &self,
        server: &str,
        found: &Discovered,
        form: Vec<(&'static str, String)>,
        auth: &ClientAuth,
    ) -> Result<Value> {
        self.token_request_raw(server, found, form, auth).await?.map_err(|refusal| {
            Self::failed(server, format!("the authorization server refused the token request ({refusal})"))
        })
    }

    /// POSTs a token request to `found`'s token endpoint, the client authenticated by
    /// `auth`: `Ok(Err(why))` when the authorization server refused it (4xx: its status,
    /// `error` and `error_description`), `Err` when it could not be asked, failed (5xx)
    /// or its answer is unusable.
    async fn token_request_raw(
        &self,
        server: &str,
        found: &Discovered,
        mut form: Vec<(&'static str, String)>,
        auth: &ClientAuth,
    ) -> Result<std::result::Result<Value, String>> {
        let endpoint = found.token_endpoint.as_str();
        // An assertion's audience is the issuer (RFC 7523bis); a login kept without one,
        // the token endpoint.
        let audience = if found.issuer.is_empty() { endpoint } else { found.issuer.as_str() };
        let request = auth
            .apply(&mut form, self.http(endpoint)?.post(endpoint), audience)
            .map_err(|m| Self::failed(server, m))?;
        let response = request
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json")
            .body(form_body(&form))
            .send()
            .await
            .map_err(|e| {
                Self::failed(server, format!("cannot reach the token endpoint {endpoint}: {}", without_url(&e)))
            })?;
        let status = response.status();
        let answer = read_json(response).await;
        let oauth_error = |body: &Value| hide_sent_secrets(&oauth_error(body), &form, auth);
        match answer {
            Ok(body) if status.is_success() => Ok(Ok(body)),
            Ok(body) if status.is_client_error() => Ok(Err(format!("{status}{}", oauth_error(&body)))),
            Err(_) if status.is_client_error() => Ok(Err(status.to_string())),
            Err(m) if status.is_success() => Err(Self::failed(server, format!("the token answer: {m}"))),
            // The authorization server failed (5xx): nothing was decided about the grant.
            Ok(body) => Err(Self::failed(
                server,
                format!("the authorization server failed to answer the token request ({status}{})", oauth_error(&body)),
            )),
            Err(_) => Err(Self::failed(
                server,
                format!("the authorization server failed to answer the token request ({status})"),
            )),
        }
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
    reqwest::Client::builder()
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
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

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
