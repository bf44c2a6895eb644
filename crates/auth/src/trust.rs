//! HTTP clients built when first needed, and the system's trust store that `https://`
//! needs. reqwest loads the root certificates when a client is built and refuses to build
//! one when the system has none (a slim container); `reqwest::Client::default()` then
//! panics. So no client is built before a request needs one, a machine without roots
//! reaching an `https://` URL gets `TLS_ROOTS_MISSING` (what to install, what to set), and
//! plain `http://` servers are reached by a client that trusts no root — it never needs
//! one — so a run that needs no TLS runs.

use crate::error::{Error, Result};
use std::sync::{Once, OnceLock};

/// Makes ring the crypto of every rustls client of this process (reqwest is built without
/// a provider of its own; see Cargo.toml for why ring). Call before building a client; a
/// provider installed already (by the embedding program) is kept.
pub fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _kept_if_one_is_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

/// `reqwest::Client::builder()` with the process's crypto installed ([`install_crypto`]):
/// how every HTTP client of mcpflow starts.
pub fn client_builder() -> reqwest::ClientBuilder {
    install_crypto();
    reqwest::Client::builder()
}

/// What reqwest says when the system has no root certificates, for the message.
type Why = String;

/// One kind of HTTP client (`make` gives its settings), built the first time a request
/// needs it: the one that verifies against the system's roots, and, only where those
/// cannot be loaded, the one for plain `http://`.
pub struct Clients {
    make: fn() -> reqwest::ClientBuilder,
    verified: OnceLock<std::result::Result<reqwest::Client, Why>>,
    plain: OnceLock<std::result::Result<reqwest::Client, Why>>,
}

impl std::fmt::Debug for Clients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clients").finish_non_exhaustive()
    }
}

impl Clients {
    pub const fn new(make: fn() -> reqwest::ClientBuilder) -> Clients {
        Clients { make, verified: OnceLock::new(), plain: OnceLock::new() }
    }

    /// The client to send a request to `url` with. `whom` names who is reached there
    /// (`server \`x\``), for the error.
    pub fn for_url(&self, url: &str, whom: impl FnOnce() -> String) -> Result<reqwest::Client> {
        install_crypto();
        let verified = self.verified.get_or_init(|| (self.make)().build().map_err(|e| reason(&e)));
        match verified {
            Ok(client) => Ok(client.clone()),
            Err(why) if is_https(url) => Err(Error::TlsRootsMissing { whom: whom(), reason: why.clone() }),
            Err(why) => {
                // `http://`: no certificate is ever checked, so no root is needed.
                let plain = self.plain.get_or_init(|| {
                    (self.make)().tls_certs_only(Vec::<reqwest::Certificate>::new()).build().map_err(|e| reason(&e))
                });
                plain
                    .clone()
                    .map_err(|plain| Error::TlsRootsMissing { whom: whom(), reason: format!("{why}; {plain}") })
            }
        }
    }
}

/// Whether `url` is reached over TLS (anything but a plain `http://` URL counts).
fn is_https(url: &str) -> bool {
    !url.trim_start().get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

/// reqwest's error with its sources (the root-store message is a source).
fn reason(error: &reqwest::Error) -> Why {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_http_url_needs_no_tls() {
        assert!(!is_https("http://127.0.0.1:8080/mcp"));
        assert!(!is_https("HTTP://localhost/mcp"));
        assert!(is_https("https://127.0.0.1:8080/mcp"));
        assert!(is_https("ws://example"), "anything unknown counts as needing TLS");
    }
}
