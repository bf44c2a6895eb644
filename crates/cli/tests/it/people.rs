//! People in the loop against servers nobody here wrote: `server-everything`'s
//! elicitation tools (form, URL, and the async one that runs on our side as a client-side
//! task, polled by the server with `tasks/get` and fetched with `tasks/result`) and the TypeScript SDK's `simpleTaskInteractive`
//! example (`confirm_delete`, an elicitation inside a task), answered
//! (a) through `mcpflow serve` by the official TypeScript SDK client with an elicitation
//!     handler — and, for a client without one, `INPUT_REQUIRED` then `answer_run`
//!     (tests/mcp/ts-elicit.mjs);
//! (b) headless from `mcpflow run --answers FILE`;
//! (c) nobody to answer (no file, no terminal): `INPUT_REQUIRED` naming the step and the
//!     required field, exit code 1, at once.

use crate::spawned;
use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// An `mcpServers` file in `dir` naming server-everything (stdio) as `everything`.
pub(crate) fn everything_servers(dir: &Path) -> PathBuf {
    let script = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.is_file(), "{} is missing: run `npm ci`", script.display());
    let path = dir.join("servers.json");
    let doc = json!({ "mcpServers": { "everything": { "command": "node", "args": [script, "stdio"] } } });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// The blueprint asking through server-everything: a form, then a URL, then a form as a
/// client-side task.
fn elicitations(dir: &Path) -> PathBuf {
    let path = dir.join("elicit.json");
    let doc = json!({ "blueprint": 1, "id": "elicit", "steps": [
        { "id": "form", "kind": "tool", "server": "everything", "tool": "trigger-elicitation-request", "args": {} },
        { "id": "url", "kind": "tool", "server": "everything", "tool": "trigger-url-elicitation",
          "args": { "url": "https://example.com/verify-mcpflow", "message": "Open the page to verify" } },
        { "id": "later", "kind": "tool", "server": "everything", "tool": "trigger-elicitation-request-async", "args": {} }
    ], "output": { "form": "{{ form }}", "url": "{{ url }}", "later": "{{ later }}" } });
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// `mcpflow run FILE --json` with stdin not a terminal (so no prompt can be shown).
fn run(home: &Path, servers: &Path, blueprint: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("run")
        .arg(blueprint)
        .arg("--servers")
        .arg(servers)
        .args(["--allow-all-servers", "--json", "-q"])
        .args(extra)
        .env("MCPFLOW_HOME", home)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn envelope(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

#[test]
fn the_typescript_sdk_client_answers_a_runs_questions_through_serve_and_answer_run_answers_for_one_that_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let servers = everything_servers(dir.path());
    // And the SDK's simpleTaskInteractive (its confirm_delete asks from inside a task).
    let (_interactive, port) = spawned::simple_task_interactive();
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&servers).unwrap()).unwrap();
    doc["mcpServers"]["interactive"] = json!({ "url": format!("http://127.0.0.1:{port}/mcp") });
    std::fs::write(&servers, doc.to_string()).unwrap();
    let (out_text, err_text) = spawned::serve_client("ts-elicit.mjs", &dir.path().join("home"), &servers);
    for line in [
        "ok - simpleTaskInteractive confirm_delete (a task asking) through serve: the client's answer deletes",
        "ok - run_workflow: the client's answers reach the tools' output",
        "ok - the form elicitation carries the server's message and schema",
        "ok - the URL elicitation carries the server's URL and message",
        "ok - an input step is asked as a form elicitation with its default",
        "ok - call_tool forwards the server's elicitation to the client too",
        "ok - an approval the client declines fails the run with INPUT_REJECTED",
        "ok - without elicitation: INPUT_REQUIRED in",
        "ok - get_run shows the open question of the waiting run",
        "ok - answer_run (no question_id: the only open one) finishes the run",
        "ok - a form-only client: the URL question waits for answer_run (by step), which finishes the run",
        "all checks passed",
    ] {
        assert!(out_text.contains(line), "missing `{line}`:\n{out_text}\nstderr:\n{err_text}");
    }
}

