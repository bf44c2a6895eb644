//! The faulty fixture: tools that fail, hang, crash, corrupt the stream or send too much, on purpose.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rmcp::{
    RoleServer, ServerHandler,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, ElicitRequestParams, ElicitationAction, ElicitationSchema, Implementation,
        ProgressNotificationParam, ServerCapabilities, ServerConfig,
    },
    service::RequestContext,
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::{pace, pump::Tap, reply};

/// The line `garbage` writes to the protocol stream.
pub(crate) const GARBAGE_LINE: &str = "this line is not JSON-RPC }{";
/// Upper bound for `huge`, so a typo cannot exhaust memory.
const MAX_HUGE_MB: u32 = 1024;

/// What `crash` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Crash {
    /// `std::process::exit(3)`: the stdio binary dies with the call in flight.
    ExitProcess,
    /// Cut the connection: the in-process server vanishes with the call in flight.
    DropConnection,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct FailArgs {
    /// Counter name; each key counts its own calls.
    key: String,
    /// How many calls fail before the first success.
    n: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct CrashOnceArgs {
    /// A file path: absent, it is created and the server crashes; present, the call succeeds.
    marker: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct HugeArgs {
    /// Size of the text content, in MiB (at most 1024).
    mb: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct DripArgs {
    /// Number of progress notifications.
    chunks: u32,
    /// Pause before each notification, in milliseconds.
    interval_ms: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct FloodArgs {
    /// How many to send (at most 1,000,000).
    count: u32,
    /// Bytes of each progress message (at most 1 MiB; ignored by `flood_questions`).
    #[serde(default)]
    bytes: u32,
}

/// Upper bounds for the floods, so a typo cannot exhaust memory.
const MAX_FLOOD: u32 = 1_000_000;
const MAX_FLOOD_BYTES: u32 = 1024 * 1024;

#[derive(Debug, Deserialize, JsonSchema)]
struct EnvArgs {
    /// The environment variable whose value is logged.
    name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct ManyArgs {
    /// How many empty arrays.
    count: u32,
}

/// Most empty arrays `many` builds.
const MAX_MANY: u32 = 10_000_000;

#[derive(Debug, Deserialize, JsonSchema)]
struct MessageArgs {
    message: String,
}

/// The environment variable naming a file `hang` appends a line to when a call comes in.
pub const HANG_MARK: &str = "MCPFLOW_FAULTY_HANG_MARK";

/// Serves `fail_n_times`, `hang`, `crash`, `garbage`, `huge`, `heavy`, `many`, `drip`, `flood_progress`, `flood_questions`,
/// `flood_pings`, `shout_env`, `is_error` and `echo`.
#[derive(Debug, Clone)]
pub(crate) struct Faulty {
    attempts: Arc<Mutex<HashMap<String, u32>>>,
    tap: Tap,
    crash: Crash,
    tool_router: ToolRouter<Self>,
}

impl Faulty {
    pub(crate) fn new(tap: Tap, crash: Crash) -> Self {
        Self { attempts: Arc::default(), tap, crash, tool_router: Self::tool_router() }
    }
}

#[tool_router]
impl Faulty {
    #[tool(description = "Fail the first `n` calls for `key` (isError), then succeed with {key, attempts}")]
    fn fail_n_times(&self, Parameters(FailArgs { key, n }): Parameters<FailArgs>) -> CallToolResult {
        let attempt = {
            let mut attempts = self.attempts.lock().unwrap_or_else(PoisonError::into_inner);
            let count = attempts.entry(key.clone()).or_insert(0);
            *count = count.saturating_add(1);
            *count
        };
        if attempt <= n {
            reply::error(format!("failure {attempt} of {n} for {key}"))
        } else {
            reply::structured(json!({ "key": key, "attempts": attempt }))
        }
    }

    #[tool(description = "Never return; ends only when the client cancels the request")]
    async fn hang(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        // Tests wait for this mark to know the call is in flight.
        if let Some(path) = std::env::var_os(HANG_MARK) {
            let mark = std::fs::OpenOptions::new().create(true).append(true).open(path);
            let _ = mark.and_then(|mut f| std::io::Write::write_all(&mut f, b"hang\n"));
        }
        // And a client that asked for progress hears that the call has begun.
        if let Some(token) = ctx.meta.get_progress_token() {
            let begun = ProgressNotificationParam::new(token, 0.0).with_message("waiting to be cancelled");
            let _ = ctx.peer.notify_progress(begun).await;
        }
        ctx.ct.cancelled().await;
        reply::error("cancelled")
    }

    #[tool(description = "Kill the server while this call is in flight (the process exits with status 3)")]
    async fn crash(&self) -> CallToolResult {
        match self.crash {
            Crash::ExitProcess => {
                tracing::warn!("crash requested: exiting with status 3");
                std::process::exit(3)
            }
            Crash::DropConnection => {
                tracing::warn!("crash requested: dropping the connection");
                self.tap.cut().await;
                // Nobody is listening any more; returning lets the server shut down at once.
                reply::error("crashed")
            }
        }
    }

    #[tool(
        description = "Crash like `crash` the first time for `marker` (a file it creates), succeed with {marker} after"
    )]
    async fn crash_once(&self, Parameters(CrashOnceArgs { marker }): Parameters<CrashOnceArgs>) -> CallToolResult {
        if std::path::Path::new(&marker).exists() {
            return reply::structured(json!({ "marker": marker, "crashed_before": true }));
        }
        if let Err(e) = std::fs::write(&marker, b"crashed") {
            return reply::error(format!("cannot write the marker {marker}: {e}"));
        }
        self.crash().await
    }

    #[tool(description = "Write a line that is not JSON to the protocol stream, then answer normally")]
    fn garbage(&self) -> CallToolResult {
        self.tap.inject_line(GARBAGE_LINE);
        reply::structured(json!({ "garbage": GARBAGE_LINE }))
    }

    #[tool(description = "Return one text content of `mb` MiB")]
    fn huge(&self, Parameters(HugeArgs { mb }): Parameters<HugeArgs>) -> CallToolResult {
        if mb > MAX_HUGE_MB {
            return reply::error(format!("mb must be at most {MAX_HUGE_MB}"));
        }
        reply::text("x".repeat(mb as usize * 1024 * 1024))
    }

    #[tool(
        description = "Answer with a message of `mb` MiB made of empty arrays (millions of tiny values), written raw before the real answer"
    )]
    fn heavy(
        &self,
        Parameters(HugeArgs { mb }): Parameters<HugeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if mb > MAX_HUGE_MB {
            return reply::error(format!("mb must be at most {MAX_HUGE_MB}"));
        }
        let id = serde_json::to_string(&ctx.id).unwrap_or_default();
        let arrays = "[],".repeat(mb as usize * 1024 * 1024 / 3);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"v":[{}[]]}}}}}}"#,
            arrays
        );
        self.tap.inject_line(&line);
        reply::text("the heavy answer was sent first")
    }

    #[tool(description = "Return structured content {v: [[], [], …]} of `count` empty arrays (many tiny values)")]
    fn many(&self, Parameters(ManyArgs { count }): Parameters<ManyArgs>) -> CallToolResult {
        if count > MAX_MANY {
            return reply::error(format!("count must be at most {MAX_MANY}"));
        }
        reply::structured(json!({ "v": vec![json!([]); count as usize] }))
    }

    #[tool(description = "Send `chunks` progress notifications `interval_ms` apart, then return {chunks}")]
    async fn drip(&self, Parameters(args): Parameters<DripArgs>, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let interval = Duration::from_millis(u64::from(args.interval_ms));
        match pace::report_steps(&ctx, args.chunks, interval, "chunk").await {
            Ok(()) => reply::structured(json!({ "chunks": args.chunks })),
            Err(pace::Cancelled) => reply::error("cancelled"),
        }
    }

    #[tool(
        description = "Log `Connected With Key <VALUE>` (the environment variable `name`, upper-cased) as an MCP log \
                       message, then return {logged: true}"
    )]
    // MCP logging is deprecated upstream (SEP-2577) but servers still use it.
    #[allow(deprecated)]
    async fn shout_env(
        &self,
        Parameters(EnvArgs { name }): Parameters<EnvArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let value = std::env::var(&name).unwrap_or_default().to_uppercase();
        let param = rmcp::model::LoggingMessageNotificationParam::new(
            rmcp::model::LoggingLevel::Warning,
            json!(format!("Connected With Key {value}")),
        );
        if let Err(error) = ctx.peer.notify_logging_message(param).await {
            return reply::error(format!("the log message was not sent: {error}"));
        }
        reply::structured(json!({ "logged": true }))
    }

    #[tool(
        description = "Send `count` progress notifications at once, each with a message of `bytes` bytes, then return \
                       {sent}"
    )]
    async fn flood_progress(
        &self,
        Parameters(args): Parameters<FloodArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if args.count > MAX_FLOOD || args.bytes > MAX_FLOOD_BYTES {
            return reply::error(format!("count must be at most {MAX_FLOOD} and bytes at most {MAX_FLOOD_BYTES}"));
        }
        let Some(token) = ctx.meta.get_progress_token() else {
            return reply::error("the call has no progress token");
        };
        let message = "p".repeat(args.bytes as usize);
        for step in 1..=args.count {
            let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                .with_total(f64::from(args.count))
                .with_message(message.clone());
            if let Err(error) = ctx.peer.notify_progress(param).await {
                return reply::error(format!("progress {step} was not sent: {error}"));
            }
        }
        reply::structured(json!({ "sent": args.count }))
    }

    #[tool(description = "Ask `count` questions (form elicitations with one boolean `ok`), one after the other, then \
                       return {asked, accepted}")]
    async fn flood_questions(
        &self,
        Parameters(args): Parameters<FloodArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if args.count > MAX_FLOOD {
            return reply::error(format!("count must be at most {MAX_FLOOD}"));
        }
        let schema = match ElicitationSchema::builder().required_bool("ok").build() {
            Ok(schema) => schema,
            Err(error) => return reply::error(format!("the question's schema: {error}")),
        };
        let mut accepted = 0_u32;
        for n in 1..=args.count {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!("question {n} of {}", args.count),
                requested_schema: schema.clone(),
            };
            match ctx.peer.create_elicitation(params).await {
                Ok(result) if result.action == ElicitationAction::Accept => accepted += 1,
                Ok(_) => {}
                Err(error) => return reply::error(format!("question {n} was not answered: {error}")),
            }
        }
        reply::structured(json!({ "asked": args.count, "accepted": accepted }))
    }

    #[tool(description = "Ask one form whose fields all have a `default` and none is required (the conformance \
                       suite's SEP-1034 form: name, age, score, status, verified), then return {action, content} as \
                       the client answered")]
    async fn ask_with_defaults(&self, ctx: RequestContext<RoleServer>) -> CallToolResult {
        let schema = json!({ "type": "object", "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "description": "Verification status", "default": true },
        }, "required": [] });
        let requested_schema = match serde_json::from_value(schema) {
            Ok(schema) => schema,
            Err(error) => return reply::error(format!("the question's schema: {error}")),
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Accept the defaults, or change them".to_owned(),
            requested_schema,
        };
        match ctx.peer.create_elicitation(params).await {
            Ok(result) => reply::structured(json!({ "action": result.action, "content": result.content })),
            Err(error) => reply::error(format!("the question was not answered: {error}")),
        }
    }

    #[tool(
        description = "Stop reading stdin for good, send `count` `ping` requests, then return {sent} (which a client \
                       that bounds its unread answers never sees)"
    )]
    fn flood_pings(&self, Parameters(args): Parameters<FloodArgs>) -> CallToolResult {
        if args.count > MAX_FLOOD {
            return reply::error(format!("count must be at most {MAX_FLOOD}"));
        }
        self.tap.deafen();
        for n in 1..=args.count {
            self.tap.inject_line(&format!(r#"{{"jsonrpc":"2.0","id":"flood-{n}","method":"ping"}}"#));
        }
        reply::structured(json!({ "sent": args.count }))
    }

    #[tool(description = "Return a tool error (isError: true) whose text is `message`")]
    fn is_error(&self, Parameters(MessageArgs { message }): Parameters<MessageArgs>) -> CallToolResult {
        reply::error(message)
    }

    #[tool(description = "Return the message as text")]
    fn echo(&self, Parameters(MessageArgs { message }): Parameters<MessageArgs>) -> CallToolResult {
        reply::text(message)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Faulty {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mcpflow-testkit-faulty", env!("CARGO_PKG_VERSION")))
            .with_instructions("Faulty fixture: tools that fail, hang, crash, corrupt the stream or send too much.")
    }
}
