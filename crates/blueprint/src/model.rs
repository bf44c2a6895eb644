//! The blueprint format v1 as Rust types. Reading goes through [`crate::decode`], which
//! reports every shape problem with a pointer; serializing is plain serde.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The format version this mcpflow reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// A whole blueprint document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "mcpflow blueprint", description = "An MCP workflow blueprint, format v1")]
pub struct Blueprint {
    /// Editor hint: where the JSON Schema of this format lives.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Format version; must be 1.
    #[schemars(range(min = 1, max = 1))]
    pub blueprint: u64,
    /// Identifier: `[a-z0-9][a-z0-9_-]*`.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]*$"))]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (type object) of the run's inputs; defaults are applied at run start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// Servers this blueprint brings, in `mcpServers` shape.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub servers: IndexMap<String, ServerConfig>,
    /// Default `on_error` for steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<OnError>,
    /// Default retry for tool, resource and prompt steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Serve this blueprint as its own MCP tool (name = id, inputSchema = inputs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expose: Option<bool>,
    /// `"destructive"`: a call to a tool whose annotations say `destructiveHint: true`
    /// (and not `readOnlyHint`) waits for a person's approval first, showing its resolved
    /// arguments. A tool step may say otherwise with its own `confirm`. Default: no
    /// approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Confirm>,
    /// The steps; a plain list is a pipeline, `after` makes it a graph.
    #[serde(default)]
    #[schemars(required)]
    pub steps: Vec<Step>,
    /// The run's result (any JSON with templates); default: output of the last step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// JSON Schema (type object) of `output`: the `outputSchema` of the blueprint's tool
    /// when it is exposed, which then answers with the output as `structuredContent`.
    /// Default: derived from `output` when it is an object (its keys, any values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Editor only: where each step sits on the canvas. The engine ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<IndexMap<String, LayoutEntry>>,
}

/// Where a node sits on the canvas (and, for loops, how large its container is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayoutEntry {
    // Numbers are kept as written (100 stays 100, not 100.0) so files round-trip.
    pub x: serde_json::Number,
    pub y: serde_json::Number,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<serde_json::Number>,
}

/// One server, exactly as `mcpServers` entries are written (Claude Desktop, Cursor).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Transport hint: `stdio`, `http` or `streamable-http`; derived from command/url when absent.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Program to start (stdio servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment for the process; `${env:NAME}` is resolved when the server starts.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub env: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Endpoint (streamable HTTP servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub headers: Map<String, Value>,
    /// Most calls in flight to this server at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_concurrency: Option<u32>,
    /// Default per-call timeout for this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Folders the server may work in, told to it as MCP roots (`roots/list`): absolute
    /// paths or `file://` URIs, at most 64; `[]` tells it none. Absent: the folder of the
    /// blueprint being run (`mcpflow run`), the data folder's `files/` (the studio,
    /// `mcpflow serve`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 64))]
    pub roots: Option<Vec<String>>,
    /// Pins the MCP protocol era: `2025-11-25` (the `initialize` handshake, no
    /// `server/discover` probe) or `2026-07-28` (`server/discover`, no fallback: a server
    /// that does not speak it fails). Absent: probed, 2026-07-28 first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<ProtocolEra>,
    /// How mcpflow signs in to this streamable HTTP server (OAuth 2.1). Absent: a server
    /// that answers 401 with a `Bearer` challenge still gets the browser sign-in, with
    /// dynamic client registration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthConfig>,
    /// May this server ask the model (MCP sampling, "may ask the model")? Off by default:
    /// its `sampling/createMessage` requests are refused and the step fails with
    /// `SAMPLING_NOT_ALLOWED`. On: they are answered by the configured sampling provider,
    /// or by the client that called `mcpflow serve`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sampling: bool,
}

/// An MCP protocol era a server can be pinned to (`ServerConfig::protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ProtocolEra {
    /// The `initialize` handshake and a session.
    #[serde(rename = "2025-11-25")]
    V2025_11_25,
    /// `server/discover`, no session, per-request `_meta`.
    #[serde(rename = "2026-07-28")]
    V2026_07_28,
}

impl ProtocolEra {
    /// As written in configs: `2025-11-25`, `2026-07-28`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolEra::V2025_11_25 => "2025-11-25",
            ProtocolEra::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era written as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        [ProtocolEra::V2025_11_25, ProtocolEra::V2026_07_28].into_iter().find(|era| era.as_str() == text)
    }
}