#[test]
fn headless_answers_from_a_file_reach_server_everythings_form_url_and_async_elicitations() {
    let dir = tempfile::tempdir().unwrap();
    let servers = everything_servers(dir.path());
    let blueprint = elicitations(dir.path());
    let answers = dir.path().join("answers.json");
    let given = json!({
        "form": { "name": "Ada Lovelace", "check": true },
        "url": true,
        "later": { "name": "Grace Hopper", "favoriteColor": "Blue" }
    });
    std::fs::write(&answers, given.to_string()).unwrap();
    let out = run(&dir.path().join("home"), &servers, &blueprint, &["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let env = envelope(&out);
    let form = env["output"]["form"].to_string();
    assert!(form.contains("Name: Ada Lovelace") && form.contains("Agreed to terms: true"), "{form}");
    let url = env["output"]["url"].to_string();
    assert!(url.contains("User completed the URL elicitation flow") && url.contains("verify-mcpflow"), "{url}");
    // The async tool got a task (not the plain answer it falls back to), polled it and
    // fetched the answer with `tasks/result`.
    let later = env["output"]["later"].to_string();
    assert!(later.contains("[COMPLETED]") && later.contains("Task created:"), "{later}");
    assert!(later.contains("Name: Grace Hopper") && later.contains("Favorite Color: Blue"), "{later}");
    assert!(later.contains("io.modelcontextprotocol/related-task"), "{later}");

    // Said no: the server hears `decline` and says so in its output.
    let given = json!({ "form": { "$action": "decline" }, "url": false, "later": { "$action": "decline" } });
    std::fs::write(&answers, given.to_string()).unwrap();
    let out = run(&dir.path().join("home"), &servers, &blueprint, &["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let env = envelope(&out);
    assert!(env["output"]["form"].to_string().contains("User declined"), "{env}");
    assert!(env["output"]["url"].to_string().contains("User declined to open the URL"), "{env}");
    assert!(env["output"]["later"].to_string().contains("[DECLINED]"), "{env}");
}

#[test]
fn an_async_elicitation_with_nobody_to_answer_fails_input_required_and_the_task_does_not_linger() {
    let dir = tempfile::tempdir().unwrap();
    let servers = everything_servers(dir.path());
    let path = dir.path().join("later.json");
    let doc = json!({ "blueprint": 1, "id": "later", "steps": [
        { "id": "later", "kind": "tool", "server": "everything", "tool": "trigger-elicitation-request-async", "args": {} }
    ]});
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = run(&dir.path().join("home"), &servers, &path, &[]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", stdout(&out), stderr(&out));
    // The server polls its task for up to 10 minutes; the step fails at once, with
    // INPUT_REQUIRED (a step that waited would end with the call's timeout instead).
    let env = envelope(&out);
    let error = &env["errors"][0];
    assert_eq!(error["code"], "INPUT_REQUIRED", "{env}");
    assert_eq!(error["step"], "later", "{env}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("name (required)") && message.contains("favoriteColor"), "{message}");
}

#[test]
fn headless_with_nobody_to_answer_fails_input_required_naming_the_step_and_field_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let servers = everything_servers(dir.path());
    let blueprint = elicitations(dir.path());
    let out = run(&dir.path().join("home"), &servers, &blueprint, &[]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", stdout(&out), stderr(&out));
    // Not the 60 s call timeout (CALL_TIMEOUT): nobody waits for an answer that cannot come.
    let env = envelope(&out);
    let error = &env["errors"][0];
    assert_eq!(error["code"], "INPUT_REQUIRED", "{env}");
    assert_eq!(error["step"], "form", "{env}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("step `form`") && message.contains("name (required)"), "{message}");
    assert!(message.contains("--answers"), "{message}");
    assert!(stderr(&out).contains("INPUT_REQUIRED"), "{}", stderr(&out));
}

#[test]
fn headless_answers_confirm_delete_of_the_sdks_interactive_task_server() {
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = spawned::simple_task_interactive();
    let servers = dir.path().join("servers.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(&servers, json!({ "mcpServers": { "interactive": { "url": url } } }).to_string()).unwrap();
    let blueprint = dir.path().join("confirm.json");
    let doc = json!({ "blueprint": 1, "id": "confirm", "steps": [
        { "id": "confirm", "kind": "tool", "server": "interactive", "tool": "confirm_delete",
          "args": { "filename": "notes.txt" } }
    ], "output": "{{ confirm }}" });
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let answers = dir.path().join("answers.json");
    let home = dir.path().join("home");

    // The task asks (status input_required); its question comes over `tasks/result`.
    std::fs::write(&answers, json!({ "confirm": { "confirm": true } }).to_string()).unwrap();
    let out = run(&home, &servers, &blueprint, &["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}\nserver: {:?}", stdout(&out), stderr(&out), server.lines());
    assert_eq!(envelope(&out)["output"], "Deleted 'notes.txt'");
    // The server prints it before answering, but its output is read on another thread.
    server.wait_for_line("Received elicitation response: action=accept");

    std::fs::write(&answers, json!({ "confirm": { "confirm": false } }).to_string()).unwrap();
    let out = run(&home, &servers, &blueprint, &["--answers", answers.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(envelope(&out)["output"], "Deletion cancelled");

    // Nobody to answer: INPUT_REQUIRED naming the step and the field, at once.
    let out = run(&home, &servers, &blueprint, &[]);
    assert_eq!(out.status.code(), Some(1), "{}\n{}", stdout(&out), stderr(&out));
    let env = envelope(&out);
    assert_eq!(env["errors"][0]["code"], "INPUT_REQUIRED", "{env}");
    let message = env["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("step `confirm`") && message.contains("confirm (required)"), "{message}");
}

/// A 2026-07-28 client: questions travel in `input_required` results, answered round by
/// round by the Python MCP SDK 2.x client's elicitation callback (tests/mcp/py-elicit.py).
#[test]
fn a_2026_07_28_client_answers_the_runs_questions_through_input_required_rounds() {
    let python = crate::venv_python();
    let dir = tempfile::tempdir().unwrap();
    let servers = everything_servers(dir.path());
    let mut client = Command::new(python);
    client.arg(repo().join("tests/mcp/py-elicit.py"));
    let (out_text, _) = spawned::serve_client_with(&mut client, &dir.path().join("home"), &servers);
    assert!(out_text.contains("ok - era: 2026-07-28"), "{out_text}");
    assert!(out_text.contains("ok - the form answer reached trigger-elicitation-request's output"), "{out_text}");
    assert!(out_text.contains("ok - three questions, one per round"), "{out_text}");
    assert!(out_text.contains("ok - answer_run finished the run"), "{out_text}");
}
