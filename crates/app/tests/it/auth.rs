//! Signing in through the app: a server the open document declares itself is found by
//! the sign-in (as the document's run finds it), and one that needs approval is not
//! contacted before it has it.

use mcpflow_app::auth::LoginOptions;
use mcpflow_app::{App, AppOptions};
use mcpflow_store::Store;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_finds_the_documents_own_server_once_approved() {
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    // Loopback, but it sends a variable: a blueprint's such server needs approval. Port
    // 9 (discard) refuses connections, so once allowed the sign-in fails reaching it.
    let doc = json!({
        "blueprint": 1, "id": "remote-greets",
        "servers": { "remote": { "url": "http://127.0.0.1:9/mcp", "headers": { "X-Key": "${env:PATH}" } } },
        "steps": [{ "id": "hi", "kind": "tool", "server": "remote", "tool": "greet", "args": {} }],
    });
    let options = || LoginOptions { timeout: Duration::from_secs(5), ..LoginOptions::default() };

    // Without the document the name is unknown.
    let err = app.auth_login(None, "remote", options()).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_FOUND", "{err}");
    // With it, the server is found, and refused until approved.
    let err = app.auth_login(Some(&doc), "remote", options()).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_APPROVED", "{err}");
    app.approve_run_server(&doc, "remote").unwrap();
    let err = app.auth_login(Some(&doc), "remote", options()).await.unwrap_err();
    assert_eq!(err.code(), "AUTH_FAILED", "{err}");
    assert!(err.to_string().contains("cannot reach http://127.0.0.1:9/mcp"), "{err}");
    app.shutdown().await;
}
