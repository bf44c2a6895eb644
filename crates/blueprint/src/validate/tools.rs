//! Warnings that need to know the servers (through [`crate::ToolCatalog`]): unknown
//! servers, tools and prompts, ambiguous routing, and literal arguments that break the
//! tool's input schema.

use super::Validator;
use super::fields::compile_schema;
use crate::catalog::{ServerInfo, ServerStatus, ToolCatalog};
use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::model::StepKind;
use crate::plan::{StepIdx, StepTemplates};
use crate::template::Template;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

impl Validator<'_> {
    pub(super) fn tools(&mut self) {
        let Some(catalog) = self.options.catalog else { return };
        let mut reported_servers = HashSet::new();
        let mut schemas: HashMap<(String, String), Option<jsonschema::Validator>> = HashMap::new();
        for idx in 0..self.plan.steps.len() {
            let (server, name, is_prompt) = match &self.plan.steps[idx].step.kind {
                StepKind::Tool(t) => (t.server.clone(), t.tool.clone(), false),
                StepKind::Prompt(p) => (Some(p.server.clone()), p.prompt.clone(), true),
                StepKind::Resource(r) => {
                    let server = r.server.clone();
                    self.server_info(catalog, idx, &server, &mut reported_servers);
                    continue;
                }
                _ => continue,
            };
            let found = match server {
                Some(server) => match self.server_info(catalog, idx, &server, &mut reported_servers) {
                    Some(info) => Some((server, info)),
                    None => continue,
                },
                None => self.route(catalog, idx, &name),
            };
            let Some((server, info)) = found else { continue };
            if is_prompt {
                self.check_prompt(idx, &server, &info, &name);
            } else {
                self.check_tool(idx, &server, &info, &name, &mut schemas);
            }
        }
    }

    /// The server's tools, or a warning (once per server) and `None`.
    fn server_info(
        &mut self,
        catalog: &dyn ToolCatalog,
        idx: StepIdx,
        server: &str,
        reported: &mut HashSet<String>,
    ) -> Option<Arc<ServerInfo>> {
        match catalog.server(server) {
            ServerStatus::Ready(info) => Some(info),
            // Nothing is known about it yet: not started, or the blueprint brings it.
            ServerStatus::NotListed => None,
            ServerStatus::NotConfigured if self.bp.servers.contains_key(server) => None,
            ServerStatus::NotConfigured => {
                let names = catalog.server_names();
                let hint = match did_you_mean(server, names.iter().map(String::as_str)) {
                    s if !s.is_empty() => s,
                    _ if names.is_empty() => {
                        "configure it (mcpflow serve / the studio's Servers panel) or add it to `servers`".into()
                    }
                    _ => format!("configured servers: {}", names.join(", ")),
                };
                let d =
                    self.step_diag(idx, Code::ServerUnknown, "/server", format!("server `{server}` is not configured"));
                self.push(d.with_hint(hint));
                None
            }
            ServerStatus::Unreachable { reason } => {
                if reported.insert(server.to_owned()) {
                    let d = self.step_diag(
                        idx,
                        Code::ServerUnreachable,
                        "/server",
                        format!("server `{server}` could not be reached: {reason}"),
                    );
                    self.push(d.with_hint("its tools were not checked; fix or approve the server and validate again"));
                }
                None
            }
        }
    }

    /// A tool without `server`: exactly one server must have it.
    fn route(&mut self, catalog: &dyn ToolCatalog, idx: StepIdx, tool: &str) -> Option<(String, Arc<ServerInfo>)> {
        let mut holders = Vec::new();
        let mut all_tools = Vec::new();
        let (mut not_listed, mut unreachable) = (false, Vec::new());
        for name in catalog.server_names() {
            match catalog.server(&name) {
                ServerStatus::Ready(info) => {
                    all_tools.extend(info.tools.iter().map(|t| t.name.clone()));
                    if info.tools.iter().any(|t| t.name == tool) {
                        holders.push((name, info));
                    }
                }
                ServerStatus::NotListed => not_listed = true,
                ServerStatus::Unreachable { .. } => unreachable.push(name),
                ServerStatus::NotConfigured => {}
            }
        }
        match holders.len() {
            1 => holders.pop(),
            // A server not started yet may have it: nothing to say before it is listed.
            0 if not_listed => None,
            0 => {
                let message = if unreachable.is_empty() {
                    format!("no configured server has a tool `{tool}`")
                } else {
                    format!("no reachable server has a tool `{tool}` ({} could not be reached)", unreachable.join(", "))
                };
                let d = self.step_diag(idx, Code::ToolUnknown, "/tool", message);
                let hint = match did_you_mean(tool, all_tools.iter().map(String::as_str)) {
                    s if !s.is_empty() => s,
                    _ => "add `server` and check the tool name".into(),
                };
                self.push(d.with_hint(hint));
                None
            }
            _ => {
                let names: Vec<&str> = holders.iter().map(|(n, _)| n.as_str()).collect();
                let d = self.step_diag(
                    idx,
                    Code::ToolAmbiguous,
                    "/tool",
                    format!("tool `{tool}` exists on several servers: {}", names.join(" and ")),
                );
                self.push(d.with_hint(format!("add \"server\": \"{}\" (or another) to the step", names[0])));
                None
            }
        }
    }

    fn check_prompt(&mut self, idx: StepIdx, server: &str, info: &ServerInfo, name: &str) {
        let Some(prompt) = info.prompts.iter().find(|p| p.name == name) else {
            let names = info.prompts.iter().map(|p| p.name.as_str());
            let d = self.step_diag(
                idx,
                Code::PromptUnknown,
                "/prompt",
                format!("server `{server}` has no prompt `{name}`"),
            );
            let hint = match did_you_mean(name, names) {
                s if !s.is_empty() => s,
                _ => format!(
                    "its prompts: {}",
                    info.prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            };
            self.push(d.with_hint(hint));
            return;
        };
        let Some((literal, templated)) = self.split_args(idx) else { return };
        for arg in prompt.arguments.iter().filter(|a| a.required) {
            if !literal.contains_key(&arg.name) && !templated.contains(&arg.name) {
                let d = self.step_diag(
                    idx,
                    Code::ArgMissing,
                    "",
                    format!("prompt `{name}` needs the argument `{}`", arg.name),
                );
                self.push(d.with_hint(format!("add \"{}\" to `args`", arg.name)));
            }
        }
    }

    /// A tool or prompt step's arguments split into literal members (checkable now) and
    /// the names of templated ones (known at run time); `None` when `args` is one whole
    /// template.
    fn split_args(&self, idx: StepIdx) -> Option<(Map<String, Value>, Vec<String>)> {
        let args = match &self.plan.steps[idx].templates {
            StepTemplates::Tool { args } | StepTemplates::Prompt { args } => args.as_ref(),
            _ => None,
        };
        match args {
            None => Some((Map::new(), Vec::new())),
            Some(Template::Literal(Value::Object(m))) => Some((m.clone(), Vec::new())),
            Some(Template::Object(members)) => {
                let mut literal = Map::new();
                let mut templated = Vec::new();
                for (k, t) in members {
                    match t {
                        Template::Literal(v) => {
                            literal.insert(k.clone(), v.clone());
                        }
                        _ => templated.push(k.clone()),
                    }
                }
                Some((literal, templated))
            }
            Some(_) => None,
        }
    }

    fn check_tool(
        &mut self,
        idx: StepIdx,
        server: &str,
        info: &ServerInfo,
        name: &str,
        schemas: &mut HashMap<(String, String), Option<jsonschema::Validator>>,
    ) {
        let Some(tool) = info.tools.iter().find(|t| t.name == name) else {
            let d = self.step_diag(idx, Code::ToolUnknown, "/tool", format!("server `{server}` has no tool `{name}`"));
            let hint = match did_you_mean(name, info.tools.iter().map(|t| t.name.as_str())) {
                s if !s.is_empty() => s,
                _ => {
                    format!("its tools: {}", info.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "))
                }
            };
            self.push(d.with_hint(hint));
            return;
        };
        if let Some(schema) = &tool.output_schema {
            self.check_output_reads(idx, server, name, schema);
        }
        // Literal members only; templated ones are known at run time.
        let Some((literal, templated)) = self.split_args(idx) else { return };
        let args_ptr = format!("{}/args", self.plan.steps[idx].pointer);
        if let Some(required) = tool.input_schema.get("required").and_then(Value::as_array) {
            for r in required.iter().filter_map(Value::as_str) {
                if !literal.contains_key(r) && !templated.iter().any(|t| t == r) {
                    let d =
                        self.step_diag(idx, Code::ArgMissing, "", format!("tool `{name}` needs the argument `{r}`"));
                    self.push(d.with_hint(format!("add \"{r}\" to `args`")));
                }
            }
        }
        let validator = schemas
            .entry((server.to_owned(), name.to_owned()))
            .or_insert_with(|| compile_schema(&tool.input_schema).ok());
        let Some(validator) = validator else { return };
        let instance = Value::Object(literal);
        let mut found = Vec::new();
        for e in validator.iter_errors(&instance) {
            if matches!(e.kind(), jsonschema::error::ValidationErrorKind::Required { .. }) {
                continue; // reported above, with templated arguments taken into account
            }
            let path = e.instance_path().as_str().to_owned();
            let id = self.plan.steps[idx].step.id().to_owned();
            found.push(
                Diagnostic::new(Code::ArgInvalid, format!("{args_ptr}{path}"), format!("argument of `{name}`: {e}"))
                    .with_step(id)
                    .with_hint(format!("see the input schema of `{server}`/`{name}`")),
            );
        }
        self.diags.extend(found);
    }

    /// The fields of step `idx`'s output the blueprint reads, against the output schema
    /// of its tool (the step's output is the result's `structuredContent`, which that
    /// schema describes). A field the schema does not list is a warning, or an error when
    /// the schema allows no others; a schema without `properties` claims nothing.
    fn check_output_reads(&mut self, idx: StepIdx, server: &str, name: &str, schema: &Value) {
        let Some(Value::Object(properties)) = schema.get("properties") else { return };
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let id = self.plan.steps[idx].step.id().to_owned();
        for read in crate::reads::output_reads(&self.plan, &[idx]) {
            if properties.contains_key(&read.field) {
                continue;
            }
            let (code, may) = if closed {
                (Code::TemplatePathAbsent, "allows no other field")
            } else {
                (Code::TemplatePathUnknown, "does not list it (it may allow others)")
            };
            let field = &read.field;
            let message = format!(
                "`{id}.{field}`: the output of tool `{server}`/`{name}` (step `{id}`) has no field `{field}` in its output schema, which {may}"
            );
            let hint = match did_you_mean(field, properties.keys().map(String::as_str)) {
                s if !s.is_empty() => s,
                _ => format!("its fields: {}", properties.keys().map(String::as_str).collect::<Vec<_>>().join(", ")),
            };
            let reader = if read.reader == "output" { id.clone() } else { read.reader.clone() };
            let d = Diagnostic::new(code, read.pointer, message).with_step(reader).with_hint(hint);
            self.push(d.with_producer(id.clone()));
        }
    }
}
