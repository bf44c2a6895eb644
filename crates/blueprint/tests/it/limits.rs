//! Inputs too large, too deep or not text: each gets its typed diagnostic, nothing panics.

use crate::codes;
use mcpflow_blueprint::{Code, Options, Position, check_bytes};

#[test]
fn a_100_mb_input_is_rejected_by_size_before_parsing() {
    let mut big = Vec::with_capacity(100 * 1024 * 1024);
    big.extend_from_slice(b"{\"blueprint\": 1, \"id\": \"big\", \"description\": \"");
    big.resize(100 * 1024 * 1024 - 20, b'a');
    big.extend_from_slice(b"\", \"steps\": []}");
    let start = std::time::Instant::now();
    let report = check_bytes(&big, &Options::default());
    assert_eq!(codes(&report), ["LIMIT_SIZE"]);
    assert_eq!(report.diagnostics[0].pointer, "");
    insta::assert_snapshot!(crate::corpus::render(&report));
    // Not a timing assertion on the validator: a guard that nothing walked 100 MB
    // byte by byte in a debug build (that takes seconds).
    assert!(start.elapsed().as_secs() < 5);
}

#[test]
fn nesting_ten_thousand_deep_is_a_limit_error_not_a_stack_overflow() {
    for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
        let doc = format!(
            "{{\"blueprint\": 1, \"id\": \"deep\", \"steps\": [{{\"id\": \"t\", \"kind\": \"transform\", \"value\": {}1{}}}]}}",
            open.repeat(10_000),
            close.repeat(10_000)
        );
        let report = check_bytes(doc.as_bytes(), &Options::default());
        assert_eq!(codes(&report), ["LIMIT_NESTING"]);
        assert!(report.diagnostics[0].pointer.starts_with("/steps/0/value"), "{}", report.diagnostics[0].pointer);
        assert_eq!(report.diagnostics[0].position.unwrap().line, 1);
        insta::assert_snapshot!(format!("nesting_{}", open.len()), crate::corpus::render(&report));
    }
}

#[test]
fn invalid_utf8_is_reported_with_its_position() {
    let doc = b"{\n  \"blueprint\": 1,\n  \"id\": \"x\xff\xfe\",\n  \"steps\": []\n}";
    let report = check_bytes(doc, &Options::default());
    assert_eq!(codes(&report), ["JSON_INVALID_UTF8"]);
    assert_eq!(report.diagnostics[0].position, Some(Position { line: 3, col: 11 }));
    insta::assert_snapshot!(crate::corpus::render(&report));
}

#[test]
fn a_byte_order_mark_is_ignored_with_a_warning() {
    let mut doc = b"\xEF\xBB\xBF".to_vec();
    doc.extend_from_slice(br#"{"blueprint": 1, "id": "bom", "steps": [{"id": "a", "kind": "wait", "ms": 1}]}"#);
    let report = check_bytes(&doc, &Options::default());
    assert_eq!(codes(&report), ["JSON_BOM"]);
    assert!(!report.has_errors());
    assert!(report.plan.is_some());
    insta::assert_snapshot!(crate::corpus::render(&report));
}

#[test]
fn more_than_ten_thousand_steps_is_a_limit_error() {
    let steps: Vec<String> =
        (0..10_001).map(|i| format!("{{\"id\": \"s{i}\", \"kind\": \"wait\", \"ms\": 0}}")).collect();
    let doc = format!("{{\"blueprint\": 1, \"id\": \"many\", \"steps\": [{}]}}", steps.join(","));
    let report = check_bytes(doc.as_bytes(), &Options::default());
    assert!(report.diagnostics.iter().any(|d| d.code == Code::LimitSteps && d.pointer == "/steps/10000"));
    let mut limit = report;
    limit.diagnostics.retain(|d| d.code == Code::LimitSteps);
    insta::assert_snapshot!(crate::corpus::render(&limit));
}

#[test]
fn truncated_documents_never_panic() {
    let doc = std::fs::read(crate::repo().join("workflows/cmdb-sync-sketch.blueprint.json")).unwrap();
    for cut in (0..doc.len()).step_by(7) {
        let report = check_bytes(&doc[..cut], &Options::default());
        assert!(report.has_errors(), "a document cut at byte {cut} was accepted");
    }
}
