//! One compiled JMESPath expression, with what the validator needs to know about it:
//! the root names it reads and, for plain paths, the path itself.

use super::TemplateError;
use crate::diagnostic::Code;
use crate::limits::{MAX_EXPRESSION_BYTES, MAX_EXPRESSION_DEPTH};
use jmespath::ast::Ast;
use std::fmt;
use std::sync::Arc;

/// A root name an expression reads: `inputs`, a step id, `steps` (with the step id
/// after it when written as `steps.<id>`), `item`, …
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootRef {
    pub name: String,
    /// For `steps.<id>…`: the `<id>`.
    pub member: Option<String>,
}

/// One step of a plain path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSegment {
    Field(String),
    Index(i32),
}

impl fmt::Display for PathSegment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathSegment::Field(name) => write!(f, ".{name}"),
            PathSegment::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A compiled expression. Cheap to clone (everything is shared).
#[derive(Clone)]
pub struct Expr(Arc<Compiled>);

struct Compiled {
    source: String,
    program: jmespath::Expression<'static>,
    /// `Some` when the expression is a plain path: root name + segments.
    plain: Option<(String, Vec<PathSegment>)>,
    refs: Vec<RootRef>,
    /// The expression reads the scope as a whole (`@`, `keys(@)` at the root).
    whole_scope: bool,
    /// `null`, `true` or `false` written bare (see [`bare_literals`]).
    bare: Vec<&'static str>,
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr({:?})", self.0.source)
    }
}

impl Expr {
    /// Compiles an expression (the text between `{{` and `}}`, trimmed).
    pub fn compile(source: &str) -> Result<Expr, TemplateError> {
        let limit = |message: String| TemplateError {
            code: Code::LimitExpression,
            pointer: String::new(),
            message,
            hint: Some("simplify the expression or split it over several transform steps".into()),
        };
        if source.len() > MAX_EXPRESSION_BYTES {
            return Err(limit(format!("an expression of {} bytes; the limit is {MAX_EXPRESSION_BYTES}", source.len())));
        }
        let depth = lexical_depth(source);
        if depth > MAX_EXPRESSION_DEPTH {
            return Err(limit(format!(
                "`{}` nests {depth} levels deep; the limit is {MAX_EXPRESSION_DEPTH}",
                abbreviate(source)
            )));
        }
        let program = jmespath::compile(source).map_err(|e| TemplateError {
            code: Code::TemplateSyntax,
            pointer: String::new(),
            message: format!("invalid JMESPath in `{}`: {}", abbreviate(source), syntax_reason(&e)),
            hint: Some("see https://jmespath.org for the expression language; quote odd keys as \"my-key\"".into()),
        })?;
        let ast = program.as_ast();
        if ast_depth(ast) > 4 * MAX_EXPRESSION_DEPTH {
            return Err(limit(format!("`{}` is nested too deeply", abbreviate(source))));
        }
        if let Some(problem) = unsafe_slice(ast) {
            return Err(limit(format!("`{}`: {problem}", abbreviate(source))));
        }
        let factor = duplication(ast);
        if factor > MAX_DUPLICATION {
            return Err(limit(format!(
                "`{}` can grow its input about {factor}-fold (multi-selects chained into multi-selects); the limit is {MAX_DUPLICATION}",
                abbreviate(source)
            )));
        }
        let mut refs = Vec::new();
        let mut whole_scope = false;
        collect_roots(ast, true, &mut refs, &mut whole_scope);
        let plain = plain_path(ast);
        let bare = bare_literals(source);
        Ok(Expr(Arc::new(Compiled { source: source.into(), program, plain, refs, whole_scope, bare })))
    }

    /// The expression text.
    pub fn source(&self) -> &str {
        &self.0.source
    }

    /// Root names read by the expression, in order of appearance (duplicates removed).
    pub fn refs(&self) -> &[RootRef] {
        &self.0.refs
    }

