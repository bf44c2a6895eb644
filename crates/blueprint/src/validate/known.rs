//! What is known before a run of the values templates read, checked as the run would:
//! an input the `inputs` schema does not declare (`inputs.nmaes` where it declares
//! `names`), and a field of a `transform` step's output whose shape its `value` fixes
//! (`{{ b.output }}` where `b` yields a string).

use super::Validator;
use crate::diagnostic::{Code, Diagnostic, did_you_mean};
use crate::model::StepKind;
use crate::plan::StepIdx;
use crate::template::{Expr, PathSegment, Template};
use serde_json::Value;
use std::collections::HashMap;

/// The shape of a step's output as its blueprint fixes it.
enum Shape {
    /// An object with exactly these keys.
    Object(Vec<String>),
    /// A value with no fields: a string, number, boolean, null or array (named).
    Leaf(&'static str),
}

fn shape(template: &Template) -> Option<Shape> {
    Some(match template {
        Template::Expr(_) => return None,
        Template::Text(_) => Shape::Leaf("a string"),
        Template::Array(_) => Shape::Leaf("an array"),
        Template::Object(members) => Shape::Object(members.iter().map(|(k, _)| k.clone()).collect()),
        Template::Literal(v) => match v {
            Value::Object(map) => Shape::Object(map.keys().cloned().collect()),
            Value::String(_) => Shape::Leaf("a string"),
            Value::Array(_) => Shape::Leaf("an array"),
            Value::Null => Shape::Leaf("null"),
            Value::Bool(_) => Shape::Leaf("a boolean"),
            Value::Number(_) => Shape::Leaf("a number"),
        },
    })
}

impl Validator<'_> {
    pub(super) fn known(&mut self) {
        let shapes: HashMap<String, Shape> = (0..self.plan.steps.len())
            .filter_map(|idx| Some((self.plan.steps[idx].step.id().to_owned(), self.transform_shape(idx)?)))
            .collect();
        let mut found = Vec::new();
        let mut visit = |template: &Template, base: &str, reader: Option<&str>, prev: Option<&str>| {
            for (at, expr) in template.expressions() {
                let pointer = format!("{base}{at}");
                if let Some(d) = self.input_read(expr, &pointer).or_else(|| output_read(&shapes, expr, &pointer, prev))
                {
                    found.push(match reader {
                        Some(r) => d.with_step(r),
                        None => d,
                    });
                }
            }
        };
        for step in &self.plan.steps {
            let prev = match step.deps.as_slice() {
                [one] => Some(self.plan.steps[*one].step.id()),
                _ => None,
            };
            for (field, template) in step.templates.fields() {
                visit(template, &format!("{}{field}", step.pointer), Some(step.step.id()), prev);
            }
        }
        if let Some(output) = &self.plan.output {
            visit(output, "/output", None, None);
        }
        self.diags.extend(found);
    }

    /// The shape of step `idx`'s output, when it is a transform whose `value` fixes it.
    fn transform_shape(&self, idx: StepIdx) -> Option<Shape> {
        let step = &self.plan.steps[idx];
        if !matches!(step.step.kind, StepKind::Transform(_)) {
            return None;
        }
        let (_, template) = step.templates.fields().into_iter().find(|(f, _)| f == "/value")?;
        shape(template)
    }

    /// `inputs.<name>` where the `inputs` schema lists its properties and not `name`: an
    /// error when it allows no others or names one close to it, else a warning.
    fn input_read(&self, expr: &Expr, pointer: &str) -> Option<Diagnostic> {
        let (root, path) = expr.plain_path()?;
        let Some(PathSegment::Field(name)) = path.first() else { return None };
        if root != "inputs" {
            return None;
        }
        let schema = self.bp.inputs.as_ref()?;
        let properties = schema.get("properties")?.as_object()?;
        if properties.contains_key(name) {
            return None;
        }
        let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
        let near = did_you_mean(name, properties.keys().map(String::as_str));
        let code = if closed || !near.is_empty() { Code::TemplatePathAbsent } else { Code::TemplatePathUnknown };
        let declared = properties.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
        let declared = if declared.is_empty() { "none".to_owned() } else { declared };
        let hint =
            if near.is_empty() { format!("declare it in `inputs.properties`; declared: {declared}") } else { near };
        Some(
            Diagnostic::new(code, pointer, format!("`inputs.{name}`: the `inputs` schema declares no input `{name}`"))
                .with_hint(hint),
        )
    }
}

