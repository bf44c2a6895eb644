//! Signing in to OAuth servers, for every front door: [`App::auth_status`],
//! [`App::auth_login`], [`App::auth_logout`] (the studio's Servers panel, the CLI with a
//! store) and the same over a data folder without a store ([`status`], [`login`],
//! [`logout`]: `mcpflow auth …`). Tokens stay in the vault (the OS keyring where one is
//! available, else `auth/tokens.json` in the data folder, user-only), which alone answers
//! who holds a login: keyed by the server's canonical URL, it names the server and when it
//! signed in. Signing out deletes the login there and asks the authorization server to
//! revoke it (RFC 7009, best effort: [`Revocation`] says what it answered).

use crate::App;
use crate::error::{AppError, Result};
/// What signing out told the authorization server.
pub use mcpflow_auth::Revocation;
use mcpflow_auth::{Authenticator, LoginRequest, canonical_resource, http_config, resolved_url};
/// How the authorization URL is opened ([`LoginOptions::browser`]).
pub use mcpflow_auth::{Browser, SignIn};
use mcpflow_config::env::process_env;
use mcpflow_mcp::{Approvals, EnvLookup, ServerConfigs};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// How one server stands with its sign-in.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct AuthStatus {
    pub server: String,
    /// The resource URL (the server's canonical URL).
    pub url: String,
    pub signed_in: bool,
    /// `authorization_code` | `client_credentials`.
    pub grant: Option<String>,
    /// Who, when the token answer says (an id token's `email` / `sub`), else `None`.
    pub account: Option<String>,
    pub scopes: Vec<String>,
    /// Unix milliseconds of the access token's expiry.
    pub expires_at_ms: Option<i64>,
    pub refreshable: bool,
}

/// How a sign-in runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginOptions {
    /// How long the browser has to come back (5 minutes by default).
    pub timeout: Duration,
    /// How the authorization URL is opened: `$BROWSER`, else `xdg-open` / `open`.
    pub browser: Browser,
}

impl Default for LoginOptions {
    fn default() -> Self {
        LoginOptions { timeout: Duration::from_secs(300), browser: Browser::System }
    }
}

impl App {
    /// The authenticator the pool and the sign-in share.
    pub(crate) fn authenticator(&self) -> Arc<Authenticator> {
        self.inner.auth.clone()
    }

    /// One entry per configured HTTP server.
    pub async fn auth_status(&self) -> Result<Vec<AuthStatus>> {
        let state = self.server_state();
        status(&self.inner.auth, &state.configs)
    }

    /// Signs in to `server` through the browser (or by client credentials when its
    /// `oauth` says so) and stores the login in the vault. The server is found among
    /// the configured ones, or with `doc` as a run of that document finds it (its own
    /// `servers` under names not configured): a document's server that needs approval
    /// must have it first, as for its run.
    pub async fn auth_login(&self, doc: Option<&Value>, server: &str, options: LoginOptions) -> Result<AuthStatus> {
        let state = self.server_state();
        let configs = match doc {
            Some(doc) => self.run_configs(doc)?,
            None => state.configs,
        };
        let status = login(&self.inner.auth, &configs, &state.approvals, server, options).await?;
        // Connections made before the sign-in hold no token: the next use connects again.
        self.reload_servers()?;
        Ok(status)
    }

    /// Forgets `server`'s login (its tokens leave the vault) and asks the authorization
    /// server to revoke it.
    pub async fn auth_logout(&self, server: &str) -> Result<Revocation> {
        let state = self.server_state();
        let told = logout(&self.inner.auth, &state.configs, server).await?;
        self.reload_servers()?;
        Ok(told)
    }
}

/// The servers `mcpflow auth` finds without a store: the `mcpServers` files (later over
/// earlier), then the `servers` of a blueprint (it must be valid), as `mcpflow run`
/// merges them; and what may be reached (`--allow-server`).
pub fn login_servers(
    files: &[std::path::PathBuf],
    blueprint: Option<&[u8]>,
    allow: &[String],
) -> std::result::Result<(ServerConfigs, Approvals), crate::headless::HeadlessError> {
    let (mut configs, _) = crate::server_report::file_servers(files, &[], false)?;
    if let Some(bytes) = blueprint {
        let checked = crate::headless::check(bytes)?;
        configs = configs.with_blueprint(&checked.blueprint.servers);
    }
    let mut approvals = Approvals::new();
    for name in allow {
        approvals.approve_server(&configs, name)?;
    }
    Ok((configs, approvals))
}

