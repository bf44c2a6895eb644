//! Types at design time (see [`crate::types`]): every plain-path template is walked
//! through the type of what it reads, and every templated tool argument is held against
//! the tool's input schema. A field the type does not list is `TEMPLATE_PATH_UNKNOWN` (a
//! warning: the schema allows others) or `TEMPLATE_PATH_ABSENT` (an error: it rules the
//! field out, or the value is not an object at all); a value that cannot be what the
//! tool wants is `TEMPLATE_TYPE_MISMATCH`. Where nothing is known, nothing is claimed.

use super::Validator;
use crate::diagnostic::{Code, Diagnostic, did_you_mean, pointer_push};
use crate::model::{Blueprint, StepKind};
use crate::plan::{Plan, StepIdx, StepTemplates};
use crate::template::{PathSegment, Template};
use crate::types::{Lookup, Type, array_of, infer};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// What the catalog said of a tool step's tool.
pub(crate) struct ToolSchemas {
    pub(crate) server: String,
    pub(crate) tool: String,
    pub(crate) input: Value,
    pub(crate) output: Option<Value>,
}

/// Where a template is evaluated: a step's field (`/args`, `/collect`, …) or the
/// blueprint's `output` (`step: None`).
#[derive(Clone, Copy)]
struct Site<'f> {
    step: Option<StepIdx>,
    field: &'f str,
}

#[derive(Clone)]
enum Memo {
    Todo,
    Busy,
    Done(Option<Type>),
}

/// The types of the steps' outputs, worked out on demand.
struct Types<'v> {
    plan: &'v Plan,
    bp: &'v Blueprint,
    tools: &'v HashMap<StepIdx, ToolSchemas>,
    saved: &'v HashMap<String, String>,
    memo: RefCell<Vec<Memo>>,
}

