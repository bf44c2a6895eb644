//! The npm reference servers, started from node_modules (never fetched at run time).

use crate::{repo, run, setup};
use mcpflow_engine::RunStatus;
use serde_json::json;

pub fn node_server(package: &str, args: &[&str]) -> serde_json::Value {
    let entry = repo().join("node_modules/@modelcontextprotocol").join(package).join("dist/index.js");
    assert!(entry.exists(), "{} is missing: run `npm ci` at the repository root", entry.display());
    let mut all = vec![entry.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    json!({ "command": "node", "args": all })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_everything_tour_example_runs_against_server_everything() {
    let s = setup(json!({ "everything": node_server("server-everything", &["stdio"]) }));
    let bp: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join("workflows/everything-tour.blueprint.json")).unwrap())
            .unwrap();
    let mut bp = bp;
    bp.as_object_mut().unwrap().remove("servers");
    let ran = run(&s, bp, &[]).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:#?}", ran.envelope.errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_memory_builds_an_entity_graph() {
    let s = setup(json!({}));
    let memory_file = s.dir.path().join("memory.jsonl");
    let mut memory = node_server("server-memory", &[]);
    memory["env"] = json!({ "MEMORY_FILE_PATH": memory_file.display().to_string() });
    let s = setup(json!({ "memory": memory }));
    let ran = run(&s, json!({ "blueprint": 1, "id": "graph", "steps": [
        { "id": "ents", "kind": "tool", "server": "memory", "tool": "create_entities", "args": { "entities": [
            { "name": "node/a", "entityType": "Node", "observations": ["zone: 1"] },
            { "name": "pod/x", "entityType": "Pod", "observations": [] }
        ] } },
        { "id": "rels", "kind": "tool", "server": "memory", "tool": "create_relations", "args": { "relations": [
            { "from": "pod/x", "to": "node/a", "relationType": "runs_on" }
        ] } },
        { "id": "graph", "kind": "tool", "server": "memory", "tool": "read_graph" },
        { "id": "count", "kind": "transform", "value": { "entities": "{{ length(graph.entities) }}", "relations": "{{ length(graph.relations) }}" } }
    ] }), &[]).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:#?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output, json!({ "entities": 2, "relations": 1 }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_reads_and_writes_in_a_temp_dir() {
    let root = tempfile::tempdir().unwrap();
    let root_path = root.path().canonicalize().unwrap().display().to_string();
    // `"roots": []`: server-filesystem keeps the folder of its command line (the roots a
    // client gives replace it; by default, the blueprint's folder: see `roots.rs`).
    let mut fs = node_server("server-filesystem", &[&root_path]);
    fs["roots"] = json!([]);
    let s = setup(json!({ "fs": fs }));
    let file = format!("{root_path}/note.txt");
    let ran = run(&s, json!({ "blueprint": 1, "id": "fs", "steps": [
        { "id": "write", "kind": "tool", "server": "fs", "tool": "write_file", "args": { "path": file, "content": "hello from mcpflow" } },
        { "id": "read", "kind": "tool", "server": "fs", "tool": "read_text_file", "args": { "path": file } }
    ] }), &[]).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:#?}", ran.envelope.errors);
    assert_eq!(std::fs::read_to_string(root.path().join("note.txt")).unwrap(), "hello from mcpflow");
    let out = ran.envelope.output.to_string();
    assert!(out.contains("hello from mcpflow"), "{out}");
}
