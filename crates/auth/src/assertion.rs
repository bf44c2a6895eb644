//! `private_key_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): the client's private key,
//! named by the entry's `oauth.private_key` — `${env:NAME}` holding the PEM, or the path
//! of a PEM file only its owner can read —, and the short-lived assertions signed with
//! it: `iss` = `sub` = the client id, `aud` = the authorization server's issuer, `iat`,
//! `exp` (5 minutes), a random `jti`.
//!
//! Keys: PKCS#8 (`PRIVATE KEY`) or SEC1 (`EC PRIVATE KEY`) P-256, signed ES256; PKCS#8
//! or PKCS#1 (`RSA PRIVATE KEY`) RSA, signed RS256. The signing is ring's, the crypto
//! library rustls uses for HTTPS here. A SEC1 key must carry its public key (OpenSSL's
//! do): ring reads P-256 keys as PKCS#8, so a SEC1 key is wrapped into one first.

use super::vault::now_ms;
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair};
use std::path::Path;

/// How long an assertion is good for.
const LIFETIME_SECS: i64 = 300;
/// The largest key file read.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// A client's private key. Its `Debug` shows the algorithm only.
pub struct SigningKey {
    key: Key,
}

enum Key {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({})", self.algorithm())
    }
}

impl SigningKey {
    /// The key `reference` names: `${env:NAME}`, already resolved by the caller into
    /// `from_env`, else a file path.
    pub fn load(reference: &str, from_env: Option<String>) -> Result<SigningKey, String> {
        match from_env {
            Some(pem) => SigningKey::from_pem(&pem).map_err(|m| format!("`oauth.private_key` ({reference}): {m}")),
            None => SigningKey::from_file(Path::new(reference)),
        }
    }

    /// The key in a file that only its owner may read.
    fn from_file(path: &Path) -> Result<SigningKey, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .map_err(|e| format!("`oauth.private_key`: cannot read the key file {shown}: {e}"))?;
        if !meta.is_file() || meta.len() > MAX_KEY_BYTES {
            return Err(format!(
                "`oauth.private_key`: {shown} is not a key file (a PEM file of at most {} KiB)",
                MAX_KEY_BYTES / 1024
            ));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!(
                    "`oauth.private_key`: the key file {shown} can be read by others (mode {mode:04o}); \
                     make it yours alone (`chmod 600 {shown}`) and try again"
                ));
            }
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("`oauth.private_key`: cannot read the key file {shown}: {e}"))?;
        SigningKey::from_pem(&text).map_err(|m| format!("`oauth.private_key` ({shown}): {m}"))
    }

    /// The first private key in PEM `text` (an environment variable's `\n` escapes read
    /// as line breaks).
    pub fn from_pem(text: &str) -> Result<SigningKey, String> {
        let text = if text.contains('\n') { text.to_owned() } else { text.replace("\\n", "\n") };
        let begin = text.find("-----BEGIN ").ok_or("it is not a PEM key (no `-----BEGIN … KEY-----` line)")?;
        let rest = &text[begin + "-----BEGIN ".len()..];
        let label_end = rest.find("-----").ok_or("its BEGIN line is unfinished")?;
        let label = &rest[..label_end];
        let body_start = label_end + "-----".len();
        let end = rest.find(&format!("-----END {label}-----")).ok_or_else(|| format!("no END line for its {label}"))?;
        let body: String = rest[body_start..end].chars().filter(|c| !c.is_whitespace()).collect();
        let der = STANDARD.decode(body).map_err(|_| format!("its {label} is not base64"))?;
        let key = match label {
            "PRIVATE KEY" => EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &SystemRandom::new())
                .map(Key::Es256)
                .or_else(|_| RsaKeyPair::from_pkcs8(&der).map(Key::Rs256))
                .map_err(|_| "its PKCS#8 key is neither a P-256 nor an RSA key".to_owned())?,
            "EC PRIVATE KEY" => {
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &p256_pkcs8(&der), &SystemRandom::new())
                    .map(Key::Es256)
                    .map_err(|_| {
                        "its EC key is not a P-256 key with its public key (`openssl ec -in KEY -out KEY` \
                         writes one that has it)"
                            .to_owned()
                    })?
            }
            "RSA PRIVATE KEY" => {
                RsaKeyPair::from_der(&der).map(Key::Rs256).map_err(|_| "its RSA key cannot be read".to_owned())?
            }
            "ENCRYPTED PRIVATE KEY" => {
                return Err("it is encrypted; give mcpflow the key unencrypted (`openssl pkcs8 -topk8 -nocrypt`), \
                            kept in a user-only file or an environment variable"
                    .to_owned());
            }
            other => return Err(format!("a `{other}` is not a private key")),
        };
        Ok(SigningKey { key })
    }

    /// `ES256` or `RS256`.
    pub fn algorithm(&self) -> &'static str {
        match self.key {
            Key::Es256(_) => "ES256",
            Key::Rs256(_) => "RS256",
        }
    }

    /// A signed client assertion of `client_id` for the authorization server `audience`.
    pub fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let now = now_ms() / 1000;
        let header = serde_json::json!({ "alg": self.algorithm(), "typ": "JWT" });
        let claims = serde_json::json!({
            "iss": client_id, "sub": client_id, "aud": audience,
            "iat": now, "exp": now + LIFETIME_SECS, "jti": uuid::Uuid::new_v4().to_string(),
        });
        let signing_input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let rng = SystemRandom::new();
        let signature = match &self.key {
            Key::Es256(pair) => pair
                .sign(&rng, signing_input.as_bytes())
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "signing the client assertion failed".to_owned())?,
            Key::Rs256(pair) => {
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &rng, signing_input.as_bytes(), &mut out)
                    .map_err(|_| "signing the client assertion failed".to_owned())?;
                out
            }
        };
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// A SEC1 `ECPrivateKey` of P-256 (`der`) as the PKCS#8 document holding it (RFC 5915 §3,
/// RFC 5208): version 0, the algorithm id-ecPublicKey on prime256v1, the key as an octet
/// string. Whether `der` is a good key is for the reader of the result to say.
fn p256_pkcs8(der: &[u8]) -> Vec<u8> {
    /// AlgorithmIdentifier { id-ecPublicKey (1.2.840.10045.2.1), prime256v1 (1.2.840.10045.3.1.7) }.
    const P256_ALGORITHM: [u8; 21] = [
        0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d,
        0x03, 0x01, 0x07,
    ];
    let mut body = vec![0x02, 0x01, 0x00];
    body.extend_from_slice(&P256_ALGORITHM);
    der_push(&mut body, 0x04, der);
    let mut out = Vec::with_capacity(body.len() + 4);
    der_push(&mut out, 0x30, &body);
    out
}

