//! Template rendering: type passthrough, text, escapes, strict paths, defaults, loop
//! scope, and results that are never evaluated twice.

use mcpflow_blueprint::template::{MapScope, Rcvar, Template, Variable};
use serde_json::{Value, json};

fn scope() -> MapScope {
    MapScope::from_json(&json!({
        "inputs": { "namespace": "prod", "limit": 3 },
        "pods": { "count": 42, "items": [{ "name": "a" }, { "name": "b" }], "meta": { "k": "v" }, "none": null },
        "evil": { "text": "{{ pods.count }}", "escaped": "\\{{ x }}" },
        "item": { "name": "web-1" },
        "index": 2,
        "saved": {},
        "steps": { "pods": { "output": { "count": 42 }, "status": "succeeded", "error": null, "attempts": 1, "duration_ms": 12 } }
    }))
}

fn render(template: Value) -> Value {
    Template::compile(&template).unwrap().render(&scope()).unwrap()
}

fn render_err(template: Value) -> mcpflow_blueprint::RenderError {
    Template::compile(&template).unwrap().render(&scope()).unwrap_err()
}

#[test]
fn a_whole_template_keeps_the_type_of_numbers_arrays_objects_and_null() {
    assert_eq!(render(json!("{{ pods.count }}")), json!(42));
    assert_eq!(render(json!("{{ pods.items }}")), json!([{ "name": "a" }, { "name": "b" }]));
    assert_eq!(render(json!("{{ pods.meta }}")), json!({ "k": "v" }));
    assert_eq!(render(json!("{{ pods.none }}")), Value::Null);
    assert_eq!(render(json!("{{ `true` }}")), json!(true));
    assert_eq!(render(json!("{{ pods.items[*].name }}")), json!(["a", "b"]));
}

#[test]
fn mixed_text_renders_strings_as_is_and_other_values_as_compact_json() {
    assert_eq!(render(json!("ns={{ inputs.namespace }} n={{ pods.count }}")), json!("ns=prod n=42"));
    assert_eq!(render(json!("items: {{ pods.meta }}")), json!("items: {\"k\":\"v\"}"));
    assert_eq!(render(json!("x{{ pods.none }}")), json!("xnull"));
    assert_eq!(render(json!(" {{ pods.count }}")), json!(" 42"), "surrounding text makes it text");
}

#[test]
fn templates_nest_inside_objects_and_arrays() {
    let out = render(json!({ "a": ["{{ inputs.limit }}", "lit"], "b": { "c": "{{ item.name }}" }, "n": 1 }));
    assert_eq!(out, json!({ "a": [3, "lit"], "b": { "c": "web-1" }, "n": 1 }));
}

#[test]
fn backslash_braces_write_literal_braces() {
    assert_eq!(render(json!("\\{{ not a template }}")), json!("{{ not a template }}"));
    assert_eq!(render(json!("\\{{ a }} {{ inputs.limit }}")), json!("{{ a }} 3"));
    assert!(Template::compile(&json!("\\{{ x }}")).unwrap().is_literal());
}

#[test]
fn a_missing_key_in_a_plain_path_fails_naming_the_key_and_the_nearest_one() {
    let e = render_err(json!("{{ pods.itmes }}"));
    assert_eq!(e.code, "TEMPLATE_UNRESOLVED");
    assert!(e.message.contains("`pods` has no key `itmes`"), "{}", e.message);
    assert!(e.message.contains("did you mean `items`?"), "{}", e.message);
    assert!(e.message.contains("count, items, meta, none"), "{}", e.message);
    let e = render_err(json!("{{ pods.items[5].name }}"));
    assert!(e.message.contains("index 5 is out of range"), "{}", e.message);
    let e = render_err(json!("{{ pods.count.x }}"));
    assert!(e.message.contains("`pods.count` is a number"), "{}", e.message);
    let e = render_err(json!("{{ steps.podz.output }}"));
    assert!(e.message.contains("did you mean `pods`?"), "{}", e.message);
    let e = render_err(json!("{{ saved.cursor }}"));
    assert_eq!(e.code, "TEMPLATE_UNRESOLVED");
}

