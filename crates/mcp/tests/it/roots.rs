//! Roots: the capability the pool declares (roots, nothing it does not handle), the roots
//! `server-everything` gets from a server's `roots` or from the pool's defaults,
//! `roots/list_changed` when the defaults change, and bad `roots` refused before start.

use crate::support::{config, configs, node, npm_server, text, tool};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// server-everything over stdio with `roots` in its entry.
fn everything_with_roots(roots: Value) -> mcpflow_blueprint::ServerConfig {
    config(
        json!({"command": "node", "args": [npm_server("server-everything").display().to_string(), "stdio"], "roots": roots}),
    )
}

async fn roots_text(pool: &Pool, server: &str) -> String {
    text(&pool.call(tool(Some(server), "get-roots-list", json!({}))).await.unwrap()).to_owned()
}

#[tokio::test]
async fn server_everything_lists_get_roots_list_and_gets_the_configured_roots() {
    let pool = Pool::new(
        configs(vec![
            ("own", everything_with_roots(json!(["/srv/my data/./in", "file:///home/me/project"]))),
            ("default", node("server-everything", &["stdio"])),
            ("none", everything_with_roots(json!([]))),
        ]),
        Approvals::allow_all(),
        PoolOptions::default().with_roots(vec![PathBuf::from("/work/flows")]),
    );
    // Registered only for a client that declares roots (TOOL_NOT_FOUND before).
    assert!(pool.discover("own").await.unwrap().tool("get-roots-list").is_some());
    let own = roots_text(&pool, "own").await;
    assert!(own.starts_with("Current MCP Roots (2 total)"), "{own}");
    assert!(own.contains("1. in\n   URI: file:///srv/my%20data/in"), "{own}");
    assert!(own.contains("2. project\n   URI: file:///home/me/project"), "{own}");
    let none = roots_text(&pool, "none").await;
    assert!(none.starts_with("The client supports roots but no roots are currently configured"), "{none}");
    let default = roots_text(&pool, "default").await;
    assert!(default.contains("(1 total)") && default.contains("URI: file:///work/flows"), "{default}");

    // Another folder: the server without roots of its own is told and asks again; those
    // with their own (`[]` too) keep them.
    pool.set_roots(&[PathBuf::from("/work/other"), PathBuf::from("/work/flows")]).await.unwrap();
    let start = Instant::now();
    let mut seen = String::new();
    while start.elapsed() < Duration::from_secs(30) {
        seen = roots_text(&pool, "default").await;
        if seen.contains("(2 total)") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(seen.contains("1. other\n   URI: file:///work/other") && seen.contains("2. flows"), "{seen}");
    assert_eq!(roots_text(&pool, "own").await, own);
    assert_eq!(roots_text(&pool, "none").await, none);
    let refused = pool.set_roots(&[PathBuf::from("relative")]).await.unwrap_err();
    assert_eq!(refused.code(), "CONFIG_INVALID");
    assert!(refused.to_string().contains("relative: not an absolute path"), "{refused}");
    pool.shutdown().await;
}

/// The client capabilities a real process is sent, in each era: `server/discover`
/// carries them in `_meta` (2026-07-28); a server that answers it "method not found" gets
/// the `initialize` of 2025-11-25 with them in `params`. Returns (discover, initialize).
async fn first_requests(dir: &std::path::Path) -> (Value, Value) {
    let discover = dir.join("discover.json");
    let initialize = dir.join("initialize.json");
    let script = r#"head -n 1 > "$0"
printf '%s\n' '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}'
head -n 1 > "$1""#;
    let server = config(
        json!({"command": "sh", "args": ["-c", script, discover.display().to_string(), initialize.display().to_string()]}),
    );
    let pool = Pool::new(
        configs(vec![("recorder", server)]),
        Approvals::allow_all(),
        PoolOptions::default().with_connect_timeout(Duration::from_secs(5)),
    );
    assert_eq!(pool.discover("recorder").await.unwrap_err().code(), "SERVER_START_FAILED");
    pool.shutdown().await;
    let read = |p: &std::path::Path| -> Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    (read(&discover), read(&initialize))
}

#[tokio::test]
async fn the_capabilities_sent_declare_roots_elicitation_sampling_and_client_side_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let (discover, initialize) = first_requests(dir.path()).await;
    assert_eq!(discover["method"], "server/discover", "{discover}");
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    for (sent, capabilities) in [
        (&discover, &discover["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]),
        (&initialize, &initialize["params"]["capabilities"]),
    ] {
        let capabilities = capabilities.as_object().unwrap_or_else(|| panic!("no capabilities in {sent}"));
        assert_eq!(capabilities.get("roots"), Some(&json!({"listChanged": true})), "{sent}");
        // Elicitation is answered (by the run's people, or refused with INPUT_REQUIRED);
        // sampling by the provider, the calling agent or a person, as the server's switch allows.
        assert_eq!(capabilities.get("elicitation"), Some(&json!({"form": {}, "url": {}})), "{sent}");
        assert_eq!(capabilities.get("sampling"), Some(&json!({})), "{sent}");
    }
    // 2025-11-25 over stdio: both may run as client-side tasks (`pool/client_tasks.rs`);
    // 2026-07-28 has no server requests, so nothing to run as a task.
    let tasks = &initialize["params"]["capabilities"]["tasks"];
    assert_eq!(tasks["requests"]["elicitation"]["create"], json!({}), "{initialize}");
    assert_eq!(tasks["requests"]["sampling"]["createMessage"], json!({}), "{initialize}");
    assert_eq!((&tasks["list"], &tasks["cancel"]), (&json!({}), &json!({})), "{initialize}");
    assert!(discover["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].get("tasks").is_none());
}

#[tokio::test]
async fn bad_roots_are_refused_with_the_server_and_the_entry_before_anything_starts() {
    // In an `mcpServers` file: when it is read, at its pointer.
    let text = r#"{"mcpServers": {"files": {"command": "node", "roots": ["/ok", "../up"]}}}"#;
    let err = ServerConfigs::parse(text, "mcp.json").unwrap_err();
    assert_eq!(err.code(), "CONFIG_INVALID");
    let message = err.to_string();
    assert!(
        message
            .starts_with("mcp.json: /mcpServers/files: roots/1 `../up`: not an absolute path; write an absolute path"),
        "{message}"
    );
    for (roots, why) in [
        (json!(["/a/../../etc"]), "roots/0 `/a/../../etc`: `..` goes above the root"),
        (json!("/a"), "`roots` must be an array"),
        (json!([7]), "roots/0 must be a string"),
        (json!(vec!["/a"; 65]), "at most 64"),
    ] {
        let text = json!({"mcpServers": {"files": {"command": "node", "roots": roots}}}).to_string();
        let err = ServerConfigs::parse(&text, "mcp.json").unwrap_err().to_string();
        assert!(err.contains(why), "{err}");
    }

    // In a blueprint's `servers` (read without the check): when the server would start,
    // and it does not start.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let script = format!("touch '{}'", marker.display());
    let server = config(json!({"command": "sh", "args": ["-c", script], "roots": ["https://example.com/x"]}));
    let pool = Pool::new(configs(vec![("remote-root", server)]), Approvals::allow_all(), PoolOptions::default());
    let err = pool.discover("remote-root").await.unwrap_err();
    assert_eq!(err.code(), "SERVER_CONFIG_INVALID");
    assert!(
        err.to_string()
            .starts_with("server `remote-root`: roots/0 `https://example.com/x`: `https:` URIs are not roots"),
        "{err}"
    );
    pool.shutdown().await;
    assert!(!marker.exists(), "nothing may start with bad roots");
}
