//! The budgets of rendering: how large and how deep a value is, what one evaluation may
//! still build and how many operations it may still take, and JMESPath functions that
//! count what they build.
//!
//! A value is as large as its JSON: a part shared by several places (JMESPath values
//! are reference-counted, so `[@, @]` holds its input twice without copying it) counts
//! at every place it appears. [`json_size`] measures that without building the JSON,
//! visiting each shared container once, and stops as soon as the size passes the limit.
//! [`value_fits`], the measure of what a template builds and a step outputs, adds
//! [`SCALAR_OVERHEAD`] bytes per string, number, boolean or null and
//! [`CONTAINER_OVERHEAD`] per array or object: a number or a short string weighs its
//! text and its slot, a container also its own allocation. JSON bytes alone would let a
//! value of many tiny parts (`[[],[],…]`, or `[prev, prev]` doubled twenty times) take
//! far more memory than its limit once the engine holds it as `serde_json::Value`s
//! (72 bytes each, an array's buffer besides); so charged, a tree of small arrays costs
//! about what it did at 64 bytes a value, while a million numbers collected by a loop
//! (~24 MB) fit under the default 64 MB. It also
//! checks the value's depth (`limits.max_value_depth`): every walk over a value stops at
//! its limit, so no walk recurses deeper than the limit on any data.
//!
//! Functions that build strings (`join`, `to_string`, `reverse` of a string) charge
//! what they are about to build to the current evaluation's budget *before* building
//! it, so a single expression cannot allocate past the limit on the way to its result
//! either. The interpreter (`interpret.rs`) charges the arrays it builds the same way,
//! and every step of its work to the operation budget ([`MAX_TEMPLATE_OPS`]).

use crate::limits::{MAX_MAX_VALUE_DEPTH, MAX_TEMPLATE_OPS};
use jmespath::functions::{Function, JoinFn, ReverseFn, ToStringFn};
use jmespath::{Context, ErrorReason, JmespathError, Rcvar, Runtime, SearchResult, Variable};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

/// What [`value_fits`] adds for each string, number, boolean or null: its slot in its
/// container. (Every value was charged 64 bytes, which made a million small numbers
/// weigh 71 MB, past the default limit.)
pub const SCALAR_OVERHEAD: u64 = 16;

/// What [`value_fits`] adds for each array or object: its slot and its own allocation.
/// With [`SCALAR_OVERHEAD`], a tree of two-entry arrays of short strings (a value
/// doubled by `[prev, prev]`) is charged as it was at 64 bytes a value.
pub const CONTAINER_OVERHEAD: u64 = 112;

/// Deepest nesting [`json_size`] walks: values the engine holds are
/// never deeper than [`MAX_MAX_VALUE_DEPTH`], and results are checked with
/// [`value_fits`] against the run's own limit; past this they count as too large.
const WALK_DEPTH: u32 = MAX_MAX_VALUE_DEPTH + 64;

/// Which budget a value or an evaluation went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Past {
    /// `limits.max_value_bytes`.
    Bytes,
    /// `limits.max_value_depth`.
    Depth,
    /// [`MAX_TEMPLATE_OPS`].
    Ops,
}

/// The JSON size of `var` in bytes (compact, as `serde_json::to_string` writes it),
/// when it is at most `limit`; `None` past it. Shared parts count wherever they appear.
pub fn json_size(var: &Variable, limit: u64) -> Option<u64> {
    measure(var, limit, (0, 0), WALK_DEPTH).ok()
}

/// Whether `var` is within both value limits: its size ([`json_size`] plus
/// [`SCALAR_OVERHEAD`] per scalar and [`CONTAINER_OVERHEAD`] per container in it) at
/// most `bytes`, and its nesting of arrays and objects at most `depth` levels (a scalar
/// is 0 deep, `[]` 1). The walk never goes deeper than `depth + 1`.
pub fn value_fits(var: &Variable, bytes: u64, depth: u32) -> Result<u64, Past> {
    measure(var, bytes, (SCALAR_OVERHEAD, CONTAINER_OVERHEAD), depth)
}

fn measure(var: &Variable, limit: u64, per_value: (u64, u64), depth: u32) -> Result<u64, Past> {
    let mut sizer = Sizer { left: limit, per_value, depth, memo: HashMap::new() };
    sizer.node(var, 1)?;
    Ok(limit - sizer.left)
}

