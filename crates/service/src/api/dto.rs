//! What crosses the IPC boundary, typed for tauri-specta. The shapes are the app's, made
//! explicit here so `ui/src/bindings.ts` is generated from one place. Blueprint
//! documents and server configs stay JSON (`serde_json::Value`): the document is the
//! source of truth and the editor keeps its key order and unknown fields.

use mcpflow_app::AppError;
use mcpflow_app::runs::Rerun;
use mcpflow_blueprint::Diagnostic;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Any JSON value (a blueprint document, a server entry, a schema). TypeScript sees
/// `unknown`: the UI narrows it with its own document types.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(transparent)]
pub struct Json(#[cfg_attr(feature = "specta", specta(type = specta_typescript::Unknown))] pub Value);

/// The error every command returns: a stable code, a message that says what to do, and
/// for a blueprint that does not validate, its diagnostics.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CommandError {
    pub code: String,
    pub message: String,
    pub diagnostics: Vec<DiagnosticDto>,
}

impl From<AppError> for CommandError {
    fn from(e: AppError) -> Self {
        let diagnostics = match &e {
            AppError::Invalid(list) => list.iter().map(DiagnosticDto::from).collect(),
            _ => Vec::new(),
        };
        CommandError { code: e.code().to_owned(), message: e.to_string(), diagnostics }
    }
}

impl CommandError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        CommandError { code: code.to_owned(), message: message.into(), diagnostics: Vec::new() }
    }
}

/// One diagnostic of the validator (DESIGN §2): `{ level, code, message, pointer, step, hint }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DiagnosticDto {
    /// `error` or `warning`.
    pub level: String,
    pub code: String,
    pub message: String,
    /// JSON Pointer into the blueprint (`""` is the whole document).
    pub pointer: String,
    pub step: Option<String>,
    pub hint: Option<String>,
    /// The step whose output it is about, when not `step` (`TEMPLATE_PATH_UNKNOWN`: the
    /// step whose tool's output schema lacks the field read).
    pub producer: Option<String>,
}

impl From<&Diagnostic> for DiagnosticDto {
    fn from(d: &Diagnostic) -> Self {
        DiagnosticDto {
            level: d.level.to_string(),
            code: d.code.to_string(),
            message: d.message.clone(),
            pointer: d.pointer.clone(),
            step: d.step.clone(),
            hint: d.hint.clone(),
            producer: d.producer.as_deref().cloned(),
        }
    }
}

/// A stored blueprint's latest revision, without its document.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BlueprintInfo {
    pub id: String,
    pub rev: u32,
    /// RFC 3339, UTC.
    pub saved_at: String,
    pub name: Option<String>,
    pub description: Option<String>,
}

impl From<mcpflow_store::BlueprintMeta> for BlueprintInfo {
    fn from(m: mcpflow_store::BlueprintMeta) -> Self {
        BlueprintInfo { id: m.id, rev: m.rev, saved_at: m.saved_at, name: m.name, description: m.description }
    }
}

/// A stored blueprint with its document.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OpenedBlueprint {
    pub info: BlueprintInfo,
    pub doc: Json,
}

/// What a save did: the new revision and the warnings (errors block a save).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SaveResult {
    pub info: BlueprintInfo,
    pub warnings: Vec<DiagnosticDto>,
}

/// What the studio needs at start.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StudioInfo {
    pub version: String,
    /// The data folder (`MCPFLOW_HOME` or the platform's).
    pub home: String,
    /// This start seeded the store with the examples and demo servers.
    pub first_start: bool,
    /// The blueprint to open first, if the store has it.
    pub open_first: Option<String>,
    /// Runs a previous session left running, now marked `interrupted`.
    pub interrupted: Vec<String>,
}

