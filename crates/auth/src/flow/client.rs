//! Which client signs in (configured, a Client ID Metadata Document, or registered now)
//! and how it authenticates to the token endpoint (a secret or a private key).

use super::{Authenticator, oauth_error, read_json, without_url};
use crate::assertion::SigningKey;
use crate::client_auth::{ClientAuth, Method};
use crate::discovery::Discovered;
use crate::error::{Error, Result};
use crate::vault::Login;
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;
use mcpflow_config::env::resolve;
use serde_json::Value;

impl Authenticator {
    /// The configured `client_secret` (`${env:NAME}` resolved) when `client_id` is the
    /// configured client.
    pub(super) fn configured_secret(
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
    pub(super) fn configured_key(
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
    pub(super) fn client_auth(
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
    pub(super) fn login_client(
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
    pub(super) async fn client(
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
}