    /// `null`, `true` and `false` written bare, where JMESPath reads a field of that name
    /// (the literals are `` `null` ``, `` `true` ``, `` `false` ``), in order, once each.
    pub fn bare_literals(&self) -> &[&'static str] {
        &self.0.bare
    }

    /// True when the expression reads the scope as a whole (`@` at the root).
    pub fn reads_whole_scope(&self) -> bool {
        self.0.whole_scope
    }

    /// The root and segments when this is a plain path (`a.b[0].c`).
    pub fn plain_path(&self) -> Option<(&str, &[PathSegment])> {
        self.0.plain.as_ref().map(|(r, s)| (r.as_str(), s.as_slice()))
    }

    pub(crate) fn program(&self) -> &jmespath::Expression<'static> {
        &self.0.program
    }
}

/// The words `null`, `true` and `false` written as bare identifiers in `source`: outside
/// quotes (`"…"` a quoted field name, `'…'` a raw string, `` `…` `` a JSON literal) and not
/// right after a `.` (`x.null` names a field of `x` on purpose). JMESPath reads such a word
/// as a field, always missing here, where the writer meant the JSON value.
fn bare_literals(source: &str) -> Vec<&'static str> {
    let mut found: Vec<&'static str> = Vec::new();
    let mut chars = source.char_indices().peekable();
    let mut after_dot = false;
    while let Some((start, c)) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                // To the closing quote; a backslash escapes the next character.
                while let Some((_, q)) = chars.next() {
                    if q == '\\' {
                        chars.next();
                    } else if q == c {
                        break;
                    }
                }
                after_dot = false;
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = start + c.len_utf8();
                while let Some(&(i, n)) = chars.peek() {
                    if !(n.is_ascii_alphanumeric() || n == '_') {
                        break;
                    }
                    end = i + n.len_utf8();
                    chars.next();
                }
                let word = ["null", "true", "false"].into_iter().find(|w| *w == &source[start..end]);
                if let Some(word) = word.filter(|w| !after_dot && !found.contains(w)) {
                    found.push(word);
                }
                after_dot = false;
            }
            '.' => after_dot = true,
            c if c.is_whitespace() => {}
            _ => after_dot = false,
        }
    }
    found
}

fn abbreviate(s: &str) -> String {
    if s.chars().count() <= 60 { s.to_owned() } else { format!("{}…", s.chars().take(57).collect::<String>()) }
}

/// The reason part of a JMESPath error, without the multi-line caret drawing.
fn syntax_reason(e: &jmespath::JmespathError) -> String {
    let reason = e.reason.to_string();
    format!("{reason} (at character {})", e.offset + 1)
}

/// Nesting of brackets, parentheses, braces and prefix operators, outside quotes.
/// Checked before JMESPath's recursive parser sees the text.
fn lexical_depth(s: &str) -> usize {
    let b = s.as_bytes();
    let (mut depth, mut max, mut prefix) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth + prefix);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'!' if b.get(i + 1) != Some(&b'=') => {
                prefix += 1;
                max = max.max(depth + prefix);
            }
            b'&' if b.get(i + 1) == Some(&b'&') => i += 1,
            b'&' => {
                prefix += 1;
                max = max.max(depth + prefix);
            }
            _ => {}
        }
        i += 1;
    }
    max
}

/// How much larger than its input an expression's result may be. Multi-selects add up
/// their elements (`[@, @]` doubles), chains multiply (`x | y`, `a.b`, projections).
/// Chained `[@, @] | [@, @] | …` would otherwise let a 4 KB expression build, or
/// compare, 2^40 values. Returns the largest factor found at any node.
const MAX_DUPLICATION: u128 = 100_000;