/// A configured server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerDto {
    pub name: String,
    /// `stdio`, `http` or `in-process`.
    pub transport: String,
    /// The exact command line a stdio server starts (what consent approves).
    pub command: Option<String>,
    pub url: Option<String>,
    /// It may start: approved, or nothing to start.
    pub approved: bool,
    /// The `mcpServers` entry as written (`${env:NAME}` unresolved).
    pub config: Json,
    /// Its switch "may ask the model" (`"sampling": true` on its entry).
    pub sampling: bool,
}

impl From<mcpflow_app::servers::ServerView> for ServerDto {
    fn from(s: mcpflow_app::servers::ServerView) -> Self {
        ServerDto {
            name: s.name,
            transport: s.transport.to_owned(),
            command: s.command,
            url: s.url,
            approved: s.approved,
            config: Json(s.config),
            sampling: s.sampling,
        }
    }
}

/// What a connection test found: the protocol revision spoken and the tools.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerTestDto {
    /// `2026-07-28` (discovery, no session) or the revision the `initialize` handshake
    /// agreed (`2025-11-25`, …); `None` when the server did not say.
    pub protocol_version: Option<String>,
    pub tools: Vec<ToolDto>,
}

impl From<mcpflow_app::servers::Tested> for ServerTestDto {
    fn from(t: mcpflow_app::servers::Tested) -> Self {
        ServerTestDto { protocol_version: t.protocol_version, tools: t.tools.into_iter().map(ToolDto::from).collect() }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ToolDto {
    pub server: String,
    pub name: String,
    pub description: Option<String>,
    pub input_schema: Json,
    /// The server's annotations of the tool (`destructiveHint`, `readOnlyHint`, …).
    pub annotations: Option<Json>,
    /// The schema of the tool's structured output, when the server gives one: the
    /// template editor completes its fields.
    pub output_schema: Option<Json>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ResourceDto {
    pub server: String,
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PromptArgumentDto {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PromptDto {
    pub server: String,
    pub name: String,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentDto>,
}

/// What one server offers, or why it could not be listed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerOffer {
    pub server: String,
    /// The MCP revision the connection speaks (as [`ServerTestDto`]); `None` when it failed.
    pub protocol_version: Option<String>,
    pub tools: Vec<ToolDto>,
    pub resources: Vec<ResourceDto>,
    pub prompts: Vec<PromptDto>,
    /// Set when the server was not listed now (e.g. `SERVER_NOT_APPROVED`: approve it
    /// first); what it offers is then its last listing, if it had one (`listed_at`).
    pub error: Option<CommandError>,
    /// When what it offers was listed, if it is the server's last listing remembered in
    /// the store (the server was not started now); `None` when listed now, or never.
    pub listed_at: Option<String>,
}

impl ServerOffer {
    /// A server not listed now: its last listing with the reason, or only the reason
    /// when it was never listed.
    pub fn failed(server: &str, error: CommandError, last: Option<mcpflow_app::listings::Listed>) -> Self {
        match last {
            Some(last) => ServerOffer {
                protocol_version: None,
                error: Some(error),
                listed_at: Some(last.listed_at),
                ..ServerOffer::from_offer(server, last.offer)
            },
            None => ServerOffer {
                server: server.to_owned(),
                protocol_version: None,
                tools: vec![],
                resources: vec![],
                prompts: vec![],
                error: Some(error),
                listed_at: None,
            },
        }
    }
}

impl From<mcpflow_app::servers::ToolView> for ToolDto {
    fn from(t: mcpflow_app::servers::ToolView) -> Self {
        ToolDto {
            server: t.server,
            name: t.name,
            description: t.description,
            input_schema: Json(t.input_schema),
            annotations: t.annotations.map(Json),
            output_schema: t.output_schema.map(Json),
        }
    }
}

/// A template's value against the last run (`value`), or why it has none (`problem`);
/// neither when it compiles and there was no run to render it against.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TemplatePreviewDto {
    pub value: Option<Json>,
    pub problem: Option<TemplateProblemDto>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TemplateProblemDto {
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
}

impl From<Result<Option<Value>, mcpflow_app::preview::TemplateProblem>> for TemplatePreviewDto {
    fn from(r: Result<Option<Value>, mcpflow_app::preview::TemplateProblem>) -> Self {
        match r {
            Ok(value) => TemplatePreviewDto { value: value.map(Json), problem: None },
            Err(p) => TemplatePreviewDto {
                value: None,
                problem: Some(TemplateProblemDto { code: p.code, message: p.message, hint: p.hint }),
            },
        }
    }
}

impl ServerOffer {
    pub fn from_offer(server: &str, offer: mcpflow_app::servers::Offer) -> Self {
        ServerOffer {
            server: server.to_owned(),
            protocol_version: offer.protocol_version,
            tools: offer.tools.into_iter().map(ToolDto::from).collect(),
            resources: offer
                .resources
                .into_iter()
                .map(|r| ResourceDto {
                    server: r.server,
                    uri: r.uri,
                    name: r.name,
                    description: r.description,
                    mime_type: r.mime_type,
                })
                .collect(),
            prompts: offer
                .prompts
                .into_iter()
                .map(|p| PromptDto {
                    server: p.server,
                    name: p.name,
                    description: p.description,
                    arguments: p
                        .arguments
                        .into_iter()
                        .map(|a| PromptArgumentDto { name: a.name, description: a.description, required: a.required })
                        .collect(),
                })
                .collect(),
            error: None,
            listed_at: None,
        }
    }
}

/// A blueprint read from a file the user picked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportedFile {
    pub path: String,
    pub doc: Json,
    /// The file's diagnostics (it is opened even with errors, so they can be fixed).
    pub diagnostics: Vec<DiagnosticDto>,
}

/// What Export wrote: the blueprint, and what travels with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ExportedFiles {
    /// The blueprint's file (the path the user picked).
    pub path: String,
    /// The other files written beside it: the blueprints it calls, its README.
    pub beside: Vec<String>,
    /// The environment variables its servers read (to set where it runs).
    pub env: Vec<String>,
    /// Servers that could not be copied, and what to do.
    pub left_out: Vec<String>,
}

/// The login one configured HTTP server holds. Never the token itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AuthStatusDto {
    pub server: String,
    pub url: String,
    pub signed_in: bool,
    /// `authorization_code` or `client_credentials`.
    pub grant: Option<String>,
    /// Who the login is for, when the server said.
    pub account: Option<String>,
    pub scopes: Vec<String>,
    /// When the access token expires, in milliseconds since the Unix epoch (it is
    /// refreshed before then when `refreshable`).
    pub expires_at_ms: Option<f64>,
    pub refreshable: bool,
}

/// What signing out told the server's authorization server. The login is gone from
/// this machine in every case.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SignedOutDto {
    /// `revoked` (the authorization server revoked the tokens), `not_offered` (it offers
    /// no revocation), `failed` (asking it failed: `reason`), `no_login` (there was none).
    pub revocation: String,
    pub reason: Option<String>,
}

