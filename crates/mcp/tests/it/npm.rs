//! The pool against the MCP reference servers from npm (server-everything, -memory,
//! -filesystem), started with `node` from `node_modules`, over stdio and streamable HTTP.

use crate::support::{args, config, configs, eventually, node, npm_server, pool, request, start_listening, text, tool};
use mcpflow_engine::{CallTarget, Progress};
use mcpflow_mcp::{Approvals, Pool, PoolOptions};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[tokio::test]
async fn server_everything_tools_resources_prompts_and_progress() {
    let pool = pool(vec![("everything", node("server-everything", &["stdio"]))]);
    let discovery = pool.discover("everything").await.unwrap();
    assert!(discovery.tool("echo").is_some() && discovery.tool("get-sum").is_some());
    assert!(!discovery.resources.is_empty() && !discovery.prompts.is_empty());

    let echo = pool.call(tool(Some("everything"), "echo", json!({"message": "hi"}))).await.unwrap();
    assert_eq!(text(&echo), "Echo: hi");
    let sum = pool.call(tool(None, "get-sum", json!({"a": 2, "b": 40}))).await.unwrap();
    assert!(text(&sum).contains("42"), "{sum}");

    // Arguments that break the tool's input schema are refused before the call is sent,
    // naming each argument by its pointer (the server would answer `isError: true`).
    let rejected = pool.call(tool(Some("everything"), "get-sum", json!({"a": {"n": 2}, "b": 40}))).await.unwrap_err();
    assert_eq!(rejected.code(), "ARGS_INVALID");
    assert!(rejected.to_string().starts_with("/a: expected number, got object"), "{rejected}");

    let uri = discovery.resources[0].uri.clone();
    let read =
        pool.call(request(CallTarget::Resource { server: "everything".into(), uri: uri.clone() })).await.unwrap();
    assert_eq!(read["contents"][0]["uri"], uri);

    let simple = pool
        .call(request(CallTarget::Prompt {
            server: "everything".into(),
            prompt: "simple-prompt".into(),
            args: args(json!({})),
        }))
        .await
        .unwrap();
    assert_eq!(simple["messages"][0]["content"]["text"], "This is a simple prompt without arguments.");
    let with_args = pool
        .call(request(CallTarget::Prompt {
            server: "everything".into(),
            prompt: "args-prompt".into(),
            args: args(json!({"city": "Lyon", "state": "ARA"})),
        }))
        .await
        .unwrap();
    assert!(with_args["messages"][0]["content"]["text"].as_str().unwrap().contains("Lyon"), "{with_args}");

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let mut long = tool(Some("everything"), "trigger-long-running-operation", json!({"duration": 0.3, "steps": 3}));
    long.progress = Some(Arc::new(move |p| sink.lock().unwrap().push(p)));
    let done = pool.call(long).await.unwrap();
    assert!(text(&done).contains("completed"), "{done}");
    assert!(eventually(Duration::from_secs(2), || seen.lock().unwrap().len() == 3).await, "{:?}", seen.lock().unwrap());
    assert!(seen.lock().unwrap().iter().all(|p| p.total == Some(3.0)));
    pool.shutdown().await;
}