fn duplication(ast: &Ast) -> u128 {
    fn amp(ast: &Ast, worst: &mut u128) -> u128 {
        let a = match ast {
            Ast::MultiList { elements, .. } => elements.iter().fold(0u128, |acc, e| acc.saturating_add(amp(e, worst))),
            Ast::MultiHash { elements, .. } => {
                elements.iter().fold(0u128, |acc, kv| acc.saturating_add(amp(&kv.value, worst)))
            }
            Ast::Function { args, .. } => args.iter().fold(0u128, |acc, e| acc.saturating_add(amp(e, worst))).max(1),
            Ast::Subexpr { lhs, rhs, .. } | Ast::Projection { lhs, rhs, .. } => {
                amp(lhs, worst).saturating_mul(amp(rhs, worst))
            }
            Ast::Comparison { lhs, rhs, .. } => {
                // A boolean, but comparing costs as much as both sides are large.
                let both = amp(lhs, worst).saturating_add(amp(rhs, worst));
                *worst = (*worst).max(both);
                1
            }
            Ast::And { lhs, rhs, .. } | Ast::Or { lhs, rhs, .. } => amp(lhs, worst).max(amp(rhs, worst)),
            Ast::Condition { predicate, then, .. } => {
                amp(predicate, worst);
                amp(then, worst)
            }
            Ast::Not { node, .. } => {
                amp(node, worst);
                1
            }
            Ast::Flatten { node, .. } | Ast::ObjectValues { node, .. } | Ast::Expref { ast: node, .. } => {
                amp(node, worst)
            }
            Ast::Identity { .. } | Ast::Field { .. } | Ast::Index { .. } | Ast::Literal { .. } | Ast::Slice { .. } => 1,
        };
        *worst = (*worst).max(a);
        a
    }
    let mut worst = 1;
    amp(ast, &mut worst);
    worst
}

/// Slice bounds that overflow jmespath's 32-bit index arithmetic (it panics).
const MAX_SLICE_BOUND: i64 = 1 << 24;

fn unsafe_slice(ast: &Ast) -> Option<String> {
    if let Ast::Slice { start, stop, step, .. } = ast {
        let too_big = |v: i64| v.abs() > MAX_SLICE_BOUND;
        if too_big(i64::from(*step))
            || start.is_some_and(|v| too_big(i64::from(v)))
            || stop.is_some_and(|v| too_big(i64::from(v)))
        {
            return Some(format!("slice bounds and steps must be within ±{MAX_SLICE_BOUND}"));
        }
    }
    children(ast).find_map(unsafe_slice)
}

fn ast_depth(ast: &Ast) -> usize {
    1 + children(ast).map(ast_depth).max().unwrap_or(0)
}

fn children(ast: &Ast) -> Box<dyn Iterator<Item = &Ast> + '_> {
    match ast {
        Ast::Comparison { lhs, rhs, .. }
        | Ast::And { lhs, rhs, .. }
        | Ast::Or { lhs, rhs, .. }
        | Ast::Projection { lhs, rhs, .. }
        | Ast::Subexpr { lhs, rhs, .. } => Box::new([&**lhs, &**rhs].into_iter()),
        Ast::Condition { predicate, then, .. } => Box::new([&**predicate, &**then].into_iter()),
        Ast::Expref { ast, .. } => Box::new(std::iter::once(&**ast)),
        Ast::Flatten { node, .. } | Ast::Not { node, .. } | Ast::ObjectValues { node, .. } => {
            Box::new(std::iter::once(&**node))
        }
        Ast::Function { args, .. } => Box::new(args.iter()),
        Ast::MultiList { elements, .. } => Box::new(elements.iter()),
        Ast::MultiHash { elements, .. } => Box::new(elements.iter().map(|kv| &kv.value)),
        Ast::Identity { .. } | Ast::Field { .. } | Ast::Index { .. } | Ast::Literal { .. } | Ast::Slice { .. } => {
            Box::new(std::iter::empty())
        }
    }
}

