//! Configured servers: list them with what each would start and whether it may, add,
//! edit, remove and import `mcpServers` entries, approve a stdio command or a blueprint's
//! HTTP endpoint (consent), and test a connection. Only testing a connection starts
//! anything, and only an approved command.

use crate::app::{App, consent};
use crate::error::{AppError, Result};
use mcpflow_blueprint::{Code, Diagnostic};
use mcpflow_config::launch::{TransportKind, transport_kind};
use mcpflow_mcp::{ServerConfigs, ServerEntry};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One configured server as the studio and `list_servers` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerView {
    pub name: String,
    /// `stdio`, `http` or `in-process`.
    pub transport: &'static str,
    /// What consent approves: the exact command line a stdio server starts, or for an
    /// HTTP server a blueprint declared that needs approval, `URL … (sends: NAME, …)`.
    /// Variables' values are never shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The hash its consent is stored under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consent_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// It may start or be reached: approved, or nothing to approve.
    pub approved: bool,
    /// The entry as written (with `${env:NAME}` unresolved); `null` for in-process ones.
    pub config: Value,
    /// Its switch "may ask the model" (`"sampling": true` on its entry): whether its
    /// sampling requests are answered.
    pub sampling: bool,
}

/// A tool a server offers, for the palette and `list_tools`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolView {
    pub server: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    /// What the server says of the tool (`destructiveHint`, `readOnlyHint`, …), as sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// The schema of the tool's `structuredContent`, when the server gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

impl App {
    /// Every configured server (store, then `--servers` files).
    pub fn servers(&self) -> Vec<ServerView> {
        let state = self.server_state();
        state.configs.iter().map(|(name, entry)| view(&state.configs, &state.approvals, name, entry)).collect()
    }

    /// The servers a run of `doc` calls, as that run would start them (the document's
    /// own `servers` over the configured ones), in the order its steps name them, with
    /// whether each may start. Names no server knows are left out (the run reports them).
    /// Starts nothing.
    pub fn run_servers(&self, doc: &Value) -> Result<Vec<ServerView>> {
        let configs = self.run_configs(doc)?;
        let approvals = self.server_state().approvals;
        let mut names = Vec::new();
        named_servers(doc.get("steps"), &mut names);
        Ok(names
            .iter()
            .filter_map(|name| configs.get(name).map(|entry| view(&configs, &approvals, name, entry)))
            .collect())
    }

    /// Approves the exact command line server `name` starts in a run of `doc` (its own
    /// `servers` entry, or the configured one). Returns the command line approved.
    pub fn approve_run_server(&self, doc: &Value, name: &str) -> Result<String> {
        let configs = self.run_configs(doc)?;
        self.approve_in(&configs, name)
    }

    /// Approves the exact command line `name` starts under `configs`, from now on and
    /// for later sessions. Returns the command line approved.
    fn approve_in(&self, configs: &ServerConfigs, name: &str) -> Result<String> {
        if configs.get(name).is_none() {
            return Err(AppError::NotFound { what: "server", id: name.to_owned() });
        }
        let Some(line) = consent(configs, name) else {
            return Err(AppError::BadRequest(format!(
                "`{name}` starts no process and sends no secret elsewhere, so it needs no approval"
            )));
        };
        self.store().approve(&line.hash(), &line.to_string())?;
        self.reload_servers()?;
        Ok(line.to_string())
    }

    /// The configured servers plus the document's own `servers` under names not
    /// configured: a configured server is never shadowed (see [`App::shadowed_servers`]).
    pub(crate) fn run_configs(&self, doc: &Value) -> Result<ServerConfigs> {
        let configs = self.server_state().configs;
        if doc.get("servers").and_then(Value::as_object).is_none_or(serde_json::Map::is_empty) {
            return Ok(configs);
        }
        // The document's own errors are the run's to report; its `servers` only need to
        // decode.
        let report = mcpflow_blueprint::check_value(doc.clone(), &mcpflow_blueprint::Options::default());
        match report.blueprint {
            Some(bp) => Ok(configs.under_blueprint(&bp.servers).0),
            None => Err(AppError::Invalid(report.diagnostics)),
        }
    }

