//! A server that quotes its secret back in an error answer: the launch's `${env:NAME}`
//! values are hidden from the call's error (`pool/hidden.rs`), as from every other
//! message built from the launch.

use crate::support::{config, configs, tool};
use mcpflow_mcp::{Approvals, EnvLookup, Pool, PoolOptions};
use serde_json::json;
use std::sync::Arc;

#[tokio::test]
async fn a_secret_quoted_back_in_an_error_answer_is_hidden() {
    // A 2025-11-25 server scripted in `sh`, given the token as its argument, that refuses
    // the call quoting it.
    let script = r#"
read -r discover
printf '%s\n' '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}'
read -r init
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"quoting","version":"1"}}}'
read -r initialized
read -r list
printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"answer","inputSchema":{"type":"object"}}]}}'
read -r call
printf '{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"token %s rejected","data":"sent %s"}}\n' "$1" "$1"
read -r rest
"#;
    let env: EnvLookup = Arc::new(|name: &str| (name == "TOKEN").then(|| "tok-4711-secret".to_owned()));
    let server = config(json!({"command": "sh", "args": ["-c", script, "sh", "${env:TOKEN}"]}));
    let pool =
        Pool::new(configs(vec![("quoting", server)]), Approvals::allow_all(), PoolOptions::default().with_env(env));
    let error = pool.call(tool(Some("quoting"), "answer", json!({}))).await.unwrap_err();
    pool.shutdown().await;
    let message = error.to_string();
    assert!(message.contains("token ${env:TOKEN} rejected"), "{message}");
    assert!(!message.contains("tok-4711-secret"), "{message}");
}