/// Finds the names an expression reads from the root scope. `at_root` is false where
/// JMESPath evaluates against something else: the right side of `.`/`|`, projections,
/// filters, and `&expr` references.
fn collect_roots(ast: &Ast, at_root: bool, out: &mut Vec<RootRef>, whole: &mut bool) {
    match ast {
        Ast::Field { name, .. } => {
            if at_root {
                push_ref(out, RootRef { name: name.clone(), member: None });
            }
        }
        Ast::Identity { .. } => {
            if at_root {
                *whole = true;
            }
        }
        Ast::Subexpr { lhs, rhs, .. } => {
            // A field chain `a.b.c` reads only its head from the root; everything to the
            // right of a `.` or `|` is relative to the left side.
            match leftmost_ref(ast).filter(|_| at_root) {
                Some(r) => push_ref(out, r),
                None => collect_roots(lhs, at_root, out, whole),
            }
            collect_roots(rhs, false, out, whole);
        }
        Ast::Projection { lhs, rhs, .. } => {
            collect_roots(lhs, at_root, out, whole);
            collect_roots(rhs, false, out, whole);
        }
        Ast::Condition { predicate, then, .. } => {
            // Filter projections: `lhs[?pred]` parses as Projection(lhs, Condition(...)),
            // whose parts are evaluated per element.
            collect_roots(predicate, at_root, out, whole);
            collect_roots(then, at_root, out, whole);
        }
        Ast::Expref { ast, .. } => collect_roots(ast, false, out, whole),
        Ast::Flatten { node, .. } | Ast::ObjectValues { node, .. } | Ast::Not { node, .. } => {
            collect_roots(node, at_root, out, whole)
        }
        Ast::Comparison { lhs, rhs, .. } | Ast::And { lhs, rhs, .. } | Ast::Or { lhs, rhs, .. } => {
            collect_roots(lhs, at_root, out, whole);
            collect_roots(rhs, at_root, out, whole);
        }
        Ast::Function { args, .. } => args.iter().for_each(|a| collect_roots(a, at_root, out, whole)),
        Ast::MultiList { elements, .. } => elements.iter().for_each(|a| collect_roots(a, at_root, out, whole)),
        Ast::MultiHash { elements, .. } => elements.iter().for_each(|kv| collect_roots(&kv.value, at_root, out, whole)),
        Ast::Index { .. } | Ast::Literal { .. } | Ast::Slice { .. } => {}
    }
}

/// The operands of a `.`-chain in order: `a.b[0].c` → [a, b, 0, c]. JMESPath nests
/// such chains on both sides (`b[0]` is itself a sub-expression).
fn chain_leaves<'a>(ast: &'a Ast, out: &mut Vec<&'a Ast>) {
    match ast {
        Ast::Subexpr { lhs, rhs, .. } => {
            chain_leaves(lhs, out);
            chain_leaves(rhs, out);
        }
        leaf => out.push(leaf),
    }
}

/// The head of a `a.b.c` chain: `a`, and for `steps.x…` also `x`.
fn leftmost_ref(ast: &Ast) -> Option<RootRef> {
    let mut leaves = Vec::new();
    chain_leaves(ast, &mut leaves);
    let Some(Ast::Field { name, .. }) = leaves.first() else { return None };
    let member = match leaves.get(1) {
        Some(Ast::Field { name: m, .. }) if name == "steps" => Some(m.clone()),
        _ => None,
    };
    Some(RootRef { name: name.clone(), member })
}

fn push_ref(out: &mut Vec<RootRef>, r: RootRef) {
    if !out.contains(&r) {
        out.push(r);
    }
}

