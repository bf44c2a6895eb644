//! The configuration crate's one error type. Every variant has a stable code
//! ([`Error::code`]); the pool wraps it (`mcpflow_mcp::Error::Config`).

use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a server configuration could not be read or used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server config file could not be read.
    #[error("cannot read the server config {}: {message}", path.display())]
    ConfigRead { path: PathBuf, message: String },

    /// A server config file is not JSON or not in `mcpServers` shape.
    #[error("{origin}: {message}")]
    ConfigInvalid { origin: String, message: String },

    /// A server config file the reader refused before parsing it: larger than its limit
    /// (`LIMIT_SIZE`, found while reading). The code is the diagnostic's; the message has
    /// the shape of a `validate` finding (`file:1:1: error[LIMIT_SIZE]: …; hint`).
    #[error("{}", refused(path, diagnostic))]
    ConfigRefused { path: PathBuf, diagnostic: Box<mcpflow_blueprint::Diagnostic> },

    /// One server's entry cannot be used (no command or url, wrong types …).
    #[error("server `{server}`: {message}")]
    ServerConfigInvalid { server: String, message: String },

    /// The entry names a transport this pool does not speak (legacy SSE).
    #[error(
        "server `{server}`: transport `{transport}` is not supported; use a stdio command or a streamable HTTP \
         url (\"type\": \"http\")"
    )]
    TransportUnsupported { server: String, transport: String },

    /// `${env:NAME}` names a variable that is not set where the server starts.
    #[error(
        "server `{server}`: environment variable `{name}` is not set (referenced as `${{env:{name}}}` in {field}); \
         set it in the environment that runs mcpflow"
    )]
    EnvVarMissing { server: String, name: String, field: String },
}

fn refused(path: &std::path::Path, d: &mcpflow_blueprint::Diagnostic) -> String {
    let at = d.position.map(|p| format!("{}:{}", p.line, p.col)).unwrap_or_else(|| "1:1".to_owned());
    let hint = d.hint.as_deref().map(|h| format!("; {h}")).unwrap_or_default();
    format!("{}:{at}: error[{}]: {}{hint}", path.display(), d.code, d.message)
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::ConfigRead { .. } => "CONFIG_READ_FAILED",
            Error::ConfigInvalid { .. } => "CONFIG_INVALID",
            Error::ConfigRefused { diagnostic, .. } => diagnostic.code.name(),
            Error::ServerConfigInvalid { .. } => "SERVER_CONFIG_INVALID",
            Error::TransportUnsupported { .. } => "TRANSPORT_UNSUPPORTED",
            Error::EnvVarMissing { .. } => "ENV_VAR_MISSING",
        }
    }
}
