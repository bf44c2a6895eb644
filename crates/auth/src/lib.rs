//! OAuth 2.1 for streamable HTTP servers (the MCP authorization spec): discovery of the
//! protected resource and its authorization server from a 401, the authorization code
//! grant with PKCE through the system browser and a loopback redirect, client
//! identification (a Client ID Metadata Document, dynamic registration or a configured
//! `client_id`), the `resource` parameter, `iss` checked, refresh, and the client
//! credentials grant. Tokens live in the [`Vault`], keyed by the canonical resource URL.
//!
//! - [`vault`]: where logins live: the OS keyring where one is available, else a user-only file.
//! - [`keyring`]: the OS keyring (the Secret Service over D-Bus on Linux).
//! - [`browser`]: opening the authorization URL (`$BROWSER`, else `xdg-open` / `open`).
//! - [`listener`]: the loopback redirect listener on 127.0.0.1.
//! - [`flow`]: the grants, refresh, revocation when signing out.
//! - `discovery`: who signs in for a server (protected resource metadata, else the
//!   2025-03-26 fallbacks).
//! - [`client_auth`]: how mcpflow authenticates to a token endpoint.
//! - [`assertion`]: the private key and signed assertions of `private_key_jwt`.
//! - [`step_up`]: more scope when a server asks for it (`403 insufficient_scope`).
//! - [`trust`]: HTTP clients built when first needed, and the system trust store
//!   `https://` needs (the pool's HTTP transport uses it too).
//!
//! Depends on `mcpflow-config` (server entries, `${env:NAME}`) and `mcpflow-blueprint`;
//! the pool (`mcpflow-mcp`) depends on this crate, never the reverse.
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

pub mod assertion;
pub mod browser;
pub mod client_auth;
mod discovery;
pub mod error;
pub mod flow;
pub mod keyring;
pub mod listener;
pub mod step_up;
pub mod trust;
pub mod vault;

pub use browser::Browser;
pub use error::{Error, Result};
pub use flow::{Advice, Authenticator, Challenge, LoginRequest, Revocation, canonical_resource};
pub use step_up::SignIn;
pub use vault::{Login, TOKEN_STORE_ENV, TokenStore, Vault};

use mcpflow_blueprint::ServerConfig;
use mcpflow_config::launch::{TransportKind, transport_kind};
use mcpflow_config::{EnvLookup, ServerEntry};

/// The configuration of an HTTP server entry (`None` for stdio and in-process servers).
pub fn http_config<'a>(server: &str, entry: &'a ServerEntry) -> Option<&'a ServerConfig> {
    match entry {
        ServerEntry::Config(config) if matches!(transport_kind(server, config), Ok(TransportKind::Http)) => {
            Some(config)
        }
        _ => None,
    }
}

/// The URL of an HTTP server, `${env:NAME}` resolved.
pub fn resolved_url(server: &str, config: &ServerConfig, env: &EnvLookup) -> Result<String> {
    Ok(mcpflow_config::env::resolve(config.url.as_deref().unwrap_or_default(), env, server, "url")?)
}

/// Whether the entry sends its own `Authorization` header: static headers win, and no
/// OAuth is done for it.
pub fn has_static_authorization(config: &ServerConfig) -> bool {
    config.headers.keys().any(|name| name.eq_ignore_ascii_case("authorization"))
}
