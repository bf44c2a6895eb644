//! Configured servers through the app: add, approve (kept in the store), test a
//! connection; an unapproved command does not start.

use mcpflow_app::{App, AppOptions};
use mcpflow_store::Store;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_needs_approval_to_start_and_the_approval_outlives_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open(dir.path()).unwrap().store, Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"], "env": { "TOKEN": "${env:PATH}" } })).unwrap();

    let view = &app.servers()[0];
    assert_eq!((view.name.as_str(), view.transport, view.approved), ("echo", "stdio", false));
    let command = view.command.clone().unwrap();
    assert!(command.ends_with("echo (env: TOKEN)"), "the exact command line, env names only: {command}");
    let refused = app.test_server("echo").await.unwrap_err();
    assert_eq!(refused.code(), "SERVER_NOT_APPROVED", "{refused}");

    assert_eq!(app.approve_server("echo").unwrap(), command);
    let tools = app.test_server("echo").await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo" && t.server == "echo"), "{tools:?}");
    app.shutdown().await;
    drop(app);

    let again = App::with_store(Store::open(dir.path()).unwrap().store, Vec::new(), AppOptions::default()).unwrap();
    assert!(again.servers()[0].approved, "the consent is kept in the store");
    assert_eq!(again.store().servers().unwrap()[0].1["env"]["TOKEN"], "${env:PATH}", "stored unresolved");
    let err = again.approve_server("nope").unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_FOUND");
    again.shutdown().await;
}
