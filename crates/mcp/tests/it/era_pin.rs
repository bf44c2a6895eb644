//! An entry's `"protocol"` pins the era: `2025-11-25` is spoken with `initialize` alone (no
//! `server/discover` probe), `2026-07-28` with `server/discover` alone (no fallback: a
//! server that does not speak it fails, saying so).

use crate::support::{config, node, pool, python_server, text, tool};
use mcpflow_blueprint::ServerConfig;
use mcpflow_mcp::ServerConfigs;
use serde_json::{Value, json};

fn pinned(mut server: ServerConfig, era: &str) -> ServerConfig {
    let mut value = serde_json::to_value(&server).unwrap();
    value["protocol"] = Value::from(era);
    server = serde_json::from_value(value).unwrap();
    server
}

#[tokio::test]
async fn a_server_of_both_eras_pinned_to_2025_11_25_is_spoken_to_in_2025_11_25() {
    // The Python SDK 2.3.0 answers both; unpinned it is reached in 2026-07-28 (eras.rs).
    let pool = pool(vec![("modern", pinned(python_server("modern_py.py"), "2025-11-25"))]);
    let era = pool.call(tool(Some("modern"), "era", json!({}))).await.unwrap();
    assert_eq!(text(&era), "2025-11-25", "the server says which era the request came in");
    assert_eq!(pool.discover("modern").await.unwrap().protocol_version.as_deref(), Some("2025-11-25"));
    pool.shutdown().await;
}

#[tokio::test]
async fn a_pinned_2025_11_25_server_gets_no_server_discover() {
    // A scripted 2025-11-25 server that quits when its first message is a probe.
    let script = r#"
read -r first
case "$first" in *server/discover*) echo "probed: $first" >&2; exit 7;; esac
printf '%s\n' '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}'
read -r initialized
read -r list
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"answer","inputSchema":{"type":"object"}}]}}'
read -r call
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"no probe"}]}}'
read -r rest
"#;
    let pool = pool(vec![("old", pinned(config(json!({"command": "sh", "args": ["-c", script]})), "2025-11-25"))]);
    let answer = pool.call(tool(Some("old"), "answer", json!({}))).await.unwrap();
    assert_eq!(text(&answer), "no probe");
    pool.shutdown().await;
}

#[tokio::test]
async fn a_2025_11_25_server_pinned_to_2026_07_28_fails_at_once_saying_so() {
    let pool = pool(vec![("everything", pinned(node("server-everything", &["stdio"]), "2026-07-28"))]);
    let error = pool.discover("everything").await.unwrap_err();
    pool.shutdown().await;
    assert_eq!(error.code(), "SERVER_START_FAILED", "{error}");
    let message = error.to_string();
    assert!(message.contains("does not speak MCP 2026-07-28"), "{message}");
    assert!(message.contains(r#""protocol": "2025-11-25""#), "says what to do: {message}");
    // No wait: the server's own refusal ended the opening ("Method not found"), not the
    // probe's wait nor the connect timeout (both say "no answer … within").
    assert!(message.contains("refused `server/discover`") && !message.contains("no answer"), "{message}");
    assert!(message.to_lowercase().contains("method not found"), "{message}");
}

#[tokio::test]
async fn a_2026_07_28_server_pinned_to_2026_07_28_is_reached() {
    let pool = pool(vec![("modern", pinned(python_server("modern_py.py"), "2026-07-28"))]);
    let era = pool.call(tool(Some("modern"), "era", json!({}))).await.unwrap();
    assert_eq!(text(&era), "2026-07-28");
    pool.shutdown().await;
}

#[test]
fn an_unknown_era_in_a_servers_file_is_refused_naming_the_two() {
    let text = json!({ "mcpServers": { "s": { "command": "x", "protocol": "2024-11-05" } } }).to_string();
    let error = ServerConfigs::parse(&text, "servers.json").unwrap_err().to_string();
    assert!(error.contains("`protocol`") && error.contains("2025-11-25") && error.contains("2026-07-28"), "{error}");
    let ok = json!({ "mcpServers": { "s": { "command": "x", "protocol": "2026-07-28" } } }).to_string();
    let configs = ServerConfigs::parse(&ok, "servers.json").unwrap();
    let Some(mcpflow_mcp::ServerEntry::Config(entry)) = configs.get("s") else { panic!("no entry") };
    assert_eq!(entry.protocol, Some(mcpflow_blueprint::ProtocolEra::V2026_07_28));
}
