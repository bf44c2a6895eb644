//! The authorization code grant with PKCE S256: the browser opened on the
//! authorization URL, the code taken at the loopback redirect, exchanged for tokens.

use super::{Authenticator, LoginRequest, check_iss, login_from, random_token, wanted_scopes};
use crate::discovery::Discovered;
use crate::error::{Error, Result};
use crate::listener::{CallbackError, Loopback};
use crate::vault::Login;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcpflow_blueprint::OAuthGrant;
use sha2::{Digest, Sha256};

impl Authenticator {
    /// Signs in through the browser (or, for `client_credentials`, without one) and
    /// stores the login.
    pub async fn login(&self, request: LoginRequest<'_>) -> Result<Login> {
        let LoginRequest { server, url, oauth, env, timeout, browser } = request;
        if oauth.is_some_and(|o| o.grant == Some(OAuthGrant::ClientCredentials)) {
            return self.client_credentials(server, url, oauth, env, None).await;
        }
        let challenge = self.probe(url, None).await.map_err(|m| Self::failed(server, m))?;
        let found = self.discover(server, url, challenge.as_ref()).await?;
        let authorization_endpoint = authorization_endpoint(&found).map_err(|m| Self::failed(server, m))?;
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
        let authorize = Authorize {
            endpoint: &authorization_endpoint,
            client_id: &client_id,
            redirect_uri: &redirect_uri,
            state: &state,
            verifier: &verifier,
            resource: &found.resource,
            scopes: &scopes,
        }
        .url()
        .map_err(|m| Self::failed(server, m))?;
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
}

/// The authorization endpoint of `found`, which must offer PKCE with S256.
fn authorization_endpoint(found: &Discovered) -> std::result::Result<String, String> {
    if !found.pkce_s256 {
        return Err(format!(
            "the authorization server {} does not offer PKCE with S256, which MCP requires",
            found.issuer
        ));
    }
    found
        .authorization_endpoint
        .clone()
        .ok_or_else(|| format!("the authorization server {} has no authorization endpoint", found.issuer))
}

/// What the browser is sent to: the authorization request.
struct Authorize<'a> {
    endpoint: &'a str,
    client_id: &'a str,
    redirect_uri: &'a str,
    state: &'a str,
    verifier: &'a str,
    resource: &'a str,
    scopes: &'a [String],
}

impl Authorize<'_> {
    fn url(&self) -> std::result::Result<url::Url, String> {
        let mut url =
            url::Url::parse(self.endpoint).map_err(|e| format!("the authorization endpoint is not a URL: {e}"))?;
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", self.client_id)
            .append_pair("redirect_uri", self.redirect_uri)
            .append_pair("state", self.state)
            .append_pair("code_challenge", &code_challenge(self.verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", self.resource);
        if !self.scopes.is_empty() {
            q.append_pair("scope", &self.scopes.join(" "));
        }
        drop(q);
        Ok(url)
    }
}

/// PKCE S256: the challenge sent for `verifier` (RFC 7636).
fn code_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(code_challenge(verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }
}
