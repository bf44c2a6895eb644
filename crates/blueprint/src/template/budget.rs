//! The memory budget of rendering: how large a value is as JSON, and JMESPath
//! functions that count what they build.
//!
//! A value is as large as its JSON: a part shared by several places (JMESPath values
//! are reference-counted, so `[@, @]` holds its input twice without copying it) counts
//! at every place it appears. [`json_size`] measures that without building the JSON,
//! visiting each shared container once, and stops as soon as the size passes the limit.
//! [`value_size`], the measure of what a template builds and a step outputs, adds
//! [`VALUE_OVERHEAD`] bytes per JSON value: the engine converts outputs to
//! `serde_json::Value` trees, where a one-byte leaf costs a hundred bytes or more, so
//! JSON bytes alone would let a value of many tiny leaves take ~50× its limit.
//!
//! Functions that build strings (`join`, `to_string`, `reverse` of a string) charge
//! what they are about to build to the current evaluation's budget *before* building
//! it, so a single expression cannot allocate past the limit on the way to its result
//! either. The others (`map`, `sort`, `sort_by`, `merge`, `values`, `to_array`, …)
//! build arrays and objects of shared pointers, linear in their input; their results are
//! measured with the expression's result.

use jmespath::functions::{Function, JoinFn, ReverseFn, ToStringFn};
use jmespath::{Context, ErrorReason, JmespathError, Rcvar, Runtime, SearchResult, Variable};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// What [`value_size`] adds for each JSON value (string, number, array, object, …).
pub const VALUE_OVERHEAD: u64 = 64;

/// The JSON size of `var` in bytes (compact, as `serde_json::to_string` writes it),
/// when it is at most `limit`; `None` past it. Shared parts count wherever they appear.
pub fn json_size(var: &Variable, limit: u64) -> Option<u64> {
    measure(var, limit, 0)
}

/// The size `limits.max_value_bytes` bounds: [`json_size`] plus [`VALUE_OVERHEAD`] per
/// JSON value in it; `None` past `limit`.
pub fn value_size(var: &Variable, limit: u64) -> Option<u64> {
    measure(var, limit, VALUE_OVERHEAD)
}

fn measure(var: &Variable, limit: u64, per_value: u64) -> Option<u64> {
    let mut sizer = Sizer { left: limit, per_value, memo: HashMap::new() };
    sizer.node(var)?;
    Some(limit - sizer.left)
}

struct Sizer {
    left: u64,
    per_value: u64,
    /// Sizes of shared containers already measured, by address.
    memo: HashMap<usize, u64>,
}

impl Sizer {
    fn take(&mut self, n: u64) -> Option<()> {
        self.left = self.left.checked_sub(n)?;
        Some(())
    }

    fn child(&mut self, c: &Rcvar) -> Option<()> {
        let container = matches!(**c, Variable::Array(_) | Variable::Object(_));
        if !container || Rcvar::strong_count(c) < 2 {
            return self.node(c);
        }
        let key = Rcvar::as_ptr(c) as usize;
        if let Some(&n) = self.memo.get(&key) {
            return self.take(n);
        }
        let before = self.left;
        self.node(c)?;
        self.memo.insert(key, before - self.left);
        Some(())
    }

    fn node(&mut self, v: &Variable) -> Option<()> {
        self.take(self.per_value)?;
        match v {
            Variable::Null | Variable::Expref(_) | Variable::Bool(true) => self.take(4),
            Variable::Bool(false) => self.take(5),
            Variable::Number(n) => {
                let mut count = Count(0);
                let _ = write!(count, "{n}");
                self.take(count.0)
            }
            Variable::String(s) => self.string(s),
            Variable::Array(items) => {
                self.take(2 + (items.len() as u64).saturating_sub(1))?;
                items.iter().try_for_each(|i| self.child(i))
            }
            Variable::Object(map) => {
                self.take(2 + (map.len() as u64).saturating_sub(1))?;
                map.iter().try_for_each(|(k, i)| {
                    self.string(k)?;
                    self.take(1)?;
                    self.child(i)
                })
            }
        }
    }

    /// A JSON string: quotes, and escapes as serde_json writes them. The plain length
    /// is charged first, so a huge string past the limit is not scanned.
    fn string(&mut self, s: &str) -> Option<()> {
        self.take(s.len() as u64 + 2)?;
        let extra: u64 = s
            .bytes()
            .map(|b| match b {
                b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
                0..=0x1f => 5,
                _ => 0,
            })
            .sum();
        self.take(extra)
    }
}

/// Counts the bytes written to it.
struct Count(u64);

impl std::fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len() as u64;
        Ok(())
    }
}

/// What the current evaluation may still build, and whether something went past it.
#[derive(Clone, Copy)]
struct Left {
    bytes: u64,
    exceeded: bool,
}

thread_local! {
    static LEFT: Cell<Left> = const { Cell::new(Left { bytes: u64::MAX, exceeded: false }) };
}

