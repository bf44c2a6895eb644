//! Tool warnings against a catalog read from a JSON file (as `--catalog` does).

use mcpflow_blueprint::{JsonCatalog, Options, ServerStatus, ToolCatalog, check_bytes};

pub(crate) fn catalog() -> JsonCatalog {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/catalog.json");
    JsonCatalog::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn warnings(doc: serde_json::Value) -> Vec<(String, String, String)> {
    let cat = catalog();
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    assert!(!report.has_errors(), "{:#?}", report.diagnostics);
    report.diagnostics.iter().map(|d| (d.code.name().to_owned(), d.pointer.clone(), d.message.clone())).collect()
}

fn step(s: serde_json::Value) -> serde_json::Value {
    serde_json::json!({ "blueprint": 1, "id": "cat", "steps": [s] })
}

#[test]
fn a_correct_call_has_no_warnings() {
    let w = warnings(step(
        serde_json::json!({"id": "a", "kind": "tool", "server": "everything", "tool": "echo", "args": {"message": "hi"}}),
    ));
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn an_unknown_tool_suggests_the_nearest_name() {
    let w = warnings(step(
        serde_json::json!({"id": "a", "kind": "tool", "server": "everything", "tool": "ecco", "args": {"message": "hi"}}),
    ));
    assert_eq!(w[0].0, "TOOL_UNKNOWN");
    assert_eq!(w[0].1, "/steps/0/tool");
    let cat = catalog();
    let doc = step(serde_json::json!({"id": "a", "kind": "tool", "server": "everything", "tool": "ecco"}));
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    assert_eq!(report.diagnostics[0].hint.as_deref(), Some("did you mean `echo`?"));
}

#[test]
fn an_unknown_or_unreachable_server_is_a_warning() {
    let w = warnings(step(serde_json::json!({"id": "a", "kind": "tool", "server": "evrything", "tool": "echo"})));
    assert_eq!(w[0].0, "SERVER_UNKNOWN");
    let w = warnings(step(serde_json::json!({"id": "a", "kind": "tool", "server": "down", "tool": "echo"})));
    assert_eq!(w[0].0, "SERVER_UNREACHABLE");
    assert!(w[0].2.contains("connection refused"), "{}", w[0].2);
}

#[test]
fn a_tool_on_two_servers_without_server_is_ambiguous_naming_both() {
    let w = warnings(step(serde_json::json!({"id": "a", "kind": "tool", "tool": "add", "args": {"a": 1, "b": 2}})));
    assert_eq!(w[0].0, "TOOL_AMBIGUOUS");
    assert!(w[0].2.contains("everything and math"), "{}", w[0].2);
    let w =
        warnings(step(serde_json::json!({"id": "a", "kind": "tool", "tool": "echo", "args": {"message": "routed"}})));
    assert!(w.is_empty(), "a tool on one server routes without `server`: {w:?}");
}

#[test]
fn literal_arguments_are_checked_against_the_input_schema() {
    let w = warnings(step(
        serde_json::json!({"id": "a", "kind": "tool", "server": "math", "tool": "add", "args": {"a": "one", "b": 2}}),
    ));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!((w[0].0.as_str(), w[0].1.as_str()), ("ARG_INVALID", "/steps/0/args/a"));
    let w = warnings(step(
        serde_json::json!({"id": "a", "kind": "tool", "server": "math", "tool": "add", "args": {"a": 1}}),
    ));
    assert_eq!(w[0].0, "ARG_MISSING");
    assert!(w[0].2.contains("`b`"));
}

#[test]
fn templated_arguments_are_not_judged_before_the_run() {
    let doc = serde_json::json!({ "blueprint": 1, "id": "cat", "inputs": {"type": "object"}, "steps": [
        {"id": "a", "kind": "tool", "server": "math", "tool": "add", "args": {"a": "{{ inputs.x }}", "b": 2}}
    ]});
    assert!(warnings(doc).is_empty());
}

#[test]
fn prompts_are_checked_for_existence_and_required_arguments() {
    let w = warnings(step(
        serde_json::json!({"id": "p", "kind": "prompt", "server": "everything", "prompt": "complex_prompt", "args": {}}),
    ));
    assert_eq!(w[0].0, "ARG_MISSING");
    let w = warnings(step(serde_json::json!({"id": "p", "kind": "prompt", "server": "everything", "prompt": "nope"})));
    assert_eq!(w[0].0, "PROMPT_UNKNOWN");
}

/// A catalog as the app has it while editing: `echo` was started and listed, `later` is
/// configured but not started yet.
struct Partly(JsonCatalog);

impl ToolCatalog for Partly {
    fn server_names(&self) -> Vec<String> {
        let mut names = self.0.server_names();
        names.push("later".into());
        names
    }
    fn server(&self, name: &str) -> ServerStatus {
        if name == "later" { ServerStatus::NotListed } else { self.0.server(name) }
    }
}

#[test]
fn a_server_not_listed_yet_is_neither_checked_nor_flagged_and_hides_no_known_mistake() {
    let cat = Partly(catalog());
    let doc = serde_json::json!({ "blueprint": 1, "id": "cat", "steps": [
        { "id": "a", "kind": "tool", "server": "later", "tool": "anything", "args": { "x": 1 } },
        { "id": "b", "kind": "tool", "tool": "not_on_any_listed_server" },
        { "id": "c", "kind": "tool", "server": "everything", "tool": "ecco" }
    ] });
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    let found: Vec<(&str, &str)> = report.diagnostics.iter().map(|d| (d.code.name(), d.pointer.as_str())).collect();
    assert_eq!(found, [("TOOL_UNKNOWN", "/steps/2/tool")], "only the mistake on a listed server: {found:?}");
}

#[test]
fn a_tool_without_server_on_no_reachable_server_names_the_unreachable_ones() {
    let w = warnings(step(serde_json::json!({"id": "a", "kind": "tool", "tool": "nowhere"})));
    assert_eq!(w[0].0, "TOOL_UNKNOWN");
    assert!(w[0].2.starts_with("no reachable server has a tool `nowhere` (down could not be reached)"), "{}", w[0].2);
}

/// Two steps: `w` calls `tool` on `everything`, `say` echoes `{{ w.<field> }}`.
fn reading(tool: &str, field: &str) -> serde_json::Value {
    serde_json::json!({ "blueprint": 1, "id": "cat", "steps": [
        {"id": "w", "kind": "tool", "server": "everything", "tool": tool, "args": {}},
        {"id": "say", "kind": "tool", "server": "everything", "tool": "echo", "args": {"message": format!("{{{{ w.{field} }}}}")}}
    ] })
}

#[test]
fn a_field_the_output_schema_does_not_list_is_a_warning_naming_the_closest_one() {
    let w = warnings(reading("get-structured-content", "temprature"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!((w[0].0.as_str(), w[0].1.as_str()), ("TEMPLATE_PATH_UNKNOWN", "/steps/1/args/message"), "{w:?}");
    assert!(w[0].2.contains("`everything`/`get-structured-content`") && w[0].2.contains("step `w`"), "{w:?}");
    let cat = catalog();
    let doc = reading("get-structured-content", "temprature");
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    assert_eq!(report.diagnostics[0].hint.as_deref(), Some("did you mean `temperature`?"));
    assert_eq!(report.diagnostics[0].step.as_deref(), Some("say"));
    assert_eq!(
        report.diagnostics[0].producer.as_deref().map(String::as_str),
        Some("w"),
        "the producing step is named apart"
    );
    // A field it lists is no finding.
    assert!(warnings(reading("get-structured-content", "conditions")).is_empty());
}

#[test]
fn a_field_a_closed_output_schema_rules_out_is_an_error_and_an_open_schema_claims_nothing() {
    let cat = catalog();
    let doc = reading("get-closed-content", "sum");
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    assert!(report.has_errors(), "{:#?}", report.diagnostics);
    assert_eq!(report.diagnostics[0].code.name(), "TEMPLATE_PATH_ABSENT");
    assert_eq!(report.diagnostics[0].hint.as_deref(), Some("its fields: total"));
    // No `properties`: nothing is claimed; no output schema at all: nothing either.
    assert!(warnings(reading("get-anything", "whatever")).is_empty());
    let paths = |w: Vec<(String, String, String)>| w.into_iter().filter(|d| d.0.starts_with("TEMPLATE_PATH")).count();
    assert_eq!(paths(warnings(reading("add", "whatever"))), 0);
}

/// The diagnostics of `steps` against the fixture catalog: (code, pointer, step, hint).
fn findings(steps: serde_json::Value) -> Vec<(String, String, String, String)> {
    let cat = catalog();
    let doc = serde_json::json!({ "blueprint": 1, "id": "types", "steps": steps });
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    report
        .diagnostics
        .iter()
        .map(|d| {
            let step = d.step.clone().unwrap_or_default();
            (d.code.name().to_owned(), d.pointer.clone(), step, d.hint.clone().unwrap_or_default())
        })
        .collect()
}

fn forecast() -> serde_json::Value {
    serde_json::json!({ "id": "f", "kind": "tool", "server": "weather", "tool": "forecast", "args": { "city": "Lisbon" } })
}

#[test]
fn a_nested_path_is_followed_through_references_arrays_and_optional_fields() {
    let found = findings(serde_json::json!([
        forecast(),
        { "id": "t", "kind": "transform", "value": {
            "ok": "{{ f.days[0].temp_c }} and {{ f.note }}",
            "typo": "{{ f.days[0].temp_f }}",
            "deeper": "{{ steps.f.output.days[1].sumary }}" } }
    ]));
    assert_eq!(
        found,
        [
            ("TEMPLATE_PATH_UNKNOWN".into(), "/steps/1/value/typo".into(), "t".into(), "did you mean `temp_c`?".into()),
            (
                "TEMPLATE_PATH_UNKNOWN".into(),
                "/steps/1/value/deeper".into(),
                "t".into(),
                "did you mean `summary`?".into()
            ),
        ]
    );
}

#[test]
fn a_loop_item_a_transform_and_saved_values_carry_the_tool_s_type() {
    let found = findings(serde_json::json!([
        { "id": "f", "kind": "tool", "server": "weather", "tool": "forecast", "args": { "city": "Lisbon" }, "save": "last_forecast" },
        { "id": "each", "kind": "loop", "for_each": "{{ f.days }}", "as": "day", "steps": [
            { "id": "line", "kind": "transform", "value": { "text": "{{ day.summary }}", "temp": "{{ day.tmp }}" } }
        ] },
        { "id": "first", "kind": "transform", "value": "{{ each[0].txt }}" },
        { "id": "old", "kind": "transform", "value": "{{ saved.last_forecast.cty || 'none' }} {{ saved.last_forecast.cty }}" }
    ]));
    let codes: Vec<(&str, &str, &str)> =
        found.iter().map(|(c, p, _, h)| (c.as_str(), p.as_str(), h.as_str())).collect();
    assert_eq!(
        codes,
        [
            ("TEMPLATE_PATH_UNKNOWN", "/steps/1/steps/0/value/temp", "did you mean `temp_c`?"),
            // A transform's value has exactly the keys it spells out: an error.
            ("TEMPLATE_PATH_ABSENT", "/steps/2/value", "did you mean `text`?"),
            // `||` allows absence on purpose: only the plain path is checked.
            ("TEMPLATE_PATH_UNKNOWN", "/steps/3/value", "did you mean `city`?"),
        ]
    );
}

#[test]
fn a_templated_argument_of_a_type_the_tool_refuses_is_an_error_and_a_fitting_one_is_not() {
    let found = findings(serde_json::json!([
        forecast(),
        { "id": "again", "kind": "tool", "server": "weather", "tool": "forecast",
          "args": { "city": "{{ f.days }}", "days": "{{ f.city }}" } },
        { "id": "fine", "kind": "tool", "server": "weather", "tool": "forecast",
          "args": { "city": "{{ f.days[0].summary }}", "days": "{{ length(f.days) }}" } },
        { "id": "text", "kind": "tool", "server": "everything", "tool": "echo", "args": { "message": "{{ f.days[0].temp_c }}°C" } }
    ]));
    let codes: Vec<(&str, &str)> = found.iter().map(|(c, p, _, _)| (c.as_str(), p.as_str())).collect();
    assert_eq!(
        codes,
        [("TEMPLATE_TYPE_MISMATCH", "/steps/1/args/city"), ("TEMPLATE_TYPE_MISMATCH", "/steps/1/args/days")]
    );
    let cat = catalog();
    let doc = serde_json::json!({ "blueprint": 1, "id": "types", "steps": [forecast(),
        { "id": "again", "kind": "tool", "server": "weather", "tool": "forecast", "args": { "city": "{{ f.days }}" } }] });
    let report = check_bytes(doc.to_string().as_bytes(), &Options { catalog: Some(&cat), workflows: None });
    assert_eq!(
        report.diagnostics[0].message,
        "argument `city` of tool `weather`/`forecast` must be a string, but `{{ f.days }}` is an array (the output schema of tool `weather`/`forecast` (step `f`))"
    );
}

#[test]
fn open_or_absent_schemas_and_expressions_claim_nothing() {
    let found = findings(serde_json::json!([
        { "id": "a", "kind": "tool", "server": "everything", "tool": "get-anything", "args": {} },
        { "id": "e", "kind": "tool", "server": "everything", "tool": "echo", "args": { "message": "hi" } },
        { "id": "t", "kind": "transform", "value": {
            "x": "{{ a.whatever.deeper[3] }}", "y": "{{ e.anything }}", "z": "{{ keys(a)[0] }}" } },
        { "id": "again", "kind": "tool", "server": "everything", "tool": "echo", "args": { "message": "{{ a.whatever }}" } }
    ]));
    assert_eq!(found, []);
}