/// `a.b[0].c` → ("a", [b, 0, c]); anything else → None.
fn plain_path(ast: &Ast) -> Option<(String, Vec<PathSegment>)> {
    let mut leaves = Vec::new();
    chain_leaves(ast, &mut leaves);
    let mut iter = leaves.into_iter();
    let Some(Ast::Field { name: root, .. }) = iter.next() else { return None };
    let segs = iter
        .map(|leaf| match leaf {
            Ast::Field { name, .. } => Some(PathSegment::Field(name.clone())),
            Ast::Index { idx, .. } => Some(PathSegment::Index(*idx)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((root.clone(), segs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bare(src: &str) -> Vec<&'static str> {
        Expr::compile(src).unwrap().bare_literals().to_vec()
    }

    #[test]
    fn null_true_and_false_written_bare_are_found_and_literals_and_quoted_names_are_not() {
        assert_eq!(bare("page.next == null"), ["null"]);
        assert_eq!(bare("items[?ready == true && gone != false]"), ["true", "false"]);
        assert_eq!(bare("a == null || b == null"), ["null"], "once each");
        assert!(bare("page.next == `null`").is_empty());
        assert!(bare("items[?ready == `true`]").is_empty());
        assert!(bare(r#""null" == 'true'"#).is_empty(), "a quoted field name, a raw string");
        assert!(bare("flags.true || flags . null").is_empty(), "a field of something, named on purpose");
        assert!(bare("not_null(a, b) || nullable || truest").is_empty());
    }

    fn names(src: &str) -> Vec<String> {
        Expr::compile(src)
            .unwrap()
            .refs()
            .iter()
            .map(|r| match &r.member {
                Some(m) => format!("{}.{m}", r.name),
                None => r.name.clone(),
            })
            .collect()
    }

    #[test]
    fn finds_root_names_but_not_names_relative_to_elements() {
        assert_eq!(names("a.b.c"), ["a"]);
        assert_eq!(names("pods.items[*].metadata.name"), ["pods"]);
        assert_eq!(names("pods.items[?status == 'x'].name"), ["pods"]);
        assert_eq!(names("sort_by(list.items, &name)"), ["list"]);
        assert_eq!(names("length(a) > `2` && b || c"), ["a", "b", "c"]);
        assert_eq!(names("{x: a.b, y: [c, d[0]]}"), ["a", "c", "d"]);
        assert_eq!(names("steps.fetch.output.items"), ["steps.fetch"]);
        assert_eq!(names("steps.fetch[0]"), ["steps.fetch"]);
        assert_eq!(names("a.b[0].c"), ["a"]);
        assert_eq!(names("a | b"), ["a"]);
        assert_eq!(names("`5`"), Vec::<String>::new());
        assert_eq!(names("inputs.list[?id == other]"), ["inputs"]);
        assert_eq!(names("join(',', items[*].name)"), ["items"]);
    }

    #[test]
    fn recognizes_plain_paths() {
        let e = Expr::compile("a.b[0].c").unwrap();
        let (root, segs) = e.plain_path().unwrap();
        assert_eq!(root, "a");
        assert_eq!(segs, [PathSegment::Field("b".into()), PathSegment::Index(0), PathSegment::Field("c".into())]);
        assert!(Expr::compile("a.b || c").unwrap().plain_path().is_none());
        assert!(Expr::compile("a[*].b").unwrap().plain_path().is_none());
        assert!(Expr::compile("\"my-key\".x").unwrap().plain_path().is_some());
    }

    #[test]
    fn deep_nesting_is_a_limit_error_not_a_crash() {
        let src = format!("{}a{}", "(".repeat(1000), ")".repeat(1000));
        assert_eq!(Expr::compile(&src).unwrap_err().code, Code::LimitExpression);
        let nots = format!("{}a", "!".repeat(1000));
        assert_eq!(Expr::compile(&nots).unwrap_err().code, Code::LimitExpression);
        let chain = vec!["a"; 1500].join(".");
        assert_eq!(Expr::compile(&chain).unwrap_err().code, Code::LimitExpression);
    }

    #[test]
    fn slices_that_would_overflow_and_exponential_copies_are_refused() {
        assert_eq!(Expr::compile("a[1::2147483647]").unwrap_err().code, Code::LimitExpression);
        assert_eq!(Expr::compile("a[-2147483647:]").unwrap_err().code, Code::LimitExpression);
        assert!(Expr::compile("a[1:10:2]").is_ok());
        let chain = format!("`1`{}", " | [@,@]".repeat(40));
        assert_eq!(Expr::compile(&chain).unwrap_err().code, Code::LimitExpression);
        assert!(Expr::compile(&format!("`1`{}", " | [@,@]".repeat(10))).is_ok(), "1,024 copies are fine");
        assert!(Expr::compile("{a: x, b: [y, z], c: {d: p, e: q}}").is_ok());
    }
}