/// The OAuth settings of an HTTP server. Secrets only through `${env:NAME}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// `authorization_code` (the default: a person signs in in the browser) or
    /// `client_credentials` (a machine: `client_id` and `client_secret` or `private_key`
    /// required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<OAuthGrant>,
    /// A client registered with the authorization server beforehand; without it mcpflow
    /// uses the Client ID Metadata Document (`client_metadata_url`) or registers itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 1024))]
    pub client_id: Option<String>,
    /// The client's secret, only as `${env:NAME}`: never written in a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 1024))]
    pub client_secret: Option<String>,
    /// The client's private key for `private_key_jwt` client authentication: `${env:NAME}`
    /// (the PEM in a variable) or the path of a PEM file only its owner can read; never
    /// the key itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub private_key: Option<String>,
    /// Scopes asked for; absent: those the server's challenge or metadata name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    pub scopes: Vec<String>,
    /// An `https` URL where mcpflow's Client ID Metadata Document is published; used as
    /// the `client_id` when the authorization server supports such documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048))]
    pub client_metadata_url: Option<String>,
}

/// An OAuth grant mcpflow can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OAuthGrant {
    AuthorizationCode,
    ClientCredentials,
}

impl OAuthGrant {
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthGrant::AuthorizationCode => "authorization_code",
            OAuthGrant::ClientCredentials => "client_credentials",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// The run fails; running steps are cancelled; pending steps are skipped.
    Abort,
    /// Output `null`, `steps.<id>.error` set, dependents run; the run ends `partial`.
    Continue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum Backoff {
    #[default]
    Fixed,
    Exponential,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    /// Total attempts, the first included.
    #[schemars(range(min = 1))]
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff: Option<Backoff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Most step executions in one run (loop iterations and retries count). Default
    /// 1,000,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_step_runs: Option<u64>,
    /// Wall-clock limit of the whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Most steps running at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub concurrency: Option<u32>,
    /// Largest value, in bytes of JSON, a template may build or a step may output
    /// (default 64 MB; 1 KB to 1 GB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1024, max = 1073741824))]
    pub max_value_bytes: Option<u64>,
    /// Deepest nesting of arrays and objects in a value a template builds, a server
    /// answers, the run is given or a step outputs (default 64; 1 to 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub max_value_depth: Option<u32>,
}

/// When the blueprint runs by itself: exactly one of `cron`, `every`, `at`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    /// Five-field cron expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// IANA timezone for `cron` (default UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// An interval such as `5m`, `1h30m`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// One RFC 3339 instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Inputs for scheduled runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
}

/// Fields every step has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Common {
    /// Unique in the whole blueprint: `[A-Za-z_][A-Za-z0-9_]*`.
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Dependencies. Omitted: the previous step of the same list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<OnError>,
    /// A step that runs, with `error` in scope, when this one fails after its retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Persist this step's output as `saved.<name>` for later runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub save: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `true`: the step is not run. It finishes as skipped (reason `disabled`) with
    /// output `null`, and the steps after it still run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

impl Common {
    /// Whether the step is switched off (`"disabled": true`).
    pub fn is_disabled(&self) -> bool {
        self.disabled == Some(true)
    }
}

/// The keys of [`Common`], used to split a step object before decoding.
pub const COMMON_KEYS: &[&str] =
    &["id", "name", "after", "timeout_ms", "retry", "on_error", "fallback", "save", "note", "disabled"];

/// A step: common fields plus its kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    #[serde(flatten)]
    pub common: Common,
    #[serde(flatten)]
    pub kind: StepKind,
}

