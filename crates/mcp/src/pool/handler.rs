//! The pool's side of one MCP session (rmcp's `ClientHandler`): what it tells servers
//! about itself (the roots capability, nothing it does not handle), the roots it answers
//! `roots/list` with, their questions for a person (elicitation, to the call they belong
//! to: `asks.rs`), their requests for a model completion (sampling: `sampling.rs`), and what it does with their notifications — progress goes to the
//! call that asked, task status to the call following the task, `list_changed` lists
//! again, log messages go to the log.

// MCP logging and roots are deprecated upstream (SEP-2577) but servers still use them.
#![expect(deprecated)]

use super::LogStream;
use super::asks::AskRoutes;
use super::discovery::{DiscoveryCell, List};
use super::notes::ServerNotes;
use super::progress::{ProgressRoutes, TaskRoutes};
use super::sampling::SampleRoutes;
use mcpflow_config::roots::Root;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationCapability, ErrorData, FormElicitationCapability, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion, RootsCapabilities, SamplingCapability,
    UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::sync::{Arc, PoisonError, RwLock};

/// The roots given to servers that configure none; the front door changes them (another
/// blueprint's folder), and the sessions that use them are told (`roots/list_changed`).
#[derive(Debug, Default)]
pub(crate) struct SharedRoots(RwLock<Arc<Vec<Root>>>);

impl SharedRoots {
    pub fn new(roots: Vec<Root>) -> Self {
        SharedRoots(RwLock::new(Arc::new(roots)))
    }

    pub fn get(&self) -> Arc<Vec<Root>> {
        self.0.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Replaces them; false when they were already these.
    pub fn set(&self, roots: Vec<Root>) -> bool {
        let mut current = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if **current == roots {
            return false;
        }
        *current = Arc::new(roots);
        true
    }
}

/// Where one session's roots come from.
#[derive(Debug, Clone)]
pub(crate) enum Roots {
    /// The server's own `roots`.
    Own(Arc<Vec<Root>>),
    /// The pool's defaults.
    Shared(Arc<SharedRoots>),
}

impl Roots {
    pub fn get(&self) -> Arc<Vec<Root>> {
        match self {
            Roots::Own(roots) => roots.clone(),
            Roots::Shared(shared) => shared.get(),
        }
    }
}

/// What the pool declares: roots (which it answers, and says when they change) and
/// elicitation, form and URL mode (each question goes to the step whose call it belongs
/// to, and from there to the run's people — or fails that step with `INPUT_REQUIRED`
/// when nobody can answer) and sampling (each request goes to the step whose call it
/// belongs to, refused unless the server's entry says `"sampling": true`, and answered by
/// the run's sampler — or fails that step with `SAMPLING_UNAVAILABLE`).
pub(crate) fn capabilities() -> ClientCapabilities {
    let mut roots = RootsCapabilities::default();
    roots.list_changed = Some(true);
    let mut capabilities = ClientCapabilities::default();
    capabilities.roots = Some(roots);
    capabilities.elicitation = Some(
        ElicitationCapability::new()
            .with_form(FormElicitationCapability::new())
            .with_url(UrlElicitationCapability::new()),
    );
    capabilities.sampling = Some(SamplingCapability::default());
    capabilities
}

#[derive(Debug, Clone)]
pub(crate) struct Handler {
    pub notes: Arc<ServerNotes>,
    pub progress: Arc<ProgressRoutes>,
    /// Task status notifications go to the call following the task.
    pub tasks: Arc<TaskRoutes>,
    pub discovery: Arc<DiscoveryCell>,
    pub roots: Roots,
    /// The calls in flight that take the server's questions.
    pub asks: Arc<AskRoutes>,
    /// The calls in flight that take the server's sampling requests, and its switch.
    pub samples: Arc<SampleRoutes>,
    /// The configured server's name, for the questions it asks.
    pub server: Arc<str>,
    /// The session id a streamable HTTP server assigned, noted by the HTTP client
    /// (`listed.rs`) for the client spans (`trace.rs`); never set over stdio.
    pub http_session: Arc<super::trace::SessionId>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The last protocol version with an `initialize` handshake: every server in use
        // speaks it, and its list_changed notifications arrive unsolicited (2026-07-28
        // moves them to `subscriptions/listen` streams).
        ClientConfig::new(capabilities(), Implementation::new("mcpflow", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots.get();
        Ok(ListRootsResult::new(
            roots.iter().map(|root| rmcp::model::Root::new(root.uri.clone()).with_name(root.name.clone())).collect(),
        ))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.asks.elicit(&self.server, request).await)
    }

    async fn create_message(
        &self,
        request: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.samples.create_message(&self.server, request).await
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.deliver(params);
    }

    async fn on_task_status(
        &self,
        params: rmcp::model::TaskStatusNotificationParams,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Ok(params) = serde_json::to_value(&params) {
            self.tasks.deliver(params);
        }
    }

    /// The 2025-11-25 `notifications/tasks/status` (rmcp knows only the 2026-07-28 name).
    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method == "notifications/tasks/status"
            && let Some(params) = notification.params
        {
            self.tasks.deliver(params);
        }
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