impl From<mcpflow_app::auth::Revocation> for SignedOutDto {
    fn from(told: mcpflow_app::auth::Revocation) -> Self {
        use mcpflow_app::auth::Revocation;
        let (revocation, reason) = match told {
            Revocation::NoLogin => ("no_login", None),
            Revocation::Revoked => ("revoked", None),
            Revocation::NotOffered => ("not_offered", None),
            Revocation::Failed(why) => ("failed", Some(why)),
        };
        SignedOutDto { revocation: revocation.to_owned(), reason }
    }
}

impl From<mcpflow_app::auth::AuthStatus> for AuthStatusDto {
    fn from(s: mcpflow_app::auth::AuthStatus) -> Self {
        AuthStatusDto {
            server: s.server,
            url: s.url,
            signed_in: s.signed_in,
            grant: s.grant,
            account: s.account,
            scopes: s.scopes,
            // Milliseconds since 1970 fit an f64 exactly until the year 287,396.
            #[allow(clippy::cast_precision_loss)]
            expires_at_ms: s.expires_at_ms.map(|ms| ms as f64),
            refreshable: s.refreshable,
        }
    }
}

/// Who asks a question, and so how it is shown: `input` (an `input` step's form),
/// `approval` (Approve / Reject), `elicitation` (a server's form), `elicitation_url` (a
/// server asks the person to visit a page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AskingDto {
    Input,
    Approval,
    Elicitation,
    ElicitationUrl,
}

