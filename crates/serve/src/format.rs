//! The blueprint format in band: a short guide written for a model (`format.md`: the
//! kinds, the template scope, three examples) and the format's JSON Schema, as the
//! resources `mcpflow://format` and `mcpflow://format/schema` and as the
//! `blueprint_format` tool (hosts that show their model no resources still reach it).

use rmcp::model::{CallToolResult, ContentBlock, ReadResourceResult, Resource, ResourceContents};
use serde_json::Value;

/// The guide's resource.
pub(super) const GUIDE_URI: &str = "mcpflow://format";
/// The JSON Schema's resource.
pub(super) const SCHEMA_URI: &str = "mcpflow://format/schema";

/// The guide: markdown, a few kilobytes.
pub(super) const GUIDE: &str = include_str!("format.md");

/// The format's JSON Schema (what `mcpflow schema` prints), compact.
fn schema_text() -> String {
    mcpflow_blueprint::schema::blueprint_schema().to_string()
}

/// What `resources/list` shows.
pub(super) fn resources() -> Vec<Resource> {
    vec![
        Resource::new(GUIDE_URI, "blueprint-format")
            .with_title("How to write an mcpflow blueprint")
            .with_description(
                "The format in short: kinds, templates, three examples (read this before writing a blueprint).",
            )
            .with_mime_type("text/markdown")
            .with_size(GUIDE.len() as u64),
        Resource::new(SCHEMA_URI, "blueprint-schema")
            .with_title("The blueprint JSON Schema")
            .with_description("The JSON Schema of blueprint format 1 (what `mcpflow schema` prints).")
            .with_mime_type("application/schema+json"),
    ]
}

/// `resources/read` of one of [`resources`]; `None` for another URI.
pub(super) fn read(uri: &str) -> Option<ReadResourceResult> {
    let (text, mime) = match uri {
        GUIDE_URI => (GUIDE.to_owned(), "text/markdown"),
        SCHEMA_URI => (schema_text(), "application/schema+json"),
        _ => return None,
    };
    let contents =
        ResourceContents::TextResourceContents { uri: uri.to_owned(), mime_type: Some(mime.into()), text, meta: None };
    Some(ReadResourceResult::new(vec![contents]))
}

/// A diagnostic's hint as an agent can follow it: where it points at `mcpflow schema`,
/// docs/blueprint.md or workflows/, which an agent cannot reach, it points at the format
/// in band.
pub(super) fn in_band(mut d: mcpflow_blueprint::Diagnostic) -> mcpflow_blueprint::Diagnostic {
    const INSTEAD: [(&str, &str); 4] = [
        (
            "docs/blueprint.md or `mcpflow schema`",
            "the resource mcpflow://format/schema (or blueprint_format with part: schema)",
        ),
        (
            "an example in workflows/ or run `mcpflow schema`",
            "an example in the resource mcpflow://format (or blueprint_format)",
        ),
        ("`mcpflow schema` shows", "the resource mcpflow://format/schema shows"),
        ("run `mcpflow schema`", "read the resource mcpflow://format (or blueprint_format)"),
    ];
    if let Some(hint) = &mut d.hint {
        for (from, to) in INSTEAD {
            *hint = hint.replace(from, to);
        }
    }
    d
}

/// The `blueprint_format` tool: the guide, or the schema (`part: "schema"`), as text.
pub(super) fn call(args: &Value) -> CallToolResult {
    let text = match args.get("part").and_then(Value::as_str) {
        Some("schema") => schema_text(),
        _ => GUIDE.to_owned(),
    };
    CallToolResult::success(vec![ContentBlock::text(text)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's ```json blocks.
    fn examples() -> Vec<Value> {
        GUIDE
            .split("```json\n")
            .skip(1)
            .map(|block| serde_json::from_str(block.split("```").next().unwrap_or_default()).unwrap())
            .collect()
    }

    #[test]
    fn the_guides_three_examples_validate_without_errors() {
        let list = examples();
        assert_eq!(list.len(), 3);
        for doc in list {
            let report = mcpflow_blueprint::check_value(doc.clone(), &Default::default());
            let errors: Vec<_> = report.errors().collect();
            assert!(errors.is_empty(), "{}: {errors:?}", doc["id"]);
        }
    }

    #[test]
    fn the_guide_names_every_kind_and_stays_short() {
        for kind in mcpflow_blueprint::model::KINDS {
            assert!(GUIDE.contains(&format!("| `{kind}` |")), "the guide's table has no `{kind}`");
        }
        assert!(GUIDE.len() < 8_000, "the guide is {} bytes", GUIDE.len());
    }

    #[test]
    fn a_hint_naming_the_cli_schema_points_at_the_format_in_band() {
        let doc =
            serde_json::json!({ "blueprint": 1, "id": "a", "steps": [ { "id": "s", "kind": "wait", "ms": true } ] });
        let report = mcpflow_blueprint::check_value(doc, &Default::default());
        let hints: Vec<String> = report.diagnostics.into_iter().filter_map(|d| in_band(d).hint).collect();
        assert!(hints.iter().any(|h| h.contains("mcpflow://format/schema")), "{hints:?}");
        assert!(hints.iter().all(|h| !h.contains("mcpflow schema") && !h.contains("docs/")), "{hints:?}");
    }

    #[test]
    fn both_resources_read_and_the_schema_is_the_formats() {
        let schema = read(SCHEMA_URI).unwrap();
        let ResourceContents::TextResourceContents { text, .. } = &schema.contents[0] else { panic!("text") };
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(value, mcpflow_blueprint::schema::blueprint_schema());
        assert!(read(GUIDE_URI).is_some());
        assert!(read("mcpflow://nothing").is_none());
    }
}
