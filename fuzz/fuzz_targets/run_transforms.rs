//! Bytes → a small blueprint of `transform`, `switch`, `loop` (`for_each` and `until`)
//! and `wait` steps (no servers) whose templates combine the shapes that multiply memory
//! (`[e, e]`, `join`, `to_string`, `{a: e, b: e}`, `e | [@, @]`, flattens, text with
//! several templates) and the shapes that deepen values (`[[e]]`, an `until` loop
//! wrapping `last` again each iteration, arrays of templates), under
//! `limits.max_value_depth` of 4, 16, 64 or 100, run to its end by the engine's scheduler
//! (timers fired by moving the clock).
//!
//! Asserts: no panic, the run ends, and no run allocates past its budget: a counting
//! global allocator records the most bytes live at once during the run, which must stay
//! under `SLACK + STEPS_LIVE × PER_VALUE_FACTOR × limits.max_value_bytes` (every value a
//! step keeps is at most `max_value_bytes` as JSON; converting one to `serde_json::Value`
//! costs up to ~60× its JSON for one-byte leaves).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpflow_blueprint::{Options, check_value};
use mcpflow_engine::{Action, Input, RunConfig, Scheduler};
use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Inputs tried, and how many made a blueprint that validated and ran (printed every
/// 10,000 inputs, so a run's log shows how much reached the engine).
static TRIED: AtomicUsize = AtomicUsize::new(0);
static RAN: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const MAX_STEPS: usize = 12;
const SLACK: usize = 32 << 20;
const PER_VALUE_FACTOR: usize = 64;
const MAX_APPLY: usize = 20_000;

/// Reads the fuzz input one choice at a time (zeros once it runs out).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn pick(&mut self, n: usize) -> usize {
        usize::from(self.next()) % n
    }
}

/// An expression over what step `i` may read (earlier top-level steps, `prev`, inputs).
fn expr(b: &mut Bytes, i: usize, depth: u32) -> String {
    let leaf = |b: &mut Bytes| -> String {
        match b.pick(7) {
            0 if i > 0 => "prev".into(),
            1 if i > 0 => format!("s{}", b.pick(i)),
            2 => "inputs.s".into(),
            3 => "inputs.a".into(),
            4 => "`\"x\"`".into(),
            5 => "inputs.a[0]".into(),
            _ => "inputs.s".into(),
        }
    };
    if depth == 0 {
        return leaf(b);
    }
    let e = |b: &mut Bytes| expr(b, i, depth - 1);
    match b.pick(16) {
        12 => format!("[[[[{}]]]]", e(b)),
        13 => format!("{}[]", e(b)),
        14 => format!("{} | [@, @] | [@, @][][]", e(b)),
        15 => format!("[{{d: [{}]}}]", e(b)),
        0 => format!("[{}, {}]", e(b), e(b)),
        1 => format!("join('', [{}, {}, {}])", e(b), e(b), e(b)),
        2 => format!("to_string({})", e(b)),
        3 => format!("{{a: {}, b: {}}}", e(b), e(b)),
        4 => format!("{} | [@, @, @, @]", e(b)),
        5 => format!("reverse({})", e(b)),
        6 => format!("{} || `1`", e(b)),
        7 => format!("join('-', {} | [@, @])", e(b)),
        8 => format!("map(&to_string(@), {})", e(b)),
        9 => format!("merge({{k: {}}}, {{l: {}}})", e(b), e(b)),
        10 => format!("sort_by([{}, {}], &to_string(@))", e(b), e(b)),
        _ => leaf(b),
    }
}

/// A template value: one whole expression, text mixing several, or an array/object.
fn template(b: &mut Bytes, i: usize) -> Value {
    let depth = u32::from(b.next() % 4);
    match b.pick(4) {
        0 => json!(format!("{{{{ {} }}}}", expr(b, i, depth))),
        1 => json!(format!("<{{{{ {} }}}}|{{{{ {} }}}}>", expr(b, i, depth), expr(b, i, depth))),
        2 => json!([format!("{{{{ {} }}}}", expr(b, i, depth)), format!("{{{{ {} }}}}", expr(b, i, depth))]),
        _ => json!({ "v": format!("{{{{ {} }}}}", expr(b, i, depth)), "n": 1 }),
    }
}

