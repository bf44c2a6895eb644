//! Finding who signs in for a server, in the order the MCP spec's eras ask:
//!
//! 1. protected resource metadata (RFC 9728): the 401's `resource_metadata`, else the
//!    well-known URLs of the server's path, then its origin; it names the authorization
//!    server, whose metadata (RFC 8414, else OpenID discovery) must name that issuer;
//! 2. a 2025-03-26 server (it answered 401 and publishes no protected resource
//!    metadata): authorization server metadata at the server's own origin;
//! 3. else, still 2025-03-26: the default endpoints `/authorize`, `/token` and
//!    `/register` at that origin.
//!
//! Every endpoint found must be `https://` or on this machine.

use super::flow::{Authenticator, Challenge, canonical_resource, read_json, same_issuer, secure_url, without_url};
use crate::error::Result;
use serde_json::Value;

/// The metadata of the authorization server that signs in for a resource.
#[derive(Debug, Clone)]
pub(super) struct Discovered {
    /// The server's canonical URL: what the login is kept under.
    pub key: String,
    /// The `resource` parameter sent: the protected resource metadata's `resource`
    /// (the server's URL or a prefix of it), else the key.
    pub resource: String,
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub cimd_supported: bool,
    pub iss_supported: bool,
    pub pkce_s256: bool,
    pub scopes: Vec<String>,
    /// `token_endpoint_auth_methods_supported` (empty: not said).
    pub auth_methods: Vec<String>,
    /// `token_endpoint_auth_signing_alg_values_supported` (empty: not said).
    pub signing_algs: Vec<String>,
}

impl Discovered {
    /// What a refresh or revocation knows of an authorization server: its token
    /// endpoint and issuer, as the login kept them.
    pub(super) fn of_login(login: &super::vault::Login) -> Discovered {
        Discovered {
            key: login.resource.clone(),
            resource: login.audience.clone().unwrap_or_else(|| login.resource.clone()),
            issuer: login.issuer.clone().unwrap_or_default(),
            authorization_endpoint: None,
            token_endpoint: login.token_endpoint.clone(),
            registration_endpoint: None,
            cimd_supported: false,
            iss_supported: false,
            pkce_s256: true,
            scopes: Vec::new(),
            auth_methods: Vec::new(),
            signing_algs: Vec::new(),
        }
    }
}

