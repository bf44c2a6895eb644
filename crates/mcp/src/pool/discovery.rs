//! What a server offers — tools, resources, resource templates and prompts with their
//! schemas — listed after `initialize` and listed again when the server sends
//! `notifications/*/list_changed`.

use mcpflow_blueprint::catalog::{PromptArgument, PromptInfo, ServerInfo, ToolInfo};
use rmcp::model::{Prompt, Resource, ResourceTemplate, ServerPeerInfo, Tool};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

/// One server's offer, as last listed.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Discovery {
    /// The MCP protocol version the server agreed to.
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub instructions: Option<String>,
    /// The capabilities the server declared in its `initialize` answer, as it sent them.
    pub capabilities: Option<rmcp::model::ServerCapabilities>,
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub resource_templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

impl Discovery {
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Tools and prompts as the blueprint validator sees them.
    pub fn server_info(&self) -> ServerInfo {
        ServerInfo {
            tools: self
                .tools
                .iter()
                .map(|tool| ToolInfo {
                    name: tool.name.to_string(),
                    description: tool.description.as_ref().map(ToString::to_string),
                    input_schema: Value::Object((*tool.input_schema).clone()),
                })
                .collect(),
            prompts: self
                .prompts
                .iter()
                .map(|prompt| PromptInfo {
                    name: prompt.name.clone(),
                    arguments: prompt
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| PromptArgument { name: a.name.clone(), required: a.required.unwrap_or(false) })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// The current [`Discovery`] of one connection; replaced whole on every refresh.
#[derive(Debug)]
pub(crate) struct DiscoveryCell {
    server: String,
    current: RwLock<Arc<Discovery>>,
    /// Refreshes one at a time, so a slow older listing never overwrites a newer one.
    refreshing: tokio::sync::Mutex<()>,
    /// Per [`List`]: a refresh for a `list_changed` waits for its turn. Later notifications
    /// of that list need no refresh of their own (that one lists after them), so a server
    /// sending them without pause never queues more than one refresh per list.
    queued: [AtomicBool; 3],
}

/// Which list a `list_changed` notification concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    Tools,
    Resources,
    Prompts,
}

impl DiscoveryCell {
    pub fn new(server: &str) -> Self {
        DiscoveryCell {
            server: server.to_owned(),
            current: RwLock::new(Arc::default()),
            refreshing: tokio::sync::Mutex::new(()),
            queued: Default::default(),
        }
    }

    pub fn get(&self) -> Arc<Discovery> {
        self.current.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn update(&self, change: impl FnOnce(&mut Discovery)) {
        let mut current = self.current.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut next = (**current).clone();
        change(&mut next);
        *current = Arc::new(next);
    }

    /// Lists everything the server's capabilities announce. A failing tool listing is an
    /// error; failing resource or prompt listings are logged and left empty, since tools
    /// are what blueprints mostly call.
    pub async fn load(&self, peer: &Peer<RoleClient>) -> Result<(), ServiceError> {
        let _one = self.refreshing.lock().await;
        let info: Option<Arc<ServerPeerInfo>> = peer.peer_info();
        let caps = info.as_ref().map(|info| &info.capabilities);
        let tools = if caps.is_none_or(|c| c.tools.is_some()) { peer.list_all_tools().await? } else { Vec::new() };
        let (resources, resource_templates) = if caps.is_some_and(|c| c.resources.is_some()) {
            (
                self.lenient(List::Resources, peer.list_all_resources().await),
                self.lenient(List::Resources, peer.list_all_resource_templates().await),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let prompts = if caps.is_some_and(|c| c.prompts.is_some()) {
            self.lenient(List::Prompts, peer.list_all_prompts().await)
        } else {
            Vec::new()
        };
        self.update(|d| {
            d.protocol_version = info.as_ref().map(|i| i.protocol_version.to_string());
            d.server_name = info.as_ref().and_then(|i| i.server_info.as_ref()).map(|s| s.name.clone());
            d.server_version = info.as_ref().and_then(|i| i.server_info.as_ref()).map(|s| s.version.clone());
            d.instructions = info.as_ref().and_then(|i| i.instructions.clone());
            d.capabilities = info.as_ref().map(|i| i.capabilities.clone());
            d.tools = tools;
            d.resources = resources;
            d.resource_templates = resource_templates;
            d.prompts = prompts;
        });
        Ok(())
    }

    /// After `notifications/<kind>/list_changed`: lists that kind again, unless a refresh
    /// of it is already waiting for its turn.
    pub async fn changed(&self, peer: &Peer<RoleClient>, list: List) {
        if !self.queued[list as usize].swap(true, Ordering::AcqRel) {
            self.refresh(peer, list).await;
        }
    }

    /// Lists one kind again.
    pub async fn refresh(&self, peer: &Peer<RoleClient>, list: List) {
        let _one = self.refreshing.lock().await;
        // From here on a new notification needs a new refresh.
        self.queued[list as usize].store(false, Ordering::Release);
        tracing::debug!(server = %self.server, ?list, "the server's list changed; listing it again");
        match list {
            List::Tools => match peer.list_all_tools().await {
                Ok(tools) => self.update(|d| d.tools = tools),
                Err(error) => tracing::warn!(server = %self.server, %error, "listing tools again failed"),
            },
            List::Resources => {
                let resources = self.lenient(list, peer.list_all_resources().await);
                let templates = self.lenient(list, peer.list_all_resource_templates().await);
                self.update(|d| {
                    d.resources = resources;
                    d.resource_templates = templates;
                });
            }
            List::Prompts => {
                let prompts = self.lenient(list, peer.list_all_prompts().await);
                self.update(|d| d.prompts = prompts);
            }
        }
    }

    fn lenient<T>(&self, list: List, result: Result<Vec<T>, ServiceError>) -> Vec<T> {
        result.unwrap_or_else(|error| {
            tracing::warn!(server = %self.server, ?list, %error, "listing failed; treating it as empty");
            Vec::new()
        })
    }
}
