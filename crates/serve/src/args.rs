//! A built-in tool's arguments checked against its input schema before it runs: an
//! unknown property is refused naming it (with the nearest known one), a wrong type or a
//! missing property naming where it is. `BAD_REQUEST`, with `pointer`.

use super::call::failure;
use mcpflow_blueprint::diagnostic::did_you_mean;
use rmcp::model::Tool;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Checks `args` against `tool`'s input schema; the first problem as the tool's error.
pub(super) fn check(tool: &Tool, args: &Value) -> Result<(), Value> {
    let schema = Value::Object((*tool.input_schema).clone());
    if let Some(problem) = unknown_property(&schema, args, "") {
        return Err(refuse(&tool.name, problem));
    }
    let first = validated(&tool.name, &schema, args);
    match first {
        None => Ok(()),
        Some(problem) => Err(refuse(&tool.name, problem)),
    }
}

/// A problem found: its pointer in the arguments and what is wrong.
struct Problem {
    pointer: String,
    message: String,
}

fn refuse(tool: &str, p: Problem) -> Value {
    let mut v = failure("BAD_REQUEST", format!("{tool}: {}; tools/list shows this tool's input schema", p.message));
    v["error"]["pointer"] = json!(p.pointer);
    v
}

/// The first property the schema does not allow (`additionalProperties: false`), depth first.
fn unknown_property(schema: &Value, value: &Value, at: &str) -> Option<Problem> {
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (key, v) in map {
                let here = format!("{at}/{key}");
                match props.and_then(|p| p.get(key)) {
                    Some(sub) => {
                        if let Some(p) = unknown_property(sub, v, &here) {
                            return Some(p);
                        }
                    }
                    None if closed => {
                        let known: Vec<&str> =
                            props.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                        let hint = did_you_mean(key, known.iter().copied());
                        let allowed = if known.is_empty() {
                            "it takes no arguments".to_owned()
                        } else {
                            format!(
                                "its properties are {}",
                                known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                            )
                        };
                        let hint = if hint.is_empty() { String::new() } else { format!(" ({hint})") };
                        return Some(Problem {
                            pointer: here,
                            message: format!("unknown property `{key}`{hint}; {allowed}"),
                        });
                    }
                    None => {}
                }
            }
            None
        }
        Value::Array(items) => {
            let item_schema = schema.get("items")?;
            items.iter().enumerate().find_map(|(i, v)| unknown_property(item_schema, v, &format!("{at}/{i}")))
        }
        _ => None,
    }
}

/// The first error of the JSON Schema check (validators compiled once per tool).
fn validated(tool: &str, schema: &Value, args: &Value) -> Option<Problem> {
    static COMPILED: OnceLock<Mutex<HashMap<String, jsonschema::Validator>>> = OnceLock::new();
    let mut compiled = COMPILED.get_or_init(Mutex::default).lock().ok()?;
    if !compiled.contains_key(tool) {
        let validator = mcpflow_blueprint::validate::compile_schema(schema).ok()?;
        compiled.insert(tool.to_owned(), validator);
    }
    let validator = compiled.get(tool)?;
    let e = validator.iter_errors(args).next()?;
    let pointer = e.instance_path().as_str().to_owned();
    let message = if e.schema_path().as_str().ends_with("/oneOf") {
        one_of(schema, args)
    } else if pointer.is_empty() {
        e.to_string()
    } else {
        format!("`{}`: {e}", pointer.trim_start_matches('/'))
    };
    Some(Problem { pointer, message })
}

/// What a failed `oneOf` of required properties means: give exactly one of them.
fn one_of(schema: &Value, args: &Value) -> String {
    let names: Vec<&str> = schema["oneOf"]
        .as_array()
        .map(|list| list.iter().filter_map(|s| s["required"][0].as_str()).collect())
        .unwrap_or_default();
    let given: Vec<&&str> = names.iter().filter(|n| args.get(**n).is_some()).collect();
    let list = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or ");
    if given.is_empty() { format!("give {list}") } else { format!("give {list}, not both") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::find;

    fn code_and_pointer(tool: &str, args: Value) -> (String, String, String) {
        let e = check(find(tool).unwrap(), &args).unwrap_err();
        let e = &e["error"];
        (
            e["code"].as_str().unwrap().into(),
            e["pointer"].as_str().unwrap().into(),
            e["message"].as_str().unwrap().into(),
        )
    }

    #[test]
    fn an_unknown_property_is_refused_by_name_with_the_nearest_known_one() {
        let (code, pointer, message) = code_and_pointer("call_tool", json!({ "tool": "echo", "arguments": {} }));
        assert_eq!((code.as_str(), pointer.as_str()), ("BAD_REQUEST", "/arguments"));
        assert!(
            message.contains("unknown property `arguments`") && message.contains("did you mean `args`"),
            "{message}"
        );
        let (_, pointer, _) =
            code_and_pointer("run_pipeline", json!({ "steps": [{ "id": "a", "tool": "t", "foo": 1 }] }));
        assert_eq!(pointer, "/steps/0/foo");
        let (_, pointer, message) = code_and_pointer("list_servers", json!({ "foo": 1 }));
        assert_eq!(pointer, "/foo");
        assert!(message.contains("takes no arguments"), "{message}");
    }

    #[test]
    fn a_wrong_type_is_refused_where_it_is() {
        let (_, pointer, message) = code_and_pointer("list_tools", json!({ "server": 5 }));
        assert_eq!(pointer, "/server");
        assert!(message.contains("`server`") && message.contains("string"), "{message}");
        let (_, pointer, _) = code_and_pointer("run_workflow", json!({ "id": "x", "detail": "everything" }));
        assert_eq!(pointer, "/detail");
    }

    #[test]
    fn run_workflow_takes_exactly_one_of_id_and_blueprint() {
        let (_, _, message) = code_and_pointer("run_workflow", json!({ "inputs": {} }));
        assert!(message.contains("give `id` or `blueprint`"), "{message}");
        let (_, _, message) = code_and_pointer("run_workflow", json!({ "id": "a", "blueprint": {} }));
        assert!(message.contains("not both"), "{message}");
        assert!(check(find("run_workflow").unwrap(), &json!({ "id": "a" })).is_ok());
    }
}
