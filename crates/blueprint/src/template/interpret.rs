//! Evaluates a compiled JMESPath program within the evaluation's budgets.
//!
//! The same semantics as jmespath's own interpreter, with every step of work counted:
//! each node visited and each element a projection, filter, flatten, slice or `values`
//! walks costs an operation, a comparison of arrays or objects as many as the values it
//! may compare, a function as many as the elements of its arguments (`n log n` for the
//! sorts). Every array or object built here is charged to the byte budget *before* it
//! is built — a flatten of a value shared many times (`[@, @] | [@, @] | …[][]`) would
//! otherwise copy it into real arrays of any size. `map`, `sort_by`, `min_by` and
//! `max_by` evaluate their expression here too, so nothing runs outside the budgets.
//! Recursion follows the expression (bounded by `MAX_EXPRESSION_DEPTH`), never the data.

use super::budget::{charge, ops_left, tick};
use jmespath::ast::Ast;
use jmespath::{Context, ErrorReason, JmespathError, Rcvar, RuntimeError, SearchResult, Variable};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// Bytes charged for each element of an array or object built here (a shared pointer
/// and its share of the container), and for the container itself.
const SLOT_BYTES: u64 = 16;
const CONTAINER_BYTES: u64 = 64;

fn null() -> Rcvar {
    Rcvar::new(Variable::Null)
}

/// Charges an array or object of `len` elements before it is built.
fn building(len: usize, ctx: &Context<'_>) -> Result<(), JmespathError> {
    charge((len as u64).checked_mul(SLOT_BYTES).and_then(|n| n.checked_add(CONTAINER_BYTES)), ctx)?;
    tick(len as u64, ctx)
}

/// Interprets `node` against `data`, within the current evaluation's budgets.
pub(crate) fn interpret(data: &Rcvar, node: &Ast, ctx: &mut Context<'_>) -> SearchResult {
    tick(1, ctx)?;
    match node {
        Ast::Field { name, .. } => Ok(data.get_field(name)),
        Ast::Subexpr { lhs, rhs, .. } => {
            let left = interpret(data, lhs, ctx)?;
            interpret(&left, rhs, ctx)
        }
        Ast::Identity { .. } => Ok(data.clone()),
        Ast::Literal { value, .. } => Ok(value.clone()),
        Ast::Index { idx, .. } => Ok(if *idx >= 0 {
            data.get_index(*idx as usize)
        } else {
            data.get_negative_index(idx.unsigned_abs() as usize)
        }),
        Ast::Or { lhs, rhs, .. } => {
            let left = interpret(data, lhs, ctx)?;
            if left.is_truthy() { Ok(left) } else { interpret(data, rhs, ctx) }
        }
        Ast::And { lhs, rhs, .. } => {
            let left = interpret(data, lhs, ctx)?;
            if left.is_truthy() { interpret(data, rhs, ctx) } else { Ok(left) }
        }
        Ast::Not { node, .. } => Ok(Rcvar::new(Variable::Bool(!interpret(data, node, ctx)?.is_truthy()))),
        Ast::Condition { predicate, then, .. } => {
            if interpret(data, predicate, ctx)?.is_truthy() {
                interpret(data, then, ctx)
            } else {
                Ok(null())
            }
        }
        Ast::Comparison { comparator, lhs, rhs, .. } => {
            let left = interpret(data, lhs, ctx)?;
            let right = interpret(data, rhs, ctx)?;
            tick(comparison_cost(&left, &right), ctx)?;
            Ok(left.compare(comparator, &right).map_or_else(null, |b| Rcvar::new(Variable::Bool(b))))
        }
        Ast::ObjectValues { node, .. } => {
            let subject = interpret(data, node, ctx)?;
            match &*subject {
                Variable::Object(map) => {
                    building(map.len(), ctx)?;
                    Ok(Rcvar::new(Variable::Array(map.values().cloned().collect())))
                }
                _ => Ok(null()),
            }
        }
        Ast::Projection { lhs, rhs, .. } => {
            let left = interpret(data, lhs, ctx)?;
            let Some(items) = left.as_array() else { return Ok(null()) };
            building(items.len(), ctx)?;
            let mut collected = Vec::with_capacity(items.len());
            for item in items {
                let current = interpret(item, rhs, ctx)?;
                if !current.is_null() {
                    collected.push(current);
                }
            }
            Ok(Rcvar::new(Variable::Array(collected)))
        }
        Ast::Flatten { node, .. } => {
            let subject = interpret(data, node, ctx)?;
            let Some(items) = subject.as_array() else { return Ok(null()) };
            let mut len = 0usize;
            for item in items {
                len = len.saturating_add(item.as_array().map_or(1, Vec::len));
            }
            tick(items.len() as u64, ctx)?;
            building(len, ctx)?;
            let mut collected = Vec::with_capacity(len);
            for item in items {
                match item.as_array() {
                    Some(inner) => collected.extend(inner.iter().cloned()),
                    None => collected.push(item.clone()),
                }
            }
            Ok(Rcvar::new(Variable::Array(collected)))
        }
        Ast::MultiList { elements, .. } => {
            if data.is_null() {
                return Ok(null());
            }
            building(elements.len(), ctx)?;
            let collected = elements.iter().map(|e| interpret(data, e, ctx)).collect::<Result<_, _>>()?;
            Ok(Rcvar::new(Variable::Array(collected)))
        }
        Ast::MultiHash { elements, .. } => {
            if data.is_null() {
                return Ok(null());
            }
            building(elements.len(), ctx)?;
            let mut collected = BTreeMap::new();
            for kv in elements {
                let value = interpret(data, &kv.value, ctx)?;
                collected.insert(kv.key.clone(), value);
            }
            Ok(Rcvar::new(Variable::Object(collected)))
        }
        Ast::Function { name, args, offset } => {
            let mut values = Vec::with_capacity(args.len());
            for arg in args {
                values.push(interpret(data, arg, ctx)?);
            }
            ctx.offset = *offset;
            call(name, &values, ctx)
        }
        Ast::Expref { ast, .. } => Ok(Rcvar::new(Variable::Expref((**ast).clone()))),
        Ast::Slice { start, stop, step, offset } => {
            if *step == 0 {
                ctx.offset = *offset;
                return Err(JmespathError::from_ctx(ctx, ErrorReason::Runtime(RuntimeError::InvalidSlice)));
            }
            let Some(items) = data.as_array() else { return Ok(null()) };
            building(items.len(), ctx)?;
            Ok(data.slice(*start, *stop, *step).map_or_else(null, |a| Rcvar::new(Variable::Array(a))))
        }
    }
}