/// Runs `f` (one evaluation) with `limit` bytes for what its functions build; also
/// returns whether a function refused to build past it.
pub(crate) fn with_budget<R>(limit: u64, f: impl FnOnce() -> R) -> (R, bool) {
    let outer = LEFT.with(|l| l.replace(Left { bytes: limit, exceeded: false }));
    let out = f();
    let inner = LEFT.with(|l| l.replace(outer));
    (out, inner.exceeded)
}

/// Charges `n` bytes to the current evaluation; an error (and the evaluation marked as
/// too large) when they are not left.
fn charge(n: Option<u64>, ctx: &Context<'_>) -> Result<(), JmespathError> {
    LEFT.with(|l| {
        let mut left = l.get();
        match n.and_then(|n| left.bytes.checked_sub(n)) {
            Some(rest) => {
                left.bytes = rest;
                l.set(left);
                Ok(())
            }
            None => {
                left.exceeded = true;
                l.set(left);
                Err(JmespathError::from_ctx(
                    ctx,
                    ErrorReason::Parse("the result would be larger than the value limit".into()),
                ))
            }
        }
    })
}

fn remaining() -> u64 {
    LEFT.with(|l| l.get().bytes)
}

/// `join(glue, strings)`: charges the joined length before joining.
struct BoundedJoin(JoinFn);

impl Function for BoundedJoin {
    fn evaluate(&self, args: &[Rcvar], ctx: &mut Context<'_>) -> SearchResult {
        if let (Some(glue), Some(items)) =
            (args.first().and_then(|g| g.as_string()), args.get(1).and_then(|i| i.as_array()))
        {
            let glue = glue.len() as u64 * (items.len() as u64).saturating_sub(1);
            let total = items.iter().try_fold(glue, |acc, i| match i.as_string() {
                Some(s) => acc.checked_add(s.len() as u64),
                None => Some(acc), // the builtin refuses the type
            });
            charge(total, ctx)?;
        }
        self.0.evaluate(args, ctx)
    }
}

/// `to_string(value)`: measures the JSON within what is left before writing it.
struct BoundedToString(ToStringFn);

impl Function for BoundedToString {
    fn evaluate(&self, args: &[Rcvar], ctx: &mut Context<'_>) -> SearchResult {
        if let Some(v) = args.first().filter(|v| !v.is_string()) {
            charge(json_size(v, remaining()), ctx)?;
        }
        self.0.evaluate(args, ctx)
    }
}

/// `reverse(string)` copies it: charges its length.
struct BoundedReverse(ReverseFn);

impl Function for BoundedReverse {
    fn evaluate(&self, args: &[Rcvar], ctx: &mut Context<'_>) -> SearchResult {
        if let Some(s) = args.first().and_then(|v| v.as_string()) {
            charge(Some(s.len() as u64), ctx)?;
        }
        self.0.evaluate(args, ctx)
    }
}

/// jmespath's builtins, with the functions that build strings counted.
pub(crate) static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    let mut rt = Runtime::new();
    rt.register_builtin_functions();
    rt.register_function("join", Box::new(BoundedJoin(JoinFn::new())));
    rt.register_function("to_string", Box::new(BoundedToString(ToStringFn::new())));
    rt.register_function("reverse", Box::new(BoundedReverse(ReverseFn::new())));
    rt
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::value_to_var;
    use serde_json::json;

    #[test]
    fn json_size_matches_serde_json() {
        let v = json!({"a": [1, -2, 3.5, true, false, null], "q\"uote": "tab\there\u{1}é", "n": {}, "e": []});
        let expected = serde_json::to_string(&v).unwrap().len() as u64;
        let var = value_to_var(v);
        assert_eq!(json_size(&var, u64::MAX), Some(expected));
        assert_eq!(json_size(&var, expected), Some(expected));
        assert_eq!(json_size(&var, expected - 1), None);
    }

    #[test]
    fn shared_parts_count_everywhere_without_walking_them_again() {
        // 60 levels of [prev, prev]: 2^60 leaves as JSON, 61 distinct nodes.
        let mut v = value_to_var(json!("x"));
        for _ in 0..60 {
            v = Rcvar::new(Variable::Array(vec![v.clone(), v.clone()]));
        }
        assert_eq!(json_size(&v, u64::MAX), Some(6 * (1 << 60) - 3));
        assert_eq!(json_size(&v, 1 << 40), None);
        let mut small = value_to_var(json!("x"));
        for _ in 0..3 {
            small = Rcvar::new(Variable::Array(vec![small.clone(), small.clone()]));
        }
        let expected = serde_json::to_string(&small).unwrap().len() as u64;
        assert_eq!(json_size(&small, u64::MAX), Some(expected));
        assert_eq!(value_size(&small, u64::MAX), Some(expected + 15 * VALUE_OVERHEAD));
    }
}
