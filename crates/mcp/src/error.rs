//! The pool's one error type. Every variant has a stable code ([`Error::code`]) that
//! reaches people through the engine's `CallError`, the CLI and the studio.

use mcpflow_engine::CallError;
use std::time::Duration;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a server could not be configured, started or called.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server configuration cannot be read or used (`mcpflow_config`).
    #[error(transparent)]
    Config(#[from] mcpflow_config::Error),

    /// Signing in to a server, its token vault or the trust store `https://` needs
    /// (`mcpflow_auth`).
    #[error(transparent)]
    Auth(mcpflow_auth::Error),

    /// No server of that name is configured.
    #[error("no server named `{server}` is configured{}", known_list(known))]
    ServerNotConfigured { server: String, known: Vec<String> },

    /// A stdio server whose exact command line, or an HTTP server a blueprint declared
    /// whose endpoint, has not been approved; nothing was started or connected.
    #[error("server `{server}` is not approved to {action}: {command_line}")]
    ServerNotApproved {
        server: String,
        /// `start this command`, or `connect to this URL, …`.
        action: &'static str,
        /// The command line, or `URL … (sends: NAME, …)`: never a variable's value.
        command_line: String,
    },

    /// Spawning the process, connecting or the MCP handshake failed.
    #[error("server `{server}` could not be started: {message}")]
    ServerStartFailed { server: String, message: String },

    /// The connection ended while a call was in flight (the process crashed or exited, the
    /// HTTP endpoint went away). The next call starts the server again.
    #[error("server `{server}` went away during the call: {message}")]
    ServerDisconnected { server: String, message: String },

    /// No reachable server has a tool of that name.
    #[error("{}", tool_not_found(tool, server.as_deref(), nearest, unreachable))]
    ToolNotFound {
        tool: String,
        /// The server that was asked, when the call named one.
        server: Option<String>,
        /// Close names, as `tool` (server `name`).
        nearest: Vec<String>,
        /// Servers that could not be searched, with the reason.
        unreachable: Vec<(String, String)>,
    },

    /// The call's arguments break the tool's input schema (as `tools/list` gave it);
    /// the call was not sent. `problems`: `/a: expected number, got object; …`.
    #[error(
        "{problems} (the arguments of tool `{tool}` on server `{server}` do not fit its input schema; the call was not sent)"
    )]
    ArgsInvalid { server: String, tool: String, problems: String },

    /// `confirm: "destructive"`: the person did not approve the call; it was not sent.
    #[error(
        "the call of destructive tool `{tool}` on server `{server}` was not approved, so it was not sent (the step's or blueprint's `confirm: \"destructive\"` asks first)"
    )]
    NotApproved { server: String, tool: String },

    /// The tool name is offered by several servers and the call named none.
    #[error(
        "tool `{tool}` is offered by several servers ({}); name the server in the step (\"server\": \"{}\")",
        quoted(servers),
        servers.first().map(String::as_str).unwrap_or_default()
    )]
    ToolAmbiguous { tool: String, servers: Vec<String> },

    /// No answer within the call's timeout; `notifications/cancelled` was sent.
    #[error("server `{server}` did not answer within {} ms (the request was cancelled)", after.as_millis())]
    CallTimeout { server: String, after: Duration },

    /// The call was cancelled; `notifications/cancelled` was sent if it was in flight.
    #[error("the call{} was cancelled", server.as_ref().map(|s| format!(" to server `{s}`")).unwrap_or_default())]
    Cancelled { server: Option<String> },

    /// The answer is larger than the pool's bound; it was discarded without being buffered.
    #[error(
        "server `{server}` answered with a message larger than the {} limit{}; the answer was discarded",
        bytes(*limit),
        size.map(|s| format!(" ({})", bytes(s))).unwrap_or_default()
    )]
    OutputTooLarge { server: String, limit: usize, size: Option<usize> },

    /// The answer is within the size bound but holds so many values that, parsed, it would
    /// take more than `limit` of memory (`pool/weigh.rs`); it was discarded unparsed.
    #[error(
        "server `{server}` answered with a message of {} holding so many values that it would take more than {} of memory once read; the answer was discarded (return fewer, larger values)",
        bytes(*size),
        bytes(*limit)
    )]
    OutputTooHeavy { server: String, limit: usize, size: usize },

    /// The server sent requests of its own (pings, questions) and did not read the
    /// answers: more than `limit` waited to be written, so the connection was closed.
    #[error(
        "server `{server}` sent requests of its own (pings, questions) faster than it read the answers: more than \
         {limit} answers waited to be written, so the connection was closed as misbehaving; check that the server \
         reads its stdin (it is started again on the next call)"
    )]
    AnswerQueueFull { server: String, limit: usize },

    /// The server broke the protocol (non-JSON on stdout where an answer was due, an answer
    /// that is not a valid MCP result, an unexpected result type).
    #[error("server `{server}` broke the MCP protocol: {message}")]
    ProtocolError { server: String, message: String },

    /// The server answered with a JSON-RPC error.
    #[error("server `{server}` returned error {code}: {message}")]
    ServerError { server: String, code: i32, message: String },

    /// The server ran the call as a task and the task failed.
    #[error("task `{task_id}` on server `{server}` failed: {message}")]
    TaskFailed { server: String, task_id: String, message: String },

    /// The server ran the call as a task and cancelled it (not this side).
    #[error("task `{task_id}` on server `{server}` was cancelled by the server{}", message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    TaskCancelled { server: String, task_id: String, message: Option<String> },

    /// The task waits for input (elicitation or sampling) from this side.
    #[error(
        "task `{task_id}` on server `{server}` needs input, which mcpflow does not answer yet{}; the task was cancelled",
        message.as_ref().map(|m| format!(" (the server says: {m})")).unwrap_or_default()
    )]
    TaskInputRequired { server: String, task_id: String, message: Option<String> },

    /// Resuming: the server no longer knows the task the interrupted run started (it
    /// restarted, the task expired, or tasks belong to a session that ended).
    #[error(
        "server `{server}` no longer knows task `{task_id}`, which the interrupted run started ({message}); the tool was not called again — run the workflow again"
    )]
    TaskLost { server: String, task_id: String, message: String },

    /// The pool was shut down.
    #[error("the server pool is shut down")]
    ShutDown,
}

