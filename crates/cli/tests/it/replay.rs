//! `mcpflow run --record` and `mcpflow test`: a cassette recorded from the echo fixture
//! replays with no server able to start; a wrong expectation or an unmatched request
//! fails with exit 1; a loop at concurrency 8 replays to the same envelope every time.

use crate::{echo_servers, stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `mcpflow` with `args` in `dir`, its data folder inside it.
fn mcpflow_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(args)
        .current_dir(dir)
        .env("MCPFLOW_HOME", dir.join("home"))
        .output()
        .unwrap()
}

fn greet() -> Value {
    json!({ "blueprint": 1, "id": "greet",
        "inputs": { "type": "object", "properties": { "name": { "type": "string" } } },
        "steps": [
            { "id": "hello", "kind": "tool", "server": "echo", "tool": "echo",
              "args": { "message": "Hello, {{ inputs.name }}" } },
            { "id": "count", "kind": "tool", "server": "echo", "tool": "progress",
              "args": { "steps": 3, "interval_ms": 0 } }
        ],
        "output": { "greeting": "{{ hello }}" } })
}

/// Writes `blueprint` as `bp.json` in `dir`, runs it against the echo fixture with
/// `--record cassette.json`, then removes the servers file: nothing can start after this.
fn record(dir: &Path, blueprint: &Value, inputs: &[&str]) -> Output {
    std::fs::write(dir.join("bp.json"), blueprint.to_string()).unwrap();
    let servers = echo_servers(dir);
    let mut args =
        vec!["run", "bp.json", "--servers", "servers.json", "--allow-all-servers", "--record", "cassette.json"];
    for i in inputs {
        args.extend(["--input", i]);
    }
    args.push("--json");
    let out = mcpflow_in(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    std::fs::remove_file(servers).unwrap();
    out
}

fn test_file(dir: &Path, name: &str, test: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, test.to_string()).unwrap();
    path
}

#[test]
fn a_recorded_run_replays_without_any_server_and_passes() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), &greet(), &["name=Ada"]);
    let cassette: Value = serde_json::from_slice(&std::fs::read(dir.path().join("cassette.json")).unwrap()).unwrap();
    assert_eq!(cassette["version"], 1);
    assert_eq!(cassette["exchanges"][0]["target"]["args"], json!({ "message": "Hello, Ada" }));
    assert_eq!(cassette["exchanges"][1]["progress"].as_array().map(Vec::len), Some(3), "{cassette}");
    test_file(
        dir.path(),
        "greet.test.json",
        &json!({ "blueprint": "bp.json", "inputs": { "name": "Ada" }, "cassette": "cassette.json",
            "expect": { "status": "succeeded", "output": { "greeting": "Hello, Ada" },
                "assert": [ { "that": "hello", "equals": "Hello, Ada" },
                            { "that": "steps.count.status", "equals": "succeeded" } ] } }),
    );
    let out = mcpflow_in(dir.path(), &["test", "greet.test.json", "--junit", "junit.xml"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("pass greet.test.json"), "{}", stdout(&out));
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("tests=\"1\" failures=\"0\""), "{junit}");
}