    /// `SERVER_SHADOWED` warnings for a document that declares a server under a name
    /// already configured here: the configured server is the one a run uses, so each
    /// step calling that name is told so, naming both command lines. Nothing when the
    /// document declares nothing or its `servers` do not decode (validation says why).
    pub fn shadowed_servers(&self, doc: &Value) -> Vec<Diagnostic> {
        let Some(own) = doc.get("servers").and_then(Value::as_object).filter(|m| !m.is_empty()) else {
            return Vec::new();
        };
        let configs = self.server_state().configs;
        let clashing: Vec<&String> = own.keys().filter(|name| configs.get(name).is_some()).collect();
        if clashing.is_empty() {
            return Vec::new();
        }
        let Ok(declared) = ServerConfigs::parse(&serde_json::json!({ "mcpServers": own }).to_string(), "servers")
        else {
            return Vec::new();
        };
        let declared = ServerConfigs::new().with_blueprint(
            &declared
                .iter()
                .filter_map(|(name, entry)| match entry {
                    ServerEntry::Config(c) => Some((name.to_owned(), (**c).clone())),
                    ServerEntry::InProcess(_) => None,
                })
                .collect(),
        );
        let mut steps = Vec::new();
        steps_naming(doc.get("steps"), "/steps", &mut steps);
        let mut out = Vec::new();
        for name in clashing {
            let used = describe(&configs, name);
            let theirs = describe(&declared, name);
            let message = |step: &str| {
                format!(
                    "step `{step}` calls server `{name}`: this blueprint declares its own `{name}` ({theirs}), but \
                     the configured `{name}` ({used}) is the one used"
                )
            };
            let hint = format!(
                "to use the configured `{name}`, remove `{name}` from the blueprint's `servers`; to use the \
                 blueprint's, rename it there and in its steps"
            );
            let mut any = false;
            for (pointer, step, server) in &steps {
                if server == name {
                    any = true;
                    out.push(
                        Diagnostic::new(Code::ServerShadowed, format!("{pointer}/server"), message(step))
                            .with_step(step.as_str())
                            .with_hint(hint.clone()),
                    );
                }
            }
            if !any {
                let message = format!(
                    "this blueprint declares its own `{name}` ({theirs}), but the configured `{name}` ({used}) is \
                     the one used"
                );
                out.push(
                    Diagnostic::new(
                        Code::ServerShadowed,
                        mcpflow_blueprint::diagnostic::pointer_push("/servers", name),
                        message,
                    )
                    .with_hint(hint),
                );
            }
        }
        out
    }
}

impl App {
    /// Refuses a blueprint from outside (an agent's, through `mcpflow serve`) whose own
    /// `servers` use `${env:NAME}` anywhere (URL, headers, command, arguments, env, cwd),
    /// unless the operator allowed it (`--allow-blueprint-env`): `BLUEPRINT_ENV_REFUSED`
    /// naming the server and the variables, never their values.
    pub fn refuse_blueprint_env(&self, doc: &Value) -> Result<()> {
        if self.inner.options.allow_blueprint_env {
            return Ok(());
        }
        let Some(servers) = doc.get("servers").and_then(Value::as_object) else { return Ok(()) };
        for (server, entry) in servers {
            let mut names = std::collections::BTreeSet::new();
            env_names(entry, &mut names);
            if !names.is_empty() {
                return Err(AppError::BlueprintEnv { server: server.clone(), names: names.into_iter().collect() });
            }
        }
        Ok(())
    }
}

/// The `${env:NAME}` names in every string of `value` (keys too).
fn env_names(value: &Value, out: &mut std::collections::BTreeSet<String>) {
    let refs = |text: &str| mcpflow_config::env::references(text).into_iter().map(str::to_owned).collect::<Vec<_>>();
    match value {
        Value::String(text) => out.extend(refs(text)),
        Value::Array(items) => items.iter().for_each(|v| env_names(v, out)),
        Value::Object(map) => {
            for (key, v) in map {
                out.extend(refs(key));
                env_names(v, out);
            }
        }
        _ => {}
    }
}

/// What a server entry starts or reaches, for messages: its command line or URL.
fn describe(configs: &ServerConfigs, name: &str) -> String {
    if let Some(line) = consent(configs, name) {
        return format!("`{line}`");
    }
    match configs.get(name) {
        Some(ServerEntry::Config(c)) => match (&c.command, &c.url) {
            (Some(command), _) => format!("`{command}`"),
            (None, Some(url)) => format!("`{url}`"),
            (None, None) => "an entry".to_owned(),
        },
        Some(ServerEntry::InProcess(_)) => "in this process".to_owned(),
        None => "not configured".to_owned(),
    }
}

