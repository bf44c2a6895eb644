//! A run's inputs: defaults from the `inputs` schema applied, then validated against it.

use crate::validate::compile_schema;
use serde_json::{Map, Value};

/// Applies `default`s of the schema's top-level properties to `given` and validates the
/// result. Errors name the input and what is wrong.
pub fn prepare_inputs(schema: Option<&Map<String, Value>>, given: Value) -> Result<Value, Vec<String>> {
    let mut inputs = match given {
        Value::Null => Map::new(),
        Value::Object(m) => m,
        other => return Err(vec![format!("inputs must be a JSON object, not {other}")]),
    };
    let Some(schema) = schema else { return Ok(Value::Object(inputs)) };
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if let Some(default) = prop.get("default")
                && !inputs.contains_key(name)
            {
                inputs.insert(name.clone(), default.clone());
            }
        }
    }
    let value = Value::Object(inputs);
    let validator =
        compile_schema(&Value::Object(schema.clone())).map_err(|e| vec![format!("the inputs schema: {e}")])?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| {
            let at = e.instance_path().as_str();
            if at.is_empty() { format!("inputs: {e}") } else { format!("input `{}`: {e}", at.trim_start_matches('/')) }
        })
        .collect();
    if errors.is_empty() { Ok(value) } else { Err(errors) }
}

/// Parses one `name=value` from the command line, typed by the schema's property:
/// numbers, booleans, arrays and objects are read as JSON; strings stay as written.
/// Without a schema entry, JSON is tried first and the text is the fallback.
pub fn parse_assignment(schema: Option<&Map<String, Value>>, assignment: &str) -> Result<(String, Value), String> {
    let Some((name, raw)) = assignment.split_once('=') else {
        return Err(format!("`{assignment}` is not name=value"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("`{assignment}` has no name before `=`"));
    }
    let prop = schema.and_then(|s| s.get("properties")).and_then(|p| p.get(name));
    let types: Vec<&str> = match prop.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let as_json = || serde_json::from_str::<Value>(raw);
    let value = if types.is_empty() {
        as_json().unwrap_or_else(|_| Value::String(raw.to_owned()))
    } else if types.contains(&"string") && !types.iter().any(|t| *t != "string" && *t != "null") {
        Value::String(raw.to_owned())
    } else {
        match as_json() {
            Ok(v) => v,
            Err(_) if types.contains(&"string") => Value::String(raw.to_owned()),
            Err(e) => return Err(format!("input `{name}` must be {} (JSON), got `{raw}`: {e}", types.join(" or "))),
        }
    };
    Ok((name.to_owned(), value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        json!({"type": "object", "properties": {"ns": {"type": "string", "default": "prod"}, "n": {"type": "integer"}}, "required": ["n"]})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn defaults_are_applied_and_given_values_kept() {
        assert_eq!(prepare_inputs(Some(&schema()), json!({"n": 3})), Ok(json!({"ns": "prod", "n": 3})));
        assert_eq!(prepare_inputs(Some(&schema()), json!({"n": 3, "ns": "dev"})), Ok(json!({"ns": "dev", "n": 3})));
    }

    #[test]
    fn violations_name_the_input() {
        let e = prepare_inputs(Some(&schema()), json!({"n": "three"})).unwrap_err();
        assert!(e[0].starts_with("input `n`:"), "{e:?}");
        let e = prepare_inputs(Some(&schema()), json!({})).unwrap_err();
        assert!(e[0].contains("\"n\" is a required property"), "{e:?}");
    }

    #[test]
    fn assignments_are_typed_by_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "ns": {"type": "string"}, "n": {"type": "integer"}, "on": {"type": "boolean"}, "tags": {"type": "array"}
        }});
        let schema = schema.as_object().cloned().unwrap();
        let s = Some(&schema);
        assert_eq!(parse_assignment(s, "ns=42"), Ok(("ns".into(), json!("42"))));
        assert_eq!(parse_assignment(s, "n=42"), Ok(("n".into(), json!(42))));
        assert_eq!(parse_assignment(s, "on=true"), Ok(("on".into(), json!(true))));
        assert_eq!(parse_assignment(s, "tags=[\"a\"]"), Ok(("tags".into(), json!(["a"]))));
        assert_eq!(parse_assignment(s, "other=x y"), Ok(("other".into(), json!("x y"))));
        assert_eq!(parse_assignment(s, "other=7"), Ok(("other".into(), json!(7))));
        assert!(parse_assignment(s, "n=many").unwrap_err().contains("input `n` must be integer"));
        assert!(parse_assignment(s, "novalue").is_err());
    }
}