#[test]
fn or_defaults_allow_absence_on_purpose() {
    assert_eq!(render(json!("{{ pods.missing || `[]` }}")), json!([]));
    assert_eq!(render(json!("{{ saved.cursor || `0` }}")), json!(0));
    assert_eq!(render(json!("{{ pods.none || 'none' }}")), json!("none"));
    assert_eq!(render(json!("{{ pods.count || `0` }}")), json!(42));
}

#[test]
fn loop_scope_names_resolve() {
    assert_eq!(render(json!("{{ item.name }}#{{ index }}")), json!("web-1#2"));
    assert_eq!(render(json!("{{ steps.pods.status }}")), json!("succeeded"));
}

#[test]
fn a_value_containing_braces_is_never_evaluated_again() {
    assert_eq!(render(json!("{{ evil.text }}")), json!("{{ pods.count }}"));
    assert_eq!(render(json!("got {{ evil.text }}")), json!("got {{ pods.count }}"));
    assert_eq!(render(json!("{{ evil.escaped }}")), json!("\\{{ x }}"));
    assert_eq!(render(json!(["{{ evil.text }}"])), json!(["{{ pods.count }}"]));
}

#[test]
fn functions_and_filters_work_over_the_scope() {
    assert_eq!(render(json!("{{ length(pods.items) }}")), json!(2));
    assert_eq!(render(json!("{{ pods.items[?name == 'b'] | [0].name }}")), json!("b"));
    assert_eq!(render(json!("{{ join(',', pods.items[*].name) }}")), json!("a,b"));
    assert_eq!(render(json!("{{ {n: inputs.namespace, c: pods.count} }}")), json!({ "n": "prod", "c": 42 }));
}

#[test]
fn a_type_error_in_a_function_is_an_eval_error_not_a_panic() {
    let e = render_err(json!("{{ length(pods.count) }}"));
    assert_eq!(e.code, "TEMPLATE_EVAL");
}

#[test]
fn syntax_errors_are_reported_at_the_string_that_holds_them() {
    let errs = Template::compile(&json!({ "ok": "{{ a }}", "bad": ["x", "{{ a.[ }}"], "open": "{{ a" })).unwrap_err();
    let pointers: Vec<(&str, &str)> = errs.iter().map(|e| (e.pointer.as_str(), e.code.name())).collect();
    assert_eq!(pointers, [("/bad/1", "TEMPLATE_SYNTAX"), ("/open", "TEMPLATE_SYNTAX")]);
}

// ----- the value budget (limits.max_value_bytes) -------------------------------------

/// A scope with a 1 KB string and a 64 KB value limit.
fn small_budget() -> MapScope {
    MapScope::from_json(&json!({ "inputs": { "s": "s".repeat(1024), "tags": ["a", "b"] } }))
        .with_max_value_bytes(64 * 1024)
}

fn too_large(template: &str) -> mcpflow_blueprint::RenderError {
    let t = Template::compile(&json!(template)).unwrap();
    let scope = small_budget();
    let as_var = t.render_var(&scope).map(|_| ()).unwrap_err();
    let e = t.render(&scope).unwrap_err();
    assert_eq!(as_var.code, e.code);
    assert_eq!(e.code, "TEMPLATE_TOO_LARGE", "{e:?}");
    assert!(e.message.contains("65536 bytes") && e.message.contains("limits.max_value_bytes"), "{}", e.message);
    e
}

#[test]
fn nested_joins_stop_while_building_even_when_the_result_is_small() {
    // The inner joins build 10 KB each, the outer one 100 KB; only a number comes out.
    let ten = "[inputs.s, inputs.s, inputs.s, inputs.s, inputs.s, inputs.s, inputs.s, inputs.s, inputs.s, inputs.s]";
    let inner = format!("join('', {ten})");
    let outer = format!("length(join('', [{}]))", [inner.as_str(); 10].join(", "));
    too_large(&format!("{{{{ {outer} }}}}"));
}