/// `(pointer, id, server)` of every step in `steps` that names a server, loop bodies
/// included, in document order.
fn steps_naming(steps: Option<&Value>, pointer: &str, out: &mut Vec<(String, String, String)>) {
    for (i, step) in steps.and_then(Value::as_array).into_iter().flatten().enumerate() {
        let here = format!("{pointer}/{i}");
        if let (Some(id), Some(server)) =
            (step.get("id").and_then(Value::as_str), step.get("server").and_then(Value::as_str))
        {
            out.push((here.clone(), id.to_owned(), server.to_owned()));
        }
        steps_naming(step.get("steps"), &format!("{here}/steps"), out);
    }
}

/// The `server` of every step in `steps` (loop bodies included), each once.
pub(crate) fn named_servers(steps: Option<&Value>, out: &mut Vec<String>) {
    crate::steps::each_step(steps, &mut |step| {
        if let Some(name) = step.get("server").and_then(Value::as_str)
            && !out.iter().any(|n| n == name)
        {
            out.push(name.to_owned());
        }
    });
}

fn view(configs: &ServerConfigs, approvals: &mcpflow_mcp::Approvals, name: &str, entry: &ServerEntry) -> ServerView {
    match entry {
        ServerEntry::Config(config) => {
            let line = consent(configs, name);
            let stdio = matches!(transport_kind(name, config), Ok(TransportKind::Stdio));
            ServerView {
                name: name.to_owned(),
                transport: if stdio { "stdio" } else { "http" },
                approved: line.as_ref().is_none_or(|l| approvals.allows(l)),
                consent_hash: line.as_ref().map(mcpflow_mcp::Consent::hash),
                command: line.map(|l| l.to_string()),
                url: config.url.clone(),
                config: serde_json::to_value(config).unwrap_or(Value::Null),
                sampling: config.sampling,
            }
        }
        ServerEntry::InProcess(_) => ServerView {
            name: name.to_owned(),
            transport: "in-process",
            command: None,
            consent_hash: None,
            url: None,
            approved: true,
            config: Value::Null,
            sampling: false,
        },
    }
}

impl App {
    /// Adds or replaces a server in the store (an `mcpServers` entry). Starts nothing; a
    /// changed command needs approval again.
    pub fn put_server(&self, name: &str, config: &Value) -> Result<()> {
        let doc = serde_json::json!({ "mcpServers": { name: config } });
        ServerConfigs::parse(&doc.to_string(), "the new server")?;
        self.store().put_server(name, config)?;
        self.reload_servers()
    }

    /// Turns server `name`'s switch "may ask the model" on or off: writes `"sampling": on`
    /// on its stored entry, the rest of the entry as written. Starts nothing; the next
    /// call to the server has it. A server configured elsewhere (a `--servers` file, in
    /// the process) is refused, saying where to change it.
    pub fn set_server_sampling(&self, name: &str, on: bool) -> Result<()> {
        let stored = self.store().servers()?.into_iter().find(|(n, _)| n == name);
        let Some((_, mut entry)) = stored else {
            if self.server_state().configs.get(name).is_some() {
                return Err(AppError::BadRequest(format!(
                    "server `{name}` is not kept in this data folder (it comes from a servers file given at start, \
                     or is built in); write \"sampling\": {on} in its entry there"
                )));
            }
            return Err(AppError::NotFound { what: "server", id: name.to_owned() });
        };
        let Some(fields) = entry.as_object_mut() else {
            return Err(AppError::BadRequest(format!(
                "server `{name}`'s stored entry is not a JSON object; edit it in the Servers panel"
            )));
        };
        fields.insert("sampling".to_owned(), Value::Bool(on));
        self.put_server(name, &entry)
    }

    pub fn delete_server(&self, name: &str) -> Result<()> {
        if !self.store().delete_server(name)? {
            return Err(AppError::NotFound { what: "server", id: name.to_owned() });
        }
        self.forget_listing(name);
        self.reload_servers()
    }

    /// Imports every entry of an `mcpServers` document (Claude Desktop's, Cursor's…).
    /// Returns the names added. Starts nothing and approves nothing.
    pub fn import_servers(&self, doc: &Value) -> Result<Vec<String>> {
        let entries = doc
            .get("mcpServers")
            .or_else(|| doc.get("servers"))
            .and_then(Value::as_object)
            .ok_or_else(|| AppError::BadRequest("an `mcpServers` document has an `mcpServers` object".into()))?;
        ServerConfigs::parse(&serde_json::json!({ "mcpServers": entries }).to_string(), "the imported file")?;
        for (name, config) in entries {
            self.store().put_server(name, config)?;
        }
        self.reload_servers()?;
        Ok(entries.keys().cloned().collect())
    }