struct Sizer {
    left: u64,
    /// What a scalar and what a container cost beyond their JSON.
    per_value: (u64, u64),
    /// Deepest nesting allowed.
    depth: u32,
    /// Sizes and heights of shared containers already measured, by address.
    memo: HashMap<usize, (u64, u32)>,
}

impl Sizer {
    fn take(&mut self, n: u64) -> Result<(), Past> {
        self.left = self.left.checked_sub(n).ok_or(Past::Bytes)?;
        Ok(())
    }

    /// `c` at nesting `level` (were it a container); returns its height.
    fn child(&mut self, c: &Rcvar, level: u32) -> Result<u32, Past> {
        let container = matches!(**c, Variable::Array(_) | Variable::Object(_));
        if !container || Rcvar::strong_count(c) < 2 {
            return self.node(c, level);
        }
        let key = Rcvar::as_ptr(c) as usize;
        if let Some(&(n, height)) = self.memo.get(&key) {
            if level + height - 1 > self.depth {
                return Err(Past::Depth);
            }
            self.take(n)?;
            return Ok(height);
        }
        let before = self.left;
        let height = self.node(c, level)?;
        self.memo.insert(key, (before - self.left, height));
        Ok(height)
    }

    /// `v`, a container of which would be at nesting `level`; returns its height (0 for
    /// a scalar, 1 for a container of scalars).
    fn node(&mut self, v: &Variable, level: u32) -> Result<u32, Past> {
        let container = matches!(v, Variable::Array(_) | Variable::Object(_));
        self.take(if container { self.per_value.1 } else { self.per_value.0 })?;
        match v {
            Variable::Null | Variable::Expref(_) | Variable::Bool(true) => self.take(4).map(|()| 0),
            Variable::Bool(false) => self.take(5).map(|()| 0),
            Variable::Number(n) => self.take(number_len(n)).map(|()| 0),
            Variable::String(s) => self.string(s).map(|()| 0),
            Variable::Array(items) => {
                if level > self.depth {
                    return Err(Past::Depth);
                }
                self.take(2 + (items.len() as u64).saturating_sub(1))?;
                let mut height = 0;
                for i in items {
                    height = height.max(self.child(i, level + 1)?);
                }
                Ok(height + 1)
            }
            Variable::Object(map) => {
                if level > self.depth {
                    return Err(Past::Depth);
                }
                self.take(2 + (map.len() as u64).saturating_sub(1))?;
                let mut height = 0;
                for (k, i) in map {
                    self.string(k)?;
                    self.take(1)?;
                    height = height.max(self.child(i, level + 1)?);
                }
                Ok(height + 1)
            }
        }
    }

