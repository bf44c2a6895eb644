//! Blueprints that travel: a stored blueprint written so that `mcpflow run` runs it on
//! another machine, with nothing else from this one.
//!
//! A blueprint in the store calls the servers configured here (the studio's Servers
//! panel, `--servers` files) by name; elsewhere those names mean nothing. The portable
//! form ([`App::portable_blueprint`]) copies each server it calls and does not declare
//! into its own `servers`, with every value that may be a secret or belongs to this
//! machine's environment written as `${env:NAME}` — never resolved, never copied: an
//! `env` variable keeps its name (`"API_KEY": "${env:API_KEY}"`), a header becomes
//! `${env:SERVER_HEADER}`. The blueprints its `workflow` steps call come alongside (each
//! portable too: `mcpflow run FILE` finds them by id in FILE's folder), their servers
//! declared in FILE as well (a called blueprint's steps reach servers through the run
//! that calls it), and a README says
//! which variables to set and the exact command to run. In-process servers (built into
//! this mcpflow) and names no server here answers to cannot travel: the README says so.
//! Each blueprint travels with its lock (`ID.lock.json`, see `mcpflow lock`) when the
//! servers it uses were listed here, so `mcpflow run --locked` there reports what differs.

use crate::app::App;
use crate::error::{AppError, Result};
use mcpflow_blueprint::lock::Lock;
use mcpflow_blueprint::{Options, check_bytes};
use mcpflow_mcp::ServerEntry;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// At most this many blueprints are exported together (a blueprint and those it calls).
const MAX_BLUEPRINTS: usize = 100;

/// A blueprint and what travels with it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Portable {
    /// `id.json` and its document: the blueprint asked for first, then those it calls.
    pub files: Vec<(String, Value)>,
    /// The environment variables the copied servers read, and what each is for.
    pub env: BTreeMap<String, String>,
    /// Servers that could not be copied, and why.
    pub left_out: Vec<String>,
    /// The copied servers that need consent where the blueprint runs, since they are
    /// its own there: a command to start, or an HTTP endpoint that sends a variable or
    /// leaves that machine (`--allow-server`).
    pub needs_consent: BTreeSet<String>,
}

impl Portable {
    /// The README for the files, the blueprint written as `main_file`: what to set and
    /// the `mcpflow run` command.
    pub fn readme(&self, main_file: &str) -> String {
        readme(main_file, self)
    }
}

impl App {
    /// The portable form of stored blueprint `id` (see the module documentation).
    /// `NotFound` when `id`, or a blueprint it calls, is not in the store.
    pub fn portable_blueprint(&self, id: &str) -> Result<Portable> {
        self.portable_document(self.blueprint(id)?.json)
    }

    /// The portable form of `doc` as it is (the studio's document, unsaved edits
    /// included), with the stored blueprints it calls.
    pub fn portable_document(&self, doc: Value) -> Result<Portable> {
        let id = doc.get("id").and_then(Value::as_str).unwrap_or("blueprint").to_owned();
        let id = id.as_str();
        let mut first = Some(doc);
        let configs = self.server_state().configs;
        let mut queue = VecDeque::from([id.to_owned()]);
        let mut seen = BTreeSet::new();
        let mut portable =
            Portable { files: Vec::new(), env: BTreeMap::new(), left_out: Vec::new(), needs_consent: BTreeSet::new() };
        while let Some(next) = queue.pop_front() {
            if !seen.insert(next.clone()) {
                continue;
            }
            if seen.len() > MAX_BLUEPRINTS {
                return Err(AppError::BadRequest(format!(
                    "`{id}` calls more than {MAX_BLUEPRINTS} blueprints; export fewer at a time"
                )));
            }
            let mut doc = match first.take() {
                Some(doc) => doc,
                None => self.blueprint(&next)?.json,
            };
            let mut servers = Vec::new();
            crate::servers::named_servers(doc.get("steps"), &mut servers);
            let mut workflows = Vec::new();
            named_workflows(doc.get("steps"), &mut workflows);
            queue.extend(workflows);
            let own = doc.get("servers").and_then(Value::as_object).cloned().unwrap_or_default();
            let mut copied = own.clone();
            for (name, entry) in &own {
                note_env(name, entry, &mut portable.env);
            }
            for name in servers.iter().filter(|name| !own.contains_key(*name)) {
                match configs.get(name) {
                    Some(ServerEntry::Config(config)) => {
                        let mut entry = serde_json::to_value(config).unwrap_or(Value::Null);
                        scrub(name, &mut entry, &mut portable.env);
                        copied.insert(name.clone(), entry);
                    }
                    Some(ServerEntry::InProcess(_)) => portable.left_out.push(format!(
                        "`{name}` (used by `{next}`) is built into this mcpflow and cannot be copied; \
                         on the other machine, give the blueprint a server of that name"
                    )),
                    None => portable.left_out.push(format!(
                        "`{name}` (used by `{next}`) is not configured here; \
                         on the other machine, give the blueprint a server of that name"
                    )),
                }
            }
            for (name, entry) in &copied {
                let config = serde_json::from_value::<mcpflow_blueprint::ServerConfig>(entry.clone());
                let declared = mcpflow_mcp::Origin::Blueprint;
                if config.is_ok_and(|c| mcpflow_mcp::Consent::required(name, &c, declared).is_some()) {
                    portable.needs_consent.insert(name.clone());
                }
            }
            if !copied.is_empty()
                && let Some(object) = doc.as_object_mut()
            {
                object.insert("servers".into(), Value::Object(copied));
            }
            portable.files.push((format!("{next}.json"), doc));
        }
        carry_called_servers(&mut portable.files);
        self.lock_files(&mut portable);
        Ok(portable)
    }
}

