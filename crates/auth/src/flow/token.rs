//! Token requests: the POST to the token endpoint and what its answer means.

use super::{Authenticator, form_body, hide_sent_secrets, oauth_error, read_json, without_url};
use crate::client_auth::ClientAuth;
use crate::discovery::Discovered;
use crate::error::Result;
use serde_json::Value;

impl Authenticator {
    /// POSTs a token request; the answer's JSON, or `AUTH_FAILED` with what the
    /// authorization server said.
    pub(super) async fn token_request(
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
    pub(super) async fn token_request_raw(
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