/// Whether signing in to `server` opens a browser (not for `client_credentials`).
pub fn opens_browser(configs: &ServerConfigs, server: &str) -> bool {
    let grant = configs.get(server).and_then(|entry| http_config(server, entry)).and_then(|c| c.oauth.as_ref());
    grant.and_then(|o| o.grant) != Some(mcpflow_blueprint::OAuthGrant::ClientCredentials)
}

/// The sign-in state of every HTTP server in `configs` (`${env:NAME}` from the process).
pub fn status(auth: &Authenticator, configs: &ServerConfigs) -> Result<Vec<AuthStatus>> {
    let env = &process_env();
    let mut out = Vec::new();
    for (name, entry) in configs.iter() {
        let Some(config) = http_config(name, entry) else { continue };
        let url = match resolved_url(name, config, env) {
            Ok(url) => canonical_resource(&url).unwrap_or(url),
            // A URL whose variable is not set here: shown as written, with no login.
            Err(_) => config.url.clone().unwrap_or_default(),
        };
        let login = auth.vault().get(&url)?;
        out.push(match login {
            Some(login) => AuthStatus {
                server: name.to_owned(),
                url,
                signed_in: true,
                grant: Some(login.grant.clone()),
                account: login.account.clone(),
                scopes: login.scopes.clone(),
                expires_at_ms: login.expires_at_ms,
                refreshable: login.refresh_token.is_some() || login.grant == "client_credentials",
            },
            None => AuthStatus {
                server: name.to_owned(),
                url,
                signed_in: false,
                grant: None,
                account: None,
                scopes: Vec::new(),
                expires_at_ms: None,
                refreshable: false,
            },
        });
    }
    Ok(out)
}

/// Signs in to `server` of `configs` and returns its new status.
pub async fn login(
    auth: &Authenticator,
    configs: &ServerConfigs,
    approvals: &Approvals,
    server: &str,
    options: LoginOptions,
) -> Result<AuthStatus> {
    let env = &process_env();
    let (config, url) = http_server(configs, env, server)?;
    // A blueprint's server that needs approval is not contacted before it has it.
    approvals.check(server, config, configs.origin(server))?;
    if mcpflow_auth::has_static_authorization(config) {
        return Err(AppError::BadRequest(format!(
            "server `{server}` sends its own `Authorization` header (in `headers`), which wins over a sign-in; \
             remove that header to sign in with OAuth"
        )));
    }
    auth.login(LoginRequest {
        server,
        url: &url,
        oauth: config.oauth.as_ref(),
        env,
        timeout: options.timeout,
        browser: &options.browser,
    })
    .await?;
    let statuses = status(auth, configs)?;
    statuses.into_iter().find(|s| s.server == server).ok_or_else(|| not_found(server))
}

/// Forgets the login of `server` of `configs` here, then asks its authorization server
/// to revoke the tokens (best effort, a few seconds at most). Nothing happens when it
/// holds none ([`Revocation::NoLogin`]).
pub async fn logout(auth: &Authenticator, configs: &ServerConfigs, server: &str) -> Result<Revocation> {
    let env = &process_env();
    let (config, url) = http_server(configs, env, server)?;
    Ok(auth.logout_revoking(server, &url, config.oauth.as_ref(), env).await?)
}

/// What signing out of `server` did, in a sentence (the CLI's output, the studio's note).
pub fn describe_logout(server: &str, told: &Revocation) -> String {
    match told {
        Revocation::NoLogin => format!("`{server}` held no sign-in on this machine; nothing to remove"),
        Revocation::Revoked => format!(
            "signed out of `{server}`: its tokens are removed from this machine and the authorization server revoked them"
        ),
        Revocation::NotOffered => format!(
            "signed out of `{server}`: its tokens are removed from this machine; the authorization server offers no \
             revocation, so they stay valid there until they expire"
        ),
        Revocation::Failed(why) => format!(
            "signed out of `{server}`: its tokens are removed from this machine, but the authorization server was not \
             told ({why}), so they stay valid there until they expire; revoke mcpflow's access in the account's \
             settings at the provider if that matters"
        ),
    }
}

fn http_server<'a>(
    configs: &'a ServerConfigs,
    env: &EnvLookup,
    server: &str,
) -> Result<(&'a mcpflow_blueprint::ServerConfig, String)> {
    let entry = configs.get(server).ok_or_else(|| not_found(server))?;
    let config = http_config(server, entry).ok_or_else(|| {
        AppError::BadRequest(format!(
            "server `{server}` is not a streamable HTTP server; only HTTP servers sign in (stdio servers get their \
             credentials through `env`)"
        ))
    })?;
    Ok((config, resolved_url(server, config, env)?))
}

fn not_found(server: &str) -> AppError {
    AppError::NotFound { what: "server", id: server.to_owned() }
}
