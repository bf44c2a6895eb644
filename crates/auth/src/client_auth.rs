//! How mcpflow proves which client it is to a token endpoint (and a revocation
//! endpoint): `client_secret_basic` (HTTP Basic, id and secret form-urlencoded first,
//! RFC 6749 §2.3.1), `client_secret_post` (both in the form), `private_key_jwt` (a
//! signed assertion, RFC 7523: [`super::assertion`]) or `none` (a public client: its
//! `client_id` only).
//!
//! The method is the one the client registered with (a dynamic registration's answer,
//! kept with the login), else the best the authorization server's
//! `token_endpoint_auth_methods_supported` offers for what the client holds: a key
//! (`private_key_jwt`), a secret (`client_secret_basic`, else `client_secret_post`),
//! or nothing (`none`). Metadata that names no methods means `client_secret_basic`
//! (RFC 8414's default).

use super::assertion::SigningKey;
use base64::Engine as _;

/// A token endpoint client authentication method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Basic,
    Post,
    PrivateKeyJwt,
    None,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Basic => "client_secret_basic",
            Method::Post => "client_secret_post",
            Method::PrivateKeyJwt => "private_key_jwt",
            Method::None => "none",
        }
    }

    pub fn parse(text: &str) -> Option<Method> {
        [Method::Basic, Method::Post, Method::PrivateKeyJwt, Method::None].into_iter().find(|m| m.as_str() == text)
    }

    /// The method to register with dynamically: a public client (`none`) where the
    /// authorization server takes one, else one with a secret it issues.
    pub fn to_register(supported: &[String]) -> Method {
        let offers = |m: Method| supported.iter().any(|s| s == m.as_str());
        if supported.is_empty() || offers(Method::None) {
            Method::None
        } else if offers(Method::Basic) {
            Method::Basic
        } else if offers(Method::Post) {
            Method::Post
        } else {
            Method::None
        }
    }
}

/// Who the client is and what proves it.
pub struct ClientAuth {
    pub client_id: String,
    pub method: Method,
    secret: Option<String>,
    key: Option<SigningKey>,
}

/// Never shows the secret nor the key.
impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth").field("client_id", &self.client_id).field("method", &self.method).finish()
    }
}

impl ClientAuth {
    /// The method for a client holding `secret` and `key`: `registered` (what it
    /// registered with) when there is one, else the best of `supported`. `Err` says why
    /// none fits.
    pub fn choose(
        client_id: String,
        secret: Option<String>,
        key: Option<SigningKey>,
        registered: Option<Method>,
        supported: &[String],
    ) -> Result<ClientAuth, String> {
        let offers = |m: Method| supported.iter().any(|s| s == m.as_str());
        let said = || if supported.is_empty() { "none named".to_owned() } else { supported.join(", ") };
        let method = match registered {
            Some(method) => method,
            None if key.is_some() => {
                if offers(Method::PrivateKeyJwt) || supported.is_empty() {
                    Method::PrivateKeyJwt
                } else if secret.is_none() {
                    return Err(format!(
                        "the entry names `oauth.private_key`, but the authorization server does not take \
                         `private_key_jwt` client authentication (it takes: {}); remove the key or configure what it takes",
                        said()
                    ));
                } else {
                    Self::for_secret(supported)
                }
            }
            None if secret.is_some() => Self::for_secret(supported),
            None => Method::None,
        };
        match method {
            Method::Basic | Method::Post if secret.is_none() => {
                return Err(format!(
                    "the authorization server wants `{}` client authentication, and the entry has no \
                     `oauth.client_secret`; set it (`${{env:NAME}}`)",
                    method.as_str()
                ));
            }
            Method::PrivateKeyJwt if key.is_none() => {
                return Err(
                    "the authorization server wants `private_key_jwt` client authentication, and the entry has no \
                     `oauth.private_key`; set it (`${env:NAME}` or a user-only file)"
                        .to_owned(),
                );
            }
            _ => {}
        }
        Ok(ClientAuth { client_id, method, secret, key })
    }

    fn for_secret(supported: &[String]) -> Method {
        let offers = |m: Method| supported.iter().any(|s| s == m.as_str());
        if supported.is_empty() || offers(Method::Basic) {
            Method::Basic
        } else if offers(Method::Post) {
            Method::Post
        } else if offers(Method::None) {
            Method::None
        } else {
            // Nothing it names is something mcpflow does: try the default, and let the
            // authorization server's refusal say why.
            Method::Basic
        }
    }

