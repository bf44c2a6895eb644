//! Signing out: the login deleted here, then revoked at the authorization server
//! (RFC 7009) when it offers that, within [`REVOKE_TIMEOUT`].

use super::{
    Authenticator, REVOKE_TIMEOUT, Revocation, canonical_resource, form_body, hide_sent_secrets, oauth_error,
    read_json, secure_url, without_url,
};
use crate::error::Result;
use crate::vault::Login;
use mcpflow_blueprint::OAuthConfig;
use mcpflow_config::EnvLookup;
use serde_json::Value;

impl Authenticator {
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
    pub(super) async fn revoke(
        &self,
        server: &str,
        login: &Login,
        oauth: Option<&OAuthConfig>,
        env: &EnvLookup,
    ) -> Revocation {
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
}