/// `step.field` (or `prev.field`) where a transform step's `value` fixes its output.
fn output_read(shapes: &HashMap<String, Shape>, expr: &Expr, pointer: &str, prev: Option<&str>) -> Option<Diagnostic> {
    let (root, path) = expr.plain_path()?;
    let Some(PathSegment::Field(field)) = path.first() else { return None };
    let id = if root == "prev" { prev? } else { root };
    let message = match shapes.get(id)? {
        Shape::Object(keys) if keys.iter().any(|k| k == field) => return None,
        Shape::Object(keys) => {
            let hint = match did_you_mean(field, keys.iter().map(String::as_str)) {
                s if !s.is_empty() => s,
                _ => format!("its fields: {}", keys.join(", ")),
            };
            return Some(
                Diagnostic::new(
                    Code::TemplatePathAbsent,
                    pointer,
                    format!("`{root}.{field}`: the output of transform step `{id}` has no field `{field}`"),
                )
                .with_hint(hint),
            );
        }
        Shape::Leaf(what) => {
            format!("`{root}.{field}`: the output of transform step `{id}` is {what}, which has no fields")
        }
    };
    Some(Diagnostic::new(Code::TemplatePathAbsent, pointer, message).with_hint(format!("read `{root}` itself")))
}

#[cfg(test)]
mod tests {
    use crate::check_value;
    use serde_json::{Value, json};

    fn codes(doc: Value) -> Vec<(String, String, String)> {
        check_value(doc, &Default::default())
            .diagnostics
            .into_iter()
            .map(|d| (d.code.name().to_owned(), d.pointer, d.hint.unwrap_or_default()))
            .collect()
    }

    #[test]
    fn an_input_the_schema_does_not_declare_is_found_with_the_one_meant() {
        let found = codes(json!({ "blueprint": 1, "id": "a",
            "inputs": { "type": "object", "properties": { "names": { "type": "array" } } },
            "steps": [ { "id": "x", "kind": "transform", "value": "{{ inputs.nmaes }}" },
                       { "id": "y", "kind": "transform", "value": "{{ inputs.other }}" },
                       { "id": "z", "kind": "transform", "value": "{{ inputs.names }}" } ] }));
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, "TEMPLATE_PATH_ABSENT");
        assert_eq!(found[0].1, "/steps/0/value");
        assert!(found[0].2.contains("did you mean `names`"), "{found:?}");
        assert_eq!(found[1].0, "TEMPLATE_PATH_UNKNOWN", "no close name, others allowed: a warning");
    }

    #[test]
    fn a_field_of_a_transform_whose_value_rules_it_out_is_an_error() {
        let found = codes(json!({ "blueprint": 1, "id": "a", "steps": [
            { "id": "b", "kind": "transform", "value": "x {{ run.id }}" },
            { "id": "o", "kind": "transform", "value": { "count": 1, "name": "{{ b }}" } },
            { "id": "c", "kind": "transform", "value": "{{ b.output }}" },
            { "id": "d", "kind": "transform", "value": "{{ o.cont }} {{ o.count }} {{ steps.b.output }}" },
            { "id": "e", "kind": "transform", "value": "{{ prev.name }}" } ] }));
        let absent: Vec<_> = found.iter().filter(|f| f.0 == "TEMPLATE_PATH_ABSENT").collect();
        // `prev` of `e` is `d`, text: a string too.
        assert_eq!(absent.len(), 3, "{found:?}");
        assert_eq!(absent[0].1, "/steps/2/value");
        assert!(absent[1].2.contains("did you mean `count`"), "{found:?}");
        assert_eq!(absent[2].1, "/steps/4/value");
    }

    #[test]
    fn an_unknown_kind_hides_nothing_else() {
        let found = codes(json!({ "blueprint": 1, "id": "a", "steps": [
            { "id": "k", "kind": "nope", "args": {} },
            { "id": "t", "kind": "transform", "value": "{{ nothere }}" } ] }));
        let names: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(names, ["UNKNOWN_KIND", "TEMPLATE_UNKNOWN_NAME"], "{found:?}");
    }

    #[test]
    fn inputs_written_as_bare_properties_are_not_an_object_schema() {
        let found = codes(json!({ "blueprint": 1, "id": "a", "inputs": { "names": { "type": "array" } },
            "steps": [ { "id": "t", "kind": "transform", "value": 1 } ] }));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0.as_str(), found[0].1.as_str()), ("INVALID_INPUTS_SCHEMA", "/inputs"));
        assert!(found[0].2.contains("\"properties\": {\"names\""), "{found:?}");
    }
}
