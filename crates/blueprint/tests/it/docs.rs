//! Every snippet in docs/blueprint.md is checked: complete blueprints validate (or fail
//! with the code they claim), and template examples render to what they claim.

use crate::repo;
use mcpflow_blueprint::template::{MapScope, Template};
use mcpflow_blueprint::{Options, check_bytes};

struct Snippet {
    line: usize,
    info: String,
    body: String,
}

fn snippets(text: &str) -> Vec<Snippet> {
    let mut out = Vec::new();
    let mut open: Option<Snippet> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match (&mut open, trimmed.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Snippet { line: i + 1, info: info.trim().to_owned(), body: String::new() })
            }
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some(s), None) => {
                s.body.push_str(line);
                s.body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

#[test]
fn every_snippet_in_the_format_docs_is_checked_and_holds() {
    let text = std::fs::read_to_string(repo().join("docs/blueprint.md")).unwrap();
    let all = snippets(&text);
    assert!(all.len() >= 10, "docs/blueprint.md has only {} snippets", all.len());
    let mut failures = Vec::new();
    for s in &all {
        let at = format!("docs/blueprint.md:{} ({})", s.line, s.info);
        let words: Vec<&str> = s.info.split_whitespace().collect();
        match words.as_slice() {
            ["json", "blueprint"] => {
                let report = check_bytes(s.body.as_bytes(), &Options::default());
                if !report.diagnostics.is_empty() {
                    failures.push(format!("{at}: expected a clean blueprint, got {:#?}", report.diagnostics));
                }
            }
            ["json", "blueprint-error", code] => {
                let report = check_bytes(s.body.as_bytes(), &Options::default());
                if !report.errors().any(|d| d.code.name() == *code) {
                    failures.push(format!("{at}: expected error {code}, got {:#?}", report.diagnostics));
                }
            }
            ["json", "template"] => {
                let case: serde_json::Value = match serde_json::from_str(&s.body) {
                    Ok(v) => v,
                    Err(e) => {
                        failures.push(format!("{at}: not JSON: {e}"));
                        continue;
                    }
                };
                let scope = MapScope::from_json(&case["scope"]);
                let rendered = Template::compile(&case["template"])
                    .map_err(|e| format!("{e:?}"))
                    .and_then(|t| t.render(&scope).map_err(|e| e.code.to_owned()));
                match (case.get("result"), case.get("error"), rendered) {
                    (Some(want), None, Ok(got)) if *want == got => {}
                    (None, Some(want), Err(code)) if want.as_str() == Some(code.as_str()) => {}
                    (_, _, got) => failures.push(format!("{at}: expected {case}, got {got:?}")),
                }
            }
            _ => failures.push(format!(
                "{at}: not a checked snippet kind (json blueprint | json blueprint-error CODE | json template)"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
