//! Two-tier validation (DESIGN §2): errors block save and run, warnings never block.
//!
//! [`check_bytes`] reads, decodes and validates a file; [`validate`] checks a decoded
//! [`Blueprint`] and, when it has no errors, returns the [`Plan`] the engine runs.
//! The passes, in order: top-level fields, the step arena (ids, per-step fields,
//! templates), references (`after`, `fallback`, switch targets), the dependency graph
//! (cycles, ancestors), what each template reads, reachability, and — given a
//! [`ToolCatalog`] — the tool warnings.

mod fields;
pub use fields::compile_schema;
mod graph;
mod reads;
mod tools;
mod types;

use crate::catalog::{ToolCatalog, WorkflowCatalog};
use crate::decode::decode_repaired;
use crate::diagnostic::{Code, Diagnostic, pointer_push};
use crate::model::{Blueprint, Step, StepKind};
use crate::plan::{Plan, PlannedStep, StepIdx, StepList, StepTemplates};
use crate::source::{SourceMap, parse};
use crate::template::{Template, TemplateError};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// What validation may consult besides the blueprint itself.
#[derive(Default, Clone, Copy)]
pub struct Options<'a> {
    /// Servers and their tools, for the tool warnings.
    pub catalog: Option<&'a dyn ToolCatalog>,
    /// Other blueprints, for `workflow` references across blueprints.
    pub workflows: Option<&'a dyn WorkflowCatalog>,
}

impl std::fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("catalog", &self.catalog.is_some())
            .field("workflows", &self.workflows.is_some())
            .finish()
    }
}

/// The outcome of checking a blueprint.
#[derive(Debug)]
pub struct Report {
    /// Errors and warnings, in document order when positions are known.
    pub diagnostics: Vec<Diagnostic>,
    /// The decoded blueprint, when its shape was sound.
    pub blueprint: Option<Blueprint>,
    /// The runnable plan, when there were no errors.
    pub plan: Option<Plan>,
    /// Positions, when the blueprint came from text.
    pub source: Option<SourceMap>,
}

impl Report {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.level == crate::Level::Warning)
    }

    pub fn notes(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.level == crate::Level::Note)
    }
}

/// Reads, decodes and validates blueprint text. Every diagnostic gets a position.
pub fn check_bytes(bytes: &[u8], options: &Options<'_>) -> Report {
    let parsed = match parse(bytes) {
        Ok(p) => p,
        Err(d) => return Report { diagnostics: vec![d], blueprint: None, plan: None, source: None },
    };
    let mut map = parsed.map;
    let mut diagnostics = parsed.warnings;
    let mut report = check_value(parsed.value, options);
    diagnostics.append(&mut report.diagnostics);
    if diagnostics.iter().any(|d| d.position.is_none()) {
        // The value was consumed by decoding; reading the text again is cheaper than
        // keeping a copy for the (rare) documents that have findings.
        if let Ok(again) = parse(bytes) {
            map.locate(&again.value, &mut diagnostics);
        }
    }
    diagnostics.sort_by_key(|d| d.position);
    report.diagnostics = diagnostics;
    report.source = Some(map);
    report
}

/// Decodes and validates a JSON value. A document whose shape has errors is validated
/// too, repaired ([`decode_repaired`]), for what else is wrong: every finding at once, but
/// none inside the parts the shape errors are about.
pub fn check_value(value: Value, options: &Options<'_>) -> Report {
    let (blueprint, mut diagnostics) = decode_repaired(value);
    let Some(bp) = blueprint else {
        return Report { diagnostics, blueprint: None, plan: None, source: None };
    };
    let (mut more, plan) = validate(&bp, options);
    if diagnostics.iter().any(Diagnostic::is_error) {
        let broken: Vec<String> =
            diagnostics.iter().filter(|d| d.is_error()).map(|d| broken_part(&d.pointer)).collect();
        let inside = |p: &str| broken.iter().any(|b| p == b || p.starts_with(&format!("{b}/")) || b.is_empty());
        more.retain(|d| !inside(&d.pointer) && !diagnostics.iter().any(|e| e.code == d.code && e.pointer == d.pointer));
        diagnostics.append(&mut more);
        return Report { diagnostics, blueprint: None, plan: None, source: None };
    }
    diagnostics.append(&mut more);
    Report { diagnostics, blueprint: Some(bp), plan, source: None }
}

/// The part of a document a shape error spoils: its step (`/steps/3` of
/// `/steps/3/args/x`, the innermost for loop bodies), else its top-level field.
fn broken_part(pointer: &str) -> String {
    let parts: Vec<&str> = pointer.split('/').collect();
    let step_end = (1..parts.len()).rev().find(|&i| parts[i - 1] == "steps" && parts[i].parse::<usize>().is_ok());
    match step_end {
        Some(i) => parts[..=i].join("/"),
        None => parts[..parts.len().min(2)].join("/"),
    }
}

