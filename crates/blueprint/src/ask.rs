//! What a person can be asked: the schemas an `input` step (or a server's elicitation)
//! may request — the flat forms MCP elicitation allows — and how an answer is checked and
//! turned into a step's output. Pure: the studio, the terminal, `--answers` and
//! `mcpflow serve` all answer through these rules — [`complete`] is the one door an
//! accepted answer goes through: the fields the person left out take their schema's
//! `default` (SEP-1034), then the whole is checked.

use serde_json::{Map, Value, json};

/// The property an `input` step with a primitive schema asks for, when the question
/// travels as an elicitation form (which is always an object).
pub const VALUE_FIELD: &str = "value";

/// The property of an approval gate's form.
pub const APPROVE_FIELD: &str = "approve";

/// A form: the object schema a person fills in, and whether the step's value is its one
/// `value` property (a primitive schema) or the whole object.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// `{"type": "object", "properties": {…}, "required": […]}`.
    pub schema: Value,
    /// The step asked for one primitive: its output is `answer.value`.
    pub wrapped: bool,
}

impl Form {
    /// The field names of the form, in schema order.
    pub fn fields(&self) -> Vec<String> {
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The required field names.
    pub fn required(&self) -> Vec<String> {
        self.schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// The step's output for an accepted answer (the form's content).
    pub fn output(&self, content: Value) -> Value {
        if self.wrapped {
            match content {
                Value::Object(mut m) => m.remove(VALUE_FIELD).unwrap_or(Value::Null),
                other => other,
            }
        } else {
            content
        }
    }

    /// The form's content for a step value (a `default`, shown pre-filled).
    pub fn content(&self, value: &Value) -> Value {
        if self.wrapped { json!({ VALUE_FIELD: value }) } else { value.clone() }
    }
}

/// The form an `input` step asks with: `schema` (default: a string) checked, primitives
/// wrapped into a one-field object; an approval gate is one boolean. The error says what is
/// wrong, for a diagnostic.
pub fn input_form(schema: Option<&Value>, approve: bool, prompt: &str) -> Result<Form, String> {
    if approve {
        if let Some(s) = schema
            && s.get("type").and_then(Value::as_str) != Some("boolean")
        {
            return Err("an approval gate (`approve: true`) answers yes or no: its `schema` must be \
                        {\"type\": \"boolean\"} or absent"
                .into());
        }
        return Ok(Form {
            schema: json!({
                "type": "object",
                "properties": { APPROVE_FIELD: { "type": "boolean", "title": "Approve", "description": prompt } },
                "required": [APPROVE_FIELD],
            }),
            wrapped: false,
        });
    }
    let schema = schema.cloned().unwrap_or_else(|| json!({ "type": "string" }));
    let Some(obj) = schema.as_object() else {
        return Err("`schema` must be a JSON Schema object".into());
    };
    if obj.get("type").and_then(Value::as_str) == Some("object") {
        check_form(&schema)?;
        return Ok(Form { schema, wrapped: false });
    }
    primitive(&schema).map_err(|e| format!("`schema`: {e}"))?;
    let mut property = schema.clone();
    if let Value::Object(p) = &mut property {
        p.entry("title").or_insert_with(|| Value::String(prompt.to_owned()));
    }
    Ok(Form {
        schema: json!({ "type": "object", "properties": { VALUE_FIELD: property }, "required": [VALUE_FIELD] }),
        wrapped: true,
    })
}

/// Checks an object schema a form can show: `properties` of primitives, `required` naming
/// them. (What MCP elicitation's `requestedSchema` allows.)
pub fn check_form(schema: &Value) -> Result<(), String> {
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .ok_or_else(|| "an object schema needs `properties`".to_owned())?;
    if props.is_empty() {
        return Err("an object schema needs at least one property".into());
    }
    for (name, p) in props {
        primitive(p).map_err(|e| format!("property `{name}`: {e}"))?;
    }
    if let Some(required) = schema.get("required") {
        let Some(list) = required.as_array() else { return Err("`required` must be an array of names".into()) };
        for r in list {
            match r.as_str() {
                Some(name) if props.contains_key(name) => {}
                _ => return Err(format!("`required` names {r}, which is not a property")),
            }
        }
    }
    Ok(())
}

/// One field a form can show: a string (or string enum), number, integer, boolean, or an
/// array of enum strings (a multiple choice).
fn primitive(schema: &Value) -> Result<(), String> {
    let Some(obj) = schema.as_object() else { return Err("must be a JSON Schema object".into()) };
    let ty = obj.get("type").and_then(Value::as_str);
    match ty {
        Some("string" | "number" | "integer" | "boolean") => Ok(()),
        None if obj.contains_key("enum") || obj.contains_key("oneOf") => Ok(()),
        Some("array") => {
            let items = obj.get("items");
            if items.is_some_and(|i| i.get("enum").is_some() || i.get("anyOf").is_some()) {
                Ok(())
            } else {
                Err("an array is a multiple choice: its `items` need an `enum` of strings".into())
            }
        }
        Some(other) => Err(format!(
            "type `{other}` cannot be asked in a form; use string, number, integer, boolean, an enum, or an object \
             of these"
        )),
        None => Err("needs a `type` (string, number, integer, boolean) or an `enum`".into()),
    }
}

/// The field's `default` in the form's schema, if it has one.
pub fn field_default<'a>(form: &'a Form, field: &str) -> Option<&'a Value> {
    form.schema.get("properties")?.get(field)?.get("default")
}

