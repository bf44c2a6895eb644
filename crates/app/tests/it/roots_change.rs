//! Roots changed while the studio runs: what changes a server's roots at run time is the
//! user editing its `roots` in the Servers panel (`App::put_server`). The studio's default
//! root (the data folder's `files/`) never changes, and a blueprint's folder is a root only
//! for `mcpflow run`. A changed `roots` is part of a stdio server's approved command line,
//! so the server is approved again and reached anew: the next call starts it with the new
//! roots (no `roots/list_changed` to a process approved for other roots), without
//! restarting the studio. server-everything's `get-roots-list` shows them.

use crate::reference::node_server;
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::{CallRequest, CallTarget};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn roots_call() -> CallRequest {
    CallRequest {
        target: CallTarget::Tool {
            server: Some("everything".to_owned()),
            tool: "get-roots-list".to_owned(),
            args: Default::default(),
        },
        timeout: None,
        cancel: CancellationToken::new(),
        progress: None,
        stack: Vec::new(),
        tasks: Default::default(),
        ask: None,
        sample: None,
        trace: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_a_servers_roots_in_the_studio_reaches_it_without_a_restart() {
    let home = tempfile::tempdir().unwrap();
    let app = App::open(home.path(), AppOptions::default()).unwrap();
    let mut entry = node_server("server-everything", &["stdio"]);
    entry["roots"] = json!(["file:///srv/before"]);
    app.put_server("everything", &entry).unwrap();
    let approved = app.approve_server("everything").unwrap();
    assert!(approved.contains("/srv/before"), "the roots are part of what is approved: {approved}");
    let before = app.pool().call(roots_call()).await.unwrap();
    let before = before["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(before.contains("URI: file:///srv/before\n"), "{before}");

    entry["roots"] = json!(["file:///srv/after", "file:///srv/also"]);
    app.put_server("everything", &entry).unwrap();
    // Other roots: another command line to approve, as the Servers panel asks.
    let refused = app.pool().call(roots_call()).await.unwrap_err();
    assert_eq!(refused.code(), "SERVER_NOT_APPROVED", "{refused}");
    app.approve_server("everything").unwrap();
    let after = app.pool().call(roots_call()).await.unwrap();
    let after = after["content"][0]["text"].as_str().unwrap();
    assert!(after.contains("(2 total)") && after.contains("URI: file:///srv/after\n"), "{after}");
    assert!(!after.contains("/srv/before"), "{after}");
    app.shutdown().await;
}