impl Types<'_> {
    fn step(&self, idx: StepIdx) -> Option<Type> {
        match self.memo.borrow()[idx].clone() {
            Memo::Done(t) => return t,
            // A cycle (reported elsewhere): nothing is known.
            Memo::Busy => return None,
            Memo::Todo => {}
        }
        self.memo.borrow_mut()[idx] = Memo::Busy;
        let t = self.work_out(idx);
        self.memo.borrow_mut()[idx] = Memo::Done(t.clone());
        t
    }

    fn work_out(&self, idx: StepIdx) -> Option<Type> {
        let s = &self.plan.steps[idx];
        let id = s.step.id();
        let site = |field| Site { step: Some(idx), field };
        match (&s.step.kind, &s.templates) {
            (StepKind::Tool(_), _) => {
                let t = self.tools.get(&idx)?;
                let source = format!("the output schema of tool `{}`/`{}` (step `{id}`)", t.server, t.tool);
                t.output.clone().map(|schema| Type::new(schema, source))
            }
            (_, StepTemplates::Transform { value }) => {
                self.infer(value, site("/value"), &format!("the value step `{id}` builds"))
            }
            (StepKind::Switch(_), _) => Some(Type::new(
                json!({ "type": "object", "properties": { "case": { "type": ["integer", "string"] } }, "additionalProperties": false }),
                format!("the output of switch `{id}`"),
            )),
            (StepKind::Loop(_), StepTemplates::Loop { collect, .. }) => {
                let items = match collect {
                    Some(c) => self.infer(c, site("/collect"), &format!("what loop `{id}` collects")),
                    None => {
                        let body = &self.plan.lists[s.body?];
                        let last = body.members.iter().rev().find(|&&m| self.plan.steps[m].fallback_of.is_none())?;
                        self.step(*last)
                    }
                };
                Some(array_of(items.as_ref(), format!("the output of loop `{id}`")))
            }
            (StepKind::Wait(_), _) => Some(Type::new(json!({ "type": "null" }), format!("the output of wait `{id}`"))),
            (StepKind::Input(i), _) if i.is_approval() => {
                Some(Type::new(json!({ "type": "boolean" }), format!("the answer to gate `{id}`")))
            }
            (StepKind::Input(i), _) => Some(Type::new(
                i.schema.clone().unwrap_or_else(|| json!({ "type": "string" })),
                format!("the answer schema of input `{id}`"),
            )),
            (StepKind::Prompt(_), _) => Some(Type::new(
                json!({ "type": "array", "items": { "type": "object", "properties": { "role": { "type": "string" }, "content": { "type": "object" } } } }),
                format!("the messages of prompt `{id}`"),
            )),
            _ => None,
        }
    }

    fn infer(&self, template: &Template, site: Site<'_>, source: &str) -> Option<Type> {
        if let Template::Expr(e) = template {
            let (root, segments) = e.plain_path()?;
            return self.path(site, root, segments);
        }
        let source: Arc<str> = source.into();
        infer(template, &source, &mut |root, segments| self.path(site, root, segments))
    }

    /// The type at the end of a plain path, when every segment of it is known.
    fn path(&self, site: Site<'_>, root: &str, segments: &[PathSegment]) -> Option<Type> {
        let (mut t, rest) = self.root(site, root, segments)?;
        for seg in rest {
            match t.lookup(seg) {
                Lookup::Found(Some(next)) => t = next,
                _ => return None,
            }
        }
        Some(t)
    }

    /// The type a name in scope has at `site`, and the segments left to walk from it
    /// (`steps.x.output.a` starts at `x`'s output with `[a]` left).
    fn root<'s>(&self, site: Site<'_>, root: &str, segments: &'s [PathSegment]) -> Option<(Type, &'s [PathSegment])> {
        if let Some(t) = self.loop_variable(site, root) {
            return t.map(|t| (t, segments));
        }
        if let Some(&idx) = self.plan.by_id.get(root) {
            return Some((self.step(idx)?, segments));
        }
        let first = match segments.first() {
            Some(PathSegment::Field(f)) => Some(f.as_str()),
            _ => None,
        };
        match root {
            "inputs" => {
                // Not an object schema: reported by the inputs check, nothing more to say.
                let inputs = self.bp.inputs.as_ref()?;
                if inputs.get("type").is_some_and(|t| t != "object") {
                    return None;
                }
                let schema = Value::Object(inputs.clone());
                Some((Type::new(schema, "the inputs schema"), segments))
            }
            "prev" => {
                let idx = site.step?;
                let s = &self.plan.steps[idx];
                let in_loop_end = matches!(site.field, "/collect" | "/until");
                match s.deps.as_slice() {
                    [one] if !in_loop_end && s.fallback_of.is_none() => Some((self.step(*one)?, segments)),
                    _ => None,
                }
            }
            "saved" => {
                let by = self.saved.get(first?)?;
                Some((self.step(*self.plan.by_id.get(by)?)?, &segments[1..]))
            }
            "steps" => {
                let &idx = self.plan.by_id.get(first?)?;
                match segments.get(1) {
                    Some(PathSegment::Field(f)) if f == "output" => Some((self.step(idx)?, &segments[2..])),
                    _ => Some((record(), &segments[1..])),
                }
            }
            "run" => Some((closed(&["id", "blueprint", "started_at"], "the run's record"), segments)),
            "error" => Some((closed(&["step", "message", "code"], "a fallback's `error`"), segments)),
            _ => None,
        }
    }

    /// The step whose output a plain path reads (`w.x`, `steps.w.output.x`, `prev.x`), for
    /// the studio to mark it too.
    fn producer(&self, site: Site<'_>, root: &str, segments: &[PathSegment]) -> Option<String> {
        if self.loop_variable(site, root).is_some() {
            return None;
        }
        let idx = match (root, segments.first()) {
            ("steps", Some(PathSegment::Field(id))) => *self.plan.by_id.get(id)?,
            ("prev", _) => match self.plan.steps[site.step?].deps.as_slice() {
                [one] => *one,
                _ => return None,
            },
            _ => *self.plan.by_id.get(root)?,
        };
        Some(self.plan.steps[idx].step.id().to_owned())
    }

    /// `Some(type)` when `name` is a loop variable at `site` (`Some(None)`: one of unknown
    /// type), `None` when it is not one.
    fn loop_variable(&self, site: Site<'_>, name: &str) -> Option<Option<Type>> {
        let step = site.step?;
        // A loop's `collect` and `until` see its own variables; anything else, those of the
        // loops around its list.
        let mut cur = if matches!(site.field, "/collect" | "/until") {
            Some(step)
        } else {
            self.plan.lists[self.plan.steps[step].list].owner
        };
        while let Some(l) = cur {
            if let (StepKind::Loop(lp), StepTemplates::Loop { for_each, .. }) =
                (&self.plan.steps[l].step.kind, &self.plan.steps[l].templates)
            {
                let id = self.plan.steps[l].step.id();
                if name == "index" {
                    return Some(Some(Type::new(json!({ "type": "integer" }), format!("loop `{id}`'s index"))));
                }
                if name == "last" && lp.until.is_some() {
                    let items = self.step(l).and_then(|t| match t.lookup(&PathSegment::Index(0)) {
                        Lookup::Found(t) => t,
                        _ => None,
                    });
                    return Some(items);
                }
                if name == lp.as_name.as_deref().unwrap_or("item") {
                    let list = for_each.as_ref().and_then(|f| {
                        self.infer(f, Site { step: Some(l), field: "/for_each" }, &format!("loop `{id}`'s list"))
                    });
                    let item = list.and_then(|t| match t.lookup(&PathSegment::Index(0)) {
                        Lookup::Found(t) => t,
                        _ => None,
                    });
                    return Some(item);
                }
            }
            cur = self.plan.lists[self.plan.steps[l].list].owner;
        }
        None
    }
}