impl From<mcpflow_engine::Asking> for AskingDto {
    fn from(a: mcpflow_engine::Asking) -> Self {
        use mcpflow_engine::Asking;
        match a {
            Asking::Input => AskingDto::Input,
            Asking::Approval => AskingDto::Approval,
            Asking::Elicitation => AskingDto::Elicitation,
            Asking::ElicitationUrl => AskingDto::ElicitationUrl,
        }
    }
}

/// An open question of a run (as its `StepWaiting` event has it), with the run it
/// belongs to.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct QuestionDto {
    pub run_id: String,
    /// What an answer names (`q1`, `q2`, …; unique in the run).
    pub id: String,
    pub step: String,
    /// The iteration indexes of the loops around the step; `[]` at the top level.
    pub path: Vec<u32>,
    pub asking: AskingDto,
    /// The server that asks, for an elicitation.
    pub server: Option<String>,
    pub message: String,
    /// The form: an object schema of flat fields; absent in URL mode.
    pub schema: Option<Json>,
    /// The form's content offered.
    pub default: Option<Json>,
    /// URL mode: the page to visit (opened only by `open_question_url`).
    pub url: Option<String>,
}

impl QuestionDto {
    pub fn new(run_id: String, q: mcpflow_engine::Question) -> Self {
        QuestionDto {
            run_id,
            id: q.id,
            step: q.step,
            path: q.path,
            asking: q.asking.into(),
            server: q.server,
            message: q.message,
            schema: q.schema.map(Json),
            default: q.default.map(Json),
            url: q.url,
        }
    }
}

/// A person's answer: `accept` with the form's content (`{}` in URL mode; an approval
/// gate's is `{"approve": true}` or `false`), `decline`, or `cancel`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum AnswerDto {
    Accept { content: Json },
    Decline,
    Cancel,
}

impl From<AnswerDto> for mcpflow_engine::Answer {
    fn from(a: AnswerDto) -> Self {
        use mcpflow_engine::Answer;
        match a {
            AnswerDto::Accept { content } => Answer::Accept { content: content.0 },
            AnswerDto::Decline => Answer::Decline,
            AnswerDto::Cancel => Answer::Cancel,
        }
    }
}

/// The sampling provider as the studio's form edits it (the `sampling` section of the data
/// folder's `settings.json`): the key only as the name of the environment variable that
/// holds it, never a key.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SamplingProviderDto {
    /// The part before `/chat/completions`: `http://localhost:11434/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key (written `${env:NAME}`); none: no key.
    pub api_key_env: Option<String>,
    /// How long one request may take; none: 120000.
    pub timeout_ms: Option<u32>,
    /// A cap on the tokens a server may ask for; none: what it asks.
    pub max_tokens: Option<u32>,
}

impl From<SamplingProviderDto> for mcpflow_app::sampling::ProviderConfig {
    fn from(p: SamplingProviderDto) -> Self {
        mcpflow_app::sampling::ProviderConfig {
            base_url: p.base_url,
            model: p.model,
            api_key: p.api_key_env.filter(|n| !n.trim().is_empty()).map(|name| format!("${{env:{}}}", name.trim())),
            timeout_ms: p.timeout_ms.map(u64::from),
            max_tokens: p.max_tokens,
        }
    }
}

