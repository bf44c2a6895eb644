//! Rendering compiled templates against a scope.
//!
//! The scope is never copied per evaluation: plain paths walk shared values directly,
//! and other expressions get a root object holding only the names they read (shared
//! pointers, not copies). Step outputs are converted to JMESPath values once, when
//! they are produced (see [`value_to_var`]).

use super::budget::{Past, RUNTIME, json_size, value_fits, with_budget};
use super::expr::{Expr, PathSegment};
use super::interpret::interpret;
use super::{Segment, Template};
use crate::diagnostic::nearest;
use crate::limits::{DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_DEPTH, MAX_TEMPLATE_OPS};
use jmespath::{Rcvar, Variable};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Where templates look names up. The engine implements it over its run state.
pub trait Scope {
    /// The value bound to a root name (`inputs`, a step id, `prev`, `item`, …).
    fn get(&self, name: &str) -> Option<Rcvar>;

    /// `steps.<id>`: `{ output, status, error, attempts, duration_ms }`.
    fn step_record(&self, id: &str) -> Option<Rcvar> {
        self.get("steps").and_then(|s| s.as_object().and_then(|m| m.get(id).cloned()))
    }

    /// Every root name bound here (for suggestions in error messages).
    fn names(&self) -> Vec<String>;

    /// The largest value, in JSON bytes, a template may build here (`limits.max_value_bytes`).
    fn max_value_bytes(&self) -> u64 {
        DEFAULT_MAX_VALUE_BYTES
    }

    /// The deepest nesting a value a template builds here may have (`limits.max_value_depth`).
    fn max_value_depth(&self) -> u32 {
        DEFAULT_MAX_VALUE_DEPTH
    }
}

/// A scope made of plain maps; enough for tests, tools and simple front doors.
#[derive(Debug, Default, Clone)]
pub struct MapScope {
    vars: HashMap<String, Rcvar>,
    steps: HashMap<String, Rcvar>,
    max_value_bytes: Option<u64>,
}

impl MapScope {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the largest value a template may build (default: [`DEFAULT_MAX_VALUE_BYTES`]).
    pub fn with_max_value_bytes(mut self, bytes: u64) -> Self {
        self.max_value_bytes = Some(bytes);
        self
    }

    /// Binds a root name.
    pub fn set(&mut self, name: impl Into<String>, value: Rcvar) -> &mut Self {
        self.vars.insert(name.into(), value);
        self
    }

    /// Binds a root name to a JSON value (converted once).
    pub fn set_json(&mut self, name: impl Into<String>, value: Value) -> &mut Self {
        self.set(name, value_to_var(value))
    }

    /// Records a step: its output under its id and its record under `steps.<id>`.
    pub fn set_step(&mut self, id: impl Into<String>, output: Rcvar, record: Rcvar) -> &mut Self {
        let id = id.into();
        self.vars.insert(id.clone(), output);
        self.steps.insert(id, record);
        self
    }

    /// Builds a scope from a JSON object of root names (as in the docs' examples).
    /// `steps` entries are split into step records.
    pub fn from_json(root: &Value) -> Self {
        let mut scope = MapScope::new();
        if let Some(obj) = root.as_object() {
            for (k, v) in obj {
                if k == "steps" {
                    if let Some(steps) = v.as_object() {
                        for (id, record) in steps {
                            scope.steps.insert(id.clone(), value_to_var(record.clone()));
                        }
                    }
                } else {
                    scope.set_json(k.clone(), v.clone());
                }
            }
        }
        scope
    }
}

impl Scope for MapScope {
    fn get(&self, name: &str) -> Option<Rcvar> {
        if name == "steps" {
            let map: BTreeMap<String, Rcvar> = self.steps.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            return Some(Rcvar::new(Variable::Object(map)));
        }
        self.vars.get(name).cloned()
    }

    fn step_record(&self, id: &str) -> Option<Rcvar> {
        self.steps.get(id).cloned()
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.vars.keys().cloned().collect();
        if !self.steps.is_empty() {
            names.push("steps".into());
        }
        names.sort();
        names
    }

    fn max_value_bytes(&self) -> u64 {
        self.max_value_bytes.unwrap_or(DEFAULT_MAX_VALUE_BYTES)
    }
}

