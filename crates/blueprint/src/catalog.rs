//! What the validator may know about servers: their tools (with input schemas) and
//! prompts. The MCP client pool implements [`ToolCatalog`] from live servers; tests and
//! `mcpflow validate --catalog FILE` use [`JsonCatalog`], read from a JSON file.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A tool as listed by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// The schema of its `structuredContent`, when it declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

fn empty_object_schema() -> Value {
    serde_json::json!({ "type": "object" })
}

/// A prompt argument as listed by `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgument {
    pub name: String,
    #[serde(default)]
    pub required: bool,
}

/// A prompt as listed by `prompts/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptInfo {
    pub name: String,
    #[serde(default)]
    pub arguments: Vec<PromptArgument>,
}

/// What one server offers.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerInfo {
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    #[serde(default)]
    pub prompts: Vec<PromptInfo>,
}

/// What the catalog knows about one server.
#[derive(Debug, Clone)]
pub enum ServerStatus {
    /// No server of that name is configured.
    NotConfigured,
    /// Configured, but listing its tools failed.
    Unreachable {
        reason: String,
    },
    /// Configured, and not listed yet (it has not been started: validating never starts
    /// a server). Its steps are not checked, and not flagged either.
    NotListed,
    Ready(Arc<ServerInfo>),
}

/// Server name → tools and prompts. Implemented by the client pool.
pub trait ToolCatalog {
    /// Names of all configured servers.
    fn server_names(&self) -> Vec<String>;
    fn server(&self, name: &str) -> ServerStatus;
}

/// A catalog read from JSON:
/// `{"servers": {"name": {"tools": [...], "prompts": [...]}, "down": {"error": "…"}}}`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct JsonCatalog {
    pub servers: BTreeMap<String, CatalogEntry>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CatalogEntry {
    Unreachable { error: String },
    Ready(Arc<ServerInfo>),
}

impl JsonCatalog {
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl ToolCatalog for JsonCatalog {
    fn server_names(&self) -> Vec<String> {
        self.servers.keys().cloned().collect()
    }

    fn server(&self, name: &str) -> ServerStatus {
        match self.servers.get(name) {
            None => ServerStatus::NotConfigured,
            Some(CatalogEntry::Unreachable { error }) => ServerStatus::Unreachable { reason: error.clone() },
            Some(CatalogEntry::Ready(info)) => ServerStatus::Ready(info.clone()),
        }
    }
}

/// Other blueprints a `workflow` step may call, for recursion checks across blueprints.
pub trait WorkflowCatalog {
    /// The ids of the blueprints that blueprint `id` calls, or `None` when `id` is unknown.
    fn calls(&self, id: &str) -> Option<Vec<String>>;
}

impl WorkflowCatalog for BTreeMap<String, Vec<String>> {
    fn calls(&self, id: &str) -> Option<Vec<String>> {
        self.get(id).cloned()
    }
}
