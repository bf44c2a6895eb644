//! People in the loop, headless: `input` steps, approval gates and `confirm:
//! "destructive"` answered from `--answers FILE`, against cluster-sim and the reference
//! `server-memory` (whose `delete_entities` is annotated destructive); and what happens
//! when nobody can answer (no terminal here): `INPUT_REQUIRED` at once, nothing sent.

use crate::{repo, stderr};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `blueprint` (a path from the repository root) with the demo servers, the memory
/// graph in `dir`, and `answers` when given; stdin is not a terminal.
fn run(dir: &Path, blueprint: &str, answers: Option<Value>, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    cmd.args(["run", blueprint, "--servers", "demo/servers.json", "--allow-all-servers", "--json", "-q"])
        .args(extra)
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"))
        .env("MCPFLOW_MEMORY_FILE", dir.join("graph.jsonl"))
        .stdin(std::process::Stdio::null());
    if let Some(answers) = answers {
        let file = dir.join("answers.json");
        std::fs::write(&file, answers.to_string()).unwrap();
        cmd.args(["--answers", &file.display().to_string()]);
    }
    cmd.output().unwrap()
}

fn envelope(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", crate::stdout(out), stderr(out)))
}

/// The entity names in the memory graph file.
fn entities(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("graph.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "entity")
        .filter_map(|v| v["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn an_input_steps_answer_from_the_answers_file_is_what_the_next_step_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        run(dir.path(), "workflows/ask-for-a-value.blueprint.json", Some(json!({ "namespace": "payments" })), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let env = envelope(&out);
    assert_eq!(env["output"]["namespace"], "payments");
    assert!(env["output"]["pods"].as_u64().is_some_and(|n| n > 0), "{env}");

    // An answer outside the schema's enum is refused with the file, the step and why.
    let out = run(dir.path(), "workflows/ask-for-a-value.blueprint.json", Some(json!({ "namespace": "mars" })), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "INPUT_INVALID", "{env}");
    let message = env["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("answers.json") && message.contains("`namespace`") && message.contains("\"mars\""),
        "{message}"
    );
}

#[test]
fn an_approval_gate_lets_the_destructive_half_run_only_when_approved() {
    let bp = "workflows/approve-before-delete.blueprint.json";
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), bp, Some(json!({ "approve": false })), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "INPUT_REJECTED", "{env}");
    assert!(
        env["errors"][0]["message"].as_str().unwrap().contains("Delete 2 entities: scratch-"),
        "the prompt as the person saw it: {env}"
    );
    assert_eq!(entities(dir.path()).len(), 2, "rejected: nothing was deleted");

    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), bp, Some(json!({ "approve": true })), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(envelope(&out)["output"]["success"], true);
    assert!(entities(dir.path()).is_empty(), "approved: both deleted: {:?}", entities(dir.path()));
}