/// Converts JSON into a JMESPath value (do this once per value, not per evaluation).
pub fn value_to_var(value: Value) -> Rcvar {
    Rcvar::new(to_variable(value))
}

fn to_variable(value: Value) -> Variable {
    match value {
        Value::Null => Variable::Null,
        Value::Bool(b) => Variable::Bool(b),
        Value::Number(n) => Variable::Number(n),
        Value::String(s) => Variable::String(s),
        Value::Array(items) => {
            // Not `collect()`: collected in place, the pointers would keep the buffer of
            // the JSON values they came from (nine times their size).
            let mut vars = Vec::with_capacity(items.len());
            vars.extend(items.into_iter().map(value_to_var));
            Variable::Array(vars)
        }
        Value::Object(map) => Variable::Object(map.into_iter().map(|(k, v)| (k, value_to_var(v))).collect()),
    }
}

/// [`value_to_var`] of a value that stays where it is (no copy of it first).
pub fn value_ref_to_var(value: &Value) -> Rcvar {
    Rcvar::new(match value {
        Value::Null => Variable::Null,
        Value::Bool(b) => Variable::Bool(*b),
        Value::Number(n) => Variable::Number(n.clone()),
        Value::String(s) => Variable::String(s.clone()),
        Value::Array(items) => Variable::Array(items.iter().map(value_ref_to_var).collect()),
        Value::Object(map) => Variable::Object(map.iter().map(|(k, v)| (k.clone(), value_ref_to_var(v))).collect()),
    })
}

/// Most JSON nodes one template may produce (a result built from shared parts can be
/// far larger than anything in the scope).
pub const MAX_RESULT_NODES: usize = 5_000_000;

/// Converts a JMESPath value into JSON, refusing results over [`MAX_RESULT_NODES`].
pub fn var_to_value_bounded(var: &Variable) -> Result<Value, usize> {
    fn walk(v: &Variable, budget: &mut usize) -> Option<Value> {
        *budget = budget.checked_sub(1)?;
        Some(match v {
            Variable::Array(items) => {
                // Sized up front (a collect through `Option` grows by doubling).
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(walk(item, budget)?);
                }
                Value::Array(values)
            }
            Variable::Object(map) => {
                Value::Object(map.iter().map(|(k, i)| walk(i, budget).map(|v| (k.clone(), v))).collect::<Option<_>>()?)
            }
            other => var_to_value(other),
        })
    }
    let mut budget = MAX_RESULT_NODES;
    walk(var, &mut budget).ok_or(MAX_RESULT_NODES)
}

/// Converts a JMESPath value back into JSON.
pub fn var_to_value(var: &Variable) -> Value {
    match var {
        Variable::Null => Value::Null,
        Variable::Bool(b) => Value::Bool(*b),
        Variable::Number(n) => Value::Number(n.clone()),
        Variable::String(s) => Value::String(s.clone()),
        Variable::Array(items) => Value::Array(items.iter().map(|v| var_to_value(v)).collect()),
        Variable::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), var_to_value(v))).collect()),
        Variable::Expref(_) => Value::Null,
    }
}

/// JMESPath truthiness: false, null, "", [] and {} are false; everything else is true.
pub fn truthy(var: &Variable) -> bool {
    var.is_truthy()
}

/// Why rendering failed. `code` is the stable error code of the run's error envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RenderError {
    /// `TEMPLATE_UNRESOLVED` (a plain path's key is missing), `TEMPLATE_EVAL`,
    /// `TEMPLATE_TOO_LARGE` (the value would be larger than `limits.max_value_bytes`),
    /// `TEMPLATE_TOO_DEEP` (deeper than `limits.max_value_depth`) or `TEMPLATE_TOO_COSTLY`
    /// (more operations than one evaluation may take).
    pub code: &'static str,
    pub expression: String,
    pub message: String,
    pub hint: Option<String>,
}

