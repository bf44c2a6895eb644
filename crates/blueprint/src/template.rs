//! Templates: `{{ expr }}` inside JSON strings, where `expr` is JMESPath over the run's
//! scope (`inputs`, step outputs, `steps`, `prev`, loop variables, `error`, `saved`, `run`).
//!
//! | string | result |
//! |---|---|
//! | `"{{ pods.count }}"` (exactly one template) | the raw value, type kept |
//! | `"n = {{ pods.count }}"` | text; non-strings as compact JSON |
//! | `"\{{ literal"` | the text `{{ literal` |
//!
//! Templates are compiled once ([`Template::compile`]); rendering never re-reads a
//! result as a template. Plain paths (`a.b[0].c`) are strict: a missing key is a
//! `TEMPLATE_UNRESOLVED` error naming the key and the keys that exist.

mod budget;
mod eval;
mod expr;
mod interpret;
mod parse;

pub use budget::{CONTAINER_OVERHEAD, Past, SCALAR_OVERHEAD, json_size, ops_spent, value_fits};
pub use eval::{MapScope, RenderError, Scope, truthy, value_ref_to_var, value_to_var, var_to_value};
pub use expr::{Expr, PathSegment, RootRef};
pub use jmespath::{Rcvar, Variable};

use crate::diagnostic::{Code, Diagnostic, pointer_push};
use serde_json::Value;

/// One piece of a string: literal text or an expression.
#[derive(Debug, Clone)]
pub enum Segment {
    Text(String),
    Expr(Expr),
}

/// A compiled JSON value whose strings may hold templates.
#[derive(Debug, Clone)]
pub enum Template {
    /// Nothing to evaluate: the value as written (escapes already applied).
    Literal(Value),
    /// A string that is exactly one template: yields the raw value.
    Expr(Expr),
    /// A string mixing text and templates: yields a string.
    Text(Vec<Segment>),
    Array(Vec<Template>),
    Object(Vec<(String, Template)>),
}

/// A problem found while compiling a template, relative to the compiled value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub code: Code,
    /// JSON Pointer inside the compiled value ("" for the value itself).
    pub pointer: String,
    pub message: String,
    pub hint: Option<String>,
}

impl TemplateError {
    /// A diagnostic for this error, for a value found at `base`.
    pub fn into_diagnostic(self, base: &str) -> Diagnostic {
        let d = Diagnostic::new(self.code, format!("{base}{}", self.pointer), self.message);
        match self.hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    }
}

impl Template {
    /// Compiles every string in `value`. All errors are reported, not just the first.
    pub fn compile(value: &Value) -> Result<Template, Vec<TemplateError>> {
        let mut errors = Vec::new();
        let t = compile_at(value, "", &mut errors);
        if errors.is_empty() { Ok(t) } else { Err(errors) }
    }

    /// Compiles one string (as in `when`, `for_each`, `until`, `uri`).
    pub fn compile_str(s: &str) -> Result<Template, Vec<TemplateError>> {
        let mut errors = Vec::new();
        let t = compile_string(s, "", &mut errors);
        if errors.is_empty() { Ok(t) } else { Err(errors) }
    }

    /// Every expression in this template, with the pointer of the string holding it.
    pub fn expressions(&self) -> Vec<(String, &Expr)> {
        let mut out = Vec::new();
        self.collect_exprs("", &mut out);
        out
    }

    fn collect_exprs<'a>(&'a self, at: &str, out: &mut Vec<(String, &'a Expr)>) {
        match self {
            Template::Literal(_) => {}
            Template::Expr(e) => out.push((at.to_owned(), e)),
            Template::Text(segs) => {
                for s in segs {
                    if let Segment::Expr(e) = s {
                        out.push((at.to_owned(), e));
                    }
                }
            }
            Template::Array(items) => {
                for (i, t) in items.iter().enumerate() {
                    t.collect_exprs(&pointer_push(at, &i.to_string()), out);
                }
            }
            Template::Object(members) => {
                for (k, t) in members {
                    t.collect_exprs(&pointer_push(at, k), out);
                }
            }
        }
    }

    /// True when rendering needs no scope at all.
    pub fn is_literal(&self) -> bool {
        matches!(self, Template::Literal(_))
    }
}

fn compile_at(value: &Value, at: &str, errors: &mut Vec<TemplateError>) -> Template {
    match value {
        Value::String(s) => compile_string(s, at, errors),
        Value::Array(items) => {
            let parts: Vec<Template> = items
                .iter()
                .enumerate()
                .map(|(i, v)| compile_at(v, &pointer_push(at, &i.to_string()), errors))
                .collect();
            if parts.iter().all(Template::is_literal) {
                Template::Literal(Value::Array(parts.into_iter().map(into_literal).collect()))
            } else {
                Template::Array(parts)
            }
        }
        Value::Object(map) => {
            let parts: Vec<(String, Template)> =
                map.iter().map(|(k, v)| (k.clone(), compile_at(v, &pointer_push(at, k), errors))).collect();
            if parts.iter().all(|(_, t)| t.is_literal()) {
                Template::Literal(Value::Object(parts.into_iter().map(|(k, t)| (k, into_literal(t))).collect()))
            } else {
                Template::Object(parts)
            }
        }
        other => Template::Literal(other.clone()),
    }
}

fn into_literal(t: Template) -> Value {
    match t {
        Template::Literal(v) => v,
        _ => Value::Null,
    }
}

fn compile_string(s: &str, at: &str, errors: &mut Vec<TemplateError>) -> Template {
    let pieces = match parse::split(s) {
        Ok(p) => p,
        Err(e) => {
            errors.push(TemplateError { pointer: at.to_owned(), ..e });
            return Template::Literal(Value::String(s.to_owned()));
        }
    };
    let mut segments = Vec::with_capacity(pieces.len());
    for piece in pieces {
        match piece {
            parse::Piece::Text(t) => segments.push(Segment::Text(t)),
            parse::Piece::Expr(src) => match Expr::compile(&src) {
                Ok(e) => segments.push(Segment::Expr(e)),
                Err(e) => {
                    errors.push(TemplateError { pointer: at.to_owned(), ..e });
                    return Template::Literal(Value::String(s.to_owned()));
                }
            },
        }
    }
    match segments.len() {
        0 => Template::Literal(Value::String(String::new())),
        1 => match segments.pop() {
            Some(Segment::Expr(e)) => Template::Expr(e),
            Some(Segment::Text(t)) => Template::Literal(Value::String(t)),
            None => Template::Literal(Value::String(String::new())),
        },
        _ => Template::Text(segments),
    }
}
