//! What a server offers — tools, resources, resource templates and prompts with their
//! schemas — listed after `initialize` and listed again when the server sends
//! `notifications/*/list_changed`. Which tools run only as tasks ([`TaskTools`]) is read
//! from the raw `tools/list` answers by the transports, since rmcp's `Tool` drops
//! `execution`.

use mcpflow_blueprint::catalog::{PromptArgument, PromptInfo, ServerInfo, ToolInfo};
use rmcp::model::{Prompt, Resource, ResourceTemplate, ServerPeerInfo, Tool};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

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
                    output_schema: tool.output_schema.as_ref().map(|schema| Value::Object((**schema).clone())),
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
    /// The tools of this session that run only as tasks.
    task_tools: Arc<TaskTools>,
}

/// The tools of one session that must be called as tasks: those whose
/// `execution.taskSupport` is `"required"` in the server's `tools/list` answer, read from
/// the raw answer by the transport (`pool/lines.rs`, `pool/listed.rs`) before rmcp parses
/// it (rmcp's `Tool` has no `execution` and drops it), and those a server refused to run
/// plainly (`pool/call.rs`: a server whose list does not say so). Held to the tools listed
/// last: the list itself is held to the pool's message limit.
#[derive(Debug, Default)]
pub(crate) struct TaskTools {
    required: Mutex<HashSet<String>>,
}

/// A `tools/list` answer as far as task support goes.
#[derive(Deserialize)]
struct ListAnswer {
    result: ListedTools,
}

#[derive(Deserialize)]
struct ListedTools {
    tools: Vec<ListedTool>,
}

#[derive(Deserialize)]
struct ListedTool {
    name: String,
    /// Any shape: a server's odd `execution` costs only that tool its reading.
    #[serde(default)]
    execution: Option<Value>,
}

impl TaskTools {
    /// Reads a raw JSON-RPC answer to `tools/list` (one page of it): each tool it lists is
    /// task-only when its `execution.taskSupport` is `"required"`, and not otherwise.
    /// Anything that is not such an answer is ignored.
    pub fn read_list(&self, answer: &[u8]) {
        let Ok(answer) = serde_json::from_slice::<ListAnswer>(answer) else { return };
        let mut required = self.lock();
        for tool in answer.result.tools {
            let support = tool.execution.as_ref().and_then(|e| e.get("taskSupport")).and_then(Value::as_str);
            if support == Some("required") {
                required.insert(tool.name);
            } else {
                required.remove(&tool.name);
            }
        }
    }

    /// Whether `tool` is called as a task.
    pub fn contains(&self, tool: &str) -> bool {
        self.lock().contains(tool)
    }

    /// A server refused to run `tool` plainly: it is called as a task from now on.
    pub fn insert(&self, tool: &str) {
        self.lock().insert(tool.to_owned());
    }

    /// Forgets the tools that are no longer listed.
    fn retain_listed(&self, tools: &[Tool]) {
        self.lock().retain(|name| tools.iter().any(|t| t.name == name.as_str()));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.required.lock().unwrap_or_else(PoisonError::into_inner)
    }
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
            task_tools: Arc::default(),
        }
    }

    /// The session's task-only tools, for its transport to fill from `tools/list` answers.
    pub fn task_tools(&self) -> &Arc<TaskTools> {
        &self.task_tools
    }

    pub fn get(&self) -> Arc<Discovery> {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn update(&self, change: impl FnOnce(&mut Discovery)) {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
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
        self.task_tools.retain_listed(&tools);
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
                Ok(tools) => {
                    self.task_tools.retain_listed(&tools);
                    self.update(|d| d.tools = tools);
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str) -> Tool {
        serde_json::from_value(json!({"name": name, "inputSchema": {"type": "object"}})).unwrap()
    }

    #[test]
    fn task_only_tools_are_read_from_the_raw_list() {
        let tap = TaskTools::default();
        let page = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [
            {"name": "slow", "inputSchema": {}, "execution": {"taskSupport": "required"}},
            {"name": "maybe", "inputSchema": {}, "execution": {"taskSupport": "optional"}},
            {"name": "odd", "inputSchema": {}, "execution": "required"},
            {"name": "plain", "inputSchema": {}}
        ]}});
        tap.read_list(page.to_string().as_bytes());
        assert!(tap.contains("slow"));
        assert!(!tap.contains("maybe") && !tap.contains("odd") && !tap.contains("plain"));
        // A refusal teaches one more; anything that is not a list changes nothing.
        tap.insert("plain");
        for other in [json!({"jsonrpc": "2.0", "id": 3, "result": {"content": []}}), json!({"tools": 1}), json!([])] {
            tap.read_list(other.to_string().as_bytes());
        }
        tap.read_list(b"not json");
        assert!(tap.contains("slow") && tap.contains("plain"));
        // Listed again without it: no longer a task; not listed at all: forgotten.
        let again = json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": [{"name": "slow", "inputSchema": {}}]}});
        tap.read_list(again.to_string().as_bytes());
        assert!(!tap.contains("slow"));
        tap.retain_listed(&[tool("slow")]);
        assert!(!tap.contains("plain"));
    }
}