#[test]
fn a_wrong_expectation_or_an_unmatched_request_fails_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    record(dir.path(), &greet(), &["name=Ada"]);
    test_file(
        dir.path(),
        "wrong.test.json",
        &json!({ "blueprint": "bp.json", "inputs": { "name": "Ada" }, "cassette": "cassette.json",
            "expect": { "output": { "greeting": "Hello, Bob" } } }),
    );
    test_file(
        dir.path(),
        "unmatched.test.json",
        &json!({ "blueprint": "bp.json", "inputs": { "name": "Bob" }, "cassette": "cassette.json" }),
    );
    test_file(
        dir.path(),
        "relaxed.test.json",
        &json!({ "blueprint": "bp.json", "inputs": { "name": "Bob" }, "cassette": "cassette.json",
            "match": { "tools": { "echo": { "args": "ignore" } } },
            "expect": { "output": { "greeting": "Hello, Ada" } } }),
    );
    std::fs::write(dir.path().join("v2.cassette.json"), json!({ "version": 2, "exchanges": [] }).to_string()).unwrap();
    test_file(dir.path(), "v2.test.json", &json!({ "blueprint": "bp.json", "cassette": "v2.cassette.json" }));
    let out = mcpflow_in(
        dir.path(),
        &[
            "test",
            "wrong.test.json",
            "unmatched.test.json",
            "relaxed.test.json",
            "v2.test.json",
            "--junit",
            "junit.xml",
        ],
    );
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains(r#"FAIL wrong.test.json: output: expected {"greeting":"Hello, Bob"}"#), "{text}");
    assert!(text.contains("FAIL unmatched.test.json: status: expected succeeded, got failed"), "{text}");
    assert!(text.contains("CASSETTE_UNMATCHED"), "{text}");
    assert!(text.contains(r#"tools/call `echo` on `echo` with arguments {"message":"Hello, Bob"}"#), "{text}");
    assert!(
        text.contains(r#"the nearest recorded is tools/call `echo` on `echo` with arguments {"message":"Hello, Ada"}"#),
        "{text}"
    );
    assert!(text.contains("pass relaxed.test.json"), "{text}");
    assert!(
        text.contains("FAIL v2.test.json: v2.cassette.json: CASSETTE_INVALID: the cassette's `version` is 2"),
        "{text}"
    );
    assert!(text.contains("1 passed, 3 failed"), "{text}");
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(junit.contains("tests=\"4\" failures=\"3\""), "{junit}");
}

#[test]
fn the_cassette_holds_no_secret() {
    const SECRET: &str = "s3cret-Cassette-4242";
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let servers = json!({ "mcpServers": { "echo": { "command": bin, "args": ["echo"],
        "env": { "ECHO_TOKEN": "${env:CASSETTE_SECRET}" } } } });
    std::fs::write(dir.path().join("servers.json"), servers.to_string()).unwrap();
    let bp = json!({ "blueprint": 1, "id": "leak",
        "inputs": { "type": "object", "properties": { "token": { "type": "string" } } },
        "steps": [{ "id": "a", "kind": "tool", "server": "echo", "tool": "echo",
            "args": { "message": "token {{ inputs.token }}" } }] });
    std::fs::write(dir.path().join("bp.json"), bp.to_string()).unwrap();
    let input = format!("token={SECRET}");
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "bp.json", "--servers", "servers.json", "--allow-all-servers", "--record", "cassette.json"])
        .args(["--input", &input])
        .current_dir(dir.path())
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .env("CASSETTE_SECRET", SECRET)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let cassette = std::fs::read_to_string(dir.path().join("cassette.json")).unwrap();
    assert!(!cassette.to_ascii_lowercase().contains(&SECRET.to_ascii_lowercase()), "{cassette}");
    assert!(cassette.contains("token ${env:CASSETTE_SECRET}"), "{cassette}");
}

/// The envelope without what differs between runs by nature: its timing and run id.
fn timeless(envelope: &Value) -> String {
    let mut envelope = envelope.clone();
    if let Some(map) = envelope.as_object_mut() {
        map.remove("duration_ms");
        map.remove("run_id");
    }
    serde_json::to_string(&envelope).unwrap()
}

#[test]
fn a_loop_at_concurrency_8_replays_to_the_same_envelope_20_times() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<String> = (0..24).map(|i| format!("item-{i}")).collect();
    let bp = json!({ "blueprint": 1, "id": "fan",
        "inputs": { "type": "object", "properties": { "items": { "type": "array", "items": { "type": "string" } } } },
        "steps": [{ "id": "each", "kind": "loop", "for_each": "{{ inputs.items }}", "concurrency": 8,
            "steps": [
                { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "{{ item }}" } },
                { "id": "sum", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": "{{ index }}", "b": 1 } }
            ],
            "collect": { "said": "{{ say }}", "sum": "{{ sum }}" } }],
        "output": "{{ each }}" });
    let inputs = json!({ "items": items });
    std::fs::write(dir.path().join("inputs.json"), inputs.to_string()).unwrap();
    std::fs::write(dir.path().join("bp.json"), bp.to_string()).unwrap();
    echo_servers(dir.path());
    let live = mcpflow_in(
        dir.path(),
        &[
            "run",
            "bp.json",
            "--servers",
            "servers.json",
            "--allow-all-servers",
            "--inputs",
            "inputs.json",
            "--record",
            "cassette.json",
            "--json",
        ],
    );
    assert_eq!(live.status.code(), Some(0), "{}{}", stdout(&live), stderr(&live));
    std::fs::remove_file(dir.path().join("servers.json")).unwrap();
    let live: Value = serde_json::from_slice(&live.stdout).unwrap();
    let test = test_file(
        dir.path(),
        "fan.test.json",
        // Arguments ignored: each `say` takes the next recorded echo, so the order of replay
        // is the order of recording, whatever the concurrency.
        &json!({ "blueprint": "bp.json", "inputs": inputs, "cassette": "cassette.json",
            "match": { "tools": { "echo": { "args": "ignore" } } } }),
    );
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let envelopes: Vec<String> = (0..20)
        .map(|_| {
            let verdict = runtime
                .block_on(mcpflow_app::cassette::suite::run_test(&test, tokio_util::sync::CancellationToken::new()));
            assert!(verdict.passed(), "{:?}", verdict.failure);
            timeless(&serde_json::to_value(verdict.envelope.unwrap()).unwrap())
        })
        .collect();
    assert_eq!(envelopes[0], timeless(&live), "the replay's envelope is the recorded run's");
    assert!(envelopes.iter().all(|e| *e == envelopes[0]), "replays differ: {envelopes:#?}");
}

