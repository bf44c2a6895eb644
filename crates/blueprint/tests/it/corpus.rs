//! The corpus of wrong blueprints (tests/corpus): each file must produce its expected
//! code at its expected pointer (tests/corpus/expected.json), and the full rendered
//! diagnostics are snapshot-tested.

use mcpflow_blueprint::{Options, Report, check_bytes};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(serde::Deserialize)]
struct Expected {
    code: String,
    pointer: String,
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
        let report = check_bytes(&bytes, &Options::default());
        let hit = report.diagnostics.iter().any(|d| d.code.name() == want.code && d.pointer == want.pointer);
        if !hit {
            failures.push(format!("{file}: want {} at {:?}, got:\n{}", want.code, want.pointer, render(&report)));
        }
        assert!(report.has_errors() || want.code.starts_with("JSON_BOM"), "{file} has no errors");
        for d in &report.diagnostics {
            assert!(d.position.is_some(), "{file}: {d} has no position");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn corpus_diagnostics_match_their_snapshots() {
    insta::glob!("../corpus", "*.json", |path| {
        if path.file_name().is_some_and(|n| n == "expected.json") {
            return;
        }
        let bytes = std::fs::read(path).unwrap();
        let report = check_bytes(&bytes, &Options::default());
        insta::assert_snapshot!(render(&report));
    });
}
