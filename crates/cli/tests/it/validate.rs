//! `mcpflow validate` and `mcpflow schema`.

use crate::{mcpflow, repo, stderr, stdout};
use std::io::Write as _;

fn example_paths() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo().join("workflows"))
        .unwrap()
        .map(|e| format!("workflows/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".json"))
        .collect();
    v.sort();
    v
}

#[test]
fn all_examples_validate_with_exit_code_zero() {
    let paths = example_paths();
    let args: Vec<&str> = std::iter::once("validate").chain(paths.iter().map(String::as_str)).collect();
    let out = mcpflow(&args);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains(&format!("{} files checked: 0 error(s), 0 warning(s)", paths.len())));
}

#[test]
fn a_broken_file_prints_file_line_col_code_message_and_hint_and_exits_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.blueprint.json");
    std::fs::write(
        &path,
        "{\n  \"blueprint\": 1,\n  \"id\": \"broken\",\n  \"steps\": [\n    { \"id\": \"a\", \"kind\": \"tool\", \"tool\": \"x\", \"after\": [\"b\"] },\n    { \"id\": \"b\", \"kind\": \"tool\", \"tool\": \"x\", \"args\": { \"v\": \"{{ a.itmes }}\" } }\n  ]\n}\n",
    )
    .unwrap();
    let out = mcpflow(&["validate", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out).replace(&path.display().to_string(), "broken.blueprint.json");
    insta::assert_snapshot!(text);
    // The cycle is reported at the `after` entry that closes it, not at the whole step.
    assert!(text.starts_with("broken.blueprint.json:5:57: error[DEPENDENCY_CYCLE]: "), "{text}");
    assert!(text.contains("(at /steps/0/after/0)"), "{text}");
    assert!(text.contains("  = hint: "), "{text}");
}

