//! First start: the store gets the example blueprints and the demo servers, so a new
//! user opens the studio onto something that runs. Seeding happens once per data folder
//! (a marker file records it), so deleting the examples later does not bring them back.
//! It starts nothing and approves nothing: the demo servers ask for consent on first use
//! like any other.

use mcpflow_app::App;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/examples.rs"));

/// The blueprint the studio opens on first start.
pub const DEMO: &str = "cmdb-sync-sketch";

const MARKER: &str = "seeded";

/// Where the demo servers live: the repository this studio was built from, unless
/// `MCPFLOW_DEMO_ROOT` says otherwise.
fn demo_root() -> PathBuf {
    if let Some(root) = std::env::var_os("MCPFLOW_DEMO_ROOT").filter(|r| !r.is_empty()) {
        return PathBuf::from(root);
    }
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    built_in.canonicalize().unwrap_or(built_in)
}

/// The demo servers as `mcpServers` entries with absolute paths.
pub fn demo_servers(home: &Path) -> Vec<(&'static str, Value)> {
    let root = demo_root();
    let testkit = root.join("target/debug/mcpflow-testkit").display().to_string();
    let npm = |package: &str| {
        root.join("node_modules/@modelcontextprotocol").join(package).join("dist/index.js").display().to_string()
    };
    vec![
        ("cluster", json!({ "command": testkit, "args": ["cluster-sim"] })),
        (
            "memory",
            json!({
                "command": "node",
                "args": [npm("server-memory")],
                "env": { "MEMORY_FILE_PATH": home.join("demo-memory.json").display().to_string() },
                "max_concurrency": 1
            }),
        ),
        ("everything", json!({ "command": "node", "args": [npm("server-everything"), "stdio"] })),
        ("echo", json!({ "command": testkit, "args": ["echo"] })),
        ("faulty", json!({ "command": testkit, "args": ["faulty"] })),
    ]
}

/// An example as the studio stores it: the entries of its own `servers` that a seeded
/// demo server provides are dropped, so its steps use the seeded server by name. The
/// files in `workflows/` keep them (with paths relative to the repository) so that
/// `mcpflow run workflows/….json` works from the repository as the README shows; the
/// stored copy names no relative path, and runs the same whatever folder the studio was
/// started from. `servers` goes when nothing is left in it.
fn by_name(mut doc: Value, seeded: &[&str]) -> Value {
    if let Some(doc) = doc.as_object_mut() {
        if let Some(Value::Object(own)) = doc.get_mut("servers") {
            own.retain(|name, _| !seeded.contains(&name.as_str()));
        }
        if doc.get("servers").and_then(Value::as_object).is_some_and(serde_json::Map::is_empty) {
            doc.remove("servers");
        }
    }
    doc
}

/// Seeds the store if this data folder was never seeded. Returns whether it did.
/// Examples that do not save (which would be a bug in an example) are reported and
/// skipped; the studio opens either way.
pub fn seed(app: &App, home: &Path) -> bool {
    let marker = home.join(MARKER);
    if marker.exists() {
        return false;
    }
    let servers = demo_servers(home);
    let seeded: Vec<&str> = servers.iter().map(|(name, _)| *name).collect();
    for (name, config) in &servers {
        if let Err(e) = app.put_server(name, config) {
            tracing::warn!("demo server `{name}` was not added: {e}");
        }
    }
    for (file, text) in EXAMPLES {
        let saved = serde_json::from_str::<Value>(text)
            .map_err(|e| e.to_string())
            .map(|doc| by_name(doc, &seeded))
            .and_then(|doc| app.save_blueprint(&doc).map_err(|e| e.to_string()));
        if let Err(e) = saved {
            tracing::warn!("example {file} was not added: {e}");
        }
    }
    if let Err(e) = std::fs::write(&marker, "the examples and demo servers were added once\n") {
        tracing::warn!("could not write {}: {e}", marker.display());
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_examples_name_no_relative_path_and_use_the_seeded_servers_by_name() {
        let home = Path::new("/data");
        let servers = demo_servers(home);
        let seeded: Vec<&str> = servers.iter().map(|(name, _)| *name).collect();
        for (file, text) in EXAMPLES {
            let doc = by_name(serde_json::from_str(text).unwrap(), &seeded);
            let stored = doc.to_string();
            assert!(!stored.contains("node_modules"), "{file}: {stored}");
            assert!(doc.get("servers").is_none(), "{file}: every server it declares is a seeded one");
            assert_eq!(doc["id"], serde_json::from_str::<Value>(text).unwrap()["id"], "{file}: key kept");
        }
        for (name, config) in &servers {
            let text = config.to_string();
            assert!(!text.contains("\"node_modules"), "{name}: absolute paths only: {text}");
        }
        let memory = &servers.iter().find(|(n, _)| *n == "memory").unwrap().1;
        assert_eq!(memory["env"]["MEMORY_FILE_PATH"], "/data/demo-memory.json", "the graph lives in the data folder");
    }
}
