//! `workflows/paginate.blueprint.json` against cluster-sim: an `until` loop that follows
//! the `continue` token of the previous page (`last`) walks the whole list, every object
//! exactly once, over more than 10 pages.

use crate::{repo, stderr};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::process::Command;

fn run(dir: &std::path::Path, blueprint: &str, inputs: Value) -> Value {
    let file = dir.join("inputs.json");
    std::fs::write(&file, inputs.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", blueprint, "--servers", "demo/servers.json", "--allow-all-servers", "--json", "-q"])
        .args(["--inputs", &file.display().to_string()])
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn keys(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["metadata"]["namespace"].as_str().unwrap_or("-"),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn paginate_walks_every_page_and_returns_every_object_exactly_once() {
    let _ = mcpflow_testkit::binary();
    let dir = tempfile::tempdir().unwrap();
    // The whole list in one call (no `limit`), to compare with.
    let whole = dir.path().join("whole.json");
    std::fs::write(
        &whole,
        json!({ "blueprint": 1, "id": "whole", "steps": [
            { "id": "list", "kind": "tool", "server": "cluster", "tool": "list_resources", "args": { "kind": "pods" } }
        ], "output": "{{ list.items }}" })
        .to_string(),
    )
    .unwrap();
    let all = run(dir.path(), &whole.display().to_string(), json!({}));
    let expected = keys(&all["output"]);

    let env = run(dir.path(), "workflows/paginate.blueprint.json", json!({ "kind": "pods", "limit": 20 }));
    assert_eq!(env["status"], "succeeded", "{}", env["errors"]);
    let pages = env["output"]["pages"].as_u64().unwrap();
    assert!(pages > 10, "{pages} pages");
    assert_eq!(pages, (expected.len() as u64).div_ceil(20), "one iteration per page, none after the last");
    let got = keys(&env["output"]["items"]);
    let unique: BTreeSet<&String> = got.iter().collect();
    assert_eq!(unique.len(), got.len(), "an object came twice");
    assert_eq!(got, expected, "every object, in the server's order");
}