/// A function call: the four that take an expression are evaluated here, the others by
/// the runtime, after their cost is charged.
fn call(name: &str, args: &[Rcvar], ctx: &mut Context<'_>) -> SearchResult {
    let expref = |i: usize| args.get(i).and_then(|a| a.as_expref());
    let array = |i: usize| args.get(i).and_then(|a| a.as_array());
    match (name, args.len()) {
        ("map", 2) => {
            if let (Some(ast), Some(items)) = (expref(0), array(1)) {
                building(items.len(), ctx)?;
                let mapped = items.iter().map(|v| interpret(v, ast, ctx)).collect::<Result<_, _>>()?;
                return Ok(Rcvar::new(Variable::Array(mapped)));
            }
        }
        ("sort_by" | "min_by" | "max_by", 2) => {
            if let (Some(items), Some(ast)) = (array(0), expref(1)) {
                return by_key(name, items, ast, ctx);
            }
        }
        _ => {}
    }
    let mut cost = 1u64;
    for arg in args {
        let n = match &**arg {
            Variable::Array(items) => items.len() as u64,
            Variable::Object(map) => map.len() as u64,
            Variable::String(s) => s.len() as u64 / 64,
            _ => 0,
        };
        cost = cost.saturating_add(if name == "sort" { n.saturating_mul(log2(n)) } else { n });
    }
    if name == "contains"
        && let (Some(items), Some(needle)) = (array(0), args.get(1))
    {
        cost = cost.saturating_add(items.iter().fold(0u64, |acc, i| acc.saturating_add(comparison_cost(i, needle))));
    }
    tick(cost, ctx)?;
    if matches!(name, "sort" | "reverse" | "keys" | "values" | "to_array" | "merge") {
        let len = args.iter().map(|a| a.as_array().map_or(0, Vec::len) + a.as_object().map_or(0, BTreeMap::len)).sum();
        building(len, ctx)?;
    }
    match ctx.runtime.get_function(name) {
        Some(f) => f.evaluate(args, ctx),
        None => Err(JmespathError::from_ctx(ctx, ErrorReason::Runtime(RuntimeError::UnknownFunction(name.to_owned())))),
    }
}

/// `sort_by`, `min_by`, `max_by`: the key of every element, evaluated here; keys must
/// all be numbers or all strings, as jmespath requires.
fn by_key(name: &str, items: &[Rcvar], ast: &Ast, ctx: &mut Context<'_>) -> SearchResult {
    if items.is_empty() {
        return Ok(if name == "sort_by" { Rcvar::new(Variable::Array(Vec::new())) } else { null() });
    }
    building(items.len(), ctx)?;
    let mut keyed: Vec<(Rcvar, Rcvar)> = Vec::with_capacity(items.len());
    let mut kind = None;
    for (invocation, item) in items.iter().enumerate() {
        let key = interpret(item, ast, ctx)?;
        let this = key.get_type();
        let expected = kind.get_or_insert_with(|| key.get_type());
        let numeric_or_text = matches!(&*key, Variable::Number(_) | Variable::String(_));
        if this != *expected || !numeric_or_text {
            let expected = if invocation == 0 {
                "expression->number|expression->string".to_owned()
            } else {
                format!("expression->{expected}")
            };
            let reason = RuntimeError::InvalidReturnType {
                expected,
                actual: this.to_string(),
                position: 1,
                invocation: invocation.max(1),
            };
            return Err(JmespathError::from_ctx(ctx, ErrorReason::Runtime(reason)));
        }
        keyed.push((item.clone(), key));
    }
    let n = keyed.len() as u64;
    tick(n.saturating_mul(log2(n)), ctx)?;
    match name {
        "sort_by" => {
            keyed.sort_by(|a, b| a.1.cmp(&b.1));
            Ok(Rcvar::new(Variable::Array(keyed.into_iter().map(|(v, _)| v).collect())))
        }
        _ => {
            let wanted = if name == "max_by" { Ordering::Greater } else { Ordering::Less };
            let mut best = 0;
            for i in 1..keyed.len() {
                if keyed[i].1.cmp(&keyed[best].1) == wanted {
                    best = i;
                }
            }
            Ok(keyed.swap_remove(best).0)
        }
    }
}