/// An accepted answer's content as it is sent: each field of the form the person left out
/// (absent, or null) takes its schema's `default` (SEP-1034: an answer `{}` to a form whose
/// fields all have defaults is those defaults), then the whole is checked
/// ([`check_answer`]). The problems, field by field, when it does not fit.
pub fn complete(form: &Form, content: Value) -> Result<Value, Vec<String>> {
    let content = with_defaults(form, content);
    let problems = check_answer(form, &content);
    if problems.is_empty() { Ok(content) } else { Err(problems) }
}

/// [`complete`] without the check, for an answer the asker checks itself (a server's
/// elicitation forwarded to the client that called `mcpflow serve`).
pub fn with_defaults(form: &Form, content: Value) -> Value {
    let Value::Object(mut given) = content else { return content };
    for field in form.fields() {
        if given.get(&field).is_none_or(Value::is_null)
            && let Some(default) = field_default(form, &field)
        {
            given.insert(field, default.clone());
        }
    }
    Value::Object(given)
}

/// Checks an answer's content against the form: every required field present, each field
/// of its type (and in its `enum`). Returns the problems, one per field, as
/// `field: what is wrong`.
pub fn check_answer(form: &Form, content: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(obj) = content.as_object() else {
        return vec![format!("the answer must be an object of the form's fields, got {}", kind_of(content))];
    };
    for r in form.required() {
        if obj.get(&r).is_none_or(Value::is_null) {
            problems.push(format!("{r}: required"));
        }
    }
    let props = form.schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    for (name, value) in obj {
        let Some(p) = props.get(name) else {
            problems.push(format!("{name}: not a field of this form (fields: {})", form.fields().join(", ")));
            continue;
        };
        if value.is_null() {
            continue;
        }
        if let Some(problem) = field_problem(p, value) {
            problems.push(format!("{name}: {problem}"));
        }
    }
    problems
}

fn field_problem(schema: &Value, value: &Value) -> Option<String> {
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let list: Vec<String> = options.iter().map(Value::to_string).collect();
        return Some(format!("{value} is not one of {}", list.join(", ")));
    }
    let ok = match schema.get("type").and_then(Value::as_str) {
        Some("string") => value.is_string(),
        Some("number") => value.is_number(),
        Some("integer") => value.as_i64().is_some() || value.as_u64().is_some(),
        Some("boolean") => value.is_boolean(),
        Some("array") => value.is_array(),
        _ => true,
    };
    (!ok).then(|| {
        format!("expected {}, got {}", schema.get("type").and_then(Value::as_str).unwrap_or("a value"), kind_of(value))
    })
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads a typed-in text as a field's value (a terminal prompt): numbers, integers and
/// booleans parsed, strings kept as typed; `None` when it does not fit the type.
pub fn parse_field(schema: &Value, text: &str) -> Option<Value> {
    let text = text.trim();
    match schema.get("type").and_then(Value::as_str) {
        Some("number") => text.parse::<f64>().ok().and_then(|n| serde_json::Number::from_f64(n).map(Value::Number)),
        Some("integer") => text.parse::<i64>().ok().map(Value::from),
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Some(Value::Bool(true)),
            "n" | "no" | "false" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        Some("array") => Some(Value::Array(
            text.split(',').map(|s| Value::String(s.trim().to_owned())).filter(|v| v != "").collect(),
        )),
        _ => Some(Value::String(text.to_owned())),
    }
}

