//! Template rendering: type passthrough, text, escapes, strict paths, defaults, loop
//! scope, and results that are never evaluated twice.

use mcpflow_blueprint::template::{MapScope, Template};
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
