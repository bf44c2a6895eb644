//! Refreshing a login with its refresh token, one refresh at a time.

use super::{Authenticator, expiring, login_from};
use crate::discovery::Discovered;
use crate::error::Result;
use crate::vault::Login;
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;

impl Authenticator {
    /// A fresh access token from the refresh token; stored. `AUTH_REQUIRED` when the
    /// authorization server refuses it (the person must sign in again).
    pub(super) async fn refresh(
        &self,
        server: &str,
        login: Login,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> Result<Login> {
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
}
