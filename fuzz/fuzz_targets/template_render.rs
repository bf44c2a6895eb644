//! Bytes → (template text, scope JSON), split at the first `\n`. The template is compiled
//! as one JSON string and, when the first part is itself JSON, as that JSON value; each
//! compiled template is rendered (`render` and `render_var`) against
//! `MapScope::from_json(scope)`. Compile and render errors are fine; panics, stack
//! overflows, timeouts and OOMs are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpflow_blueprint::{MapScope, Template};
use serde_json::{Value, json};

fn default_scope() -> Value {
    json!({
        "inputs": {"name": "web", "count": 3, "flag": true, "tags": ["a", "b"], "ns": {"x": {"y": [1, 2, {"z": null}]}}},
        "items": [
            {"id": 1, "name": "a", "status": "ok", "n": 1.5},
            {"id": 2, "name": "b", "status": "bad", "n": -2},
            {"id": 3, "name": "c", "status": "ok", "n": 0}
        ],
        "nested": [[1, 2, [3, 4]], [[5], []], "s", null, {"k": [6, 7]}],
        "item": {"name": "x", "v": 1},
        "index": 0,
        "prev": {"out": "p", "list": [1, 2, 3]},
        "error": {"code": "E", "message": "boom"},
        "saved": {"cursor": "c1"},
        "run": {"id": "r1"},
        "fetch": {"output": [1, 2, 3]},
        "steps": {
            "fetch": {"output": {"items": [1, 2, 3]}, "status": "ok", "error": null, "attempts": 1, "duration_ms": 5}
        }
    })
}

fn exercise(t: &Template, scope: &MapScope) {
    let _ = t.expressions();
    let _ = t.render(scope);
    let _ = t.render_var(scope);
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (template, scope_text) = match text.find('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (&text[..], ""),
    };
    let scope_json = serde_json::from_str::<Value>(scope_text).unwrap_or_else(|_| default_scope());
    let scope = MapScope::from_json(&scope_json);
    if let Ok(t) = Template::compile(&Value::String(template.to_owned())) {
        exercise(&t, &scope);
    }
    if let Ok(value) = serde_json::from_str::<Value>(template)
        && let Ok(t) = Template::compile(&value)
    {
        exercise(&t, &scope);
    }
});
