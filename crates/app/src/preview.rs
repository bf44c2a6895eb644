//! A template's value against a scope, for the studio's template editor: the live
//! preview of what a field would give against the last run (issue 33), with the engine's
//! own compiler and renderer, so the preview and the run agree — strict paths included.
//! Without a scope it only compiles: the syntax errors show as the person types.

use mcpflow_blueprint::template::{MapScope, Template};
use serde_json::Value;

/// Why a template gives no value: a stable code, the message, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateProblem {
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
}

/// `template` (a string, or any JSON whose strings hold templates) compiled and, given
/// a `scope` (a JSON object of root names: `inputs`, step ids, `steps`, …), rendered.
/// `Ok(None)`: it compiles and there is no scope to render it against.
pub fn preview(template: &Value, scope: Option<&Value>) -> Result<Option<Value>, TemplateProblem> {
    let compiled = Template::compile(template).map_err(|errors| {
        let first = errors.into_iter().next();
        TemplateProblem {
            code: first.as_ref().map_or_else(|| "TEMPLATE_SYNTAX".to_owned(), |e| e.code.to_string()),
            message: first.as_ref().map_or_else(String::new, |e| e.message.clone()),
            hint: first.and_then(|e| e.hint),
        }
    })?;
    let Some(scope) = scope else { return Ok(None) };
    compiled.render(&MapScope::from_json(scope)).map(Some).map_err(|e| TemplateProblem {
        code: e.code.to_owned(),
        message: e.message,
        hint: e.hint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_is_rendered_against_the_scope_with_its_type_kept() {
        let scope = json!({ "list": { "items": ["a", "b"] } });
        assert_eq!(preview(&json!("{{ list.items }}"), Some(&scope)), Ok(Some(json!(["a", "b"]))));
        assert_eq!(preview(&json!("n = {{ length(list.items) }}"), Some(&scope)), Ok(Some(json!("n = 2"))));
    }

    #[test]
    fn a_missing_key_is_the_runs_own_error_with_the_keys_that_exist() {
        let scope = json!({ "list": { "items": [] } });
        let problem = preview(&json!("{{ list.itemz }}"), Some(&scope)).unwrap_err();
        assert_eq!(problem.code, "TEMPLATE_UNRESOLVED");
        assert!(problem.message.contains("items"), "{problem:?}");
    }

    #[test]
    fn without_a_scope_only_the_syntax_is_checked() {
        assert_eq!(preview(&json!("{{ a.b }}"), None), Ok(None));
        let problem = preview(&json!("{{ a. }}"), None).unwrap_err();
        assert!(problem.code.starts_with("TEMPLATE"), "{problem:?}");
        assert!(!problem.message.is_empty());
    }
}