    /// Approves the exact command line `name` starts, from now on and for later sessions.
    /// Returns the command line that was approved.
    pub fn approve_server(&self, name: &str) -> Result<String> {
        self.approve_in(&self.server_state().configs, name)
    }

    /// The servers and consents in the store, as a fingerprint: another process sharing
    /// the store (a team's database: the studio approving a server on the team's service)
    /// changed them when it differs from the last one read.
    pub fn stored_servers_fingerprint(&self) -> Result<u64> {
        use std::hash::{Hash as _, Hasher as _};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for (name, config) in self.store().servers()? {
            (name, config.to_string()).hash(&mut hasher);
        }
        for consent in self.store().consents()? {
            consent.hash.hash(&mut hasher);
        }
        Ok(hasher.finish())
    }

    /// Connects to a server (starting it if it is approved) and lists its tools.
    pub async fn test_server(&self, name: &str) -> Result<Vec<ToolView>> {
        Ok(self.test_connection(name).await?.tools)
    }

    /// Connects to a server (starting it if it is approved): the protocol revision it
    /// spoke and its tools (the studio's Test button).
    pub async fn test_connection(&self, name: &str) -> Result<Tested> {
        let found = self.pool().discover(name).await?;
        Ok(Tested { protocol_version: found.protocol_version.clone(), tools: tool_views(name, &found) })
    }
}

/// What a connection test found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tested {
    /// The MCP revision the connection speaks: `2026-07-28` (discovery, no session) or
    /// the one the `initialize` handshake agreed (`2025-11-25`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub tools: Vec<ToolView>,
}

/// A server's tools as the studio and `list_tools` show them.
fn tool_views(server: &str, found: &mcpflow_mcp::Discovery) -> Vec<ToolView> {
    found
        .tools
        .iter()
        .map(|t| ToolView {
            server: server.to_owned(),
            name: t.name.to_string(),
            description: t.description.as_ref().map(ToString::to_string),
            input_schema: Value::Object((*t.input_schema).clone()),
            annotations: t.annotations.as_ref().and_then(|a| serde_json::to_value(a).ok()),
            output_schema: t.output_schema.as_ref().map(|s| Value::Object((**s).clone())),
        })
        .collect()
}

/// A resource a server offers, for the palette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceView {
    pub server: String,
    pub uri: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// A prompt a server offers, for the palette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptView {
    pub server: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Argument names, the required ones first.
    pub arguments: Vec<PromptArgumentView>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptArgumentView {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub required: bool,
}

/// Everything one server offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offer {
    /// The MCP revision the connection speaks (see [`Tested`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    pub tools: Vec<ToolView>,
    pub resources: Vec<ResourceView>,
    pub prompts: Vec<PromptView>,
}

impl App {
    /// Connects to a server (starting it if it is approved) and lists its tools,
    /// resources and prompts, remembered as its last listing (see [`App::last_listing`]).
    /// Refused with `SERVER_NOT_APPROVED` for a stdio command nobody approved: nothing
    /// starts without consent.
    pub async fn offer(&self, name: &str) -> Result<Offer> {
        let found = self.pool().discover(name).await?;
        let offer = offer_of(name, &found);
        self.remember_listing(name, &offer);
        Ok(offer)
    }
}

/// What a discovery found, as the palette shows it.
fn offer_of(name: &str, found: &mcpflow_mcp::Discovery) -> Offer {
    Offer {
        protocol_version: found.protocol_version.clone(),
        tools: tool_views(name, found),
        resources: found
            .resources
            .iter()
            .map(|r| ResourceView {
                server: name.to_owned(),
                uri: r.uri.clone(),
                name: r.name.clone(),
                description: r.description.clone(),
                mime_type: r.mime_type.clone(),
            })
            .collect(),
        prompts: found
            .prompts
            .iter()
            .map(|p| PromptView {
                server: name.to_owned(),
                name: p.name.clone(),
                description: p.description.clone(),
                arguments: p
                    .arguments
                    .iter()
                    .flatten()
                    .map(|a| PromptArgumentView {
                        name: a.name.clone(),
                        description: a.description.clone(),
                        required: a.required.unwrap_or(false),
                    })
                    .collect(),
            })
            .collect(),
    }
}