fn log2(n: u64) -> u64 {
    u64::from(u64::BITS - n.leading_zeros()).max(1)
}

/// What comparing two values may take: the values of the smaller side, walked as a tree
/// (equality of shared parts is not assumed cheap), counted up to what is left.
fn comparison_cost(a: &Variable, b: &Variable) -> u64 {
    let container = |v: &Variable| matches!(v, Variable::Array(_) | Variable::Object(_));
    if !container(a) || !container(b) {
        return 1;
    }
    let limit = ops_left().saturating_add(1);
    tree_count(a, limit).min(tree_count(b, limit))
}

/// The values in `v` as a tree, counting at most `limit` (iterative: no recursion on data).
fn tree_count(v: &Variable, limit: u64) -> u64 {
    let mut count = 0u64;
    let mut stack: Vec<&Variable> = vec![v];
    while let Some(v) = stack.pop() {
        count += 1;
        if count >= limit {
            return limit;
        }
        match v {
            Variable::Array(items) => stack.extend(items.iter().map(|i| &**i)),
            Variable::Object(map) => stack.extend(map.values().map(|i| &**i)),
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::super::budget::{RUNTIME, with_budget};
    use super::*;
    use serde_json::json;

    /// Our interpreter and jmespath's own give the same results (or both fail).
    #[test]
    fn results_match_jmespaths_own_interpreter() {
        let data = Rcvar::new(Variable::from_json(
            &json!({
                "xs": [{ "n": 3, "s": "c", "t": ["a", "b"] }, { "n": 1, "s": "a", "t": [] }, { "n": 2, "s": "b", "t": ["c"] }],
                "o": { "a": 1, "b": [1, 2], "c": null }, "nested": [[1, [2]], [3], 4, []], "e": []
            })
            .to_string(),
        )
        .unwrap());
        let expressions = [
            "xs[*].n",
            "xs[].t[]",
            "xs[?n > `1`].s",
            "xs[?t].s",
            "o.*",
            "o.b[-1]",
            "nested[]",
            "nested[][]",
            "xs[::-1] | [0].n",
            "xs[1:].s",
            "xs[::2]",
            "xs[*].{k: s, m: [n, n]}",
            "[o.a, o.c, missing]",
            "o.a == `1` && o.c || 'd'",
            "!o.c",
            "xs[?n == `3` || s == 'a'].n",
            "length(xs)",
            "keys(o)",
            "values(o)",
            "sort(xs[*].s)",
            "sort_by(xs, &n)[*].s",
            "max_by(xs, &s).n",
            "min_by(xs, &n).s",
            "map(&length(t), xs)",
            "map(&n, e)",
            "join('-', xs[*].s)",
            "to_array(o.a)",
            "merge(o, {z: `1`})",
            "contains(xs[*].s, 'b')",
            "xs[0] == xs[0]",
            "xs == reverse(reverse(xs))",
            "not_null(o.c, o.a)",
            "sort_by(xs, &t)",
            "max_by(xs, &t)",
            "map(&n, o)",
            "xs[::0]",
            "unknown_fn(o)",
            "e[]",
            "`null`[]",
            "xs[*].t[0]",
            "o.b[*]",
            "nested[0][1][0]",
            "avg(xs[*].n)",
            "sum(o.b)",
            "type(o)",
            "to_number('4')",
        ];
        for expression in expressions {
            let program = jmespath::compile(expression).unwrap();
            let theirs = jmespath::interpret(&data, program.as_ast(), &mut Context::new(expression, &RUNTIME));
            let (ours, past) =
                with_budget(u64::MAX, || interpret(&data, program.as_ast(), &mut Context::new(expression, &RUNTIME)));
            assert_eq!(past, None, "{expression}");
            match (theirs, ours) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{expression}"),
                (Err(_), Err(_)) => {}
                (a, b) => panic!("{expression}: jmespath {a:?}, ours {b:?}"),
            }
        }
    }
}