/// Validates a decoded blueprint. Returns the diagnostics and, without errors, the plan.
pub fn validate(bp: &Blueprint, options: &Options<'_>) -> (Vec<Diagnostic>, Option<Plan>) {
    let mut v = Validator {
        bp,
        options,
        diags: Vec::new(),
        plan: Plan { steps: Vec::new(), lists: Vec::new(), by_id: HashMap::new(), output: None },
        ancestors: Vec::new(),
        loop_variables: HashSet::new(),
        saved_names: HashMap::new(),
        tool_schemas: HashMap::new(),
    };
    v.top_level();
    v.arena(&bp.steps, "/steps", None);
    v.references();
    v.graph();
    v.reads();
    v.reachability();
    v.layout();
    v.workflows();
    v.tools();
    v.types();
    let ok = !v.diags.iter().any(Diagnostic::is_error);
    (v.diags, ok.then_some(v.plan))
}

pub(crate) struct Validator<'a> {
    bp: &'a Blueprint,
    options: &'a Options<'a>,
    diags: Vec<Diagnostic>,
    plan: Plan,
    /// Per list: each member's ancestors (by position) as a bitset, or `None` when
    /// the list has a cycle.
    ancestors: Vec<Option<Vec<Bits>>>,
    /// Every loop variable name (`item` and each `as`), for "outside its loop" errors.
    loop_variables: HashSet<String>,
    /// `save` name → the step that writes it.
    saved_names: HashMap<String, String>,
    /// Tool step → its tool's schemas, as the catalog gave them (for [`types`]).
    tool_schemas: HashMap<StepIdx, types::ToolSchemas>,
}

