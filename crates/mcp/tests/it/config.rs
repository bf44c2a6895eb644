//! Configs and consent end to end: an `mcpServers` file merged with a blueprint's
//! servers, `${env:NAME}` resolved only when a server starts, and the consent gate.

use crate::support::{config, configs, eventually, testkit, text, tool};
use indexmap::IndexMap;
use mcpflow_mcp::{Approvals, CommandLine, EnvLookup, LogStream, Pool, PoolOptions, ServerConfigs};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// `sh -c 'touch MARKER; exec testkit echo'`: a server that proves it was started.
fn marking_server(marker: &std::path::Path) -> mcpflow_blueprint::ServerConfig {
    let script = format!("touch '{}'; exec \"$0\" echo", marker.display());
    config(json!({"command": "sh", "args": ["-c", script, mcpflow_testkit::binary()]}))
}

#[tokio::test]
async fn an_unapproved_command_is_refused_with_its_exact_command_line_and_never_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let server = marking_server(&marker);
    let line = CommandLine::of("inventory", &server).unwrap();
    // An approved server beside it, started after the refusal: it marks the moment after.
    let witnessed = dir.path().join("witness-started");
    let witness = marking_server(&witnessed);
    let approvals = Approvals::from_hashes([CommandLine::of("witness", &witness).unwrap().hash()]);
    let pool = Pool::new(
        configs(vec![("inventory", server.clone()), ("witness", witness)]),
        approvals,
        PoolOptions::default(),
    );
    let err = pool.call(tool(Some("inventory"), "echo", json!({"message": "x"}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_APPROVED");
    let message = err.to_string();
    assert!(message.contains(&line.to_string()), "{message}");
    assert!(message.contains("sh -c 'touch"), "{message}");
    assert!(!message.contains("--allow-server"), "the pool gives no front door's advice: {message}");
    assert!(!err.is_transient());
    assert_eq!(pool.pid("inventory").await, None);
    // A command started with the refusal would have run its `touch` by the time another
    // one was started, answered its handshake and a call; shutting down reaps the rest.
    let ok = pool.call(tool(Some("witness"), "echo", json!({"message": "after"}))).await.unwrap();
    assert_eq!(text(&ok), "after");
    assert!(witnessed.exists());
    pool.shutdown().await;
    assert!(!marker.exists(), "nothing may run before approval");

    // Approved by hash (as the store keeps it), the same command starts.
    let approvals = Approvals::from_hashes([line.hash()]);
    let pool = Pool::new(configs(vec![("inventory", server)]), approvals, PoolOptions::default());
    let ok = pool.call(tool(Some("inventory"), "echo", json!({"message": "now"}))).await.unwrap();
    assert_eq!(text(&ok), "now");
    assert!(marker.exists());
    pool.shutdown().await;
}

#[tokio::test]
async fn approving_a_server_by_name_does_not_approve_a_changed_command() {
    let mut original = ServerConfigs::new();
    original.insert("echo", testkit("echo"));
    let mut approvals = Approvals::new();
    approvals.approve_server(&original, "echo").unwrap();
    let mut changed = testkit("echo");
    changed.args.push("--extra".to_owned());
    let pool = Pool::new(configs(vec![("echo", changed)]), approvals.clone(), PoolOptions::default());
    let err = pool.call(tool(Some("echo"), "echo", json!({"message": "x"}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_APPROVED");
    assert!(err.to_string().contains("echo --extra"), "{err}");
    pool.shutdown().await;
    let pool = Pool::new(original, approvals, PoolOptions::default());
    assert_eq!(text(&pool.call(tool(Some("echo"), "echo", json!({"message": "y"}))).await.unwrap()), "y");
    pool.shutdown().await;
}

#[tokio::test]
async fn env_references_are_resolved_when_the_server_starts() {
    let env: EnvLookup = Arc::new(|name: &str| match name {
        "FIXTURE" => Some("echo".to_owned()),
        "GREETING" => Some("hello from the env".to_owned()),
        _ => None,
    });
    let server = config(json!({
        "command": "sh",
        "args": ["-c", "echo \"$GREETING\" >&2; echo \"${#GREETING} bytes\" >&2; exec \"$0\" \"$1\"", mcpflow_testkit::binary(), "${env:FIXTURE}"],
        "env": {"GREETING": "${env:GREETING}"},
    }));
    let (log, mut lines) = tokio::sync::mpsc::channel(1024);
    let configs = configs(vec![("echo", server)]);
    // Kept unresolved in the configs: nothing resolved is stored.
    let Some(mcpflow_mcp::ServerEntry::Config(kept)) = configs.get("echo") else { panic!() };
    assert_eq!(kept.env["GREETING"], "${env:GREETING}");
    let pool = Pool::new(configs, Approvals::allow_all(), PoolOptions::default().with_env(env).with_log(log));
    assert_eq!(text(&pool.call(tool(Some("echo"), "echo", json!({"message": "ok"}))).await.unwrap()), "ok");
    let mut seen = Vec::new();
    let found = eventually(Duration::from_secs(30), || {
        seen.extend(std::iter::from_fn(|| lines.try_recv().ok()));
        seen.iter().any(|l| l.stream == LogStream::Stderr && l.line == "18 bytes")
    })
    .await;
    // The process got the value (18 bytes of it); the log shows it as configured, since a
    // resolved `${env:NAME}` never appears in a log line.
    assert!(found, "{seen:?}");
    assert!(seen.iter().any(|l| l.line == "${env:GREETING}"), "{seen:?}");
    assert!(!seen.iter().any(|l| l.line.contains("hello from the env")), "{seen:?}");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_missing_env_variable_is_named_and_nothing_starts() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let mut server = marking_server(&marker);
    server.env.insert("TOKEN".to_owned(), json!("${env:MCPFLOW_TEST_UNSET_TOKEN}"));
    let pool = Pool::new(
        configs(vec![("inventory", server)]),
        Approvals::allow_all(),
        PoolOptions::default().with_env(Arc::new(|_: &str| None)),
    );
    let err = pool.call(tool(Some("inventory"), "echo", json!({"message": "x"}))).await.unwrap_err();
    assert_eq!(err.code(), "ENV_VAR_MISSING");
    assert!(err.to_string().contains("`MCPFLOW_TEST_UNSET_TOKEN`") && err.to_string().contains("env.TOKEN"), "{err}");
    assert!(!marker.exists());
    pool.shutdown().await;
}

#[tokio::test]
async fn a_claude_desktop_file_merged_with_a_blueprint_starts_the_blueprints_entry() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude_desktop_config.json");
    let binary = mcpflow_testkit::binary();
    let text_config = json!({
        "globalShortcut": "",
        "mcpServers": {
            "tools": {"command": binary, "args": ["faulty"], "autoApprove": ["echo"]},
            "off": {"command": "/nonexistent", "disabled": true},
        }
    });
    std::fs::write(&file, text_config.to_string()).unwrap();
    let app = ServerConfigs::read(&file).unwrap();
    assert_eq!(app.names().collect::<Vec<_>>(), ["tools"]);
    let mut own = IndexMap::new();
    own.insert("tools".to_owned(), testkit("echo"));
    let merged = app.with_blueprint(&own);
    let pool = Pool::new(merged, Approvals::allow_all(), PoolOptions::default());
    // The blueprint's echo fixture answers, not the file's faulty one.
    let tools = pool.discover("tools").await.unwrap();
    assert!(tools.tool("multiply").is_some() && tools.tool("hang").is_none());
    assert_eq!(tools.server_name.as_deref(), Some("mcpflow-testkit-echo"));
    pool.shutdown().await;
}