/// What the data folder's `settings.json` says of the sampling provider.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SamplingSettingsDto {
    /// The settings file.
    pub path: String,
    /// The provider as written (also one that cannot be used: see `problem`); none: no
    /// provider, so in the studio a person answers.
    pub provider: Option<SamplingProviderDto>,
    /// What is wrong with the file or its `sampling` section (the file and field named).
    pub problem: Option<String>,
    /// The key's variable is set in the studio's environment (its value is never read out).
    pub key_set: bool,
    /// The file can take the section (absent, or a JSON object): saving fixes a `problem`
    /// with the section; one with the file must be fixed there.
    pub writable: bool,
}

impl From<mcpflow_app::sampling::ProviderSettings> for SamplingSettingsDto {
    fn from(s: mcpflow_app::sampling::ProviderSettings) -> Self {
        let api_key_env = s.key_variable;
        SamplingSettingsDto {
            path: s.path.display().to_string(),
            provider: s.provider.map(|p| SamplingProviderDto {
                base_url: p.base_url,
                model: p.model,
                api_key_env,
                timeout_ms: p.timeout_ms.map(|ms| u32::try_from(ms).unwrap_or(u32::MAX)),
                max_tokens: p.max_tokens,
            }),
            problem: s.problem,
            key_set: s.key_set,
            writable: s.writable,
        }
    }
}

/// The OTLP transport the studio's form offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub enum TelemetryProtocolDto {
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    #[serde(rename = "grpc")]
    Grpc,
}

/// A header sent to the collector: its value only as the name of the environment variable
/// that holds it (written `${env:NAME}`), never a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TelemetryHeaderDto {
    pub name: String,
    /// The environment variable holding the value.
    pub env: String,
}

/// The `telemetry` section of the data folder's `settings.json` as the studio's form
/// edits it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TelemetryConfigDto {
    /// The collector's base URL (`http://localhost:4318`); none: the environment's
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, if any.
    pub endpoint: Option<String>,
    /// None: the environment's, else `http/protobuf`.
    pub protocol: Option<TelemetryProtocolDto>,
    pub headers: Vec<TelemetryHeaderDto>,
    /// Tool arguments and results go on the spans.
    pub capture_payloads: bool,
}

impl TelemetryConfigDto {
    /// The section to write; a header whose variable is not a variable's name is refused
    /// by name.
    pub fn settings(self) -> Result<mcpflow_app::telemetry::Settings, String> {
        use mcpflow_app::telemetry::Settings;
        let mut headers = std::collections::BTreeMap::new();
        for h in self.headers {
            let (name, var) = (h.name.trim().to_owned(), h.env.trim());
            let var = var.strip_prefix("${env:").and_then(|v| v.strip_suffix('}')).unwrap_or(var);
            let var = var.strip_prefix('$').unwrap_or(var);
            if !mcpflow_app::sampling::is_variable_name(var) {
                return Err(format!(
                    "the header `{name}` must name an environment variable (letters, digits and _, not starting with a \
                     digit, e.g. HONEYCOMB_KEY), not `{var}`: its value is read from the environment, never kept in a \
                     file (nothing was written)"
                ));
            }
            if headers.insert(name.clone(), format!("${{env:{var}}}")).is_some() {
                return Err(format!("the header `{name}` is given twice; keep one (nothing was written)"));
            }
        }
        Ok(Settings {
            endpoint: self.endpoint,
            protocol: self.protocol.map(|p| match p {
                TelemetryProtocolDto::HttpProtobuf => mcpflow_app::telemetry::Protocol::HttpProtobuf,
                TelemetryProtocolDto::Grpc => mcpflow_app::telemetry::Protocol::Grpc,
            }),
            headers,
            capture_payloads: self.capture_payloads,
        })
    }
}

