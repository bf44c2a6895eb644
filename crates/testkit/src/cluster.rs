//! The cluster-sim fixture: read-only tools over a deterministic Kubernetes-like inventory.

mod inventory;
mod rng;
mod selector;

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, Implementation, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use self::{
    inventory::{Inventory, TYPES, resolve_kind},
    selector::Selector,
};
use crate::{ClusterConfig, pace, reply};

const SUMMARY_URI: &str = "cluster://summary";
const NAMESPACES: usize = 0;
const NODES: usize = 1;

#[derive(Debug, Deserialize, JsonSchema)]
struct ListResourcesArgs {
    /// Resource type: plural (`pods`), singular (`pod`) or kind (`Pod`); see `list_resource_types`.
    kind: String,
    /// Only objects in this namespace (ignored for cluster-scoped types).
    #[serde(default)]
    namespace: Option<String>,
    /// Equality-based label selector, e.g. `app=web` or `app=web,tier!=db`.
    #[serde(default)]
    label_selector: Option<String>,
    /// Page size; omitted or 0 returns everything.
    #[serde(default)]
    limit: Option<u32>,
    /// The `continue` token of the previous page.
    #[serde(default, rename = "continue")]
    continue_token: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct GetResourceArgs {
    /// Resource type: plural (`pods`), singular (`pod`) or kind (`Pod`).
    kind: String,
    /// The object's `metadata.name`.
    name: String,
    /// The object's namespace; when omitted for a namespaced type, the name must be unique in the cluster.
    #[serde(default)]
    namespace: Option<String>,
}

/// Serves `list_namespaces`, `list_nodes`, `list_resource_types`, `list_resources`, `get_resource` and
/// the resource `cluster://summary`.
#[derive(Debug, Clone)]
pub(crate) struct ClusterSim {
    inventory: Arc<Inventory>,
    latency: Duration,
    tool_router: ToolRouter<Self>,
}

impl ClusterSim {
    pub(crate) fn new(config: &ClusterConfig) -> Self {
        Self {
            inventory: Arc::new(Inventory::generate(config)),
            latency: config.latency,
            tool_router: Self::tool_router(),
        }
    }

    /// The configured per-call latency; `Err` when the call was cancelled meanwhile.
    async fn delay(&self, ctx: &RequestContext<RoleServer>) -> Result<(), CallToolResult> {
        pace::sleep(&ctx.ct, self.latency).await.map_err(|pace::Cancelled| reply::error("cancelled"))
    }

    fn all(&self, type_index: usize) -> CallToolResult {
        reply::structured(json!({ "items": self.inventory.objects(type_index) }))
    }

    fn list(&self, args: &ListResourcesArgs) -> CallToolResult {
        let Some(type_index) = resolve_kind(&args.kind) else {
            return reply::error(unknown_kind(&args.kind));
        };
        let selector = match args.label_selector.as_deref().map(Selector::parse).transpose() {
            Ok(selector) => selector.unwrap_or_default(),
            Err(message) => return reply::error(message),
        };
        let offset = match args.continue_token.as_deref().filter(|t| !t.is_empty()) {
            None => 0,
            Some(token) => match token.parse::<usize>() {
                Ok(offset) => offset,
                Err(_) => return reply::error(format!("invalid continue token {token:?}")),
            },
        };
        let namespace = args.namespace.as_deref().filter(|_| TYPES[type_index].namespaced);
        let matching: Vec<&Value> = self
            .inventory
            .objects(type_index)
            .iter()
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
            .filter(|o| selector.matches(o))
            .collect();
        let limit = args.limit.filter(|l| *l > 0).map_or(usize::MAX, |l| l as usize);
        let page: Vec<&Value> = matching.iter().skip(offset).take(limit).copied().collect();
        // The Kubernetes way: `metadata.continue`, an opaque token, absent on the last page.
        let mut metadata = Map::new();
        let next = offset.saturating_add(limit);
        if next < matching.len() {
            metadata.insert("continue".into(), json!(next.to_string()));
        }
        reply::structured(json!({ "metadata": metadata, "items": page }))
    }

