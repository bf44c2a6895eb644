//! `mcpflow servers` (list the configured servers; starts nothing) and `mcpflow servers
//! test [NAME]...` (connect to each and say what it answered, or why it failed and what
//! to do). The reports come from `mcpflow_app::server_report`.

use crate::app::{AppArgs, open_app};
use crate::stdout::outln;
use clap::{Args, Subcommand};
use mcpflow_app::advice::Front;
use mcpflow_app::server_report::{self, ServerSummary, ServerTest};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = false)]
pub struct ServersArgs {
    #[command(subcommand)]
    action: Option<Action>,
    /// An `mcpServers` JSON file, as Claude Desktop and Cursor write them (repeatable).
    #[arg(long = "servers", value_name = "FILE", global = true)]
    servers: Vec<PathBuf>,
    /// Include the servers configured in the store (the data folder), with its approvals.
    #[arg(long, global = true)]
    store: bool,
    /// Let this server's stdio command start (repeatable). Nothing starts without consent.
    #[arg(long = "allow-server", value_name = "NAME", global = true)]
    allow: Vec<String>,
    /// Let every stdio command start (for CI).
    #[arg(long, global = true)]
    allow_all_servers: bool,
    /// One JSON object per server, one per line.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Connect to each server (all when none is named) and print the protocol version it
    /// answered, its name and version, its capabilities and its tools/resources/prompts
    /// counts, or the error and what to do. Exits 1 when a tested server failed.
    Test {
        /// The servers to test (default: every configured one).
        #[arg(value_name = "NAME")]
        names: Vec<String>,
        /// Longest wait for each server to start and to answer (e.g. `10s`).
        #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration, default_value = "30s")]
        timeout: Duration,
    },
}

pub async fn run(args: ServersArgs) -> anyhow::Result<ExitCode> {
    let app = if args.store {
        let app_args = AppArgs {
            servers: args.servers.clone(),
            allow: args.allow.clone(),
            allow_all_servers: args.allow_all_servers,
        };
        Some(open_app(&app_args, None)?)
    } else {
        None
    };
    let from_files = || {
        server_report::file_servers(&args.servers, &args.allow, args.allow_all_servers)
            .map_err(|e| anyhow::anyhow!("{e} ({})", e.code()))
    };
    match args.action {
        None => {
            let list = match &app {
                Some(app) => app.server_summaries(),
                None => {
                    let (configs, approvals) = from_files()?;
                    server_report::summaries(&configs, &approvals)
                }
            };
            print_list(&list, args.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Action::Test { names, timeout }) => {
            let tests = match &app {
                Some(app) => app.test_server_set(&names, timeout).await?,
                None => {
                    let (configs, approvals) = from_files()?;
                    server_report::test_servers(configs, approvals, &names, timeout, Front::Cli).await
                }
            };
            print_tests(&tests, args.json)?;
            Ok(if tests.iter().all(|t| t.ok) { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

fn print_list(list: &[ServerSummary], json: bool) -> anyhow::Result<()> {
    if json {
        for s in list {
            outln!("{}", serde_json::to_string(s)?)?;
        }
        return Ok(());
    }
    if list.is_empty() {
        outln!("no servers configured: give `--servers FILE` (an `mcpServers` file) or `--store`")?;
    }
    for s in list {
        outln!("{} ({})", s.name, s.transport)?;
        match (&s.command, &s.url) {
            (Some(command), _) => outln!("  command:  {command}")?,
            (None, Some(url)) => outln!("  url:      {url}")?,
            (None, None) => {}
        }
        let consent = match (s.needs_approval, s.approved) {
            (false, _) => "nothing to approve",
            (true, true) => "approved",
            (true, false) => "not approved (it will not start: `--allow-server` or the studio's Servers panel)",
        };
        outln!("  consent:  {consent}")?;
        outln!("  auth:     {}", s.auth)?;
        if let Some(protocol) = s.protocol {
            outln!("  protocol: {protocol} (pinned)")?;
        }
        if let Some(problem) = &s.problem {
            outln!("  problem:  {problem}")?;
        }
    }
    Ok(())
}

fn print_tests(tests: &[ServerTest], json: bool) -> anyhow::Result<()> {
    if json {
        for t in tests {
            outln!("{}", serde_json::to_string(t)?)?;
        }
        return Ok(());
    }
    for t in tests {
        if let Some(e) = &t.error {
            outln!("{}: FAILED error[{}] ({} ms)", t.name, e.code, t.elapsed_ms)?;
            outln!("  {}", e.message)?;
            outln!("  what to do: {}", e.hint)?;
            outln!("  auth:       {}", t.auth)?;
            continue;
        }
        outln!("{}: ok ({} ms)", t.name, t.elapsed_ms)?;
        outln!("  protocol:     {}", t.protocol_version.as_deref().unwrap_or("(not said)"))?;
        let server = match (&t.server_name, &t.server_version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            _ => "(not said)".to_owned(),
        };
        outln!("  server:       {server}")?;
        outln!("  auth:         {}", t.auth)?;
        outln!("  capabilities: {}", capabilities(t.capabilities.as_ref()))?;
        if let Some(c) = &t.counts {
            outln!(
                "  offers:       {} tools, {} resources, {} resource templates, {} prompts",
                c.tools,
                c.resources,
                c.resource_templates,
                c.prompts
            )?;
        }
    }
    Ok(())
}

/// `tools (listChanged), resources (subscribe, listChanged), logging` from a capabilities
/// object: each declared capability with the flags it set.
fn capabilities(caps: Option<&Value>) -> String {
    let Some(Value::Object(caps)) = caps else { return "(none)".to_owned() };
    if caps.is_empty() {
        return "(none)".to_owned();
    }
    caps.iter()
        .map(|(name, value)| {
            let flags: Vec<&str> = match value {
                Value::Object(m) => {
                    m.iter().filter(|(_, v)| **v != Value::Bool(false)).map(|(k, _)| k.as_str()).collect()
                }
                _ => Vec::new(),
            };
            if flags.is_empty() { name.clone() } else { format!("{name} ({})", flags.join(", ")) }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