#[test]
fn json_output_lists_diagnostics_per_file() {
    let out = mcpflow(&[
        "validate",
        "--json",
        "crates/blueprint/tests/corpus/unknown-kind-tol.json",
        "workflows/pipeline-prev.blueprint.json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["file"], "crates/blueprint/tests/corpus/unknown-kind-tol.json");
    assert_eq!(v[0]["diagnostics"][0]["code"], "UNKNOWN_KIND");
    assert_eq!(v[0]["diagnostics"][0]["pointer"], "/steps/0/kind");
    assert_eq!(v[0]["diagnostics"][0]["level"], "error");
    assert!(v[0]["diagnostics"][0]["position"]["line"].as_u64().unwrap() > 1);
    assert_eq!(v[1]["diagnostics"], serde_json::json!([]));
}

#[test]
fn warnings_alone_exit_zero_and_need_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.json");
    std::fs::write(&path, r#"{"blueprint": 1, "id": "w", "steps": [{"id": "a", "kind": "tool", "server": "everything", "tool": "ecco"}]}"#)
        .unwrap();
    let plain = mcpflow(&["validate", path.to_str().unwrap()]);
    assert_eq!(plain.status.code(), Some(0));
    assert_eq!(stdout(&plain), "");
    let with =
        mcpflow(&["validate", "--catalog", "crates/blueprint/tests/fixtures/catalog.json", path.to_str().unwrap()]);
    assert_eq!(with.status.code(), Some(0), "{}", stderr(&with));
    assert!(
        stdout(&with).contains("warning[TOOL_UNKNOWN]: server `everything` has no tool `ecco`"),
        "{}",
        stdout(&with)
    );
    assert!(stdout(&with).contains("= hint: did you mean `echo`?"));
}

#[test]
fn tools_are_checked_against_live_servers_that_may_start_and_the_others_do_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::echo_servers(dir.path());
    let servers = servers.to_str().unwrap();
    let path = dir.path().join("w.json");
    std::fs::write(
        &path,
        r#"{"blueprint": 1, "id": "w", "steps": [{"id": "a", "kind": "tool", "server": "echo", "tool": "ecoh"}]}"#,
    )
    .unwrap();
    let file = path.to_str().unwrap();

    let live = mcpflow(&["validate", "--servers", servers, "--allow-server", "echo", file]);
    assert_eq!(live.status.code(), Some(0), "{}", stderr(&live));
    assert!(stdout(&live).contains("warning[TOOL_UNKNOWN]: server `echo` has no tool `ecoh`"), "{}", stdout(&live));
    assert!(stdout(&live).contains("= hint: did you mean `echo`?"), "{}", stdout(&live));

    // Without consent the server is not started: its tools are not known, and it says why.
    let refused = mcpflow(&["validate", "--servers", servers, file]);
    assert_eq!(refused.status.code(), Some(0), "{}", stderr(&refused));
    let text = stdout(&refused);
    assert!(text.contains("warning[SERVER_UNREACHABLE]") && text.contains("--allow-server echo"), "{text}");
    assert!(!text.contains("TOOL_UNKNOWN"), "{text}");

    let both = mcpflow(&["validate", "--servers", servers, "--catalog", "x.json", file]);
    assert_eq!(both.status.code(), Some(2), "--servers and --catalog exclude each other");
}

#[test]
fn sub_workflow_recursion_across_files_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, r#"{"blueprint": 1, "id": "a", "steps": [{"id": "s", "kind": "workflow", "workflow": "b"}]}"#)
        .unwrap();
    std::fs::write(&b, r#"{"blueprint": 1, "id": "b", "steps": [{"id": "s", "kind": "workflow", "workflow": "a"}]}"#)
        .unwrap();
    let out = mcpflow(&["validate", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("error[WORKFLOW_RECURSION]: sub-workflows call each other in a circle: `a` → `b` → `a`"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_missing_file_exits_two_naming_it() {
    let out = mcpflow(&["validate", "no/such/file.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no/such/file.json: error: cannot open the file"), "{}", stderr(&out));
}

#[test]
fn a_100_mb_file_is_refused_by_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.json");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..100 {
        f.write_all(&chunk).unwrap();
    }
    drop(f);
    let out = mcpflow(&["validate", path.to_str().unwrap()]);
    // Refused while reading, like a file that cannot be read: exit 2, on stderr.
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(":1:1: error[LIMIT_SIZE]"), "{}", stderr(&out));
}

#[test]
fn standard_input_is_read_with_a_dash() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["validate", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"{\"blueprint\": 2}").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("-:1:2: error[VERSION_UNSUPPORTED]: this blueprint was made by a newer mcpflow"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn schema_prints_the_committed_schema() {
    let out = mcpflow(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), std::fs::read_to_string(repo().join("schema/blueprint.schema.json")).unwrap());
}

#[test]
fn help_and_version_work_everywhere() {
    let version = mcpflow(&["--version"]);
    assert_eq!(stdout(&version).trim(), format!("mcpflow {}", env!("CARGO_PKG_VERSION")));
    for args in [&["--help"][..], &["validate", "--help"], &["schema", "--help"], &["help", "validate"]] {
        let out = mcpflow(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(stdout(&out).contains("Usage: mcpflow"), "{args:?}: {}", stdout(&out));
    }
    let none = mcpflow(&[]);
    assert_eq!(none.status.code(), Some(2), "no subcommand prints help and exits 2");
}

#[test]
fn a_tool_step_with_an_empty_or_missing_tool_is_an_error_at_its_tool_field() {
    let dir = tempfile::tempdir().unwrap();
    // The codes and pointers `mcpflow validate --json` reports for `steps`.
    let check = |steps: serde_json::Value| -> Vec<(String, String)> {
        let path = dir.path().join("tool.blueprint.json");
        let doc = serde_json::json!({ "blueprint": 1, "id": "tool", "steps": steps });
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let out = mcpflow(&["validate", "--json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v[0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["code"].as_str().unwrap().to_owned(), d["pointer"].as_str().unwrap().to_owned()))
            .collect()
    };
    let want = |code: &str, pointer: &str| vec![(code.to_owned(), pointer.to_owned())];
    let empty = check(serde_json::json!([
        { "id": "a", "kind": "tool", "tool": "x" },
        { "id": "b", "kind": "tool", "tool": "" },
        { "id": "each", "kind": "loop", "for_each": [1], "steps": [{ "id": "c", "kind": "tool", "tool": "  " }] }
    ]));
    assert_eq!(
        empty,
        [want("INVALID_VALUE", "/steps/1/tool"), want("INVALID_VALUE", "/steps/2/steps/0/tool")].concat()
    );
    let missing = check(serde_json::json!([{ "id": "a", "kind": "tool", "tool": "x" }, { "id": "b", "kind": "tool" }]));
    assert_eq!(missing, want("MISSING_FIELD", "/steps/1/tool"));
}

#[test]
fn a_field_server_everythings_output_schema_rules_out_is_found_by_validate_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let servers = crate::people::everything_servers(dir.path());
    let write = |field: &str| {
        let path = dir.path().join(format!("weather-{field}.json"));
        let doc = serde_json::json!({ "blueprint": 1, "id": "weather", "steps": [
            { "id": "w", "kind": "tool", "server": "everything", "tool": "get-structured-content", "args": { "location": "Chicago" } },
            { "id": "say", "kind": "tool", "server": "everything", "tool": "echo", "args": { "message": format!("{{{{ w.{field} }}}}") } } ] });
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let check = |path: &std::path::Path| {
        mcpflow(&[
            "validate",
            "--servers",
            servers.to_str().unwrap(),
            "--allow-server",
            "everything",
            path.to_str().unwrap(),
        ])
    };
    let typo = check(&write("temprature"));
    // Its schema (zod's) allows no other field, so the typo cannot be there: an error,
    // where the run would have failed TEMPLATE_UNRESOLVED at that step.
    let text = stdout(&typo);
    assert_eq!(typo.status.code(), Some(1), "{text}");
    assert!(text.contains("error[TEMPLATE_PATH_ABSENT]") && text.contains("`w.temprature`"), "{text}");
    assert!(text.contains("did you mean `temperature`?"), "{text}");
    // `conditions` is there, and a string, as `echo`'s `message` must be.
    let right = check(&write("conditions"));
    assert_eq!(right.status.code(), Some(0), "{}", stdout(&right));
    assert!(!stdout(&right).contains("TEMPLATE_"), "{}", stdout(&right));
    // `temperature` is there too, but a number: `echo` would refuse it (ARGS_INVALID).
    let number = check(&write("temperature"));
    assert_eq!(number.status.code(), Some(1), "{}", stdout(&number));
    assert!(stdout(&number).contains("error[TEMPLATE_TYPE_MISMATCH]"), "{}", stdout(&number));
}

/// A Python SDK 2.x server whose tools return pydantic models (`$defs`, `$ref`, optional
/// fields, a model that forbids extras) and an int: `validate` finds a typo'd nested
/// path, a field the closed model rules out and an argument of the wrong type before any
/// run; the right blueprint validates clean and its run gives what the types said.
#[test]
fn types_from_a_python_sdk_server_s_typed_returns_catch_mistakes_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers.json");
    let python = crate::venv_python();
    let script = repo().join("crates/cli/tests/fixtures/typed_py.py");
    let doc = serde_json::json!({ "mcpServers": { "typed": { "command": python, "args": [script] } } });
    std::fs::write(&servers, doc.to_string()).unwrap();
    let write = |name: &str, first: &str, temp: &str, text: &str| {
        let path = dir.path().join(format!("{name}.json"));
        let doc = serde_json::json!({ "blueprint": 1, "id": "typed", "steps": [
            { "id": "f", "kind": "tool", "server": "typed", "tool": "forecast", "args": { "city": "Oslo", "days": 2 } },
            { "id": "r", "kind": "tool", "server": "typed", "tool": "reading", "args": { "city": "{{ f.city }}" } },
            { "id": "n", "kind": "tool", "server": "typed", "tool": "count", "args": { "text": text } },
            { "id": "each", "kind": "loop", "for_each": "{{ f.days }}", "as": "day", "steps": [
                { "id": "line", "kind": "transform", "value": "{{ day.summary }}: {{ day.temp_c }}" } ] }
          ],
          "output": { "first": first, "now": temp, "chars": "{{ n.result }}", "lines": "{{ each }}", "note": "{{ f.note }}" } });
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let validate = |path: &std::path::Path| {
        mcpflow(&[
            "validate",
            "--servers",
            servers.to_str().unwrap(),
            "--allow-server",
            "typed",
            path.to_str().unwrap(),
        ])
    };
    let wrong = validate(&write("wrong", "{{ f.days[0].tempc }}", "{{ r.temp }}", "{{ f.days }}"));
    let text = stdout(&wrong);
    assert_eq!(wrong.status.code(), Some(1), "{text}{}", stderr(&wrong));
    // pydantic's models allow other fields unless told not to: a warning, through `$ref`.
    assert!(text.contains("warning[TEMPLATE_PATH_UNKNOWN]") && text.contains("did you mean `temp_c`?"), "{text}");
    assert!(text.contains("error[TEMPLATE_PATH_ABSENT]") && text.contains("`r.temp`"), "{text}");
    assert!(
        text.contains("error[TEMPLATE_TYPE_MISMATCH]") && text.contains("argument `text` of tool `typed`/`count`"),
        "{text}"
    );
    let right_path = write("right", "{{ f.days[0].temp_c }}", "{{ r.temp_c }}", "{{ f.city }}");
    let right = validate(&right_path);
    assert_eq!(right.status.code(), Some(0), "{}{}", stdout(&right), stderr(&right));
    assert!(!stdout(&right).contains("TEMPLATE_"), "{}", stdout(&right));
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", right_path.to_str().unwrap(), "--servers", servers.to_str().unwrap(), "--allow-server", "typed"])
        .arg("--json")
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}{}", stdout(&run), stderr(&run));
    let env: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        env["output"],
        serde_json::json!({ "first": 20.0, "now": 21.5, "chars": 4, "lines": ["day 0 in Oslo: 20.0", "day 1 in Oslo: 21.0"], "note": null })
    );
}
