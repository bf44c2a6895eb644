//! More scope (the MCP spec's step-up authorization): a server that refuses a request
//! with `403` and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` asks
//! for a token with that scope. The scope is always remembered with the login, so the
//! next sign-in asks for it too. Signing in again at once — the browser opened on the
//! authorization page, the refused request sent again with the new token — happens only
//! where the person running said so beforehand ([`SignIn`]: `mcpflow run --sign-in`);
//! nothing else opens a browser.
//!
//! A step-up is tried when the challenge names a scope the login lacks, at most
//! [`MAX_STEP_UPS`] times per server for the authenticator's lifetime (a server that
//! keeps refusing does not loop the person through the browser), one at a time: requests
//! refused together sign in once.

use super::browser::Browser;
use super::flow::{Authenticator, Challenge, LoginRequest, canonical_resource};
use super::vault::Login;
use crate::error::Result;
use mcpflow_blueprint::{OAuthConfig, OAuthGrant};
use mcpflow_config::EnvLookup;
use std::sync::Arc;
use std::time::Duration;

/// Sign-ins for more scope per server, at most.
pub const MAX_STEP_UPS: u32 = 2;

/// What a person allowed before a run: a server asking for a wider scope may open the
/// browser to sign in again.
#[derive(Clone)]
pub struct SignIn {
    pub browser: Browser,
    /// How long the browser has to come back.
    pub timeout: Duration,
    /// Told before the browser opens.
    pub notice: Notice,
}

/// What the person is told (server, scope) before the browser opens, in the front
/// door's words.
pub type Notice = Arc<dyn Fn(&str, &str) + Send + Sync>;

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn").field("browser", &self.browser).field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl Authenticator {
    /// Remembers the scope `challenge` asks for with the login of `url`, so that the next
    /// sign-in asks for it too.
    pub(super) fn remember_step_up(&self, url: &str, challenge: &Challenge) -> Result<()> {
        if let Ok(resource) = canonical_resource(url)
            && let Some(mut login) = self.vault.get(&resource)?
            && let Some(scope) = &challenge.scope
        {
            for wanted in scope.split_whitespace() {
                if !login.scopes.iter().chain(&login.step_up).any(|s| s == wanted) {
                    login.step_up.push(wanted.to_owned());
                }
            }
            self.vault.put(login)?;
        }
        Ok(())
    }

    /// After the server refused `sent` for want of a scope: a login that has it, signed in
    /// again through the browser when the front door allows it ([`Self::with_sign_in`]).
    /// `None`: no step-up is allowed or would help (the caller reports `AUTH_REQUIRED`).
    pub async fn step_up(
        &self,
        server: &str,
        url: &str,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
        sent: Option<&str>,
        challenge: &Challenge,
    ) -> Result<Option<Login>> {
        let Some(sign_in) = &self.sign_in else { return Ok(None) };
        let wanted: Vec<&str> = challenge.scope.as_deref().unwrap_or_default().split_whitespace().collect();
        let machine = oauth.is_some_and(|o| o.grant == Some(OAuthGrant::ClientCredentials));
        if !challenge.is_insufficient_scope() || wanted.is_empty() || machine {
            return Ok(None);
        }
        let Ok(resource) = canonical_resource(url) else { return Ok(None) };
        let mut done = self.stepped_up.lock().await;
        let held = self.vault.get(&resource)?;
        let has_all = |login: &Login| wanted.iter().all(|w| login.scopes.iter().any(|s| s == w));
        if let Some(login) = held.as_ref().filter(|login| has_all(login)) {
            // Another request's step-up got it meanwhile; else the server refuses a token
            // that has what it asks for, and signing in again would not help.
            return Ok((sent != Some(login.access_token.as_str())).then(|| login.clone()));
        }
        let count = done.entry(resource).or_default();
        if *count >= MAX_STEP_UPS {
            tracing::info!(server, "the server still asks for more scope; no more sign-ins this time");
            return Ok(None);
        }
        *count += 1;
        self.remember_step_up(url, challenge)?;
        (sign_in.notice)(server, &wanted.join(" "));
        let request = LoginRequest { server, url, oauth, env, timeout: sign_in.timeout, browser: &sign_in.browser };
        self.login(request).await.map(Some)
    }
}
