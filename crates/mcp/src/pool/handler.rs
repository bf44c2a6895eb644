//! The pool's side of one MCP session (rmcp's `ClientHandler`): what it tells servers
//! about itself, and what it does with their notifications — progress goes to the call
//! that asked, `list_changed` lists again, log messages go to the log.

// MCP logging is deprecated upstream (SEP-2577) but servers still send it.
#![expect(deprecated)]

use super::LogStream;
use super::discovery::{DiscoveryCell, List};
use super::notes::ServerNotes;
use super::progress::ProgressRoutes;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct Handler {
    pub notes: Arc<ServerNotes>,
    pub progress: Arc<ProgressRoutes>,
    pub discovery: Arc<DiscoveryCell>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The last protocol version with an `initialize` handshake: every server in use
        // speaks it, and its list_changed notifications arrive unsolicited (2026-07-28
        // moves them to `subscriptions/listen` streams).
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("mcpflow", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.deliver(params);
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.discovery.changed(&context.peer, List::Tools).await;
    }

    async fn on_resource_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.discovery.changed(&context.peer, List::Resources).await;
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.discovery.changed(&context.peer, List::Prompts).await;
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let data = match &params.data {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let logger = params.logger.as_deref().map(|l| format!(" {l}")).unwrap_or_default();
        let level = format!("{:?}", params.level).to_lowercase();
        self.notes.log(LogStream::Notification, format!("[{level}{logger}] {data}"));
    }
}