/// A blueprint that writes one entity, then deletes it under `confirm: "destructive"`.
fn careful(dir: &Path) -> String {
    let bp = json!({ "blueprint": 1, "id": "careful", "confirm": "destructive", "steps": [
        { "id": "put", "kind": "tool", "server": "memory", "tool": "create_entities",
          "args": { "entities": [ { "name": "precious", "entityType": "thing", "observations": [] } ] } },
        { "id": "drop", "kind": "tool", "server": "memory", "tool": "delete_entities",
          "args": { "entityNames": ["precious"] } }
    ] });
    let path = dir.join("careful.blueprint.json");
    std::fs::write(&path, bp.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn confirm_destructive_asks_before_a_destructive_tool_and_sends_nothing_unless_approved() {
    let dir = tempfile::tempdir().unwrap();
    let bp = careful(dir.path());
    let events = dir.path().join("events.ndjson");
    let events_arg = events.display().to_string();

    // Nobody to ask: INPUT_REQUIRED at once (not the 60 s call timeout, which would end in
    // CALL_TIMEOUT), naming the step and the answers line; the create (not destructive) was
    // not asked about.
    let out = run(dir.path(), &bp, None, &["--events", &events_arg]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["step"], "drop");
    assert_eq!(env["errors"][0]["code"], "INPUT_REQUIRED", "{env}");
    assert!(env["errors"][0]["message"].as_str().unwrap().contains(r#"{"drop": true}"#), "{env}");
    assert_eq!(entities(dir.path()), ["precious"], "nothing was deleted");
    let log = std::fs::read_to_string(&events).unwrap();
    let waiting: Vec<Value> =
        log.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).filter(|e| e["type"] == "StepWaiting").collect();
    assert_eq!(waiting.len(), 1, "only the destructive call asks: {log}");
    assert_eq!(waiting[0]["step"], "drop");
    assert_eq!(waiting[0]["question"]["asking"], "approval");
    assert_eq!(waiting[0]["question"]["call"]["arguments"], json!({ "entityNames": ["precious"] }));

    // Rejected: not sent.
    let out = run(dir.path(), &bp, Some(json!({ "drop": false })), &[]);
    assert_eq!(envelope(&out)["errors"][0]["code"], "INPUT_REJECTED", "{}", stderr(&out));
    assert_eq!(entities(dir.path()), ["precious"]);

    // Approved: sent.
    let out = run(dir.path(), &bp, Some(json!({ "drop": true })), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(entities(dir.path()).is_empty());
}

#[test]
fn an_input_step_with_nobody_to_answer_fails_at_once_naming_the_step_and_what_to_write() {
    let dir = tempfile::tempdir().unwrap();
    // At once: the run ends, with INPUT_REQUIRED (one that waited for an answer would not).
    let out = run(dir.path(), "workflows/ask-for-a-value.blueprint.json", None, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "INPUT_REQUIRED");
    let message = env["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("step `namespace`") && message.contains(r#"{"namespace": …}"#), "{message}");
    assert_eq!(env["summary"]["tool_calls"], 0, "the list after it never ran");
}

#[test]
fn on_a_terminal_each_field_is_prompted_for_and_enter_keeps_the_default() {
    // `script` gives the run a terminal (a pty) and types what stdin holds into it.
    assert!(Path::new("/usr/bin/script").is_file(), "/usr/bin/script (util-linux) gives the run a terminal");
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_mcpflow");
    let command = format!(
        "{bin} run workflows/ask-for-a-value.blueprint.json --servers demo/servers.json --allow-all-servers -q --json"
    );
    let run_with = |typed: &str| -> String {
        let mut child = Command::new("/usr/bin/script")
            .args(["-qec", &command, "/dev/null"])
            .current_dir(repo())
            .env("MCPFLOW_HOME", dir.path().join("home"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(typed.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let screen = run_with("search\n");
    assert!(screen.contains("? step `namespace` asks: Which namespace should be listed?"), "{screen}");
    assert!(
        screen.contains(r#"answer (string one of "default", "payments", "search", "checkout") [default]"#),
        "{screen}"
    );
    assert!(screen.contains(r#""namespace": "search""#), "{screen}");
    // A typo is asked again; Enter keeps the default.
    let screen = run_with("mars\n\n");
    assert!(screen.contains(r#""mars" is not one of"#), "{screen}");
    assert!(screen.contains(r#""namespace": "default""#), "{screen}");
}

/// A blueprint on the Python SDK server `ask_py.py` pinned to `era`: `deploy` asks where,
/// then `count_calls` says how often the tool's body ran.
fn ask_py(dir: &Path, era: &str) -> String {
    let script = repo().join("crates/mcp/tests/servers/ask_py.py");
    let bp = json!({ "blueprint": 1, "id": "ask-py",
        "servers": { "ask": { "command": crate::venv_python().display().to_string(),
                              "args": [script.display().to_string()], "protocol": era } },
        "steps": [
            { "id": "deploy", "kind": "tool", "server": "ask", "tool": "deploy", "args": { "service": "web" } },
            { "id": "count", "kind": "tool", "server": "ask", "tool": "count_calls" }
        ],
        "output": { "said": "{{ deploy.result }}", "bodies": "{{ count.result }}" } });
    let path = dir.join(format!("ask-py-{era}.blueprint.json"));
    std::fs::write(&path, bp.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn a_2026_07_28_input_required_result_and_a_2025_11_25_elicitation_are_answered_alike() {
    let dir = tempfile::tempdir().unwrap();
    for era in ["2026-07-28", "2025-11-25"] {
        let bp = ask_py(dir.path(), era);
        let events = dir.path().join(format!("{era}.ndjson"));
        let answers = json!({ "deploy": { "cluster": "eu-1", "replicas": 3 } });
        let out = run(dir.path(), &bp, Some(answers), &["--events", &events.display().to_string()]);
        assert_eq!(out.status.code(), Some(0), "{era}: {}", stderr(&out));
        let env = envelope(&out);
        assert_eq!(env["output"]["said"], "deployed web to eu-1 x3", "{era}: {env}");
        assert_eq!(env["output"]["bodies"], 1, "{era}: the tool's body ran once");
        let log = std::fs::read_to_string(&events).unwrap();
        let waiting: Vec<Value> = log
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == "StepWaiting")
            .collect();
        assert_eq!(waiting.len(), 1, "{era}: one question, on the step: {log}");
        assert_eq!(waiting[0]["step"], "deploy");
        assert_eq!(waiting[0]["question"]["message"], "Where should web be deployed?");
        assert_eq!(waiting[0]["question"]["schema"]["required"], json!(["cluster"]), "{era}");

        // Nobody to answer: the same INPUT_REQUIRED in both eras, at once.
        let out = run(dir.path(), &bp, None, &[]);
        let env = envelope(&out);
        assert_eq!(env["errors"][0]["code"], "INPUT_REQUIRED", "{era}: {env}");
        assert!(env["errors"][0]["message"].as_str().unwrap().contains("cluster (required)"), "{era}: {env}");
    }
}

#[test]
fn a_2026_07_28_server_asking_more_than_16_things_at_once_is_refused_before_anyone_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let script = repo().join("crates/mcp/tests/servers/ask_py.py");
    let bp = json!({ "blueprint": 1, "id": "survey",
        "servers": { "ask": { "command": crate::venv_python().display().to_string(),
                              "args": [script.display().to_string()], "protocol": "2026-07-28" } },
        "steps": [ { "id": "survey", "kind": "tool", "server": "ask", "tool": "survey" } ] });
    let path = dir.path().join("survey.blueprint.json");
    std::fs::write(&path, bp.to_string()).unwrap();
    let events = dir.path().join("events.ndjson");
    // Answers for everything it could ask: still refused, and nobody was asked.
    let out = run(
        dir.path(),
        &path.display().to_string(),
        Some(json!({ "survey": { "value": "x" } })),
        &["--events", &events.display().to_string()],
    );
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "PROTOCOL_ERROR", "{env}");
    assert!(env["errors"][0]["message"].as_str().unwrap().contains("17 things at once"), "{env}");
    let log = std::fs::read_to_string(&events).unwrap();
    assert!(!log.contains("StepWaiting"), "no question reached a person: {log}");
}

/// A blueprint calling the faulty fixture's `ask_with_defaults` (a form whose fields all
/// have a `default`), its output what the server received.
fn ask_with_defaults(dir: &Path) -> (String, String) {
    let bin = mcpflow_testkit::binary().display().to_string();
    let servers = dir.join("servers.json");
    let doc = json!({ "mcpServers": { "asker": { "command": bin, "args": ["faulty"], "protocol": "2025-11-25" } } });
    std::fs::write(&servers, doc.to_string()).unwrap();
    let bp = json!({ "blueprint": 1, "id": "defaults", "steps": [
        { "id": "ask", "kind": "tool", "server": "asker", "tool": "ask_with_defaults", "args": {} }
    ], "output": "{{ ask }}" });
    let path = dir.join("defaults.blueprint.json");
    std::fs::write(&path, bp.to_string()).unwrap();
    (path.display().to_string(), servers.display().to_string())
}

#[test]
fn an_answers_entry_that_leaves_fields_out_sends_the_forms_defaults_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let (bp, servers) = ask_with_defaults(dir.path());
    let all = json!({ "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true });
    // `{}`: the person accepted the form as offered; `$action: accept` says the same.
    for answer in [json!({}), json!({ "$action": "accept" })] {
        let out = run(dir.path(), &bp, Some(json!({ "ask": answer })), &["--servers", &servers]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(envelope(&out)["output"], json!({ "action": "accept", "content": all }), "{answer}");
    }
    // The fields given stay; only those left out take their default.
    let out =
        run(dir.path(), &bp, Some(json!({ "ask": { "name": "Ada", "verified": false } })), &["--servers", &servers]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let content = &envelope(&out)["output"]["content"];
    assert_eq!((&content["name"], &content["verified"], &content["age"]), (&json!("Ada"), &json!(false), &json!(30)));
}

#[test]
fn on_a_terminal_a_servers_form_shows_each_fields_default_and_enter_takes_it() {
    assert!(Path::new("/usr/bin/script").is_file(), "/usr/bin/script (util-linux) gives the run a terminal");
    let dir = tempfile::tempdir().unwrap();
    let (bp, servers) = ask_with_defaults(dir.path());
    let bin = env!("CARGO_BIN_EXE_mcpflow");
    let command = format!("{bin} run {bp} --servers {servers} --allow-all-servers -q --json");
    let mut child = Command::new("/usr/bin/script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    // Enter on every field but the age.
    child.stdin.take().unwrap().write_all(b"\n41\n\n\n\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(screen.contains("name (string) [John Doe]"), "{screen}");
    assert!(screen.contains("age (integer) [30]"), "{screen}");
    assert!(screen.contains("verified (boolean) [true]"), "{screen}");
    let envelope: Value = serde_json::from_str(
        &screen[screen.find("{\r\n").or_else(|| screen.find('{')).unwrap()..].replace("\r\n", "\n"),
    )
    .unwrap_or_else(|e| panic!("{e}: {screen}"));
    let all = json!({ "name": "John Doe", "age": 41, "score": 95.5, "status": "active", "verified": true });
    assert_eq!(envelope["output"], json!({ "action": "accept", "content": all }), "{screen}");
}
