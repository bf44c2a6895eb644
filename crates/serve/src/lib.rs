//! `mcpflow serve`: the mediator. An MCP server whose tools let an agent explore the
//! downstream servers, save and run blueprints, and run ad-hoc pipelines (DESIGN §5).
//! Blueprints with `"expose": true` are tools of their own, announced with
//! `tools/list_changed`. Over stdio ([`serve_stdio`]) or streamable HTTP
//! ([`http::serve_http`], bearer token, Host/Origin checks, loopback by default).
#![forbid(unsafe_code)] // the workspace denies it; only the studio shell has one audited exception

mod args;
mod builtin;
mod call;
mod exposed;
mod format;
pub mod http;
mod lifecycle;
mod people;
mod sampling;
mod testing;
mod tools;
mod trace;
mod waiting;

use mcpflow_app::app::{App, Change};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// The MCP server over one [`App`]. Clone per connection; clones share their peers, so a
/// change to the exposed blueprints reaches every connected client.
#[derive(Clone)]
pub struct Mediator {
    app: App,
    peers: Arc<Mutex<Peers>>,
    /// Runs whose questions were left for `answer_run`, by run id (see `people.rs`).
    parked: tokio::sync::broadcast::Sender<String>,
}

/// Connected clients, by a number of our own.
#[derive(Default)]
struct Peers {
    next: u64,
    list: Vec<(u64, Peer<RoleServer>)>,
}

impl std::fmt::Debug for Mediator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mediator").finish_non_exhaustive()
    }
}

impl Mediator {
    /// A mediator over `app`. Announces `tools/list_changed` to its clients whenever
    /// the stored blueprints change.
    pub fn new(app: App) -> Self {
        let (parked, _) = tokio::sync::broadcast::channel(64);
        let mediator = Mediator { app, peers: Arc::default(), parked };
        let mut changes = mediator.app.subscribe_changes();
        let peers = mediator.peers.clone();
        tokio::spawn(async move {
            loop {
                match changes.recv().await {
                    Ok(Change::Blueprints) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let list: Vec<_> = match peers.lock() {
                            Ok(p) => p.list.clone(),
                            Err(_) => Vec::new(),
                        };
                        let mut gone = Vec::new();
                        for (id, peer) in list {
                            if peer.notify_tool_list_changed().await.is_err() {
                                gone.push(id);
                            }
                        }
                        if let Ok(mut p) = peers.lock() {
                            p.list.retain(|(id, _)| !gone.contains(id));
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        mediator
    }

    pub fn app(&self) -> &App {
        &self.app
    }
}

impl ServerHandler for Mediator {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_resources().build(),
        )
        .with_server_info(Implementation::new("mcpflow", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "mcpflow runs workflow blueprints over MCP servers. Explore with list_servers / list_tools / \
                 call_tool, read how to write a blueprint (the resource mcpflow://format, or the blueprint_format \
                 tool), check it with validate_workflow, save it with save_workflow, then run it with \
                 run_workflow: one call runs every step deterministically. run_pipeline runs an ad-hoc sequence \
                 of tool calls with {{ id.path }} templates.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut list: Vec<Tool> = builtin::builtin().to_vec();
        match self.app.exposed() {
            Ok(exposed) => list.extend(exposed.into_iter().filter(|e| !builtin::is_builtin(&e.id)).map(exposed::tool)),
            Err(e) => tracing::warn!(error = %e, "could not list exposed blueprints"),
        }
        Ok(ListToolsResult::with_all_items(list))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let stack = incoming_stack(&request, &context);
        let telemetry = self.app.telemetry();
        let caller = trace::incoming(&request, &context);
        let span = trace::ServerSpan::start(telemetry.as_ref(), &request.name, caller.as_ref(), &context);
        let parent = span.context().cloned().or(caller);
        // A built-in tool's arguments are checked against its schema first.
        if let Some(tool) = builtin::find(&request.name)
            && let Err(error) = args::check(tool, &args)
        {
            span.end(Some("BAD_REQUEST"));
            return Ok(CallToolResult::structured_error(error).into());
        }
        if request.name == "blueprint_format" {
            span.end(None);
            return Ok(format::call(&args).into());
        }
        let retry = match waiting::retry_of(&request) {
            Ok(retry) => retry,
            Err(error) => {
                span.end(error["error"]["code"].as_str());
                return Ok(CallToolResult::structured_error(error).into());
            }
        };
        let call = call::Call {
            app: &self.app,
            context: &context,
            stack,
            trace: call::CallerTrace { telemetry, parent },
            parked: &self.parked,
            retry,
            input_required: std::sync::OnceLock::new(),
        };
        // An exposed blueprint, found once: it runs, and answers with its output when that
        // has a schema.
        let exposed = if builtin::is_builtin(&request.name) {
            Ok(None)
        } else {
            self.app.exposed().map(|list| list.into_iter().find(|e| e.id == request.name))
        };
        let output_only = request.name == "run_workflow" && args.get("detail") == Some(&Value::from("output"));
        let (answer, output_schema) = match exposed {
            Ok(Some(e)) => (call.run_exposed(&e.id, args).await, e.output_schema),
            Ok(None) => (call.dispatch(&request.name, args).await, None),
            Err(e) => (Err(call::app_failure(&e)), None),
        };
        let result: CallToolResult = match answer {
            Ok(value) => {
                span.end(None);
                match &output_schema {
                    Some(schema) => exposed::answer(schema, value),
                    None if output_only => exposed::output_only(value),
                    None => CallToolResult::structured(value),
                }
            }
            Err(error) => {
                span.end(Some(error["error"]["code"].as_str().unwrap_or("tool_error")));
                CallToolResult::structured_error(error)
            }
        };
        // A 2026-07-28 client that can answer the run's questions gets them to answer.
        if let Some(input) = call.input_required.into_inner() {
            return Ok(CallToolResponse::InputRequired(input));
        }
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(format::resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match format::read(&request.uri) {
            Some(result) => Ok(result.into()),
            None => Err(McpError::resource_not_found(
                format!(
                    "mcpflow has no resource `{}`; resources/list shows {} and {}",
                    request.uri,
                    format::GUIDE_URI,
                    format::SCHEMA_URI
                ),
                None,
            )),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.next += 1;
            let id = peers.next;
            peers.list.push((id, context.peer));
        }
    }
}

/// The workflows on whose behalf this call is made (`_meta["mcpflow/stack"]`).
fn incoming_stack(request: &CallToolRequestParams, context: &RequestContext<RoleServer>) -> Vec<String> {
    let from = |meta: &rmcp::model::RequestMetaObject| {
        meta.0
            .0
            .get(mcpflow_mcp::STACK_META)
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>())
    };
    request.meta.as_ref().and_then(from).or_else(|| from(&context.meta)).unwrap_or_default()
}

/// Serves MCP over stdin/stdout until the client goes away.
pub async fn serve_stdio(app: App) -> std::io::Result<()> {
    let mediator = Mediator::new(app);
    let service = mediator
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| std::io::Error::other(format!("the MCP session did not start: {e}")))?;
    service.waiting().await.map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(())
}
