//! The default MCP roots of each front door, seen by real servers: the blueprint's folder
//! for `mcpflow run` (server-everything's `get-roots-list`, and server-filesystem, which
//! works where the roots say), the data folder's `files/` for the studio and `serve`.

use crate::reference::node_server;
use crate::{run, setup};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::{CallRequest, CallTarget, RunStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_gives_the_blueprints_folder_as_root_to_servers_that_configure_none() {
    // server-filesystem with no folder on its command line: it may work only in the roots.
    let s = setup(json!({
        "everything": node_server("server-everything", &["stdio"]),
        "fs": node_server("server-filesystem", &[]),
    }));
    let folder = s.dir.path().canonicalize().unwrap();
    let note = folder.join("note.txt");
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "roots", "steps": [
        { "id": "roots", "kind": "tool", "server": "everything", "tool": "get-roots-list" },
        // server-filesystem asks for its roots once the session is up and answers calls
        // meanwhile: its first call may come before it has them (retried).
        { "id": "write", "kind": "tool", "server": "fs", "tool": "write_file",
          "retry": { "attempts": 20, "delay_ms": 100 },
          "args": { "path": note.display().to_string(), "content": "in the blueprint's folder" } },
        { "id": "dirs", "kind": "tool", "server": "fs", "tool": "list_allowed_directories" },
        { "id": "out", "kind": "transform", "value": { "roots": "{{ roots }}", "dirs": "{{ dirs }}" } }
    ] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:#?}", ran.envelope.errors);
    let roots = ran.envelope.output["roots"].as_str().unwrap_or_default();
    assert!(roots.contains("(1 total)"), "{roots}");
    assert!(roots.contains(&format!("URI: file://{}\n", s.dir.path().display())), "{roots}");
    let dirs = ran.envelope.output["dirs"].to_string();
    assert!(dirs.contains(&folder.display().to_string()), "{dirs}");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "in the blueprint's folder");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_studio_and_serve_give_the_data_folders_files_and_a_servers_own_roots_win() {
    let home = tempfile::tempdir().unwrap();
    let servers = home.path().join("servers.json");
    let everything = node_server("server-everything", &["stdio"]);
    let mut own = everything.clone();
    own["roots"] = json!(["file:///srv/shared"]);
    std::fs::write(&servers, json!({ "mcpServers": { "everything": everything, "own": own } }).to_string()).unwrap();
    let options = AppOptions { server_files: vec![servers], allow_all: true, ..AppOptions::default() };
    let app = App::open(home.path(), options).unwrap();
    let files = home.path().join("files");
    assert!(files.is_dir(), "the data folder's files/ is created");
    let roots = |server: &str| CallRequest {
        target: CallTarget::Tool {
            server: Some(server.to_owned()),
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
    };
    let pool = app.pool();
    let default = pool.call(roots("everything")).await.unwrap();
    let default = default["content"][0]["text"].as_str().unwrap();
    assert!(default.contains(&format!("1. files\n   URI: file://{}\n", files.display())), "{default}");
    let own = pool.call(roots("own")).await.unwrap();
    let own = own["content"][0]["text"].as_str().unwrap();
    assert!(own.contains("(1 total)") && own.contains("URI: file:///srv/shared\n"), "{own}");
    pool.shutdown().await;
}
