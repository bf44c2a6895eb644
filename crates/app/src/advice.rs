//! What to do about a refusal, in the words of the front door the person is using. The
//! pool says what happened (`server `x` is not approved to start this command: …`); the
//! command line adds its flag, the studio its consent prompt and Servers panel — a
//! window never suggests a command-line flag, a terminal never a panel it does not have.

use mcpflow_blueprint::{Code, Diagnostic};
use mcpflow_engine::{CallError, CallRequest, CallTarget, Servers};
use std::sync::Arc;

/// Which front door a person reads the messages in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Front {
    /// The studio (and anything else with its consent prompt and Servers panel).
    #[default]
    Studio,
    /// `mcpflow` on a terminal: `run`, `validate`, `serve`, `daemon`.
    Cli,
}

impl Front {
    /// What to do about server `server` that is not approved.
    pub fn approve(self, server: &str) -> String {
        match self {
            Front::Studio => format!(
                "Approve `{server}` in the prompt that appears when you run, or in the Servers panel, then run again"
            ),
            Front::Cli => {
                format!("Run again with `--allow-server {server}` (or approve it once in the studio's Servers panel)")
            }
        }
    }

    /// What to do about server `server` that needs a sign-in.
    pub fn login(self, server: &str) -> String {
        match self {
            Front::Studio => format!("sign in with \"Sign in\" on `{server}` in the Servers panel, then run again"),
            Front::Cli => format!("run `mcpflow auth login {server}`, then run again"),
        }
    }

    /// A diagnostic's hint in this front door's words: a server that could not be
    /// checked because it is not approved says how to approve it here.
    pub fn diagnostic(self, mut d: Diagnostic) -> Diagnostic {
        if d.code == Code::ServerUnreachable
            && d.message.contains("is not approved")
            && let Some(server) = server_named(&d.message)
        {
            let how = match self {
                Front::Studio => format!("approve `{server}` in the Servers panel, then its tools are checked"),
                Front::Cli => format!("validate again with `--allow-server {server}` to check its tools"),
            };
            d.hint = Some(how);
        }
        d
    }

    /// `servers` whose `SERVER_NOT_APPROVED` errors end with this front door's advice.
    pub fn advise(self, servers: Arc<dyn Servers>) -> Arc<dyn Servers> {
        Arc::new(Advised { inner: servers, front: self })
    }
}

/// The first name in `server `NAME`` of a message.
fn server_named(message: &str) -> Option<&str> {
    let rest = message.split_once("server `")?.1;
    rest.split_once('`').map(|(name, _)| name)
}

struct Advised {
    inner: Arc<dyn Servers>,
    front: Front,
}

impl Servers for Advised {
    fn call(
        &self,
        request: CallRequest,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<serde_json::Value, CallError>> + Send + '_>> {
        let named = match &request.target {
            CallTarget::Tool { server, .. } => server.clone(),
            CallTarget::Resource { server, .. } | CallTarget::Prompt { server, .. } => Some(server.clone()),
        };
        Box::pin(async move {
            self.inner.call(request).await.map_err(|mut e| {
                if e.code == "SERVER_NOT_APPROVED"
                    && let Some(server) = named.as_deref().or_else(|| server_named(&e.message))
                {
                    let message = e.message.trim_end_matches('.');
                    e.message = format!("{message}. {}", self.front.approve(server));
                }
                e
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_front_door_says_it_in_its_own_words() {
        let studio = Front::Studio.approve("memory");
        assert!(studio.contains("Servers panel") && !studio.contains("--"), "{studio}");
        let cli = Front::Cli.approve("memory");
        assert!(cli.contains("--allow-server memory"), "{cli}");
        let d = Diagnostic::new(
            Code::ServerUnreachable,
            "/steps/0/server",
            "server `memory` could not be reached: server `memory` is not approved to start this command: node x",
        );
        let gui = Front::Studio.diagnostic(d.clone()).hint.unwrap();
        assert!(gui.contains("Servers panel") && !gui.contains("--"), "{gui}");
        assert!(Front::Cli.diagnostic(d).hint.unwrap().contains("--allow-server memory"));
    }
}