impl Template {
    /// Renders to JSON.
    pub fn render(&self, scope: &dyn Scope) -> Result<Value, RenderError> {
        match self {
            Template::Literal(v) => Ok(v.clone()),
            Template::Expr(e) => bounded(e, &*e.eval(scope)?),
            Template::Text(segs) => render_text(segs, scope).map(Value::String),
            Template::Array(_) | Template::Object(_) => {
                // Built from shared members and measured whole before it becomes JSON.
                let var = self.render_var(scope)?;
                var_to_value_bounded(&var).map_err(|limit| RenderError {
                    code: "TEMPLATE_EVAL",
                    expression: String::new(),
                    message: format!("the template produced more than {limit} values"),
                    hint: Some("select less data, or split the work over several steps".into()),
                })
            }
        }
    }

    /// Renders to a JMESPath value. Nothing read from the scope is copied: whole-string
    /// templates return the shared value itself, and arrays and objects hold the shared
    /// values of their members (members are bounded as in [`Template::render`]).
    pub fn render_var(&self, scope: &dyn Scope) -> Result<Rcvar, RenderError> {
        let var = self.build_var(scope)?;
        if matches!(self, Template::Array(_) | Template::Object(_)) {
            // Each member was measured; together they may still be too large.
            if let Err(past) = value_fits(&var, scope.max_value_bytes(), scope.max_value_depth()) {
                return Err(past_limit(past, "the template", String::new(), scope));
            }
        }
        Ok(var)
    }

    fn build_var(&self, scope: &dyn Scope) -> Result<Rcvar, RenderError> {
        match self {
            Template::Expr(e) => e.eval(scope),
            Template::Text(segs) => Ok(Rcvar::new(Variable::String(render_text(segs, scope)?))),
            Template::Literal(v) => Ok(value_to_var(v.clone())),
            Template::Array(items) => items
                .iter()
                .map(|t| t.render_member(scope))
                .collect::<Result<_, _>>()
                .map(|items| Rcvar::new(Variable::Array(items))),
            Template::Object(members) => members
                .iter()
                .map(|(k, t)| t.render_member(scope).map(|v| (k.clone(), v)))
                .collect::<Result<_, _>>()
                .map(|map| Rcvar::new(Variable::Object(map))),
        }
    }

    /// A member of an array or object: like [`Template::render_var`], with an
    /// expression's result held to [`MAX_RESULT_NODES`] as [`Template::render`] does.
    fn render_member(&self, scope: &dyn Scope) -> Result<Rcvar, RenderError> {
        match self {
            Template::Expr(e) => {
                let var = e.eval(scope)?;
                within_bound(e, &var)?;
                Ok(var)
            }
            other => other.build_var(scope),
        }
    }
}

/// Fails as [`bounded`] does when `var` as JSON would have more than
/// [`MAX_RESULT_NODES`] nodes, without building that JSON.
fn within_bound(e: &Expr, var: &Variable) -> Result<(), RenderError> {
    fn walk(v: &Variable, budget: &mut usize) -> Option<()> {
        *budget = budget.checked_sub(1)?;
        match v {
            Variable::Array(items) => items.iter().try_for_each(|i| walk(i, budget)),
            Variable::Object(map) => map.values().try_for_each(|i| walk(i, budget)),
            _ => Some(()),
        }
    }
    let mut budget = MAX_RESULT_NODES;
    walk(var, &mut budget).ok_or_else(|| too_many(e, MAX_RESULT_NODES))
}

fn render_text(segs: &[Segment], scope: &dyn Scope) -> Result<String, RenderError> {
    let limit = scope.max_value_bytes();
    let mut out = String::new();
    for seg in segs {
        let fits = |extra: usize| (out.len() as u64).checked_add(extra as u64).is_some_and(|n| n <= limit);
        match seg {
            Segment::Text(t) if fits(t.len()) => out.push_str(t),
            Segment::Text(_) => return Err(too_large("the text", String::new(), limit)),
            Segment::Expr(e) => match &*e.eval(scope)? {
                Variable::String(s) if fits(s.len()) => out.push_str(s),
                Variable::String(_) => return Err(too_large_expr(e, limit)),
                other => {
                    if json_size(other, limit - out.len() as u64).is_none() {
                        return Err(too_large_expr(e, limit));
                    }
                    let _ = write!(out, "{}", serde_json::to_string(&bounded(e, other)?).unwrap_or_default());
                }
            },
        }
    }
    Ok(out)
}