#[test]
fn to_string_of_a_shared_doubling_value_stops_before_writing_it() {
    // 16 doublings: 65,536 shared copies of one string, 6 bytes each as JSON: 393 KB.
    let doubled = format!("`\"x\"`{}", " | [@, @]".repeat(16));
    let e = too_large(&format!("{{{{ length(to_string({doubled})) }}}}"));
    assert!(e.expression.contains("to_string"), "{e:?}");
}

#[test]
fn a_shared_doubling_result_is_measured_as_its_json() {
    // Cheap to build (17 shared nodes), 64 MB as JSON.
    too_large(&format!("{{{{ inputs.s{} }}}}", " | [@, @]".repeat(16)));
}

#[test]
fn text_arrays_and_objects_count_every_member() {
    too_large(&"{{ inputs.s }}".repeat(70));
    let t = Template::compile(&json!(vec!["{{ join('', [inputs.s, inputs.s, inputs.s, inputs.s]) }}"; 20])).unwrap();
    assert_eq!(t.render(&small_budget()).unwrap_err().code, "TEMPLATE_TOO_LARGE");
    let t = Template::compile(&json!({ "a": vec!["{{ inputs.s }}"; 40], "b": vec!["{{ inputs.s }}"; 40] })).unwrap();
    assert_eq!(t.render_var(&small_budget()).map(|_| ()).unwrap_err().code, "TEMPLATE_TOO_LARGE");
}

#[test]
fn values_within_the_budget_render_as_before() {
    let scope = small_budget();
    let t = Template::compile(&json!("{{ join('', [inputs.s, inputs.s]) | length(@) }} {{ to_string(inputs.tags) }}"))
        .unwrap();
    assert_eq!(t.render(&scope).unwrap(), json!("2048 [\"a\",\"b\"]"));
    let t = Template::compile(&json!("{{ reverse(join('-', inputs.tags)) }}")).unwrap();
    assert_eq!(t.render(&scope).unwrap(), json!("b-a"));
}

// ----- depth, flatten and the operation budget (issue 28) ------------------------------

/// A JSON value nested `levels` arrays deep around `"x"`.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!("x"), |v, _| json!([v]))
}

fn deep_scope(levels: usize) -> MapScope {
    MapScope::from_json(&json!({ "inputs": { "deep": nested(levels) } }))
}

#[test]
fn a_result_deeper_than_the_depth_limit_fails_naming_the_limit() {
    // 60 levels in scope, 5 more built: 65, past the default 64.
    let t = Template::compile(&json!("{{ [[[[[inputs.deep]]]]] }}")).unwrap();
    let e = t.render(&deep_scope(60)).unwrap_err();
    assert_eq!(e.code, "TEMPLATE_TOO_DEEP", "{e:?}");
    assert!(e.message.contains("limits.max_value_depth") && e.message.contains("64"), "{}", e.message);
    // Arrays and objects of templates count their own levels too.
    let t = Template::compile(&json!([[[[{ "a": "{{ inputs.deep }}" }]]]])).unwrap();
    assert_eq!(t.render_var(&deep_scope(60)).map(|_| ()).unwrap_err().code, "TEMPLATE_TOO_DEEP");
    // Within the limit, as before.
    let t = Template::compile(&json!("{{ [[[[inputs.deep]]]] }}")).unwrap();
    assert_eq!(t.render(&deep_scope(60)).unwrap(), json!({ "v": nested(64) })["v"]);
}

/// `levels` arrays, each holding the one below twice: 2^levels leaves, levels + 1 nodes.
fn doubling(levels: usize) -> Rcvar {
    (0..levels).fold(Rcvar::new(Variable::String("x".into())), |v, _| Rcvar::new(Variable::Array(vec![v.clone(), v])))
}