impl Error {
    /// The stable code of this error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Config(error) => error.code(),
            Error::Auth(error) => error.code(),
            Error::ServerNotConfigured { .. } => "SERVER_NOT_CONFIGURED",
            Error::ServerNotApproved { .. } => "SERVER_NOT_APPROVED",
            Error::ServerStartFailed { .. } => "SERVER_START_FAILED",
            Error::ServerDisconnected { .. } => "SERVER_DISCONNECTED",
            Error::ToolNotFound { .. } => "TOOL_NOT_FOUND",
            Error::ToolAmbiguous { .. } => "TOOL_AMBIGUOUS",
            Error::ArgsInvalid { .. } => "ARGS_INVALID",
            Error::NotApproved { .. } => "INPUT_REJECTED",
            Error::CallTimeout { .. } => "CALL_TIMEOUT",
            Error::Cancelled { .. } => "CANCELLED",
            Error::OutputTooLarge { .. } | Error::OutputTooHeavy { .. } => "OUTPUT_TOO_LARGE",
            Error::AnswerQueueFull { .. } => "ANSWER_QUEUE_FULL",
            Error::ProtocolError { .. } => "PROTOCOL_ERROR",
            Error::ServerError { .. } => "SERVER_ERROR",
            Error::TaskFailed { .. } => "TASK_FAILED",
            Error::TaskCancelled { .. } => "TASK_CANCELLED",
            Error::TaskInputRequired { .. } => "TASK_INPUT_REQUIRED",
            Error::TaskLost { .. } => "TASK_LOST",
            Error::ShutDown => "POOL_SHUT_DOWN",
        }
    }

    /// Worth retrying: a start-up failure, a crash or a timeout may go away; a
    /// configuration problem, a refusal or a bad answer will not.
    pub fn is_transient(&self) -> bool {
        matches!(self, Error::ServerStartFailed { .. } | Error::ServerDisconnected { .. } | Error::CallTimeout { .. })
    }
}