/// What the data folder's `settings.json` says of telemetry, and what is in effect.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TelemetrySettingsDto {
    /// The settings file.
    pub path: String,
    /// The section as written (also one that cannot be used: see `problem`); none: no section.
    pub config: Option<TelemetryConfigDto>,
    /// What is wrong with the file or its `telemetry` section (the file and field named).
    pub problem: Option<String>,
    /// The file can take the section (absent, or a JSON object).
    pub writable: bool,
    /// Variables the headers read that are not set where the runs run.
    pub missing_vars: Vec<String>,
    /// Where spans go now (`…/v1/traces`); none: telemetry is off.
    pub sending_to: Option<String>,
    /// Why telemetry could not start with what is configured (it is off meanwhile).
    pub start_problem: Option<String>,
    /// The `--otlp` the engine's process was started with: it wins over the settings.
    pub flag_endpoint: Option<String>,
    /// The engine's `OTEL_EXPORTER_OTLP_ENDPOINT`: used when the settings name no endpoint.
    pub env_endpoint: Option<String>,
}

impl From<mcpflow_app::telemetry::TelemetryView> for TelemetrySettingsDto {
    fn from(v: mcpflow_app::telemetry::TelemetryView) -> Self {
        let config = v.settings.map(|s| TelemetryConfigDto {
            endpoint: s.endpoint,
            protocol: s.protocol.map(|p| match p {
                mcpflow_app::telemetry::Protocol::HttpProtobuf => TelemetryProtocolDto::HttpProtobuf,
                mcpflow_app::telemetry::Protocol::Grpc => TelemetryProtocolDto::Grpc,
            }),
            headers: s
                .headers
                .into_iter()
                .map(|(name, value)| TelemetryHeaderDto {
                    env: mcpflow_telemetry::env_reference(&value).map_or(value.clone(), str::to_owned),
                    name,
                })
                .collect(),
            capture_payloads: s.capture_payloads,
        });
        TelemetrySettingsDto {
            path: v.path.display().to_string(),
            config,
            problem: v.problem,
            writable: v.writable,
            missing_vars: v.missing_vars,
            sending_to: v.sending_to,
            start_problem: v.start_problem,
            flag_endpoint: v.flag_endpoint,
            env_endpoint: v.env_endpoint,
        }
    }
}

/// One message on a run's channel: events in `seq` order, and how many were lost
/// because the window fell behind (then it reads the run again with `get_run`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EventBatch {
    /// The events, as the engine writes them (`{ seq, at_ms, type, ... }`).
    pub events: Json,
    pub lagged: u32,
    /// The run ended: this is the last batch.
    pub done: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunStarted {
    pub run_id: String,
    pub blueprint: String,
}

/// What the window asks of a run in flight.
#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RunAction {
    Pause,
    Resume,
    Step,
    Cancel,
}

/// A recorded run, as the history lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunInfo {
    pub id: String,
    pub blueprint: String,
    /// `running`, `waiting` (a question to a person is open), `succeeded`, `partial`,
    /// `failed`, `cancelled` or `interrupted`.
    pub status: String,
    /// `studio`, `cli`, `mcp` or `schedule`.
    pub trigger: String,
    /// For an `mcp` run, the MCP client that asked for it (its `clientInfo` name).
    pub client: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub duration_ms: Option<f64>,
    pub blueprint_rev: Option<u32>,
    /// The past run this one re-ran a step of, when it is a re-run.
    pub rerun_of: Option<RerunOfDto>,
    /// The run this one resumes: a run left waiting that was answered, or an interrupted one.
    pub resumed_from: Option<String>,
    /// Started with Debug (breakpoints, or paused before the first step).
    pub debug: bool,
    /// The time it sat paused (a finished run that paused); `duration_ms` less this is
    /// its active time.
    pub paused_ms: Option<f64>,
}

/// A re-run's origin: the past run, the step it re-ran, and how much of what follows.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RerunOfDto {
    pub run: String,
    pub step: String,
    pub mode: RerunMode,
}

