//! The corpus of wrong blueprints (tests/corpus): each file must produce its expected
//! code at its expected pointer (tests/corpus/expected.json), and the full rendered
//! diagnostics are snapshot-tested. An entry with `"catalog": true` is checked against
//! the servers of tests/fixtures/catalog.json; `"code": "NONE"` expects no diagnostic at
//! all (what must not be claimed, such as a field of an open output schema).

use mcpflow_blueprint::{Options, Report, check_bytes};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(serde::Deserialize)]
struct Expected {
    code: String,
    pointer: String,
    #[serde(default)]
    catalog: bool,
}

/// Checks one corpus file as its entry says.
fn check(bytes: &[u8], want: Option<&Expected>) -> Report {
    let catalog = crate::catalog::catalog();
    let with_catalog = want.is_some_and(|w| w.catalog);
    check_bytes(bytes, &Options { catalog: with_catalog.then_some(&catalog as _), workflows: None })
}

fn corpus_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn expected() -> BTreeMap<String, Expected> {
    let text = std::fs::read_to_string(corpus_dir().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Diagnostics as a stable text: position, level, code, pointer, message, hint.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for d in &report.diagnostics {
        let pos = d.position.map(|p| p.to_string()).unwrap_or_else(|| "-".into());
        out.push_str(&format!("{pos} {}[{}] {}\n  {}\n", d.level, d.code, d.pointer, d.message));
        if let Some(h) = &d.hint {
            out.push_str(&format!("  hint: {h}\n"));
        }
    }
    out
}

#[test]
fn every_corpus_file_has_an_expectation_and_there_are_at_least_forty() {
    let expected = expected();
    let files: Vec<String> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && n != "expected.json")
        .collect();
    assert!(files.len() >= 40, "only {} corpus files", files.len());
    for f in &files {
        assert!(expected.contains_key(f), "{f} has no entry in expected.json");
    }
    for f in expected.keys() {
        assert!(files.contains(f), "expected.json names {f}, which does not exist");
    }
}

#[test]
fn every_corpus_file_reports_its_expected_code_at_its_pointer() {
    let mut failures = Vec::new();
    for (file, want) in expected() {
        let bytes = std::fs::read(corpus_dir().join(&file)).unwrap();
        let report = check(&bytes, Some(&want));
        if want.code == "NONE" {
            assert!(report.diagnostics.is_empty(), "{file} claims what it must not:\n{}", render(&report));
            continue;
        }
        let hit = report.diagnostics.iter().find(|d| d.code.name() == want.code && d.pointer == want.pointer);
        let Some(hit) = hit else {
            failures.push(format!("{file}: want {} at {:?}, got:\n{}", want.code, want.pointer, render(&report)));
            continue;
        };
        // A warning is the finding itself (JSON_BOM, a field an open schema does not list).
        assert!(report.has_errors() || hit.level == mcpflow_blueprint::Level::Warning, "{file} has no errors");
        for d in &report.diagnostics {
            assert!(d.position.is_some(), "{file}: {d} has no position");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_diagnostics_match_their_snapshots() {
    let expected = expected();
    insta::glob!("../corpus", "*.json", |path| {
        if path.file_name().is_some_and(|n| n == "expected.json") {
            return;
        }
        let bytes = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let report = check(&bytes, expected.get(name.as_ref()));
        insta::assert_snapshot!(render(&report));
    });
}