/// A fixed-size bitset over positions in one list.
#[derive(Clone, Debug)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Self {
        Bits(vec![0; len.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn get(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    fn union(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
}

const RESERVED: &[&str] = &["inputs", "steps", "item", "index", "error", "saved", "run", "prev"];

pub(crate) fn is_step_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(crate) fn is_blueprint_id(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

impl Validator<'_> {
    fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn step_diag(&self, idx: StepIdx, code: Code, field: &str, message: impl Into<String>) -> Diagnostic {
        let s = &self.plan.steps[idx];
        Diagnostic::new(code, format!("{}{field}", s.pointer), message).with_step(s.step.id())
    }

    fn template_errors(&mut self, errors: Vec<TemplateError>, base: &str, step: Option<&str>) {
        for e in errors {
            let d = e.into_diagnostic(base);
            self.diags.push(match step {
                Some(s) => d.with_step(s),
                None => d,
            });
        }
    }

    fn compile(&mut self, value: &Value, base: &str, step: Option<&str>) -> Template {
        match Template::compile(value) {
            Ok(t) => t,
            Err(errors) => {
                self.template_errors(errors, base, step);
                Template::Literal(Value::Null)
            }
        }
    }

    fn top_level(&mut self) {
        let bp = self.bp;
        if !is_blueprint_id(&bp.id) {
            self.push(
                Diagnostic::new(Code::InvalidId, "/id", format!("blueprint id `{}` is not allowed", bp.id))
                    .with_hint("use lowercase letters, digits, `-` and `_`, starting with a letter or digit"),
            );
        }
        if bp.steps.is_empty() {
            self.push(
                Diagnostic::new(Code::InvalidValue, "/steps", "the blueprint has no steps")
                    .with_hint("add at least one step"),
            );
        }
        self.limits();
        if let Some(r) = &bp.retry {
            self.retry(r, "/retry", None);
        }
        self.inputs_schema();
        self.output_schema();
        self.schedule();
        self.servers();
        if let Some(out) = &bp.output {
            let t = self.compile(out, "/output", None);
            self.plan.output = Some(t);
        }
    }

    /// Flattens a step list into the arena, checking ids and per-step fields and
    /// compiling templates. Returns the list index.
    fn arena(&mut self, steps: &[Step], pointer: &str, owner: Option<StepIdx>) -> usize {
        let list = self.plan.lists.len();
        self.plan.lists.push(StepList { owner, members: Vec::new(), pointer: pointer.to_owned() });
        for (position, step) in steps.iter().enumerate() {
            let step_ptr = pointer_push(pointer, &position.to_string());
            let idx = self.plan.steps.len();
            let id = step.id().to_owned();
            self.step_id(&id, &step_ptr);
            let templates = self.step_templates(step, &step_ptr);
            self.step_fields(step, &step_ptr, &templates);
            let stored = match &step.kind {
                StepKind::Loop(l) => {
                    self.loop_variables.insert(l.as_name.clone().unwrap_or_else(|| "item".into()));
                    Step { common: step.common.clone(), kind: StepKind::Loop(l.without_body()) }
                }
                _ => step.clone(),
            };
            self.plan.steps.push(PlannedStep {
                step: stored,
                pointer: step_ptr.clone(),
                list,
                position,
                deps: Vec::new(),
                switch: None,
                fallback: None,
                fallback_of: None,
                body: None,
                templates,
            });
            self.plan.lists[list].members.push(idx);
            self.plan.by_id.entry(id).or_insert(idx);
            if let StepKind::Loop(l) = &step.kind {
                let body = self.arena(&l.steps, &pointer_push(&step_ptr, "steps"), Some(idx));
                self.plan.steps[idx].body = Some(body);
            }
        }
        list
    }

    fn step_id(&mut self, id: &str, step_ptr: &str) {
        let ptr = pointer_push(step_ptr, "id");
        if !is_step_id(id) {
            self.push(
                Diagnostic::new(Code::InvalidId, &ptr, format!("step id `{id}` is not allowed"))
                    .with_step(id)
                    .with_hint("use letters, digits and `_`, not starting with a digit (it is used in templates)"),
            );
        } else if RESERVED.contains(&id) {
            self.push(
                Diagnostic::new(
                    Code::ReservedStepId,
                    &ptr,
                    format!("`{id}` is a reserved name and cannot be a step id"),
                )
                .with_step(id)
                .with_hint(format!("rename the step; reserved: {}", RESERVED.join(", "))),
            );
        } else if let Some(&first) = self.plan.by_id.get(id) {
            let first_ptr = self.plan.steps[first].pointer.clone();
            self.push(
                Diagnostic::new(Code::DuplicateStepId, &ptr, format!("step id `{id}` is already used at {first_ptr}"))
                    .with_step(id)
                    .with_hint("step ids are unique in the whole blueprint, loop bodies included; rename one"),
            );
        }
    }

    fn step_templates(&mut self, step: &Step, ptr: &str) -> StepTemplates {
        let id = Some(step.id());
        let opt = |v: &mut Self, value: &Option<Value>, field: &str| {
            value.as_ref().map(|val| v.compile(val, &pointer_push(ptr, field), id))
        };
        match &step.kind {
            StepKind::Tool(t) => StepTemplates::Tool { args: opt(self, &t.args, "args") },
            StepKind::Prompt(p) => StepTemplates::Prompt { args: opt(self, &p.args, "args") },
            StepKind::Workflow(w) => StepTemplates::Workflow { args: opt(self, &w.args, "args") },
            StepKind::Resource(r) => StepTemplates::Resource {
                uri: self.compile(&Value::String(r.uri.clone()), &pointer_push(ptr, "uri"), id),
            },
            StepKind::Transform(t) => {
                StepTemplates::Transform { value: self.compile(&t.value, &pointer_push(ptr, "value"), id) }
            }
            StepKind::Switch(s) => StepTemplates::Switch {
                when: s
                    .cases
                    .iter()
                    .enumerate()
                    .map(|(i, c)| self.compile(&Value::String(c.when.clone()), &format!("{ptr}/cases/{i}/when"), id))
                    .collect(),
            },
            StepKind::Loop(l) => StepTemplates::Loop {
                for_each: opt(self, &l.for_each, "for_each"),
                until: opt(self, &l.until.clone().map(Value::String), "until"),
                collect: opt(self, &l.collect, "collect"),
            },
            StepKind::Wait(_) => StepTemplates::Wait,
            StepKind::Input(i) => StepTemplates::Input {
                prompt: self.compile(&Value::String(i.prompt.clone()), &pointer_push(ptr, "prompt"), id),
                default: opt(self, &i.default, "default"),
            },
        }
    }
}

/// Checks several documents together: `workflow` steps are checked against the
/// blueprints among them (unknown ids, recursion across blueprints).
pub fn check_many(documents: &[&[u8]], options: &Options<'_>) -> Vec<Report> {
    let first: Vec<Report> = documents.iter().map(|d| check_bytes(d, options)).collect();
    let mut calls: std::collections::BTreeMap<String, Vec<String>> = std::collections::BTreeMap::new();
    for bp in first.iter().filter_map(|r| r.blueprint.as_ref()) {
        calls.insert(bp.id.clone(), workflow_calls(&bp.steps));
    }
    if documents.len() < 2 || options.workflows.is_some() {
        return first;
    }
    let with_workflows = Options { workflows: Some(&calls), ..*options };
    documents
        .iter()
        .zip(first)
        .map(|(d, r)| if r.blueprint.is_some() { check_bytes(d, &with_workflows) } else { r })
        .collect()
}

/// The blueprint ids a step list calls through `workflow` steps, loop bodies included.
pub fn workflow_calls(steps: &[Step]) -> Vec<String> {
    let mut out = Vec::new();
    for s in steps {
        match &s.kind {
            StepKind::Workflow(w) => out.push(w.workflow.clone()),
            StepKind::Loop(l) => out.extend(workflow_calls(&l.steps)),
            _ => {}
        }
    }
    out
}
