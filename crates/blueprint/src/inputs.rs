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
}