fn step(b: &mut Bytes, i: usize, n: usize) -> Value {
    let id = format!("s{i}");
    match b.pick(6) {
        0 if i + 1 < n => {
            let when = format!("{{{{ length(to_string({})) > `{}` }}}}", expr(b, i, 1), b.next());
            json!({ "id": id, "kind": "switch", "cases": [ { "when": when, "to": [format!("s{}", i + 1)] } ], "default": [] })
        }
        1 => json!({ "id": id, "kind": "wait", "ms": u64::from(b.next() % 4) }),
        2 => {
            let n = usize::from(b.next() % 8);
            let collect = format!(
                "{{{{ {} }}}}",
                ["item", "[item, body]", "to_string(body)", "join('', [body, body])"][b.pick(4)]
            );
            let inner = format!(
                "{{{{ {} }}}}",
                ["inputs.s", "to_string(item)", "[item, item]", "join('', [inputs.s, inputs.s])"][b.pick(4)]
            );
            json!({ "id": id, "kind": "loop", "for_each": (0..n).collect::<Vec<_>>(), "collect": collect,
                    "steps": [ { "id": format!("body{i}"), "kind": "transform", "value": inner } ] })
        }
        3 => {
            // An `until` loop deepening `last` each iteration, up to 8 times.
            let levels = 1 + b.pick(24);
            let wrap = format!("{{{{ {}[last, {}]{} }}}}", "[".repeat(levels), expr(b, i, 1), "]".repeat(levels));
            let literal = (0..b.pick(40)).fold(json!(wrap), |v, _| json!([v]));
            json!({ "id": id, "kind": "loop", "until": "{{ `false` }}", "max_iterations": 1 + b.pick(8),
                    "on_exhausted": "succeed",
                    "steps": [ { "id": format!("body{i}"), "kind": "transform", "value": literal } ] })
        }
        _ => json!({ "id": id, "kind": "transform", "value": template(b, i) }),
    }
}

fn blueprint(b: &mut Bytes) -> (Value, usize) {
    let limit = [1024usize, 16 << 10, 64 << 10][b.pick(3)];
    let depth = [4u32, 16, 64, 100][b.pick(4)];
    let n = 1 + b.pick(MAX_STEPS);
    let steps: Vec<Value> = (0..n).map(|i| step(b, i, n)).collect();
    let doc = json!({ "blueprint": 1, "id": "fuzz",
        "limits": { "max_value_bytes": limit, "max_value_depth": depth, "max_step_runs": 500 }, "steps": steps });
    (doc, limit)
}

fn body_ref_fix(doc: &mut Value) {
    // `body` in a loop's collect names its body step: rename to the real id.
    if let Some(steps) = doc["steps"].as_array_mut() {
        for s in steps {
            if let (Some(id), Some(c)) = (s["id"].as_str().map(str::to_owned), s["collect"].as_str()) {
                let body = format!("body{}", &id[1..]);
                s["collect"] = json!(c.replace("body", &body));
            }
        }
    }
}

fn run(doc: Value) -> bool {
    let report = check_value(doc, &Options::default());
    // A plan exists only when there were no errors.
    let (Some(bp), Some(plan)) = (report.blueprint, report.plan) else { return false };
    let s_len = 1 + 4096;
    let config = RunConfig {
        run_id: "fuzz".into(),
        inputs: json!({ "s": "s".repeat(s_len), "a": ["a", 1, {"b": null}] }),
        saved: json!({}),
        started_at: "2026-11-24T00:00:00Z".into(),
        ..RunConfig::default()
    };
    let mut s = Scheduler::new(&bp, Arc::new(plan), config);
    let mut timers: BTreeMap<(u64, usize), u64> = BTreeMap::new();
    let mut now = 0u64;
    let mut input = Input::Start;
    for n in 0..MAX_APPLY {
        let mut done = false;
        for a in s.apply(now, input) {
            match a {
                Action::SetTimer { timer, at_ms } => {
                    timers.insert((at_ms, n), timer);
                }
                Action::Finish(_) => done = true,
                Action::Invoke { .. } => panic!("a blueprint without servers invoked something"),
                _ => {}
            }
        }
        if done {
            return true;
        }
        let Some(((at, _), timer)) = timers.pop_first() else { panic!("the run neither finished nor waits") };
        now = now.max(at);
        input = Input::Timer { timer };
    }
    panic!("the run did not finish within {MAX_APPLY} inputs");
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let (mut doc, limit) = blueprint(&mut b);
    body_ref_fix(&mut doc);
    let start = LIVE.load(Ordering::Relaxed);
    PEAK.store(start, Ordering::Relaxed);
    if run(doc.clone()) {
        RAN.fetch_add(1, Ordering::Relaxed);
    }
    let tried = TRIED.fetch_add(1, Ordering::Relaxed) + 1;
    if tried % 10_000 == 0 {
        eprintln!("run_transforms: {tried} inputs, {} ran", RAN.load(Ordering::Relaxed));
    }
    let used = PEAK.load(Ordering::Relaxed).saturating_sub(start);
    let budget = SLACK + MAX_STEPS * PER_VALUE_FACTOR * limit;
    assert!(used <= budget, "the run allocated {used} bytes at once; budget {budget}\n{doc:#}");
});
