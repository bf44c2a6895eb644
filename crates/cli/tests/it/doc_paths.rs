//! Every repository path the docs name exists: README.md, ARCHITECTURE.md and
//! docs/*.md, their relative links and every word that starts with a top-level entry
//! of the repository (`crates/…`, `scripts/…`, `SECURITY.md`).

use crate::repo;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level names that are built or installed, never in a fresh clone.
const NOT_IN_A_CLONE: &[&str] = &["target", "node_modules", "test-output", ".venv-test", ".git"];

/// Characters that make a word a pattern or a placeholder rather than one path.
const PLACEHOLDER: &[char] = &['<', '>', '*', '{', '}', '$', '…', '|'];

#[test]
fn every_repository_path_the_docs_name_exists() {
    let root = repo().canonicalize().unwrap();
    let top = top_level_names(&root);
    let mut missing = Vec::new();
    for doc in docs(&root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(&root).unwrap().display().to_string();
        for (line_no, line) in text.lines().enumerate() {
            let at = format!("{name}:{}", line_no + 1);
            for target in link_targets(line) {
                let path = doc.parent().unwrap().join(&target);
                if !path.exists() {
                    missing.push(format!("{at}: link `{target}` (resolved to {})", path.display()));
                }
            }
            for word in path_words(line, &top) {
                if !root.join(&word).exists() {
                    missing.push(format!("{at}: `{word}`"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name paths that are not in the repository (fix the path, or say it without naming a file):\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_path_finder_sees_links_and_paths_in_prose() {
    let top: BTreeSet<String> = ["crates", "README.md"].iter().map(|s| s.to_string()).collect();
    assert_eq!(link_targets("see [servers](docs/servers.md#tasks) and [web](https://x.y/z)"), ["docs/servers.md"]);
    assert_eq!(
        path_words("`crates/app/src/lib.rs:12:3`, crates/cli/src/main.rs::builder() and README.md.", &top),
        ["crates/app/src/lib.rs", "crates/cli/src/main.rs", "README.md"]
    );
    assert!(path_words("`crates/testkit/src/<fixture>.rs` and cratesfoo/bar", &top).is_empty());
}

fn top_level_names(root: &Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !NOT_IN_A_CLONE.contains(&name.as_str()))
        .collect()
}

fn docs(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// The relative targets of the markdown links on a line, without their `#anchor`.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or_default();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            targets.push(target.to_string());
        }
        rest = &rest[end..];
    }
    targets
}

/// The words of a line that name something under a top-level entry of the repository,
/// without a `:line:col` or `::item` after them.
fn path_words(line: &str, top: &BTreeSet<String>) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || "`()[]\"',;".contains(c))
        .filter(|word| !word.contains(PLACEHOLDER))
        .map(|word| word.split(['#']).next().unwrap_or_default())
        .map(|word| word.split("::").next().unwrap_or_default())
        .map(|word| word.split(':').next().unwrap_or_default())
        .map(|word| word.trim_end_matches(['.', '!', '?']))
        .filter(|word| {
            let first = word.split('/').next().unwrap_or_default();
            top.contains(first) && (word.contains('/') || first.contains('.'))
        })
        .map(str::to_string)
        .collect()
}