/// Appends a DER element: `tag`, the length of `value` (short or long form), `value`.
fn der_push(out: &mut Vec<u8>, tag: u8, value: &[u8]) {
    out.push(tag);
    let len = value.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len() - 1);
        out.push(0x80 | (bytes.len() - first) as u8);
        out.extend_from_slice(&bytes[first..]);
    }
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair as _, UnparsedPublicKey};

    fn pem(der: &[u8], label: &str) -> String {
        format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", STANDARD.encode(der))
    }

    #[test]
    fn an_es256_assertion_verifies_with_the_public_key_and_names_the_client() {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new()).unwrap();
        let public = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &SystemRandom::new())
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        let key = SigningKey::from_pem(&pem(pkcs8.as_ref(), "PRIVATE KEY").replace('\n', "\\n")).unwrap();
        assert_eq!(key.algorithm(), "ES256");
        let jwt = key.assertion("cli", "https://as.example").unwrap();
        let (input, signature) = jwt.rsplit_once('.').unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(signature).unwrap())
            .unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(input.split('.').nth(1).unwrap()).unwrap()).unwrap();
        assert_eq!((claims["iss"].as_str(), claims["sub"].as_str()), (Some("cli"), Some("cli")));
        assert_eq!(claims["aud"], "https://as.example");
        assert!(claims["exp"].as_i64().unwrap() > claims["iat"].as_i64().unwrap());
        assert!(format!("{key:?}").contains("ES256"));
    }

    #[test]
    fn a_sec1_key_is_read_as_the_pkcs8_document_holding_it() {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new()).unwrap();
        // ring's PKCS#8: the SEQUENCE's header (3 bytes), the version (3), the algorithm
        // (21), the octet string's header (2), then the SEC1 key with its public key.
        let sec1 = &pkcs8.as_ref()[29..];
        assert_eq!(sec1[0], 0x30, "a SEC1 ECPrivateKey is a SEQUENCE");
        assert_eq!(p256_pkcs8(sec1), pkcs8.as_ref());
        let key = SigningKey::from_pem(&pem(sec1, "EC PRIVATE KEY")).unwrap();
        assert_eq!(key.algorithm(), "ES256");
        let error = SigningKey::from_pem(&pem(&sec1[..40], "EC PRIVATE KEY")).unwrap_err();
        assert!(error.contains("not a P-256 key with its public key"), "{error}");
    }

    #[test]
    fn a_key_file_others_can_read_is_refused() {
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("client.pem");
        std::fs::write(&file, pem(pkcs8.as_ref(), "PRIVATE KEY")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            let error = SigningKey::load(file.to_str().unwrap(), None).unwrap_err();
            assert!(error.contains("can be read by others") && error.contains("chmod 600"), "{error}");
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        assert_eq!(SigningKey::load(file.to_str().unwrap(), None).unwrap().algorithm(), "ES256");
    }

    #[test]
    fn what_is_not_a_usable_key_says_so() {
        assert!(SigningKey::from_pem("hunter2").unwrap_err().contains("not a PEM key"));
        let error =
            SigningKey::from_pem("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----")
                .unwrap_err();
        assert!(error.contains("encrypted"), "{error}");
        let error = SigningKey::from_pem("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----").unwrap_err();
        assert!(error.contains("not a private key"), "{error}");
    }
}
