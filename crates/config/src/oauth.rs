//! A server's `oauth` object checked: the secret only as `${env:NAME}`, the private key
//! only named (`${env:NAME}` or a file), the client credentials grant with its client, a
//! Client ID Metadata Document URL over `https`.

use super::env::references;
use mcpflow_blueprint::{OAuthConfig, OAuthGrant};
use serde_json::Value;

/// The `oauth` object of a tolerant `mcpServers` entry, checked.
pub(crate) fn parse(value: &Value) -> Result<OAuthConfig, String> {
    let config: OAuthConfig = serde_json::from_value(value.clone()).map_err(|e| format!("`oauth`: {e}"))?;
    check(&config)?;
    Ok(config)
}

/// What is wrong with an `oauth` object, if anything.
pub fn check(config: &OAuthConfig) -> Result<(), String> {
    if let Some(secret) = &config.client_secret {
        let names = references(secret);
        if names.len() != 1 || secret.trim() != format!("${{env:{}}}", names[0]) {
            return Err("`oauth.client_secret` must be a reference to an environment variable, \
                        `${env:NAME}`, never the secret itself"
                .to_owned());
        }
    }
    if config.client_id.as_deref().is_some_and(|id| id.trim().is_empty()) {
        return Err("`oauth.client_id` is empty".to_owned());
    }
    if let Some(key) = &config.private_key {
        let names = references(key);
        let whole = names.len() == 1 && key.trim() == format!("${{env:{}}}", names[0]);
        if key.contains("-----BEGIN") || key.contains('\n') {
            return Err("`oauth.private_key` must name the key, as `${env:NAME}` or the path of a user-only file, \
                        never hold the key itself"
                .to_owned());
        }
        if !names.is_empty() && !whole {
            return Err("`oauth.private_key` is either `${env:NAME}` or a file path".to_owned());
        }
        if config.client_id.is_none() {
            return Err("`oauth.private_key` needs `oauth.client_id`, the client the key is registered for".to_owned());
        }
    }
    if config.grant == Some(OAuthGrant::ClientCredentials)
        && (config.client_id.is_none() || (config.client_secret.is_none() && config.private_key.is_none()))
    {
        return Err("`oauth.grant` `client_credentials` needs `client_id` and `client_secret` (`${env:NAME}`) or \
                    `private_key`"
            .to_owned());
    }
    if let Some(url) = &config.client_metadata_url
        && !url.starts_with("https://")
    {
        return Err("`oauth.client_metadata_url` must be an https:// URL".to_owned());
    }
    if config.scopes.len() > 64 || config.scopes.iter().any(|s| s.is_empty() || s.contains(char::is_whitespace)) {
        return Err("`oauth.scopes` must be at most 64 scope names without spaces".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_only_through_the_environment() {
        assert!(parse(&json!({"client_id": "a", "client_secret": "${env:S}"})).is_ok());
        let err = parse(&json!({"client_id": "a", "client_secret": "hunter2"})).unwrap_err();
        assert!(err.contains("${env:NAME}"), "{err}");
        assert!(parse(&json!({"client_secret": "x${env:S}"})).is_err());
    }

    #[test]
    fn client_credentials_need_a_client() {
        let err = parse(&json!({"grant": "client_credentials", "client_id": "a"})).unwrap_err();
        assert!(err.contains("client_secret"), "{err}");
        assert!(parse(&json!({"grant": "client_credentials", "client_id": "a", "client_secret": "${env:S}"})).is_ok());
        assert!(parse(&json!({"grant": "password"})).is_err());
        assert!(parse(&json!({"client_metadata_url": "http://x/c.json"})).is_err());
        assert!(parse(&json!({"unknown": 1})).is_err());
    }

    #[test]
    fn a_private_key_is_named_never_written() {
        let ok = json!({"grant": "client_credentials", "client_id": "a", "private_key": "${env:KEY}"});
        assert!(parse(&ok).is_ok());
        assert!(parse(&json!({"client_id": "a", "private_key": "/home/me/.config/mcpflow/client.pem"})).is_ok());
        let err = parse(&json!({"client_id": "a", "private_key": "-----BEGIN PRIVATE KEY-----\nMIG"})).unwrap_err();
        assert!(err.contains("never hold the key itself"), "{err}");
        assert!(parse(&json!({"client_id": "a", "private_key": "x${env:KEY}"})).is_err());
        assert!(parse(&json!({"private_key": "${env:KEY}"})).unwrap_err().contains("client_id"));
    }
}