    /// Adds the client's authentication to a request to the authorization server
    /// `audience`: the form's fields (pushed onto `form`) or, for `client_secret_basic`,
    /// the header.
    pub fn apply(
        &self,
        form: &mut Vec<(&'static str, String)>,
        request: reqwest::RequestBuilder,
        audience: &str,
    ) -> Result<reqwest::RequestBuilder, String> {
        match self.method {
            Method::Basic => {
                let secret = self.secret.as_deref().unwrap_or_default();
                return Ok(request.header("Authorization", self.basic_header(secret)));
            }
            Method::Post => {
                form.push(("client_id", self.client_id.clone()));
                form.push(("client_secret", self.secret.clone().unwrap_or_default()));
            }
            Method::None => form.push(("client_id", self.client_id.clone())),
            Method::PrivateKeyJwt => {
                let key = self.key.as_ref().ok_or("no private key")?;
                form.push(("client_id", self.client_id.clone()));
                form.push((
                    "client_assertion_type",
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
                ));
                form.push(("client_assertion", key.assertion(&self.client_id, audience)?));
            }
        }
        Ok(request)
    }

    /// `Basic base64(urlencode(id):urlencode(secret))`.
    fn basic_header(&self, secret: &str) -> String {
        let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let pair = format!("{}:{}", encode(&self.client_id), encode(secret));
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair))
    }

    /// What this authentication sends that no message may show, with its name: the
    /// secret, and the Basic header made of it.
    pub fn hidden(&self) -> Vec<(&'static str, String)> {
        let Some(secret) = &self.secret else { return Vec::new() };
        vec![("client_secret", secret.clone()), ("authorization", self.basic_header(secret))]
    }

    /// Checks the key's algorithm against what the authorization server names
    /// (`token_endpoint_auth_signing_alg_values_supported`), when it names any.
    pub fn check_algorithm(&self, supported: &[String]) -> Result<(), String> {
        match &self.key {
            Some(key) if self.method == Method::PrivateKeyJwt && !supported.is_empty() => {
                if supported.iter().any(|a| a == key.algorithm()) {
                    Ok(())
                } else {
                    Err(format!(
                        "the authorization server takes client assertions signed with {}, and `oauth.private_key` \
                         is a {} key; use a key of one of those",
                        supported.join(", "),
                        key.algorithm()
                    ))
                }
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn methods(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_secret_goes_in_the_header_unless_only_the_form_is_offered() {
        let secret = || Some("s3cret".to_owned());
        let chosen = |supported: &[&str]| ClientAuth::choose("c".into(), secret(), None, None, &methods(supported));
        assert_eq!(chosen(&["client_secret_basic"]).unwrap().method, Method::Basic);
        assert_eq!(chosen(&[]).unwrap().method, Method::Basic, "RFC 8414's default");
        assert_eq!(chosen(&["client_secret_post"]).unwrap().method, Method::Post);
        assert_eq!(chosen(&["client_secret_post", "client_secret_basic"]).unwrap().method, Method::Basic);
        assert_eq!(ClientAuth::choose("c".into(), None, None, None, &methods(&["none"])).unwrap().method, Method::None);
    }

    #[test]
    fn a_registered_method_wins_and_needs_what_it_names() {
        let chosen = ClientAuth::choose("c".into(), Some("s".into()), None, Some(Method::Post), &methods(&[]));
        assert_eq!(chosen.unwrap().method, Method::Post);
        let error = ClientAuth::choose("c".into(), None, None, Some(Method::Basic), &[]).unwrap_err();
        assert!(error.contains("oauth.client_secret"), "{error}");
        let error = ClientAuth::choose("c".into(), None, None, Some(Method::PrivateKeyJwt), &[]).unwrap_err();
        assert!(error.contains("oauth.private_key"), "{error}");
    }

    #[test]
    fn basic_credentials_are_form_urlencoded_before_base64() {
        let auth = ClientAuth::choose("a:b c".into(), Some("p&w=d".into()), None, None, &[]).unwrap();
        let mut form = Vec::new();
        let client = crate::trust::client_builder().build().unwrap();
        let request = auth.apply(&mut form, client.post("http://127.0.0.1:1/token"), "x").unwrap();
        let header = request.build().unwrap().headers()["authorization"].to_str().unwrap().to_owned();
        let decoded = base64::engine::general_purpose::STANDARD.decode(header.strip_prefix("Basic ").unwrap()).unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "a%3Ab+c:p%26w%3Dd");
        assert!(!form.iter().any(|(k, _)| *k == "client_secret" || *k == "client_id"), "{:?}", auth);
    }

    #[test]
    fn registration_asks_for_a_public_client_where_one_is_taken() {
        assert_eq!(Method::to_register(&[]), Method::None);
        assert_eq!(Method::to_register(&methods(&["client_secret_post", "none"])), Method::None);
        assert_eq!(Method::to_register(&methods(&["client_secret_basic"])), Method::Basic);
        assert_eq!(Method::to_register(&methods(&["client_secret_post"])), Method::Post);
    }
}