impl Authenticator {
    /// The resource's authorization server and its metadata.
    pub(super) async fn discover(&self, server: &str, url: &str, challenge: Option<&Challenge>) -> Result<Discovered> {
        let fail = |m: String| Self::failed(server, m);
        let canonical = canonical_resource(url).map_err(fail)?;
        let base = url::Url::parse(&canonical).map_err(|e| fail(e.to_string()))?;
        let origin = base.origin().ascii_serialization();
        let path = base.path().trim_end_matches('/');
        // Protected resource metadata (RFC 9728): the challenge's URL, else well-known.
        let mut candidates = Vec::new();
        if let Some(url) = challenge.and_then(|c| c.resource_metadata.clone()) {
            candidates.push(url);
        }
        if !path.is_empty() {
            candidates.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
        }
        candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
        let mut resource_metadata = None;
        for candidate in &candidates {
            if let Some(doc) = self.get_json(candidate).await.map_err(fail)? {
                resource_metadata = Some(doc);
                break;
            }
        }
        let Some(doc) = resource_metadata else {
            if challenge.is_none() {
                return Err(fail(format!(
                    "`{url}` does not ask for a sign-in (it answered without a 401 and publishes no protected resource metadata)"
                )));
            }
            return self.discover_2025_03_26(server, canonical, &origin).await;
        };
        let named = doc.get("resource").and_then(Value::as_str).map(canonical_resource).transpose().map_err(fail)?;
        // The metadata must be about this server (RFC 9728 §3.3).
        let resource = match named {
            Some(named) if canonical.starts_with(named.trim_end_matches('/')) => named,
            Some(named) => {
                return Err(fail(format!(
                    "the server's protected resource metadata is for `{named}`, not `{canonical}`"
                )));
            }
            None => canonical.clone(),
        };
        let issuer = doc
            .get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().find_map(Value::as_str))
            .map(str::to_owned)
            .ok_or_else(|| fail("the protected resource metadata names no authorization server".to_owned()))?;
        let metadata = self.server_metadata(&issuer).await.map_err(fail)?;
        let mut found = from_metadata(&metadata, &issuer, canonical, resource).map_err(fail)?;
        let prm_scopes = strings(doc.get("scopes_supported"));
        if !prm_scopes.is_empty() {
            found.scopes = prm_scopes;
        }
        Ok(found)
    }

    /// A server of the 2025-03-26 era: its origin is the "authorization base URL".
    /// Metadata there is believed whatever issuer it names (that era has no protected
    /// resource metadata to name one); without metadata, the default endpoints.
    async fn discover_2025_03_26(&self, server: &str, canonical: String, origin: &str) -> Result<Discovered> {
        let fail = |m: String| Self::failed(server, m);
        let mut metadata = None;
        for candidate in [
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ] {
            if let Some(doc) = self.get_json(&candidate).await.map_err(fail)? {
                metadata = Some(doc);
                break;
            }
        }
        if let Some(metadata) = metadata {
            let issuer = metadata.get("issuer").and_then(Value::as_str).unwrap_or(origin).to_owned();
            return from_metadata(&metadata, &issuer, canonical.clone(), canonical).map_err(fail);
        }
        tracing::debug!(server, origin, "no authorization server metadata: the 2025-03-26 default endpoints");
        secure_url(origin).map_err(fail)?;
        Ok(Discovered {
            key: canonical.clone(),
            resource: canonical,
            issuer: origin.to_owned(),
            authorization_endpoint: Some(format!("{origin}/authorize")),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            cimd_supported: false,
            iss_supported: false,
            // That era requires PKCE of every client, and S256 of those that can.
            pkce_s256: true,
            scopes: Vec::new(),
            auth_methods: Vec::new(),
            signing_algs: Vec::new(),
        })
    }

    /// The metadata of the authorization server `issuer` (RFC 8414, else OpenID
    /// discovery), checked to name that issuer.
    pub(super) async fn server_metadata(&self, issuer: &str) -> std::result::Result<Value, String> {
        let as_url = url::Url::parse(issuer).map_err(|e| format!("authorization server `{issuer}`: {e}"))?;
        let as_origin = as_url.origin().ascii_serialization();
        let as_path = as_url.path().trim_end_matches('/');
        let mut urls = Vec::new();
        if as_path.is_empty() {
            urls.push(format!("{as_origin}/.well-known/oauth-authorization-server"));
            urls.push(format!("{as_origin}/.well-known/openid-configuration"));
        } else {
            urls.push(format!("{as_origin}/.well-known/oauth-authorization-server{as_path}"));
            urls.push(format!("{as_origin}/.well-known/openid-configuration{as_path}"));
            urls.push(format!("{as_origin}{as_path}/.well-known/openid-configuration"));
        }
        for candidate in &urls {
            if let Some(metadata) = self.get_json(candidate).await? {
                let named = metadata.get("issuer").and_then(Value::as_str).unwrap_or(issuer);
                if !same_issuer(named, issuer) {
                    return Err(format!("the authorization server metadata names issuer `{named}`, not `{issuer}`"));
                }
                return Ok(metadata);
            }
        }
        Err(format!("the authorization server {issuer} publishes no metadata (tried {})", urls.join(", ")))
    }

    /// A JSON document at `url`; `None` when it is not there (4xx).
    async fn get_json(&self, url: &str) -> std::result::Result<Option<Value>, String> {
        let http = self.http(url).map_err(|e| e.to_string())?;
        let response = match http.get(url).header("Accept", "application/json").send().await {
            Ok(r) => r,
            Err(e) => return Err(format!("cannot fetch {url}: {}", without_url(&e))),
        };
        if response.status().is_client_error() {
            return Ok(None);
        }
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        read_json(response).await.map(Some).map_err(|m| format!("{url}: {m}"))
    }
}

/// What authorization server metadata says, its endpoints checked.
fn from_metadata(
    metadata: &Value,
    issuer: &str,
    key: String,
    resource: String,
) -> std::result::Result<Discovered, String> {
    let text = |key: &str| metadata.get(key).and_then(Value::as_str).map(str::to_owned);
    let meta_issuer = text("issuer").unwrap_or_else(|| issuer.to_owned());
    let token_endpoint =
        text("token_endpoint").ok_or_else(|| format!("the authorization server {issuer} has no token endpoint"))?;
    // Where codes, tokens and secrets go: HTTPS, or plain HTTP on this machine only.
    let endpoints = [
        Some(issuer.to_owned()),
        text("authorization_endpoint"),
        Some(token_endpoint.clone()),
        text("registration_endpoint"),
    ];
    for url in endpoints.iter().flatten() {
        secure_url(url)?;
    }
    let flag = |key: &str| metadata.get(key).and_then(Value::as_bool) == Some(true);
    Ok(Discovered {
        key,
        resource,
        issuer: meta_issuer,
        authorization_endpoint: text("authorization_endpoint"),
        token_endpoint,
        registration_endpoint: text("registration_endpoint"),
        cimd_supported: flag("client_id_metadata_document_supported"),
        iss_supported: flag("authorization_response_iss_parameter_supported"),
        pkce_s256: strings(metadata.get("code_challenge_methods_supported")).iter().any(|m| m == "S256"),
        scopes: strings(metadata.get("scopes_supported")),
        auth_methods: strings(metadata.get("token_endpoint_auth_methods_supported")),
        signing_algs: strings(metadata.get("token_endpoint_auth_signing_alg_values_supported")),
    })
}

pub(super) fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}
