//! The token the pool asks for: the stored one, refreshed or fetched when due, and what
//! to do after a server refused one (`AUTH_REQUIRED` when nothing can help).

use super::{Authenticator, Challenge, canonical_resource, expiring};
use crate::error::{Error, Result};
use crate::vault::{Login, now_ms};
use mcpflow_blueprint::{OAuthConfig, OAuthGrant};
use mcpflow_config::EnvLookup;

impl Authenticator {
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
}
