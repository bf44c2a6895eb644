//! The echo fixture: trivial tools (echo, arithmetic, sleep, progress), one resource and one prompt;
//! `add_tool` adds a tool at run time and announces it with `notifications/tools/list_changed`;
//! `meta` returns the `_meta` of its request (the trace context a client propagates).
//!
//! `add` declares an `outputSchema` (`{sum}`). With `MCPFLOW_TESTKIT_ECHO_DRIFT` in its
//! environment the echo server is a later version of itself, for the lock's drift tests:
//! `breaking` gives `add` a new required argument `c` and renames its output `sum` to
//! `total`; `compatible` gives `add` a new optional argument `note`.

use std::{
    borrow::Cow,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::{router::prompt::PromptRouter, router::tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, Implementation, ListResourcesResult, PaginatedRequestParams, PromptMessage,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role,
        ServerCapabilities, ServerConfig,
    },
    prompt, prompt_handler, prompt_router,
    service::RequestContext,
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::{pace, reply};

const HELLO_URI: &str = "echo://hello";

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoArgs {
    /// Text to send back unchanged.
    message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct TwoNumbers {
    a: f64,
    b: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to sleep, in milliseconds.
    ms: u64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ProgressArgs {
    /// Number of progress notifications to send.
    steps: u32,
    /// Pause before each notification, in milliseconds.
    interval_ms: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RecordArgs {
    /// The file to append to (created if missing).
    file: String,
    /// The line to append.
    line: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AddToolArgs {
    /// Name of the new tool, which returns its `message` as `echo` does.
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// Serves `echo`, `add`, `multiply`, `sleep`, `record`, `progress`, `add_tool` (plus the tools it
/// added) and `meta`, the resource `echo://hello` and the prompt `greet`.
#[derive(Debug, Clone)]
pub(crate) struct Echo {
    tool_router: ToolRouter<Self>,
    prompt_router: PromptRouter<Self>,
    /// Names of the tools `add_tool` added, in order.
    added: Arc<Mutex<Vec<String>>>,
    drift: Drift,
}

/// Which version of the echo server this is (`MCPFLOW_TESTKIT_ECHO_DRIFT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drift {
    None,
    /// `add` takes a new required `c` and answers `{total}` instead of `{sum}`.
    Breaking,
    /// `add` takes a new optional `note`.
    Compatible,
}

impl Drift {
    fn from_env() -> Self {
        match std::env::var("MCPFLOW_TESTKIT_ECHO_DRIFT").as_deref() {
            Ok("breaking") => Drift::Breaking,
            Ok("compatible") => Drift::Compatible,
            _ => Drift::None,
        }
    }

    /// The name of `add`'s output field in this version.
    fn sum_field(self) -> &'static str {
        if self == Drift::Breaking { "total" } else { "sum" }
    }

    /// `add`'s schemas in this version: the output schema always, the drift's arguments.
    fn reshape_add(self, tool: &mut rmcp::model::Tool) {
        let field = self.sum_field();
        let output = json!({ "type": "object", "properties": { field: { "type": "number" } }, "required": [field] });
        if let serde_json::Value::Object(output) = output {
            tool.output_schema = Some(Arc::new(output));
        }
        let mut input = (*tool.input_schema).clone();
        let added = match self {
            Drift::None => return,
            Drift::Breaking => ("c", json!({ "type": "number" }), true),
            Drift::Compatible => ("note", json!({ "type": "string" }), false),
        };
        if let Some(serde_json::Value::Object(props)) = input.get_mut("properties") {
            props.insert(added.0.into(), added.1);
        }
        if added.2
            && let Some(serde_json::Value::Array(required)) = input.get_mut("required")
        {
            required.push(added.0.into());
        }
        tool.input_schema = Arc::new(input);
    }
}

impl Echo {
    pub(crate) fn new() -> Self {
        let drift = Drift::from_env();
        let mut tool_router = Self::tool_router();
        if let Some(add) = tool_router.map.get_mut("add") {
            drift.reshape_add(&mut add.attr);
        }
        Self { tool_router, prompt_router: Self::prompt_router(), added: Arc::default(), drift }
    }

    /// The declared tools and, once `add_tool` was called, the added ones (each answers as `echo`).
    fn router(&self) -> Cow<'_, ToolRouter<Self>> {
        let added = self.added.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(echo) = self.tool_router.map.get("echo").filter(|_| !added.is_empty()) else {
            return Cow::Borrowed(&self.tool_router);
        };
        let mut router = self.tool_router.clone();
        for name in added.iter() {
            let mut route = echo.clone();
            route.attr.name = name.clone().into();
            route.attr.description = Some("Added at run time: returns the message as text".into());
            router.add_route(route);
        }
        Cow::Owned(router)
    }
}

#[tool_router]
impl Echo {
    #[tool(description = "Return the message as text")]
    fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> CallToolResult {
        reply::text(args.message)
    }

    #[tool(description = "Add two numbers: {sum}")]
    fn add(&self, Parameters(TwoNumbers { a, b }): Parameters<TwoNumbers>) -> CallToolResult {
        let mut sum = serde_json::Map::new();
        sum.insert(self.drift.sum_field().into(), json!(a + b));
        reply::structured(serde_json::Value::Object(sum))
    }

    #[tool(description = "Multiply two numbers: {product}")]
    fn multiply(&self, Parameters(TwoNumbers { a, b }): Parameters<TwoNumbers>) -> CallToolResult {
        reply::structured(json!({ "product": a * b }))
    }

    #[tool(description = "Sleep for `ms` milliseconds (ends early when cancelled): {slept_ms}")]
    async fn sleep(&self, Parameters(args): Parameters<SleepArgs>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        match pace::sleep(&ctx.ct, Duration::from_millis(args.ms)).await {
            Ok(()) => reply::structured(json!({ "slept_ms": args.ms })),
            Err(pace::Cancelled) => reply::error("cancelled"),
        }
    }

    #[tool(description = "Append `line` to `file` and flush it, so a test sees which calls reached the server")]
    fn record(&self, Parameters(args): Parameters<RecordArgs>) -> CallToolResult {
        use std::io::Write as _;
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&args.file)
            .and_then(|mut f| writeln!(f, "{}", args.line).and_then(|()| f.sync_data()));
        match written {
            Ok(()) => reply::structured(json!({ "recorded": args.line })),
            Err(e) => reply::error(format!("cannot append to {}: {e}", args.file)),
        }
    }

    #[tool(description = "Add a tool `name` that works like `echo`, then send notifications/tools/list_changed")]
    async fn add_tool(
        &self,
        Parameters(AddToolArgs { name }): Parameters<AddToolArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if self.router().map.contains_key(name.as_str()) {
            return reply::error(format!("a tool named {name} exists already"));
        }
        self.added.lock().unwrap_or_else(PoisonError::into_inner).push(name.clone());
        match ctx.peer.notify_tool_list_changed().await {
            Ok(()) => reply::structured(json!({ "added": name })),
            Err(e) => reply::error(format!("added {name}, but notifying the client failed: {e}")),
        }
    }

    #[tool(
        description = "Return the request's `_meta`: {traceparent, tracestate, meta} (null where absent), so a test sees the trace context the client sent"
    )]
    fn meta(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let meta = serde_json::Value::Object(ctx.meta.0.0);
        reply::structured(json!({
            "traceparent": meta.get("traceparent"),
            "tracestate": meta.get("tracestate"),
            "meta": meta,
        }))
    }

    #[tool(description = "Send `steps` progress notifications `interval_ms` apart, then return {steps}")]
    async fn progress(
        &self,
        Parameters(args): Parameters<ProgressArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let interval = Duration::from_millis(u64::from(args.interval_ms));
        match pace::report_steps(&ctx, args.steps, interval, "step").await {
            Ok(()) => reply::structured(json!({ "steps": args.steps })),
            Err(pace::Cancelled) => reply::error("cancelled"),
        }
    }
}

#[prompt_router]
impl Echo {
    #[prompt(description = "A one-message greeting for `name`")]
    fn greet(&self, Parameters(args): Parameters<GreetArgs>) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, format!("Hello, {}! How are you today?", args.name))]
    }
}

#[tool_handler(router = self.router())]
#[prompt_handler(router = self.prompt_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        let capabilities =
            ServerCapabilities::builder().enable_tools().enable_tool_list_changed().enable_resources().enable_prompts();
        ServerConfig::new(capabilities.build())
            .with_server_info(Implementation::new("mcpflow-testkit-echo", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Echo fixture: echo, add, multiply, sleep, progress, add_tool, meta; resource echo://hello; prompt greet.",
            )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(HELLO_URI, "hello").with_mime_type("text/plain").with_description("The text \"hello\""),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri == HELLO_URI {
            Ok(ReadResourceResult::new(vec![ResourceContents::text("hello", HELLO_URI).with_mime_type("text/plain")])
                .into())
        } else {
            Err(McpError::resource_not_found(format!("no resource {}", request.uri), None))
        }
    }
}