impl App {
    /// Adds `ID.lock.json` beside each exported blueprint: the schemas of the tools and
    /// prompts it uses, as the servers started here listed them, so `mcpflow run --locked`
    /// on the other machine says what changed there. A blueprint whose servers were not
    /// all listed here gets a note instead (it starts nothing to find out).
    fn lock_files(&self, portable: &mut Portable) {
        let catalog = self.pool().listed_catalog();
        let mut locks = Vec::new();
        for (name, doc) in &portable.files {
            let id = name.strip_suffix(".json").unwrap_or(name);
            let text = serde_json::to_vec(doc).unwrap_or_default();
            let report = check_bytes(&text, &Options { catalog: Some(&catalog), workflows: None });
            let Some(plan) = &report.plan else {
                portable.left_out.push(format!("no lock for `{id}`: it has errors (`mcpflow validate` names them)"));
                continue;
            };
            match Lock::build(id, plan, &catalog) {
                Ok(lock) => locks.push((format!("{id}.lock.json"), serde_json::to_value(&lock).unwrap_or_default())),
                Err(problems) => portable.left_out.push(format!(
                    "no lock for `{id}` ({}); run it once here (or test its servers), then export again, \
                     or lock it on the other machine with `mcpflow lock`",
                    problems.join("; ")
                )),
            }
        }
        portable.files.extend(locks);
    }
}

/// A `workflow` step's run reaches servers through the run that calls it (`mcpflow run
/// main.json` starts the servers `main.json` declares), so the first file also declares
/// every server the blueprints it calls use; each called file keeps its own too, to run
/// alone. A name the first file declares already stays as it is.
fn carry_called_servers(files: &mut [(String, Value)]) {
    let Some(((_, first), called)) = files.split_first_mut() else { return };
    let mut carried = serde_json::Map::new();
    for (_, doc) in called.iter() {
        for (name, entry) in doc.get("servers").and_then(Value::as_object).into_iter().flatten() {
            carried.entry(name.clone()).or_insert_with(|| entry.clone());
        }
    }
    let Some(object) = first.as_object_mut() else { return };
    let servers = object.entry("servers").or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Some(servers) = servers.as_object_mut() {
        for (name, entry) in carried {
            servers.entry(name).or_insert(entry);
        }
    }
    if object.get("servers").and_then(Value::as_object).is_some_and(serde_json::Map::is_empty) {
        object.remove("servers");
    }
}

/// The blueprint ids `workflow` steps call, in order, each once.
fn named_workflows(steps: Option<&Value>, out: &mut Vec<String>) {
    crate::steps::each_step(steps, &mut |step| {
        if step.get("kind").and_then(Value::as_str) == Some("workflow")
            && let Some(id) = step.get("workflow").and_then(Value::as_str)
            && !out.iter().any(|n| n == id)
        {
            out.push(id.to_owned());
        }
    });
}

/// Writes every `env` value and header of a copied server entry as `${env:NAME}`: an
/// `env` variable under its own name, a header as `SERVER_HEADER`; values that already
/// are `${env:…}` stay. Notes each variable in `env`.
fn scrub(server: &str, entry: &mut Value, env: &mut BTreeMap<String, String>) {
    if let Some(vars) = entry.get_mut("env").and_then(Value::as_object_mut) {
        for (key, value) in vars.iter_mut() {
            if !is_reference(value) {
                *value = json!(format!("${{env:{key}}}"));
            }
        }
    }
    if let Some(headers) = entry.get_mut("headers").and_then(Value::as_object_mut) {
        for (key, value) in headers.iter_mut() {
            if !is_reference(value) {
                *value = json!(format!("${{env:{}}}", variable_name(&format!("{server}_{key}"))));
            }
        }
    }
    note_env(server, entry, env);
}

/// Notes the `${env:NAME}` references anywhere in a server entry.
fn note_env(server: &str, entry: &Value, env: &mut BTreeMap<String, String>) {
    match entry {
        Value::String(text) => {
            for name in references(text) {
                env.entry(name).or_insert_with(|| format!("read by server `{server}`"));
            }
        }
        Value::Array(items) => items.iter().for_each(|v| note_env(server, v, env)),
        Value::Object(map) => map.values().for_each(|v| note_env(server, v, env)),
        _ => {}
    }
}

