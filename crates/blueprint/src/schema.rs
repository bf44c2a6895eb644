//! The JSON Schema of format v1, generated from the types (schemars). A step's schema is
//! one object per kind (common fields + that kind's fields + `kind` as a constant), so
//! editors can both complete and reject fields per kind.

use crate::model::{
    Blueprint, Common, InputStep, LoopStep, PromptStep, ResourceStep, Step, SwitchStep, ToolStep, TransformStep,
    WaitStep, WorkflowStep,
};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The JSON Schema of a blueprint document, as committed in `schema/blueprint.schema.json`.
pub fn blueprint_schema() -> Value {
    let mut schema = schemars::schema_for!(Blueprint).to_value();
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("$id".into(), Value::String("https://mcpflow.dev/schema/blueprint.schema.json".into()));
    }
    schema
}

/// The schema as pretty JSON text with a trailing newline (the committed form).
pub fn blueprint_schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&blueprint_schema()).unwrap_or_default();
    s.push('\n');
    s
}

fn kind_schema<T: JsonSchema>(kind: &str, generator: &mut SchemaGenerator) -> Value {
    let common = Common::json_schema(generator).to_value();
    let own = T::json_schema(generator).to_value();
    let mut properties = Map::new();
    properties.insert("kind".into(), serde_json::json!({ "const": kind }));
    let mut required = vec![Value::String("kind".into())];
    for part in [&common, &own] {
        if let Some(p) = part.get("properties").and_then(Value::as_object) {
            properties.extend(p.clone());
        }
        if let Some(r) = part.get("required").and_then(Value::as_array) {
            required.extend(r.iter().cloned());
        }
    }
    serde_json::json!({
        "type": "object",
        "title": format!("{kind} step"),
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

impl JsonSchema for Step {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let variants = vec![
            kind_schema::<ToolStep>("tool", generator),
            kind_schema::<ResourceStep>("resource", generator),
            kind_schema::<PromptStep>("prompt", generator),
            kind_schema::<TransformStep>("transform", generator),
            kind_schema::<SwitchStep>("switch", generator),
            kind_schema::<LoopStep>("loop", generator),
            kind_schema::<WorkflowStep>("workflow", generator),
            kind_schema::<WaitStep>("wait", generator),
            kind_schema::<InputStep>("input", generator),
        ];
        json_schema!({
            "description": "A step: common fields plus the fields of its kind.",
            "oneOf": variants,
        })
    }
}
