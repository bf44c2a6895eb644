//! No file of a crate imports, through `crate::` paths, a file that imports it back: the
//! arrows inside each crate run one way, as ARCHITECTURE.md says. The circles that are
//! left sit inside one concern and are listed here by name, so a new one fails the test.

use crate::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Circles kept on purpose, each inside one concern: the engine's own event, people,
/// sampling, server and telemetry types; the pool and the catalog it lists; the CLI's
/// front door (`--locked` checks the lock while validating; the run, its telemetry and
/// the service it goes through).
const KEPT: &[&str] = &[
    "cli: app queue run telemetry through",
    "cli: lock validate",
    "engine: event people sampling servers telemetry",
    "mcp: catalog pool",
];

#[test]
fn no_crate_has_a_file_import_circle_but_those_kept_on_purpose() {
    let root = repo();
    let mut found = BTreeSet::new();
    let mut crates: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path().join("src")))
        .collect();
    crates.push(("src-tauri".to_owned(), root.join("src-tauri/src")));
    for (name, src) in crates.into_iter().filter(|(_, src)| src.is_dir()) {
        for circle in circles(&imports(&src)) {
            found.insert(format!("{name}: {}", circle.join(" ")));
        }
    }
    let kept: BTreeSet<String> = KEPT.iter().map(|s| (*s).to_owned()).collect();
    let new: Vec<&String> = found.difference(&kept).collect();
    assert!(new.is_empty(), "files that import each other in a circle (move the shared piece down): {new:?}");
    let gone: Vec<&String> = kept.difference(&found).collect();
    assert!(gone.is_empty(), "circles listed in KEPT are gone: take them out of the list: {gone:?}");
}

/// Each file's module path (`runs::active` for `runs/active.rs`) and the modules it names
/// through `crate::` outside comments.
fn imports(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    walk(src, src, &mut files);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    files
        .into_iter()
        .map(|(module, text)| {
            let named = crate_paths(&text)
                .into_iter()
                .filter_map(|path| longest_module(&path, &modules))
                .filter(|m| *m != module && !m.is_empty())
                .collect();
            (module, named)
        })
        .collect()
}

fn walk(src: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(src, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if matches!(parts.last().map(String::as_str), Some("lib" | "main" | "mod")) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code: String =
                text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
            files.insert(parts.join("::"), code);
        }
    }
}

/// Every `crate::a::b` path, with `crate::{a, b::c}` groups spread out (one level).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or_default();
            paths.extend(inner.split(',').map(segments));
        } else {
            paths.push(segments(rest));
        }
    }
    paths
}

fn segments(text: &str) -> Vec<String> {
    let path: String = text.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
    path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// The longest prefix of `path` that is a file's module.
fn longest_module(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
    (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|m| modules.contains(m))
}

/// The groups of two or more files that reach each other, each sorted.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for next in graph.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut groups = BTreeSet::new();
    for (m, from_m) in &reached {
        let group: Vec<String> = std::iter::once((*m).clone())
            .chain(from_m.iter().filter(|o| reached.get(o).is_some_and(|r| r.contains(*m)) && *o != *m).cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}