/// The variable names of the `${env:NAME}` references in `text`.
fn references(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${env:") {
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else { break };
        names.push(after[..end].to_owned());
        rest = &after[end + 1..];
    }
    names
}

/// A value that is one `${env:NAME}` reference, or text around references only.
fn is_reference(value: &Value) -> bool {
    value.as_str().is_some_and(|text| !references(text).is_empty())
}

/// `my-server_X-Api-Key` → `MY_SERVER_X_API_KEY`.
fn variable_name(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

fn readme(main_file: &str, portable: &Portable) -> String {
    let stdio = &portable.needs_consent;
    let id = portable.files.first().and_then(|(_, doc)| doc.get("id")).and_then(Value::as_str).unwrap_or("blueprint");
    let mut text = format!("# {id}: a portable mcpflow blueprint\n\n");
    text.push_str(&format!(
        "Exported from mcpflow {} with the servers it uses copied into it{}.\n\n",
        env!("CARGO_PKG_VERSION"),
        if portable.files.len() > 1 { " and the blueprints it calls alongside" } else { "" }
    ));
    text.push_str("## Files\n\n");
    text.push_str(&format!("- `{main_file}`\n"));
    for (name, _) in portable.files.iter().skip(1) {
        text.push_str(&format!("- `{name}`\n"));
    }
    text.push_str("\n## Environment\n\n");
    if portable.env.is_empty() {
        text.push_str("Nothing to set.\n");
    } else {
        text.push_str("Set these before running (values were not exported):\n\n");
        for (name, what) in &portable.env {
            text.push_str(&format!("- `{name}`: {what}\n"));
        }
    }
    text.push_str("\n## Run\n\n```sh\n");
    for name in portable.env.keys() {
        text.push_str(&format!("export {name}=…\n"));
    }
    let allow: String = stdio.iter().map(|name| format!(" --allow-server {name}")).collect();
    text.push_str(&format!("mcpflow run {main_file}{allow}\n```\n\n"));
    if !stdio.is_empty() {
        text.push_str(
            "`--allow-server` lets each of these servers start (a command) or be reached (an HTTP \
             server that sends a variable or is on another machine) without asking; leave it out to \
             be asked on a terminal first. A command given as an absolute path must exist on this \
             machine: `mcpflow run` warns about one that does not.\n",
        );
    }
    if !portable.left_out.is_empty() {
        text.push_str("\n## Not included\n\n");
        for note in &portable.left_out {
            text.push_str(&format!("- {note}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_values_and_headers_become_references_and_references_stay() {
        let mut entry = json!({
            "command": "/opt/graph/bin/server",
            "env": { "API_KEY": "sk-live-123", "REGION": "${env:GRAPH_REGION}" },
        });
        let mut env = BTreeMap::new();
        scrub("graph", &mut entry, &mut env);
        assert_eq!(entry["env"], json!({ "API_KEY": "${env:API_KEY}", "REGION": "${env:GRAPH_REGION}" }));
        assert_eq!(env.keys().collect::<Vec<_>>(), ["API_KEY", "GRAPH_REGION"]);
        let mut http =
            json!({ "url": "https://x/mcp", "headers": { "Authorization": "Bearer abc", "X-Team": "${env:TEAM}" } });
        scrub("my-api", &mut http, &mut env);
        assert_eq!(http["headers"]["Authorization"], "${env:MY_API_AUTHORIZATION}");
        assert_eq!(http["headers"]["X-Team"], "${env:TEAM}");
        assert!(!http.to_string().contains("abc"));
    }

    #[test]
    fn the_first_file_also_declares_the_servers_of_the_blueprints_it_calls() {
        let mut files = vec![
            ("main.json".to_owned(), json!({ "id": "main", "servers": { "web": { "url": "http://a/mcp" } } })),
            (
                "sub.json".to_owned(),
                json!({ "id": "sub", "servers": { "echo": { "command": "e" }, "web": { "url": "x" } } }),
            ),
            ("leaf.json".to_owned(), json!({ "id": "leaf" })),
        ];
        carry_called_servers(&mut files);
        assert_eq!(files[0].1["servers"], json!({ "web": { "url": "http://a/mcp" }, "echo": { "command": "e" } }));
        assert_eq!(files[1].1["servers"]["echo"], json!({ "command": "e" }), "a called file keeps its own");
        let mut alone = vec![("only.json".to_owned(), json!({ "id": "only" }))];
        carry_called_servers(&mut alone);
        assert_eq!(alone[0].1, json!({ "id": "only" }), "no empty `servers` is added");
    }

    #[test]
    fn workflows_are_found_in_loop_bodies_once() {
        let steps = json!([
            { "id": "a", "kind": "workflow", "workflow": "sub" },
            { "id": "l", "kind": "loop", "for_each": [1], "steps": [
                { "id": "b", "kind": "workflow", "workflow": "other" },
                { "id": "c", "kind": "workflow", "workflow": "sub" } ] }
        ]);
        let mut out = Vec::new();
        named_workflows(Some(&steps), &mut out);
        assert_eq!(out, ["sub", "other"]);
    }
}
