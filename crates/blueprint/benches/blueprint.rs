//! Validation and template benchmarks.
//!
//! - `validate/5000_steps/*`: a generated 5,000-step blueprint (pipelines, fan-out,
//!   switches, loops with bodies, templates reading upstream steps), from text
//!   (`check_bytes`: parse + decode + validate) and from decoded types (`validate`).
//! - `template/plain_path_2000`: a plain-path template against a scope of 2,000 step
//!   outputs, next to the baseline that copies the scope into JMESPath per evaluation
//!   (what `jmespath::compile(e).search(json)` does), measured in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use mcpflow_blueprint::template::{MapScope, Template};
use mcpflow_blueprint::{Options, check_bytes, validate};
use serde_json::{Value, json};
use std::hint::black_box;

/// A blueprint of `n` top-level-or-nested steps in a realistic mix.
pub fn generated_blueprint(n: usize) -> Value {
    let mut steps = Vec::new();
    let mut i = 0;
    let mut last = String::new();
    // A loop's output is an array: the step after it reads it whole (`prev.items` would be
    // TEMPLATE_PATH_ABSENT).
    let mut last_is_loop = false;
    while i < n {
        let was_loop = std::mem::take(&mut last_is_loop);
        match i % 50 {
            // A switch routing to two targets, joined afterwards.
            0 if i + 4 <= n && i > 0 => {
                let (sw, a, b, j) =
                    (format!("s{i}"), format!("s{}", i + 1), format!("s{}", i + 2), format!("s{}", i + 3));
                steps.push(json!({"id": sw, "kind": "switch", "after": [last],
                    "cases": [{"when": format!("{{{{ {last}.count > `3` }}}}"), "to": [a]}], "default": [b]}));
                steps.push(json!({"id": a, "kind": "tool", "server": "inv", "tool": "get", "args": {"n": format!("{{{{ {last}.count }}}}")}}));
                steps.push(json!({"id": b, "kind": "transform", "value": {"fallback": true}}));
                steps.push(
                    json!({"id": j, "kind": "transform", "after": [a, b], "value": format!("{{{{ {a} || {b} }}}}")}),
                );
                last = j;
                i += 4;
            }
            // A loop with a three-step body.
            25 if i + 4 <= n => {
                let l = format!("s{i}");
                let body: Vec<Value> = (1..4)
                    .map(|k| {
                        json!({"id": format!("s{}", i + k), "kind": "tool", "server": "inv", "tool": "get",
                            "args": {"name": "{{ item.name }}", "i": "{{ index }}", "from": format!("{{{{ {last}.items[0].name }}}}")}})
                    })
                    .collect();
                steps.push(
                    json!({"id": l, "kind": "loop", "after": [last], "for_each": format!("{{{{ {last}.items }}}}"),
                    "concurrency": 4, "steps": body, "collect": format!("{{{{ s{} }}}}", i + 3)}),
                );
                last = l;
                last_is_loop = true;
                i += 4;
            }
            // Fan-out of three with a join.
            10 if i + 4 <= n => {
                let root = last.clone();
                let ids: Vec<String> = (0..3).map(|k| format!("s{}", i + k)).collect();
                for id in &ids {
                    steps.push(json!({"id": id, "kind": "tool", "server": "inv", "tool": "list", "after": [root],
                        "args": {"ns": format!("{{{{ {root}.items[0].name }}}}"), "limit": "{{ inputs.limit }}"}}));
                }
                let j = format!("s{}", i + 3);
                steps.push(json!({"id": j, "kind": "transform", "after": ids,
                    "value": {"items": format!("{{{{ [{}] }}}}", ids.join(", ")), "n": format!("{{{{ length({}) }}}}", ids[0])}}));
                last = j;
                i += 4;
            }
            _ => {
                let id = format!("s{i}");
                let args = if last.is_empty() {
                    json!({"ns": "{{ inputs.ns }}"})
                } else if was_loop {
                    json!({"prev": "{{ prev }}", "ns": "{{ inputs.ns }}"})
                } else {
                    json!({"prev": "{{ prev.items }}", "ns": "{{ inputs.ns }}"})
                };
                steps.push(json!({"id": id, "kind": "tool", "server": "inv", "tool": "list", "args": args, "retry": {"attempts": 2}}));
                last = id;
                i += 1;
            }
        }
    }
    json!({"blueprint": 1, "id": "generated", "inputs": {"type": "object", "properties": {"ns": {"type": "string"}, "limit": {"type": "integer"}}},
        "steps": steps, "output": format!("{{{{ {last} }}}}")})
}

fn bench_validate(c: &mut Criterion) {
    let doc = generated_blueprint(5_000);
    let text = serde_json::to_vec(&doc).unwrap_or_default();
    let report = check_bytes(&text, &Options::default());
    assert!(!report.has_errors(), "{:?}", report.diagnostics.first());
    let steps = report.plan.as_ref().map_or(0, |p| p.steps.len());
    assert_eq!(steps, 5_000);
    let bp = report.blueprint.unwrap_or_else(|| unreachable!());
    let mut g = c.benchmark_group("validate/5000_steps");
    g.sample_size(20);
    g.bench_function("check_bytes", |b| b.iter(|| black_box(check_bytes(black_box(&text), &Options::default()))));
    g.bench_function("validate_decoded", |b| b.iter(|| black_box(validate(black_box(&bp), &Options::default()))));
    g.finish();
}

fn scope_json(n: usize) -> Value {
    let mut root = serde_json::Map::new();
    for i in 0..n {
        root.insert(
            format!("s{i}"),
            json!({"count": i, "items": (0..8).map(|k| json!({"name": format!("pod-{i}-{k}"), "labels": {"app": "web", "tier": k}})).collect::<Vec<_>>()}),
        );
    }
    Value::Object(root)
}

fn bench_templates(c: &mut Criterion) {
    let json_scope = scope_json(2_000);
    let scope = MapScope::from_json(&json_scope);
    let template = Template::compile(&json!("{{ s1999.items[3].name }}")).unwrap_or_else(|_| unreachable!());
    assert_eq!(template.render(&scope).ok(), Some(json!("pod-1999-3")));
    let naive = jmespath::compile("s1999.items[3].name").unwrap_or_else(|_| unreachable!());
    let mixed = Template::compile(&json!("{{ length(s1999.items[?labels.tier > `3`]) }} of {{ s5.count }}"))
        .unwrap_or_else(|_| unreachable!());
    assert_eq!(mixed.render(&scope).ok(), Some(json!("4 of 5")));

    let mut g = c.benchmark_group("template/plain_path_2000");
    g.bench_function("mcpflow_render_var", |b| b.iter(|| black_box(template.render_var(black_box(&scope)))));
    g.bench_function("mcpflow_render_json", |b| b.iter(|| black_box(template.render(black_box(&scope)))));
    g.bench_function("mcpflow_expression_with_functions", |b| b.iter(|| black_box(mixed.render(black_box(&scope)))));
    g.sample_size(20);
    g.bench_function("baseline_copy_scope_per_eval", |b| b.iter(|| black_box(naive.search(black_box(&json_scope)))));
    g.finish();
}

criterion_group!(benches, bench_validate, bench_templates);
criterion_main!(benches);