impl Step {
    pub fn id(&self) -> &str {
        &self.common.id
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum StepKind {
    Tool(ToolStep),
    Resource(ResourceStep),
    Prompt(PromptStep),
    Transform(TransformStep),
    Switch(SwitchStep),
    Loop(LoopStep),
    Workflow(WorkflowStep),
    Wait(WaitStep),
    Input(InputStep),
}

/// The names of the step kinds, as written in `kind`.
pub const KINDS: &[&str] = &["tool", "resource", "prompt", "transform", "switch", "loop", "workflow", "wait", "input"];

impl StepKind {
    pub fn name(&self) -> &'static str {
        match self {
            StepKind::Tool(_) => "tool",
            StepKind::Resource(_) => "resource",
            StepKind::Prompt(_) => "prompt",
            StepKind::Transform(_) => "transform",
            StepKind::Switch(_) => "switch",
            StepKind::Loop(_) => "loop",
            StepKind::Workflow(_) => "workflow",
            StepKind::Wait(_) => "wait",
            StepKind::Input(_) => "input",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolStep {
    /// Optional when the tool name is unique across servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub tool: String,
    /// Arguments: an object whose strings may hold templates, or one whole template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ArgsSchema>")]
    pub args: Option<Value>,
    /// `"destructive"`: if the tool is annotated destructive, a person approves each call
    /// first; `"never"`: no approval, whatever the blueprint's `confirm` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<Confirm>,
}

/// Which calls wait for a person's approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Confirm {
    /// Calls to tools annotated `destructiveHint: true` (and not `readOnlyHint`).
    Destructive,
    /// No call.
    Never,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceStep {
    pub server: String,
    /// Resource URI; may hold templates.
    pub uri: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptStep {
    pub server: String,
    pub prompt: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ArgsSchema>")]
    pub args: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransformStep {
    /// Any JSON; its strings may hold templates.
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchStep {
    /// Checked in order; the first truthy `when` routes.
    pub cases: Vec<Case>,
    /// Targets when no case matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// A template; JMESPath truthiness decides.
    pub when: String,
    /// Step ids (of the same list) that run when this case matches.
    pub to: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoopStep {
    /// A template yielding the array to iterate (or a literal array).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ForEachSchema>")]
    pub for_each: Option<Value>,
    /// A template evaluated after each iteration; the loop stops when it is truthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Name of the loop variable (default `item`).
    #[serde(rename = "as", default, skip_serializing_if = "Option::is_none")]
    pub as_name: Option<String>,
    /// Iterations running at once (`for_each` only; default 1; at most 1,000 run at once,
    /// whatever a larger value asks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub concurrency: Option<u32>,
    /// Most iterations. `until`: default 1,000, the loop stops there with a warning.
    /// `for_each`: no default, the list bounds it; when set, a longer list fails the loop
    /// with `LOOP_TOO_MANY_ITEMS` before any iteration starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_iterations: Option<u32>,
    /// Pause between iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// The body.
    #[serde(default)]
    #[schemars(required)]
    pub steps: Vec<Step>,
    /// Template per iteration; default: the body's last step output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collect: Option<Value>,
    /// `until` only: what reaching `max_iterations` before the condition does (default
    /// `fail`: the loop fails with `LOOP_UNTIL_EXHAUSTED`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_exhausted: Option<OnExhausted>,
}

/// What an `until` loop that reaches `max_iterations` before its condition does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnExhausted {
    /// The loop fails with `LOOP_UNTIL_EXHAUSTED` (its `fallback` / `on_error` apply).
    #[default]
    Fail,
    /// The loop succeeds with what it collected; a `Log` warning says so.
    Succeed,
}

impl LoopStep {
    /// The loop's own fields, without cloning its body.
    pub fn without_body(&self) -> LoopStep {
        LoopStep {
            for_each: self.for_each.clone(),
            until: self.until.clone(),
            as_name: self.as_name.clone(),
            concurrency: self.concurrency,
            max_iterations: self.max_iterations,
            delay_ms: self.delay_ms,
            steps: Vec::new(),
            collect: self.collect.clone(),
            on_exhausted: self.on_exhausted,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkflowStep {
    /// Id of another blueprint (`[a-z0-9][a-z0-9_-]*`), never a path.
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_-]*$"))]
    pub workflow: String,
    /// Inputs for that blueprint; strings may hold templates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ArgsSchema>")]
    pub args: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitStep {
    pub ms: u64,
}

/// Asks a person for a value (answered like an MCP elicitation: in the studio, on a
/// terminal, from `--answers`, or by the client that called `mcpflow serve`). The output
/// is the answer: the value itself for a primitive `schema`, the object for an object one;
/// `true` for an approved gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputStep {
    /// What to ask; may hold templates.
    pub prompt: String,
    /// A JSON Schema for the answer: one primitive (`string`, `number`, `integer`,
    /// `boolean`, or a string `enum`) or an object of such properties — what an MCP
    /// elicitation form can ask. Default: `{"type": "string"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// The answer offered (pre-filled in a form), and taken when `timeout_ms` passes with
    /// `on_timeout: "default"`. Strings may hold templates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// What `timeout_ms` passing without an answer does: `fail` (default:
    /// `INPUT_TIMEOUT`) or `default` (the step succeeds with `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_timeout: Option<OnTimeout>,
    /// An approval gate: Approve / Reject instead of a form. Approved, the output is
    /// `true`; rejected, the step fails with `INPUT_REJECTED` (its `on_error` and
    /// `fallback` apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve: Option<bool>,
}

impl InputStep {
    /// Whether this is an approval gate (`"approve": true`).
    pub fn is_approval(&self) -> bool {
        self.approve == Some(true)
    }
}

/// What an `input` step does when its `timeout_ms` passes without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum OnTimeout {
    /// The step fails with `INPUT_TIMEOUT`.
    #[default]
    Fail,
    /// The step succeeds with its `default`.
    Default,
}

/// Schema stand-in: an object of arguments, or one whole template string.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ArgsSchema {
    Object(Map<String, Value>),
    Template(String),
}

/// Schema stand-in: a template string or a literal array.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum ForEachSchema {
    Template(String),
    Array(Vec<Value>),
}