/// An auth error that is a configuration error (a `${env:NAME}` not set) is that
/// configuration error here too, so it is matched in one place.
impl From<mcpflow_auth::Error> for Error {
    fn from(error: mcpflow_auth::Error) -> Self {
        match error {
            mcpflow_auth::Error::Config(error) => Error::Config(error),
            error => Error::Auth(error),
        }
    }
}

/// JSON-RPC's "invalid params": the server refused the arguments.
const INVALID_PARAMS: i32 = -32602;

impl From<Error> for CallError {
    fn from(error: Error) -> Self {
        match error {
            // Said in our words (`ARGS_INVALID`, as when our own check refuses them), the
            // server's text kept below.
            Error::ServerError { server, code: INVALID_PARAMS, message } => CallError::new(
                "ARGS_INVALID",
                format!("server `{server}` refused the arguments (invalid params); check them against the tool's input schema"),
                false,
            )
            .with_detail(message),
            error => CallError::new(error.code(), error.to_string(), error.is_transient()),
        }
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (no servers are configured)".to_owned()
    } else {
        format!(" (configured: {})", quoted(known))
    }
}

fn quoted(names: &[String]) -> String {
    names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

fn tool_not_found(tool: &str, server: Option<&str>, nearest: &[String], unreachable: &[(String, String)]) -> String {
    let mut out = match server {
        Some(server) => format!("server `{server}` has no tool `{tool}`"),
        None => format!("no server has a tool `{tool}`"),
    };
    if !nearest.is_empty() {
        out.push_str(&format!("; did you mean {}?", nearest.join(", ")));
    }
    for (name, reason) in unreachable {
        out.push_str(&format!("; server `{name}` could not be searched: {reason}"));
    }
    out
}

/// `64 MiB`, `512 KiB`, `100 bytes`.
pub(crate) fn bytes(n: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= 1024 {
        format!("{} KiB", n / 1024)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_approved_names_the_command_and_no_front_doors_advice() {
        let e = Error::ServerNotApproved {
            server: "inv".into(),
            action: "start this command",
            command_line: "node server.js".into(),
        };
        assert_eq!(e.code(), "SERVER_NOT_APPROVED");
        let text = e.to_string();
        // The CLI adds its flag, the studio its prompt (`mcpflow_app::advice`).
        assert!(text.contains("node server.js") && !text.contains("--allow-server"), "{text}");
    }

    #[test]
    fn call_error_keeps_code_and_transience() {
        let e: CallError = Error::CallTimeout { server: "a".into(), after: Duration::from_millis(250) }.into();
        assert_eq!((e.code.as_str(), e.transient), ("CALL_TIMEOUT", true));
        assert!(e.message.contains("250 ms"), "{}", e.message);
    }

    #[test]
    fn tool_not_found_lists_suggestions_and_unreachable_servers() {
        let e = Error::ToolNotFound {
            tool: "ech".into(),
            server: None,
            nearest: vec!["`echo` (server `a`)".into()],
            unreachable: vec![("b".into(), "SERVER_NOT_APPROVED".into())],
        };
        assert_eq!(
            e.to_string(),
            "no server has a tool `ech`; did you mean `echo` (server `a`)?; server `b` could not be searched: \
             SERVER_NOT_APPROVED"
        );
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(bytes(64 * 1024 * 1024), "64 MiB");
        assert_eq!(bytes(2048), "2 KiB");
        assert_eq!(bytes(12), "12 bytes");
    }
}