/// `steps.<id>`: a step's record.
fn record() -> Type {
    Type::new(
        json!({ "type": "object", "properties": {
            "output": {}, "status": { "type": "string" }, "error": {}, "attempts": { "type": "integer" }, "duration_ms": { "type": "integer" }
        }, "additionalProperties": false }),
        "a step's record",
    )
}

fn closed(fields: &[&str], source: &str) -> Type {
    let properties: serde_json::Map<String, Value> =
        fields.iter().map(|f| ((*f).to_owned(), json!({ "type": "string" }))).collect();
    Type::new(json!({ "type": "object", "properties": properties, "additionalProperties": false }), source)
}

fn shown(root: &str, segments: &[PathSegment]) -> String {
    let mut s = root.to_owned();
    for seg in segments {
        let _ = write!(s, "{seg}");
    }
    s
}

impl Validator<'_> {
    pub(super) fn types(&mut self) {
        let types = Types {
            plan: &self.plan,
            bp: self.bp,
            tools: &self.tool_schemas,
            saved: &self.saved_names,
            memo: RefCell::new(vec![Memo::Todo; self.plan.steps.len()]),
        };
        let mut found = Vec::new();
        for idx in 0..self.plan.steps.len() {
            let s = &self.plan.steps[idx];
            for (field, template) in s.templates.fields() {
                let site = Site { step: Some(idx), field: &field };
                let base = format!("{}{field}", s.pointer);
                paths(&types, site, template, &base, s.step.id(), &mut found);
            }
            fit_arguments(&types, idx, &mut found);
            fit_list(&types, idx, &mut found);
        }
        if let Some(output) = &self.plan.output {
            paths(&types, Site { step: None, field: "" }, output, "/output", "", &mut found);
        }
        self.diags.extend(found);
    }
}

/// Every plain path in `template`, walked through its type.
fn paths(types: &Types<'_>, site: Site<'_>, template: &Template, base: &str, reader: &str, out: &mut Vec<Diagnostic>) {
    for (at, expr) in template.expressions() {
        let Some((root, segments)) = expr.plain_path() else { continue };
        let Some((mut t, rest)) = types.root(site, root, segments) else { continue };
        let walked = segments.len() - rest.len();
        for (i, seg) in rest.iter().enumerate() {
            let upto = walked + i;
            let (prefix, full) = (shown(root, &segments[..upto]), shown(root, &segments[..=upto]));
            let d = match t.lookup(seg) {
                Lookup::Found(Some(next)) => {
                    t = next;
                    continue;
                }
                Lookup::Found(None) | Lookup::Unknown => break,
                Lookup::Missing { closed, fields } => {
                    let PathSegment::Field(field) = seg else { break };
                    let near = did_you_mean(field, fields.iter().map(String::as_str));
                    // An input named close to a declared one is a typo: the caller passes
                    // what the schema declares, so the run would fail there.
                    let misspelt_input = root == "inputs" && upto == 0 && !near.is_empty();
                    let (code, may) = if closed {
                        (Code::TemplatePathAbsent, "allows no other field")
                    } else if misspelt_input {
                        (Code::TemplatePathAbsent, "declares one close to it")
                    } else {
                        (Code::TemplatePathUnknown, "does not list it (it may allow others)")
                    };
                    let message = format!("`{full}`: `{prefix}` has no field `{field}` in {}, which {may}", t.source());
                    let hint = match near {
                        s if !s.is_empty() => s,
                        _ if fields.is_empty() => "it has no fields".into(),
                        _ => format!("its fields: {}", fields.join(", ")),
                    };
                    Diagnostic::new(code, format!("{base}{at}"), message).with_hint(hint)
                }
                Lookup::NotA { wanted, found } => {
                    let what = match seg {
                        PathSegment::Field(f) => format!("no field `{f}`"),
                        PathSegment::Index(i) => format!("no element [{i}]"),
                    };
                    let message = format!("`{full}`: `{prefix}` is {found} ({}), so it has {what}", t.source());
                    Diagnostic::new(Code::TemplatePathAbsent, format!("{base}{at}"), message)
                        .with_hint(format!("read `{prefix}` itself, or the step that has the {wanted} you meant"))
                }
            };
            let d = match types.producer(site, root, segments) {
                Some(producer) => d.with_producer(producer),
                None => d,
            };
            out.push(if reader.is_empty() { d } else { d.with_step(reader) });
            break;
        }
    }
}

