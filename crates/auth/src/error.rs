//! The auth crate's one error type. Every variant has a stable code ([`Error::code`]);
//! the pool wraps it (`mcpflow_mcp::Error::Auth`).

use std::path::PathBuf;
use std::time::Duration;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why signing in, the token vault or an HTTP client failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server configuration the sign-in reads cannot be used (a `${env:NAME}` not set).
    #[error(transparent)]
    Config(#[from] mcpflow_config::Error),

    /// The server wants an OAuth login this mcpflow does not hold (or no longer: the
    /// refresh was refused), or a wider scope than the login has. `advice` says what to
    /// do in the words of the front door (`mcpflow auth login NAME`, the Servers panel).
    #[error("server `{server}` needs a sign-in{}: {reason}; {advice}", scope.as_ref().map(|s| format!(" with scope `{s}`")).unwrap_or_default())]
    AuthRequired { server: String, reason: String, scope: Option<String>, advice: String },

    /// Signing in failed: the authorization server refused (its `error` and
    /// `error_description` are in `message`), or its metadata or answers are unusable.
    #[error("signing in to server `{server}` failed: {message}")]
    AuthFailed { server: String, message: String },

    /// Signing in was not completed in the browser within the time allowed.
    #[error(
        "signing in to server `{server}` was not completed within {} s (no answer reached the loopback redirect); \
         run the sign-in again and finish it in the browser, or allow more time with `--timeout`",
        after.as_secs()
    )]
    AuthTimeout { server: String, after: Duration },

    /// The token vault (the OS keyring, else `auth/tokens.json` in the data folder) cannot
    /// be read or written; `path` is the file, or `OS keyring (Secret Service)`.
    #[error("the sign-in vault {}: {message}", path.display())]
    AuthVault { path: PathBuf, message: String },

    /// An `https://` URL was to be reached and the system has no root certificates to
    /// check its certificate with (no `ca-certificates` package, `SSL_CERT_FILE` naming an
    /// empty file); nothing was sent. `whom`: `server \`x\``, or an authorization server.
    #[error(
        "{whom} is reached over https, but no root certificate could be loaded from the system's trust store \
         ({reason}); install the CA certificates (e.g. `apt-get install ca-certificates`), or set SSL_CERT_FILE \
         to a PEM file of them (SSL_CERT_DIR to a folder of them)"
    )]
    TlsRootsMissing { whom: String, reason: String },
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Config(error) => error.code(),
            Error::AuthRequired { .. } => "AUTH_REQUIRED",
            Error::AuthFailed { .. } => "AUTH_FAILED",
            Error::AuthTimeout { .. } => "AUTH_TIMEOUT",
            Error::AuthVault { .. } => "AUTH_VAULT",
            Error::TlsRootsMissing { .. } => "TLS_ROOTS_MISSING",
        }
    }
}