    /// A JSON string: quotes, and escapes as serde_json writes them. The plain length
    /// is charged first, so a huge string past the limit is not scanned.
    fn string(&mut self, s: &str) -> Result<(), Past> {
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

/// The length of `n` as serde_json writes it: integers counted digit by digit, without
/// formatting them (a loop weighs one number per iteration); floats formatted.
fn number_len(n: &serde_json::Number) -> u64 {
    let digits = |u: u64| u64::from(u.checked_ilog10().unwrap_or(0)) + 1;
    if let Some(u) = n.as_u64() {
        digits(u)
    } else if let Some(i) = n.as_i64() {
        1 + digits(i.unsigned_abs())
    } else {
        let mut count = Count(0);
        let _ = write!(count, "{n}");
        count.0
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

/// What the current evaluation may still build and do, and which budget it went past.
#[derive(Clone, Copy)]
struct Left {
    bytes: u64,
    ops: u64,
    past: Option<Past>,
}

thread_local! {
    static LEFT: Cell<Left> = const { Cell::new(Left { bytes: u64::MAX, ops: u64::MAX, past: None }) };
    /// Operations charged on this thread since it started, by every evaluation.
    static SPENT: Cell<u64> = const { Cell::new(0) };
}

/// Runs `f` (one evaluation) with `limit` bytes for what it builds and
/// [`MAX_TEMPLATE_OPS`] operations; also returns which budget it went past, if any.
pub(crate) fn with_budget<R>(limit: u64, f: impl FnOnce() -> R) -> (R, Option<Past>) {
    let outer = LEFT.with(|l| l.replace(Left { bytes: limit, ops: MAX_TEMPLATE_OPS, past: None }));
    let out = f();
    let inner = LEFT.with(|l| l.replace(outer));
    SPENT.with(|s| s.set(s.get().saturating_add(MAX_TEMPLATE_OPS - inner.ops)));
    (out, inner.past)
}

/// Operations every template evaluation on this thread has taken so far: the scheduler
/// ends a piece of work when it has spent enough, so the run's thread can serve its
/// timers, signals and other runs.
pub fn ops_spent() -> u64 {
    SPENT.with(Cell::get)
}

fn refuse(ctx: &Context<'_>, past: Past) -> JmespathError {
    LEFT.with(|l| {
        let mut left = l.get();
        left.past = Some(past);
        l.set(left);
    });
    let reason = match past {
        Past::Ops => "the expression would take more operations than a template may",
        Past::Depth => "the result would be deeper than the value depth limit",
        Past::Bytes => "the result would be larger than the value limit",
    };
    JmespathError::from_ctx(ctx, ErrorReason::Parse(reason.into()))
}

/// Charges `n` bytes to the current evaluation; an error (and the evaluation marked as
/// too large) when they are not left.
pub(crate) fn charge(n: Option<u64>, ctx: &Context<'_>) -> Result<(), JmespathError> {
    let left = LEFT.with(Cell::get);
    match n.and_then(|n| left.bytes.checked_sub(n)) {
        Some(bytes) => {
            LEFT.with(|l| l.set(Left { bytes, ..left }));
            Ok(())
        }
        None => Err(refuse(ctx, Past::Bytes)),
    }
}

/// Charges `n` operations to the current evaluation; an error (and the evaluation marked
/// as too costly) when they are not left.
pub(crate) fn tick(n: u64, ctx: &Context<'_>) -> Result<(), JmespathError> {
    let left = LEFT.with(Cell::get);
    match left.ops.checked_sub(n) {
        Some(ops) => {
            LEFT.with(|l| l.set(Left { ops, ..left }));
            Ok(())
        }
        None => Err(refuse(ctx, Past::Ops)),
    }
}

/// Operations left to the current evaluation.
pub(crate) fn ops_left() -> u64 {
    LEFT.with(|l| l.get().ops)
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
        let v = json!({"a": [1, -2, 3.5, true, false, null, 0, 10, -10, 99, u64::MAX, i64::MIN, 1e300, -0.5],
            "q\"uote": "tab\there\u{1}é", "n": {}, "e": []});
        let expected = serde_json::to_string(&v).unwrap().len() as u64;
        let var = value_to_var(v);
        assert_eq!(json_size(&var, u64::MAX), Some(expected));
        assert_eq!(json_size(&var, expected), Some(expected));
        assert_eq!(json_size(&var, expected - 1), None);
    }

    #[test]
    fn a_million_small_numbers_fit_under_the_default_limit_and_tiny_leaves_cost_their_slots() {
        use crate::limits::{DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_DEPTH};
        let numbers = |n: u64, of: fn(u64) -> u64| {
            Rcvar::new(Variable::Array((0..n).map(|i| Rcvar::new(Variable::Number(of(i).into()))).collect()))
        };
        let million = numbers(1_000_000, |i| i);
        // `[0,1,…,999999]`: the digits, 999,999 commas and the brackets.
        let text: u64 = (0..1_000_000u64).map(|i| i.to_string().len() as u64).sum::<u64>() + 999_999 + 2;
        let weight = value_fits(&million, DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_DEPTH);
        assert_eq!(weight, Ok(text + 1_000_000 * SCALAR_OVERHEAD + CONTAINER_OVERHEAD));
        assert!(text + 1_000_000 * SCALAR_OVERHEAD + CONTAINER_OVERHEAD < 25_000_000);
        // 4.2 million zeros, 8.4 MB of JSON, are charged 18 bytes each: past 64 MB.
        let zeros = numbers(4_200_000, |_| 0);
        assert_eq!(value_fits(&zeros, DEFAULT_MAX_VALUE_BYTES, DEFAULT_MAX_VALUE_DEPTH), Err(Past::Bytes));
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
        assert_eq!(value_fits(&small, u64::MAX, 3), Ok(expected + 8 * SCALAR_OVERHEAD + 7 * CONTAINER_OVERHEAD));
    }
}
