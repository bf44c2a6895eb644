//! Which fields of a step's output the blueprint reads: every template that reads one as a
//! plain path (`step.field`, `steps.step.field`, `prev.field`). An expression such as
//! `keys(step)` is not followed. The lock (what a removed field breaks) and validation
//! (a field the tool's output schema does not have) ask this.

use crate::plan::{Plan, StepIdx};
use crate::template::{PathSegment, Template};

/// A template reading an output field of one of the steps: the field, the template's
/// pointer and the reading step's id (`output` for the blueprint's output).
pub(crate) struct Read {
    pub(crate) field: String,
    pub(crate) pointer: String,
    pub(crate) reader: String,
}

/// Every plain-path read of a field of the output of `producers` in the blueprint.
pub(crate) fn output_reads(plan: &Plan, producers: &[StepIdx]) -> Vec<Read> {
    let mut reads = Vec::new();
    let mut visit = |template: &Template, base: &str, reader: &str, prev: Option<StepIdx>| {
        for (at, expr) in template.expressions() {
            let Some((root, path)) = expr.plain_path() else { continue };
            for &producer in producers {
                let id = plan.steps[producer].step.id();
                let field = if root == id {
                    path.first()
                } else if root == "steps" && matches!(path.first(), Some(PathSegment::Field(f)) if f == id) {
                    // `steps.<id>` is the step's record: only `.output` reads its output.
                    match path.get(1) {
                        Some(PathSegment::Field(f)) if f == "output" => path.get(2),
                        _ => None,
                    }
                } else if root == "prev" && prev == Some(producer) {
                    path.first()
                } else {
                    None
                };
                if let Some(PathSegment::Field(field)) = field {
                    let pointer = format!("{base}{at}");
                    reads.push(Read { field: field.clone(), pointer, reader: reader.to_owned() });
                }
            }
        }
    };
    for step in &plan.steps {
        let prev = match step.deps.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        for (field, template) in step.templates.fields() {
            visit(template, &format!("{}{field}", step.pointer), step.step.id(), prev);
        }
    }
    if let Some(output) = &plan.output {
        visit(output, "/output", "output", None);
    }
    reads
}