#[tokio::test]
async fn server_everything_resources_list_changed_refreshes_the_list() {
    let pool = pool(vec![("everything", node("server-everything", &["stdio"]))]);
    let before = pool.discover("everything").await.unwrap();
    let uri = "demo://resource/session/mcpflow.txt.gz";
    assert!(before.resources.iter().all(|r| r.uri != uri));
    // Registers a session resource, which makes the server send
    // `notifications/resources/list_changed`.
    let result = pool
        .call(tool(
            Some("everything"),
            "gzip-file-as-resource",
            json!({"name": "mcpflow.txt.gz", "data": "data:text/plain,hello", "outputType": "resourceLink"}),
        ))
        .await
        .unwrap();
    assert_eq!(result["content"][0]["uri"], uri, "{result}");
    let mut listed = false;
    for _ in 0..100 {
        if pool.discover("everything").await.unwrap().resources.iter().any(|r| r.uri == uri) {
            listed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(listed, "the new resource was not listed after list_changed");
    pool.shutdown().await;
}

#[tokio::test]
async fn server_memory_keeps_a_graph_of_entities_and_relations() {
    let dir = tempfile::tempdir().unwrap();
    let mut memory = node("server-memory", &[]);
    memory.env.insert("MEMORY_FILE_PATH".to_owned(), json!(dir.path().join("memory.jsonl").display().to_string()));
    let pool = pool(vec![("memory", memory)]);
    pool.call(tool(
        Some("memory"),
        "create_entities",
        json!({"entities": [
            {"name": "mcpflow", "entityType": "project", "observations": ["runs blueprints"]},
            {"name": "rmcp", "entityType": "library", "observations": []},
        ]}),
    ))
    .await
    .unwrap();
    pool.call(tool(
        Some("memory"),
        "create_relations",
        json!({"relations": [{"from": "mcpflow", "to": "rmcp", "relationType": "uses"}]}),
    ))
    .await
    .unwrap();
    let graph = pool.call(tool(Some("memory"), "read_graph", json!({}))).await.unwrap();
    let graph = match graph.get("structuredContent") {
        Some(structured) => structured.clone(),
        None => serde_json::from_str(text(&graph)).unwrap(),
    };
    let mut names: Vec<&str> =
        graph["entities"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["mcpflow", "rmcp"]);
    assert_eq!(graph["relations"][0]["relationType"], "uses");
    pool.shutdown().await;
}

#[tokio::test]
async fn server_filesystem_writes_reads_and_lists_a_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let file = root.join("note.txt");
    let pool = pool(vec![("fs", node("server-filesystem", &[root.to_str().unwrap()]))]);
    pool.call(tool(Some("fs"), "write_file", json!({"path": file, "content": "written by mcpflow"}))).await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "written by mcpflow");
    let read = pool.call(tool(Some("fs"), "read_text_file", json!({"path": file}))).await.unwrap();
    assert_eq!(text(&read), "written by mcpflow");
    let listing = pool.call(tool(Some("fs"), "list_directory", json!({"path": root}))).await.unwrap();
    assert!(text(&listing).contains("[FILE] note.txt"), "{listing}");
    let outside = pool.call(tool(Some("fs"), "read_text_file", json!({"path": "/etc/hostname"}))).await.unwrap();
    assert_eq!(outside["isError"], true, "access outside the allowed directory is refused: {outside}");
    pool.shutdown().await;
}

/// server-everything in its streamable HTTP mode, on a free port; killed when dropped.
async fn everything_over_http() -> (tokio::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = tokio::process::Command::new("node");
    command.arg(npm_server("server-everything")).arg("streamableHttp").env("PORT", port.to_string());
    (start_listening(command, "listening on port").await, port)
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let (mut server, port) = everything_over_http().await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    // HTTP servers start no process: no approval is needed.
    let pool = Pool::new(
        configs(vec![("web", config(json!({"type": "http", "url": url, "headers": {"X-Test": "mcpflow"}})))]),
        Approvals::new(),
        PoolOptions::default(),
    );
    let echo = pool.call(tool(Some("web"), "echo", json!({"message": "over http"}))).await.unwrap();
    assert_eq!(text(&echo), "Echo: over http");
    // A 2025-11-25 server over HTTP: it refused `server/discover` (HTTP 400, no session);
    // the pool fell back to `initialize` and recorded that era.
    let era = pool.discover("web").await.unwrap().protocol_version.clone();
    assert_eq!(era.as_deref(), Some("2025-11-25"));
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let mut long = tool(Some("web"), "trigger-long-running-operation", json!({"duration": 0.2, "steps": 2}));
    long.progress = Some(Arc::new(move |p| sink.lock().unwrap().push(p)));
    pool.call(long).await.unwrap();
    assert!(eventually(Duration::from_secs(2), || seen.lock().unwrap().len() == 2).await);
    let mut hang = tool(Some("web"), "trigger-long-running-operation", json!({"duration": 30, "steps": 1}));
    hang.timeout = Some(Duration::from_millis(300));
    assert_eq!(pool.call(hang).await.unwrap_err().code(), "CALL_TIMEOUT");
    pool.shutdown().await;
    server.kill().await.unwrap();

    let down = Pool::new(
        configs(vec![("web", config(json!({"url": format!("http://127.0.0.1:{port}/mcp")})))]),
        Approvals::new(),
        PoolOptions::default().with_connect_timeout(Duration::from_secs(5)),
    );
    let err = down.call(tool(Some("web"), "echo", json!({"message": "x"}))).await.unwrap_err();
    assert_eq!(err.code(), "SERVER_START_FAILED", "{err}");
    down.shutdown().await;
}
