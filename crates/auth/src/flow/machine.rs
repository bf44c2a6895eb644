//! The client credentials grant: a machine signs in without a person.

use super::{Authenticator, Challenge, login_from, wanted_scopes};
use crate::client_auth::Method;
use crate::error::Result;
use crate::vault::Login;
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;

impl Authenticator {
    /// The client credentials grant: `client_id` and the secret from `${env:NAME}`.
    pub(super) async fn client_credentials(
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
}