fn bounded(e: &Expr, var: &Variable) -> Result<Value, RenderError> {
    var_to_value_bounded(var).map_err(|limit| too_many(e, limit))
}

fn too_large_expr(e: &Expr, limit: u64) -> RenderError {
    too_large(&format!("`{}`", e.source()), e.source().to_owned(), limit)
}

fn too_large(what: &str, expression: String, limit: u64) -> RenderError {
    RenderError {
        code: "TEMPLATE_TOO_LARGE",
        expression,
        message: format!("{what} would build a value larger than {limit} bytes (limits.max_value_bytes)"),
        hint: Some("select less data, split the work over several steps, or raise limits.max_value_bytes".into()),
    }
}

/// The error for a value or an evaluation past one of the scope's budgets.
fn past_limit(past: Past, what: &str, expression: String, scope: &dyn Scope) -> RenderError {
    match past {
        Past::Bytes => too_large(what, expression, scope.max_value_bytes()),
        Past::Depth => RenderError {
            code: "TEMPLATE_TOO_DEEP",
            expression,
            message: format!(
                "{what} would build a value nested deeper than {} levels (limits.max_value_depth)",
                scope.max_value_depth()
            ),
            hint: Some("build flatter values (a list of records rather than lists inside lists), or raise limits.max_value_depth (at most 100)".into()),
        },
        Past::Ops => RenderError {
            code: "TEMPLATE_TOO_COSTLY",
            expression,
            message: format!("{what} would take more than {MAX_TEMPLATE_OPS} operations, what one template may do"),
            hint: Some("do heavy work in a tool, or spread it over the iterations of a for_each".into()),
        },
    }
}

fn past_expr(e: &Expr, past: Past, scope: &dyn Scope) -> RenderError {
    past_limit(past, &format!("`{}`", e.source()), e.source().to_owned(), scope)
}

fn too_many(e: &Expr, limit: usize) -> RenderError {
    RenderError {
        code: "TEMPLATE_EVAL",
        expression: e.source().to_owned(),
        message: format!("`{}` produced more than {limit} values", e.source()),
        hint: Some("select less data, or split the work over several steps".into()),
    }
}