#[test]
fn a_deep_value_shared_many_times_is_refused_without_walking_every_copy() {
    // 2^50 paths through 51 distinct nodes, 50 deep; 20 more levels pass 64.
    let mut scope = MapScope::new().with_max_value_bytes(u64::MAX >> 1);
    scope.set("d", doubling(50));
    let t = Template::compile(&json!("{{ [[[[[[[[[[[[[[[[[[[[d]]]]]]]]]]]]]]]]]]]] }}")).unwrap();
    assert_eq!(t.render_var(&scope).map(|_| ()).unwrap_err().code, "TEMPLATE_TOO_DEEP");
}

#[test]
fn flattening_a_value_shared_many_times_stops_before_copying_it() {
    // A value that doubled in each of 30 steps shares 2^30 leaves at no cost; each
    // flatten would copy them into real arrays (before the budget: gigabytes). The
    // flatten is charged before it builds.
    let mut scope = MapScope::new().with_max_value_bytes(64 * 1024);
    scope.set("d", doubling(30));
    let t = Template::compile(&json!(format!("{{{{ length(d{}) }}}}", "[]".repeat(29)))).unwrap();
    let e = t.render(&scope).unwrap_err();
    assert_eq!(e.code, "TEMPLATE_TOO_LARGE", "{e:?}");
    // A few flattens of a small one are fine: 2^10 leaves.
    let mut scope = MapScope::new();
    scope.set("d", doubling(10));
    let t = Template::compile(&json!(format!("{{{{ length(d{}) }}}}", "[]".repeat(9)))).unwrap();
    assert_eq!(t.render(&scope).unwrap(), json!(1024));
}

#[test]
fn sorting_a_large_list_again_and_again_stops_at_the_operation_budget() {
    let numbers: Vec<u64> = (0..100_000).rev().collect();
    let scope = MapScope::from_json(&json!({ "inputs": { "n": numbers } }));
    let t = Template::compile(&json!("{{ length(map(&sort(@), [inputs.n, inputs.n] | [@, @, @, @, @, @, @, @][])) }}"))
        .unwrap();
    let e = t.render(&scope).unwrap_err();
    assert_eq!(e.code, "TEMPLATE_TOO_COSTLY", "{e:?}");
    assert!(e.message.contains("10000000 operations"), "{}", e.message);
    // One sort is well within it.
    let t = Template::compile(&json!("{{ sort(inputs.n)[0] }}")).unwrap();
    assert_eq!(t.render(&scope).unwrap(), json!(0));
}

#[test]
fn the_expression_functions_keep_their_meaning_under_the_budget() {
    let scope =
        MapScope::from_json(&json!({ "xs": [{ "n": 3, "s": "c" }, { "n": 1, "s": "a" }, { "n": 2, "s": "b" }] }));
    let render = |t: &str| Template::compile(&json!(t)).unwrap().render(&scope);
    assert_eq!(render("{{ map(&n, xs) }}").unwrap(), json!([3, 1, 2]));
    assert_eq!(render("{{ sort_by(xs, &s)[*].n }}").unwrap(), json!([1, 2, 3]));
    assert_eq!(render("{{ max_by(xs, &n).s }}").unwrap(), json!("c"));
    assert_eq!(render("{{ min_by(xs, &s).n }}").unwrap(), json!(1));
    assert_eq!(render("{{ sort_by(`[]`, &n) }}").unwrap(), json!([]));
    assert_eq!(render("{{ max_by(`[]`, &n) }}").unwrap(), json!(null));
    assert_eq!(render("{{ xs[?n > `1`].s | sort(@) | join(',', @) }}").unwrap(), json!("b,c"));
    assert_eq!(render("{{ xs[::-1] | [0].n }}").unwrap(), json!(2));
    assert_eq!(render("{{ xs[*].{k: s, m: [n, n]} | [0] }}").unwrap(), json!({ "k": "c", "m": [3, 3] }));
    assert_eq!(render("{{ sort_by(xs, &[n]) }}").unwrap_err().code, "TEMPLATE_EVAL");
    assert_eq!(render("{{ map(&n, `3`) }}").unwrap_err().code, "TEMPLATE_EVAL");
}