impl From<mcpflow_store::RunRecord> for RunInfo {
    fn from(r: mcpflow_store::RunRecord) -> Self {
        #[allow(clippy::cast_precision_loss, reason = "a duration in ms is far below 2^52")]
        let duration_ms = r.envelope.as_ref().map(|e| e.duration_ms as f64);
        RunInfo {
            id: r.id,
            blueprint: r.blueprint,
            status: r.status.as_str().to_owned(),
            trigger: r.trigger,
            client: r.client,
            started_at: r.started_at,
            finished_at: r.finished_at,
            duration_ms,
            blueprint_rev: r.blueprint_rev,
            rerun_of: r.rerun_of.map(|o| RerunOfDto { run: o.run, step: o.step, mode: o.mode.into() }),
            resumed_from: r.resumed_from,
            debug: r.debug,
            #[allow(clippy::cast_precision_loss, reason = "a duration in ms is far below 2^52")]
            paused_ms: r.paused_ms.map(|ms| ms as f64),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunDetailDto {
    pub info: RunInfo,
    pub inputs: Json,
    /// Every event of the run, in order.
    pub events: Json,
    /// The result, once finished.
    pub envelope: Option<Json>,
    /// The blueprint as it ran: the document the studio ran, or the stored revision
    /// (absent when neither is known any more, e.g. the blueprint was deleted).
    pub definition: Option<Json>,
}

/// What a re-run runs again: the step alone, or the step and everything after it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RerunMode {
    Step,
    FromHere,
}

/// The IPC twin of the app's [`Rerun`] (which has no `specta::Type`).
impl From<RerunMode> for Rerun {
    fn from(mode: RerunMode) -> Self {
        match mode {
            RerunMode::Step => Rerun::Step,
            RerunMode::FromHere => Rerun::FromHere,
        }
    }
}

impl From<Rerun> for RerunMode {
    fn from(mode: Rerun) -> Self {
        match mode {
            Rerun::Step => RerunMode::Step,
            Rerun::FromHere => RerunMode::FromHere,
        }
    }
}

/// A run waiting for a person: its record and open questions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WaitingRunDto {
    pub run: RunInfo,
    /// Oldest first.
    pub questions: Vec<QuestionDto>,
    /// In flight in this studio; else an earlier session (or another process) left it
    /// waiting, and answering it resumes it as a new run.
    pub in_flight: bool,
}

/// A run saved as a test ("Save this run as a test").
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SavedTestDto {
    pub name: String,
    /// The test file (`tests/<blueprint id>/NAME.test.json` in the data folder).
    pub file: String,
    /// The recorded calls its cassette holds.
    pub exchanges: u32,
}

impl From<mcpflow_app::testing::SavedTest> for SavedTestDto {
    fn from(t: mcpflow_app::testing::SavedTest) -> Self {
        SavedTestDto {
            name: t.name,
            file: t.file.display().to_string(),
            exchanges: u32::try_from(t.exchanges).unwrap_or(u32::MAX),
        }
    }
}

/// A blueprint's tests: where they are, and each by name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TestListDto {
    /// The folder holding them (it may not exist yet).
    pub folder: String,
    pub tests: Vec<TestDto>,
}

/// One test of a blueprint; `passed` and `failure` once it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TestDto {
    pub name: String,
    pub file: String,
    /// `None`: not run (a listing).
    pub passed: Option<bool>,
    /// Why it failed.
    pub failure: Option<String>,
    /// The status of the replayed run, when it ran.
    pub status: Option<String>,
}

impl From<mcpflow_app::testing::TestOutcome> for TestDto {
    fn from(t: mcpflow_app::testing::TestOutcome) -> Self {
        TestDto {
            name: t.name,
            file: t.file.display().to_string(),
            passed: Some(t.failure.is_none()),
            failure: t.failure,
            status: t.status.and_then(|s| serde_json::to_value(s).ok()).and_then(|v| v.as_str().map(str::to_owned)),
        }
    }
}