/// A `for_each` that reads something that cannot be a list.
fn fit_list(types: &Types<'_>, idx: StepIdx, out: &mut Vec<Diagnostic>) {
    let s = &types.plan.steps[idx];
    let StepTemplates::Loop { for_each: Some(t @ (Template::Expr(_) | Template::Text(_))), .. } = &s.templates else {
        return;
    };
    let Some(have) = types.infer(t, Site { step: Some(idx), field: "/for_each" }, "this template") else { return };
    let Some(have_types) = have.json_types() else { return };
    if have_types.contains(&"array") {
        return;
    }
    let message = format!("`for_each` must be an array, but it is {} ({})", have.describe(), have.source());
    out.push(
        Diagnostic::new(Code::TemplateTypeMismatch, format!("{}/for_each", s.pointer), message)
            .with_step(s.step.id())
            .with_hint("read the field that holds the list (`{{ step.items }}`), or write a literal array"),
    );
}

/// A tool step's templated arguments against the tool's input schema (a whole template
/// standing for one argument, or text, which is always a string).
fn fit_arguments(types: &Types<'_>, idx: StepIdx, out: &mut Vec<Diagnostic>) {
    let (Some(tool), StepTemplates::Tool { args: Some(Template::Object(members)) }) =
        (types.tools.get(&idx), &types.plan.steps[idx].templates)
    else {
        return;
    };
    let s = &types.plan.steps[idx];
    let wants = Type::new(tool.input.clone(), format!("the input schema of `{}`/`{}`", tool.server, tool.tool));
    for (name, template) in members {
        if matches!(template, Template::Literal(_)) {
            continue; // checked against the schema as it is (ARG_INVALID)
        }
        let Lookup::Found(Some(want)) = wants.lookup(&PathSegment::Field(name.clone())) else { continue };
        let site = Site { step: Some(idx), field: "/args" };
        let Some(have) = types.infer(template, site, "this template") else { continue };
        let (Some(want_types), Some(have_types)) = (want.json_types(), have.json_types()) else { continue };
        if want_types.is_empty() || have_types.iter().any(|t| want_types.contains(t)) {
            continue;
        }
        let what = match template {
            Template::Expr(e) => {
                format!("`{{{{ {} }}}}`", e.plain_path().map(|(r, p)| shown(r, p)).unwrap_or_default())
            }
            _ => "text with templates".into(),
        };
        let message = format!(
            "argument `{name}` of tool `{}`/`{}` must be {}, but {what} is {} ({})",
            tool.server,
            tool.tool,
            want.describe(),
            have.describe(),
            have.source()
        );
        let hint = match (want_types.as_slice(), have_types.as_slice()) {
            (["string"], _) => "make it text: `{{ to_string(…) }}`, or write it inside a sentence".to_owned(),
            (["number"], ["string"]) => "convert it: `{{ to_number(…) }}`".to_owned(),
            (["array"], _) => "wrap it in a list: `{{ [ … ] }}`, or read the field that holds the list".to_owned(),
            _ => format!("read a value that is {}", want.describe()),
        };
        out.push(
            Diagnostic::new(Code::TemplateTypeMismatch, pointer_push(&format!("{}/args", s.pointer), name), message)
                .with_step(s.step.id())
                .with_hint(hint),
        );
    }
}
