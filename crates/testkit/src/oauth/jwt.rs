//! The fixture's side of `private_key_jwt` (RFC 7523): an ES256 key pair it makes, and
//! the check of a client assertion signed with it.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::Value;

use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};

pub(super) struct KeyPair {
    pkcs8: Vec<u8>,
    public: Vec<u8>,
}

impl KeyPair {
    /// A fresh P-256 key pair.
    #[allow(clippy::expect_used)] // the system's randomness and a key made just now
    pub fn generate() -> KeyPair {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("a P-256 key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("the key just made");
        KeyPair { pkcs8: pkcs8.as_ref().to_vec(), public: pair.public_key().as_ref().to_vec() }
    }

    /// The private key as PKCS#8 PEM.
    pub fn private_pem(&self) -> String {
        let encoded = STANDARD.encode(&self.pkcs8);
        let lines: Vec<&str> = encoded.as_bytes().chunks(64).filter_map(|c| std::str::from_utf8(c).ok()).collect();
        format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"))
    }

    /// The client an ES256 assertion is from (`iss` = `sub`), when its signature is this
    /// key's, its audience is `issuer` (or its token endpoint) and it has `exp` and `jti`.
    pub fn verified_client(&self, assertion: &str, issuer: &str) -> Option<String> {
        let mut parts = assertion.split('.');
        let (header, claims, signature) = (parts.next()?, parts.next()?, parts.next()?);
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).ok();
        let header: Value = serde_json::from_slice(&decode(header)?).ok()?;
        if header["alg"] != "ES256" {
            return None;
        }
        let key = ring::signature::UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &self.public);
        let signed = &assertion[..assertion.rfind('.')?];
        key.verify(signed.as_bytes(), &decode(signature)?).ok()?;
        let claims: Value = serde_json::from_slice(&decode(claims)?).ok()?;
        let audience_ok = |aud: &Value| {
            aud.as_str().is_some_and(|a| a.trim_end_matches('/') == issuer || a == format!("{issuer}/token"))
        };
        let aud_ok = match &claims["aud"] {
            Value::Array(all) => all.iter().any(audience_ok),
            one => audience_ok(one),
        };
        let client = claims["iss"].as_str()?;
        (aud_ok && claims["sub"] == client && claims["exp"].is_i64() && claims["jti"].is_string())
            .then(|| client.to_owned())
    }
}

pub(super) fn fill_random(bytes: &mut [u8]) {
    let _ = SystemRandom::new().fill(bytes);
}