impl Expr {
    /// Evaluates against a scope. Plain paths are strict (see the module docs).
    pub fn eval(&self, scope: &dyn Scope) -> Result<Rcvar, RenderError> {
        if let Some((root, segs)) = self.plain_path() {
            return self.eval_plain(root, segs, scope);
        }
        let root = if self.reads_whole_scope() {
            let mut map = BTreeMap::new();
            for name in scope.names() {
                if let Some(v) = scope.get(&name) {
                    map.insert(name, v);
                }
            }
            map
        } else {
            self.refs()
                .iter()
                .filter_map(|r| scope.get(&r.name).map(|v| (r.name.clone(), v)))
                .collect::<BTreeMap<_, _>>()
        };
        // `Expression::search` would first copy its input into a new tree (jmespath 0.5
        // converts anything it is given through serde unless built with the nightly
        // `specialized` feature); the interpreter reads the shared root as it is.
        let root = Rcvar::new(Variable::Object(root));
        let program = self.program();
        // jmespath 0.5 has panicked on odd input before (slice arithmetic); a template
        // must never take the process down, so a panic becomes an evaluation error.
        // Functions that build strings charge them to the budget as they go (see
        // `budget`); the result, which may hold shared parts many times, is measured after.
        let limit = scope.max_value_bytes();
        let (outcome, past) = with_budget(limit, || {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut context = jmespath::Context::new(program.as_str(), &RUNTIME);
                interpret(&root, program.as_ast(), &mut context)
            }))
        });
        if let Some(past) = past {
            return Err(past_expr(self, past, scope));
        }
        match outcome {
            Ok(Ok(v)) => match value_fits(&v, limit, scope.max_value_depth()) {
                Ok(_) => Ok(v),
                Err(past) => Err(past_expr(self, past, scope)),
            },
            Ok(Err(e)) => Err(RenderError {
                code: "TEMPLATE_EVAL",
                expression: self.source().to_owned(),
                message: format!("`{}` failed: {}", self.source(), e.reason),
                hint: Some("check the types the expression's functions expect".into()),
            }),
            Err(_) => Err(RenderError {
                code: "TEMPLATE_EVAL",
                expression: self.source().to_owned(),
                message: format!("`{}` could not be evaluated (the expression engine failed)", self.source()),
                hint: Some("simplify the expression; please report it".into()),
            }),
        }
    }

    fn eval_plain(&self, root: &str, segs: &[PathSegment], scope: &dyn Scope) -> Result<Rcvar, RenderError> {
        let (mut cur, mut walked, rest) = match (root, segs.first()) {
            ("steps", Some(PathSegment::Field(id))) => match scope.step_record(id) {
                Some(v) => (v, format!("steps.{id}"), &segs[1..]),
                None => return Err(self.unresolved(&format!("steps.{id}"), "steps", id, step_ids(scope))),
            },
            _ => match scope.get(root) {
                Some(v) => (v, root.to_owned(), segs),
                None => return Err(self.unresolved(root, "", root, scope.names())),
            },
        };
        for seg in rest {
            let next = match (seg, &*cur) {
                (PathSegment::Field(k), Variable::Object(map)) => match map.get(k) {
                    Some(v) => v.clone(),
                    None => {
                        return Err(self.unresolved(
                            &format!("{walked}.{k}"),
                            &walked,
                            k,
                            map.keys().cloned().collect(),
                        ));
                    }
                },
                (PathSegment::Index(i), Variable::Array(items)) => {
                    let idx = if *i < 0 { items.len() as i64 + i64::from(*i) } else { i64::from(*i) };
                    match usize::try_from(idx).ok().and_then(|i| items.get(i)) {
                        Some(v) => v.clone(),
                        None => {
                            return Err(RenderError {
                                code: "TEMPLATE_UNRESOLVED",
                                expression: self.source().to_owned(),
                                message: format!(
                                    "`{}`: index {i} is out of range; `{walked}` has {} item(s)",
                                    self.source(),
                                    items.len()
                                ),
                                hint: Some(format!("write `{} || <default>` if it may be missing", self.source())),
                            });
                        }
                    }
                }
                (seg, other) => {
                    let what = match other {
                        Variable::Null => "null",
                        Variable::Bool(_) => "a boolean",
                        Variable::Number(_) => "a number",
                        Variable::String(_) => "a string",
                        Variable::Array(_) => "an array",
                        Variable::Object(_) => "an object",
                        Variable::Expref(_) => "an expression",
                    };
                    return Err(RenderError {
                        code: "TEMPLATE_UNRESOLVED",
                        expression: self.source().to_owned(),
                        message: format!(
                            "`{}`: `{walked}` is {what}, so `{seg}` cannot be read from it",
                            self.source()
                        ),
                        hint: Some(format!("write `{} || <default>` if it may be missing", self.source())),
                    });
                }
            };
            let _ = write!(walked, "{seg}");
            if walked.starts_with('.') {
                walked.remove(0);
            }
            cur = next;
        }
        Ok(cur)
    }

    fn unresolved(&self, path: &str, parent: &str, missing: &str, available: Vec<String>) -> RenderError {
        let suggestion = nearest(missing, available.iter().map(String::as_str));
        let mut message = if parent.is_empty() {
            format!("`{}`: `{missing}` is not in scope", self.source())
        } else {
            format!("`{}`: `{parent}` has no key `{missing}`", self.source())
        };
        if let Some(s) = suggestion {
            let _ = write!(message, "; did you mean `{s}`?");
        }
        let mut shown: Vec<&str> = available.iter().map(String::as_str).take(20).collect();
        shown.sort_unstable();
        let keys = if shown.is_empty() { "none".to_owned() } else { shown.join(", ") };
        let _ = write!(message, " (keys that exist: {keys}{})", if available.len() > 20 { ", …" } else { "" });
        RenderError {
            code: "TEMPLATE_UNRESOLVED",
            expression: self.source().to_owned(),
            message,
            hint: Some(format!("write `{} || <default>` to allow `{path}` to be missing", self.source())),
        }
    }
}

fn step_ids(scope: &dyn Scope) -> Vec<String> {
    scope.get("steps").and_then(|s| s.as_object().map(|m| m.keys().cloned().collect())).unwrap_or_default()
}
