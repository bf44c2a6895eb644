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

/// Seeds the store if this data folder was never seeded. Returns whether it did.
/// Examples that do not save (which would be a bug in an example) are reported and
/// skipped; the studio opens either way.
pub fn seed(app: &App, home: &Path) -> bool {
    let marker = home.join(MARKER);
    if marker.exists() {
        return false;
    }
    for (name, config) in demo_servers(home) {
        if let Err(e) = app.put_server(name, &config) {
            tracing::warn!("demo server `{name}` was not added: {e}");
        }
    }
    for (file, text) in EXAMPLES {
        let saved = serde_json::from_str::<Value>(text)
            .map_err(|e| e.to_string())
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
