//! First start: the store gets the example blueprints and the demo servers, so a new
//! user opens the studio onto something that runs. Seeding happens once per data folder
//! (a marker file records it), so deleting the examples later does not bring them back.
//! It starts nothing and approves nothing: the demo servers ask for consent on first use
//! like any other. Their tools are in the palette from the start, from the listings
//! shipped in `demo/listings.json`.

use mcpflow_service::api::Api;
use mcpflow_service::api::dto::Json;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/examples.rs"));

/// The blueprint the studio opens on first start.
pub const DEMO: &str = "cmdb-sync-sketch";

const MARKER: &str = "seeded";

/// What the demo servers list (`demo/listings.json`, checked against the live servers by
/// `crates/app/tests/it/servers.rs`): remembered at first start, so their tools are in
/// the palette before anything is approved or started.
const LISTINGS: &str = include_str!("../../demo/listings.json");

/// Where the demo servers are: the fixture servers' binary and the folder holding the
/// npm reference servers.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DemoLayout {
    testkit: PathBuf,
    node_modules: PathBuf,
}

impl DemoLayout {
    /// A repository (the one the studio was built from, or `MCPFLOW_DEMO_ROOT`): the
    /// debug testkit, whatever the studio's profile (scripts/studio.sh builds it), and
    /// the repository's `node_modules`.
    fn repository(root: &Path) -> Self {
        Self { testkit: root.join("target/debug/mcpflow-testkit"), node_modules: root.join("node_modules") }
    }

    /// An installed package (the .deb): `<lib>/mcpflow-testkit` and `<lib>/node_modules`.
    fn installed(lib: &Path) -> Self {
        Self { testkit: lib.join("mcpflow-testkit"), node_modules: lib.join("node_modules") }
    }
}

/// Where the demo servers live: `MCPFLOW_DEMO_ROOT` (a repository) if set, else see
/// [`choose_layout`].
fn demo_layout() -> DemoLayout {
    if let Some(root) = std::env::var_os("MCPFLOW_DEMO_ROOT").filter(|r| !r.is_empty()) {
        return DemoLayout::repository(Path::new(&root));
    }
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repository = built_in.canonicalize().unwrap_or(built_in);
    // OUT_DIR is <target>/<profile>/build/<crate>-<hash>/out: four levels up is the
    // target folder this studio was built into (or <target>/<triple>, inside it).
    let target = Path::new(env!("OUT_DIR")).ancestors().nth(4).unwrap_or(Path::new(env!("OUT_DIR")));
    let exe = std::env::current_exe().ok().map(|exe| exe.canonicalize().unwrap_or(exe));
    choose_layout(exe.as_deref(), target, &repository, |dir| dir.is_dir())
}

/// The installed layout when the running executable is not a build in the repository
/// or in the target folder it was built into, and a `lib/mcpflow` folder exists beside
/// its `bin` (`/usr/bin/mcpflow-studio` → `/usr/lib/mcpflow`; also `/usr/local`, or a
/// package extracted anywhere) or at `/usr/lib/mcpflow`. Otherwise the repository, as
/// for a build started by `scripts/studio.sh` or the end-to-end tests.
fn choose_layout(exe: Option<&Path>, target: &Path, repository: &Path, is_dir: impl Fn(&Path) -> bool) -> DemoLayout {
    let built_here = exe.is_none_or(|exe| exe.starts_with(target) || exe.starts_with(repository));
    if !built_here {
        let beside = exe.and_then(Path::parent).and_then(Path::parent).map(|prefix| prefix.join("lib/mcpflow"));
        let system = PathBuf::from("/usr/lib/mcpflow");
        if let Some(lib) = beside.into_iter().chain([system]).find(|lib| is_dir(lib)) {
            return DemoLayout::installed(&lib);
        }
    }
    DemoLayout::repository(repository)
}

