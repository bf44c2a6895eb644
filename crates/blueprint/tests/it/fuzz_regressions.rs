//! Every input the fuzzing work turned into a reproducer (fuzz/regressions) is replayed
//! here on every test run, through the same entry points as the fuzz targets.

use mcpflow_blueprint::template::{MapScope, Template};
use mcpflow_blueprint::{Code, Options, check_bytes};
use std::path::Path;

fn regressions(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions").join(target);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".gz"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

#[test]
fn template_reproducers_are_refused_at_compile_time_and_never_panic() {
    let cases = regressions("template_render");
    assert!(cases.len() >= 3);
    for (name, bytes) in cases {
        let text = String::from_utf8_lossy(&bytes);
        let (template, scope) = text.split_once('\n').unwrap_or((&text, "{}"));
        let scope = MapScope::from_json(&serde_json::from_str(scope).unwrap_or_default());
        match Template::compile(&serde_json::Value::String(template.to_owned())) {
            Err(errors) => assert_eq!(errors[0].code, Code::LimitExpression, "{name}: {errors:?}"),
            Ok(t) => panic!("{name} compiled; rendering it gives {:?}", t.render(&scope).map(|_| ())),
        }
    }
}

#[test]
fn a_slice_with_a_huge_step_in_a_blueprint_is_a_validation_error() {
    let doc = br#"{"blueprint": 1, "id": "s", "steps": [{"id": "a", "kind": "transform", "value": "{{ inputs.tags[1::2147483647] }}"}]}"#;
    let report = check_bytes(doc, &Options::default());
    assert_eq!(report.diagnostics[0].code, Code::LimitExpression, "{:?}", report.diagnostics);
}