    fn get(&self, args: &GetResourceArgs) -> CallToolResult {
        let Some(type_index) = resolve_kind(&args.kind) else {
            return reply::error(unknown_kind(&args.kind));
        };
        let resource_type = TYPES[type_index];
        let namespace = args.namespace.as_deref().filter(|_| resource_type.namespaced);
        let found: Vec<&Value> = self
            .inventory
            .objects(type_index)
            .iter()
            .filter(|o| o["metadata"]["name"] == args.name.as_str())
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
            .collect();
        match found.as_slice() {
            [object] => reply::structured((*object).clone()),
            [] => reply::error(match namespace {
                Some(ns) => format!("not found: {} {:?} in namespace {ns:?}", resource_type.plural, args.name),
                None => format!("not found: {} {:?}", resource_type.plural, args.name),
            }),
            many => reply::error(format!(
                "ambiguous: {} {} named {:?} in different namespaces; pass `namespace`",
                many.len(),
                resource_type.plural,
                args.name
            )),
        }
    }

    fn summary(&self) -> Value {
        let counts: Map<String, Value> = TYPES
            .iter()
            .enumerate()
            .map(|(i, t)| (t.plural.to_owned(), json!(self.inventory.objects(i).len())))
            .collect();
        json!({ "total": self.inventory.total(), "counts": counts })
    }
}

fn unknown_kind(kind: &str) -> String {
    let known: Vec<&str> = TYPES.iter().map(|t| t.plural).collect();
    format!("unknown resource type {kind:?}; known types: {}", known.join(", "))
}

#[tool_router]
impl ClusterSim {
    #[tool(description = "List all namespaces: {items}")]
    async fn list_namespaces(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        if let Err(cancelled) = self.delay(&ctx).await {
            return cancelled;
        }
        self.all(NAMESPACES)
    }

    #[tool(description = "List all nodes: {items}")]
    async fn list_nodes(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        if let Err(cancelled) = self.delay(&ctx).await {
            return cancelled;
        }
        self.all(NODES)
    }

    #[tool(description = "List the resource types the cluster serves: {items: [{kind, plural, namespaced}]}")]
    async fn list_resource_types(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        if let Err(cancelled) = self.delay(&ctx).await {
            return cancelled;
        }
        let items: Vec<Value> = TYPES
            .iter()
            .map(|t| json!({ "kind": t.kind, "plural": t.plural, "namespaced": t.namespaced, "apiVersion": t.api_version }))
            .collect();
        reply::structured(json!({ "items": items }))
    }

    #[tool(
        description = "List objects of one type, optionally in one namespace, filtered by labels and paged (`limit`, then the `continue` token of the previous page): {metadata: {continue?}, items}"
    )]
    async fn list_resources(
        &self,
        Parameters(args): Parameters<ListResourcesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if let Err(cancelled) = self.delay(&ctx).await {
            return cancelled;
        }
        self.list(&args)
    }

    #[tool(
        description = "Get one object by type, name and namespace; a tool error \"not found\" when it does not exist"
    )]
    async fn get_resource(
        &self,
        Parameters(args): Parameters<GetResourceArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if let Err(cancelled) = self.delay(&ctx).await {
            return cancelled;
        }
        self.get(&args)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ClusterSim {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("mcpflow-testkit-cluster-sim", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "A synthetic Kubernetes-like cluster. Objects look like API objects \
                 ({apiVersion, kind, metadata, spec, status}). Resource cluster://summary has counts per type.",
            )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(SUMMARY_URI, "summary")
                .with_mime_type("application/json")
                .with_description("Object counts per resource type and in total"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri == SUMMARY_URI {
            let text = self.summary().to_string();
            Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, SUMMARY_URI).with_mime_type("application/json"),
            ])
            .into())
        } else {
            Err(McpError::resource_not_found(format!("no resource {}", request.uri), None))
        }
    }
}