#[test]
fn the_example_tests_pass() {
    let mut tests: Vec<String> = std::fs::read_dir(crate::repo().join("workflows/tests"))
        .unwrap()
        .map(|e| format!("workflows/tests/{}", e.unwrap().file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".test.json"))
        .collect();
    tests.sort();
    assert!(!tests.is_empty(), "no workflows/tests/*.test.json");
    let args: Vec<&str> = std::iter::once("test").chain(tests.iter().map(String::as_str)).collect();
    let out = crate::mcpflow(&args);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn a_servers_question_and_its_answer_are_recorded_and_the_result_replays() {
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let servers =
        json!({ "mcpServers": { "asker": { "command": bin, "args": ["faulty"], "protocol": "2025-11-25" } } });
    std::fs::write(dir.path().join("servers.json"), servers.to_string()).unwrap();
    let bp = json!({ "blueprint": 1, "id": "defaults", "steps": [
        { "id": "ask", "kind": "tool", "server": "asker", "tool": "ask_with_defaults", "args": {} }
    ], "output": "{{ ask.content.name }}" });
    std::fs::write(dir.path().join("bp.json"), bp.to_string()).unwrap();
    std::fs::write(dir.path().join("answers.json"), json!({ "ask": { "name": "Ada" } }).to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "bp.json", "--servers", "servers.json", "--allow-all-servers", "--answers", "answers.json"])
        .args(["--record", "cassette.json"])
        .current_dir(dir.path())
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    std::fs::remove_file(dir.path().join("servers.json")).unwrap();
    let cassette: Value = serde_json::from_slice(&std::fs::read(dir.path().join("cassette.json")).unwrap()).unwrap();
    let asked = &cassette["exchanges"][0]["asked"][0];
    assert_eq!(asked["question"]["server"], "asker", "{cassette}");
    assert_eq!(asked["question"]["message"], "Accept the defaults, or change them", "{cassette}");
    assert_eq!(asked["answer"]["action"], "accept", "{cassette}");
    assert_eq!(asked["answer"]["content"]["name"], "Ada", "{cassette}");
    test_file(
        dir.path(),
        "ask.test.json",
        &json!({ "blueprint": "bp.json", "cassette": "cassette.json", "expect": { "output": "Ada" } }),
    );
    let out = mcpflow_in(dir.path(), &["test", "ask.test.json"]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
}