/// The demo servers as `mcpServers` entries with absolute paths.
pub fn demo_servers(home: &Path) -> Vec<(&'static str, Value)> {
    let layout = demo_layout();
    let testkit = layout.testkit.display().to_string();
    let npm = |package: &str| {
        layout.node_modules.join("@modelcontextprotocol").join(package).join("dist/index.js").display().to_string()
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
pub async fn seed(api: &Api, home: &Path) -> bool {
    let marker = home.join(MARKER);
    if marker.exists() {
        return false;
    }
    let servers = demo_servers(home);
    let seeded: Vec<&str> = servers.iter().map(|(name, _)| *name).collect();
    for (name, config) in &servers {
        if let Err(e) = api.put_server((*name).to_owned(), Json(config.clone())).await {
            tracing::warn!("demo server `{name}` was not added: {} [{}]", e.message, e.code);
        }
    }
    let listed = match serde_json::from_str::<Value>(LISTINGS) {
        Ok(doc) => api.remember_shipped_listings(Json(doc)).await.map_err(|e| e.message),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = listed {
        tracing::warn!("the demo servers' listings were not added: {e}");
    }
    for (file, text) in EXAMPLES {
        let saved = match serde_json::from_str::<Value>(text) {
            Ok(doc) => api.save_blueprint(Json(by_name(doc, &seeded))).await.map(drop).map_err(|e| e.message),
            Err(e) => Err(e.to_string()),
        };
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

    const TARGET: &str = "/src/mcpflow/target";
    const REPO: &str = "/src/mcpflow";

    fn layout(exe: Option<&str>, dirs: &[&str]) -> DemoLayout {
        choose_layout(exe.map(Path::new), Path::new(TARGET), Path::new(REPO), |dir| {
            dirs.iter().any(|d| Path::new(d) == dir)
        })
    }

    #[test]
    fn an_installed_studio_uses_the_lib_folder_beside_its_bin() {
        let chosen = layout(Some("/usr/bin/mcpflow-studio"), &["/usr/lib/mcpflow"]);
        assert_eq!(chosen.testkit, Path::new("/usr/lib/mcpflow/mcpflow-testkit"));
        assert_eq!(chosen.node_modules, Path::new("/usr/lib/mcpflow/node_modules"));
        let extracted = layout(Some("/tmp/x/usr/bin/mcpflow-studio"), &["/tmp/x/usr/lib/mcpflow", "/usr/lib/mcpflow"]);
        assert_eq!(extracted, DemoLayout::installed(Path::new("/tmp/x/usr/lib/mcpflow")), "beside the exe comes first");
    }

    #[test]
    fn a_studio_elsewhere_without_a_lib_beside_it_uses_usr_lib_mcpflow() {
        let chosen = layout(Some("/opt/tools/mcpflow-studio"), &["/usr/lib/mcpflow"]);
        assert_eq!(chosen, DemoLayout::installed(Path::new("/usr/lib/mcpflow")));
    }

    #[test]
    fn a_build_in_the_target_folder_uses_the_repository_even_when_a_package_is_installed() {
        let installed = ["/usr/lib/mcpflow", "/src/mcpflow/target/lib/mcpflow"];
        for exe in ["/src/mcpflow/target/debug/mcpflow-studio", "/src/mcpflow/target/release/mcpflow-studio"] {
            let chosen = layout(Some(exe), &installed);
            assert_eq!(chosen.testkit, Path::new("/src/mcpflow/target/debug/mcpflow-testkit"), "{exe}");
            assert_eq!(chosen.node_modules, Path::new("/src/mcpflow/node_modules"), "{exe}");
        }
        let other_target = choose_layout(
            Some(Path::new("/build/out/dist/mcpflow-studio")),
            Path::new("/build/out"),
            Path::new(REPO),
            |_| true,
        );
        assert_eq!(other_target, DemoLayout::repository(Path::new(REPO)), "a CARGO_TARGET_DIR outside the repository");
    }

    #[test]
    fn a_studio_with_no_installed_layout_or_no_known_exe_uses_the_repository() {
        assert_eq!(layout(Some("/opt/tools/mcpflow-studio"), &[]), DemoLayout::repository(Path::new(REPO)));
        assert_eq!(layout(None, &["/usr/lib/mcpflow"]), DemoLayout::repository(Path::new(REPO)));
    }

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