/// An empty object, for forms answered with nothing.
pub fn empty() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The conformance suite's SEP-1034 form: every field optional, each with a default.
    fn defaults_form() -> Form {
        Form {
            schema: json!({ "type": "object", "properties": {
                "name": { "type": "string", "default": "John Doe" },
                "age": { "type": "integer", "default": 30 },
                "score": { "type": "number", "default": 95.5 },
                "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
                "verified": { "type": "boolean", "default": true },
                "note": { "type": "string" },
            }, "required": [] }),
            wrapped: false,
        }
    }

    #[test]
    fn fields_left_out_take_their_schema_default_and_given_ones_stay() {
        let form = defaults_form();
        let all = json!({ "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true });
        assert_eq!(complete(&form, json!({})), Ok(all));
        let given = complete(&form, json!({ "name": "Ada", "age": null, "verified": false })).unwrap();
        assert_eq!(given["name"], "Ada", "given: kept");
        assert_eq!(given["age"], 30, "null: left out");
        assert_eq!(given["verified"], false, "false is an answer, not a field left out");
        assert!(given.get("note").is_none(), "no default: still left out");
    }

    #[test]
    fn a_required_field_with_a_default_may_be_left_out_and_a_wrong_answer_is_still_wrong() {
        let form = Form {
            schema: json!({ "type": "object", "properties": {
                "replicas": { "type": "integer", "default": 2 },
                "name": { "type": "string" },
            }, "required": ["replicas", "name"] }),
            wrapped: false,
        };
        assert_eq!(complete(&form, json!({ "name": "web" })), Ok(json!({ "name": "web", "replicas": 2 })));
        assert_eq!(complete(&form, json!({})), Err(vec!["name: required".to_owned()]));
        let wrong = complete(&form, json!({ "name": "web", "replicas": "two" })).unwrap_err();
        assert_eq!(wrong, ["replicas: expected integer, got a string"]);
    }

    #[test]
    fn a_primitive_schema_is_wrapped_into_a_one_field_form_and_unwrapped_from_the_answer() {
        let form = input_form(Some(&json!({ "type": "integer", "minimum": 1 })), false, "How many?").unwrap();
        assert!(form.wrapped);
        assert_eq!(form.fields(), ["value"]);
        assert_eq!(form.schema["properties"]["value"]["title"], "How many?");
        assert_eq!(form.output(json!({ "value": 3 })), json!(3));
        assert!(check_answer(&form, &json!({ "value": 3 })).is_empty());
        assert_eq!(check_answer(&form, &json!({ "value": "x" })), ["value: expected integer, got a string"]);
        assert_eq!(check_answer(&form, &json!({})), ["value: required"]);
    }

    #[test]
    fn object_schemas_must_be_flat_and_approval_gates_boolean() {
        let nested = json!({ "type": "object", "properties": { "a": { "type": "object" } } });
        assert!(input_form(Some(&nested), false, "?").unwrap_err().contains("property `a`"));
        let flat = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
        let form = input_form(Some(&flat), false, "?").unwrap();
        assert!(!form.wrapped);
        assert_eq!(form.output(json!({ "name": "x" })), json!({ "name": "x" }));
        assert!(input_form(Some(&json!({ "type": "string" })), true, "?").is_err());
        let gate = input_form(None, true, "Delete?").unwrap();
        assert_eq!(gate.required(), ["approve"]);
        let bad = json!({ "type": "object", "properties": { "a": { "type": "string" } }, "required": ["b"] });
        assert!(input_form(Some(&bad), false, "?").unwrap_err().contains("not a property"));
    }

    #[test]
    fn typed_text_is_read_by_the_fields_type() {
        assert_eq!(parse_field(&json!({ "type": "integer" }), " 42 "), Some(json!(42)));
        assert_eq!(parse_field(&json!({ "type": "integer" }), "4.2"), None);
        assert_eq!(parse_field(&json!({ "type": "boolean" }), "Yes"), Some(json!(true)));
        assert_eq!(parse_field(&json!({ "type": "string" }), "a b"), Some(json!("a b")));
        let choice = json!({ "enum": ["a", "b"] });
        let form = Form { schema: json!({ "type": "object", "properties": { "c": choice } }), wrapped: false };
        assert_eq!(check_answer(&form, &json!({ "c": "z" })), ["c: \"z\" is not one of \"a\", \"b\""]);
    }
}
