//! `mcpflow run`: exit codes, the envelope, NDJSON events, inputs, consent, Ctrl-C.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::process::{Command, Output, Stdio};

struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        let dir = tempfile::tempdir().unwrap();
        let bin = mcpflow_testkit::binary().display().to_string();
        let servers = json!({ "mcpServers": {
            "echo": { "command": bin, "args": ["echo"] },
            "faulty": { "command": bin, "args": ["faulty"],
                "env": { mcpflow_testkit::HANG_MARK: dir.path().join("hang.mark") } }
        } });
        std::fs::write(dir.path().join("servers.json"), servers.to_string()).unwrap();
        Dir { dir }
    }

    fn file(&self, name: &str, bp: Value) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, serde_json::to_string_pretty(&bp).unwrap()).unwrap();
        p.display().to_string()
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
        c.args(args).current_dir(repo()).env("MCPFLOW_HOME", self.dir.path().join("home"));
        c
    }

    fn run(&self, file: &str, extra: &[&str]) -> Output {
        let servers = self.dir.path().join("servers.json").display().to_string();
        let mut args = vec!["run", file, "--servers", &servers];
        args.extend_from_slice(extra);
        self.cmd(&args).output().unwrap()
    }
}

fn echo_bp() -> Value {
    json!({ "blueprint": 1, "id": "hello",
        "inputs": { "type": "object", "properties": { "name": { "type": "string" }, "times": { "type": "integer", "default": 1 } }, "required": ["name"] },
        "steps": [
            { "id": "greet", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hello {{ inputs.name }} x{{ inputs.times }}" } }
        ] })
}

#[test]
fn a_successful_run_prints_the_envelope_and_exits_zero() {
    let d = Dir::new();
    let f = d.file("hello.json", echo_bp());
    let out = d.run(&f, &["--allow-server", "echo", "--input", "name=42", "--input", "times=3", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["status"], "succeeded");
    assert_eq!(env["output"], "hello 42 x3", "name stays a string, times is an integer");
    assert_eq!(env["blueprint"], "hello");
    assert_eq!(env["summary"]["tool_calls"], 1);
    assert!(env["run_id"].as_str().unwrap().len() >= 32);
}

#[test]
fn events_are_written_as_ndjson_with_a_gapless_seq() {
    let d = Dir::new();
    let f = d.file("hello.json", echo_bp());
    let events = d.dir.path().join("events.ndjson");
    let out = d.run(&f, &["--allow-server", "echo", "--input", "name=x", "--events", events.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> =
        std::fs::read_to_string(&events).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let types: Vec<&str> = lines.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"RunStarted"));
    assert_eq!(types.last(), Some(&"RunFinished"));
    assert!(types.contains(&"StepStarted") && types.contains(&"StepFinished"));
    let seqs: Vec<u64> = lines.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
}

#[test]
fn a_stdio_server_without_consent_is_refused_naming_the_command() {
    let d = Dir::new();
    let f = d.file("hello.json", echo_bp());
    let out = d.run(&f, &["--input", "name=x", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["errors"][0]["code"], "SERVER_NOT_APPROVED");
    let msg = env["errors"][0]["message"].as_str().unwrap();
    assert!(msg.contains("mcpflow-testkit") && msg.contains("echo"), "{msg}");
    assert!(msg.contains("--allow-server"), "{msg}");
}

#[test]
fn invalid_inputs_and_invalid_blueprints_exit_two() {
    let d = Dir::new();
    let f = d.file("hello.json", echo_bp());
    let out = d.run(&f, &["--allow-all-servers"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("INPUTS_INVALID") && stderr(&out).contains("name"), "{}", stderr(&out));
    let out = d.run(&f, &["--allow-all-servers", "--input", "name=x", "--input", "times=many"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("input `times` must be integer"), "{}", stderr(&out));
    let bad = d.file(
        "bad.json",
        json!({ "blueprint": 1, "id": "bad", "steps": [{ "id": "a", "kind": "tool", "tool": "x", "after": ["zz"] }] }),
    );
    let out = d.run(&bad, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad.json:10:9: error[UNKNOWN_STEP]"), "{}", stderr(&out));
}

#[test]
fn failed_and_partial_runs_have_their_exit_codes() {
    let d = Dir::new();
    let step =
        json!({ "id": "f", "kind": "tool", "server": "faulty", "tool": "is_error", "args": { "message": "no" } });
    let failed = d.file("failed.json", json!({ "blueprint": 1, "id": "failed", "steps": [step] }));
    let out = d.run(&failed, &["--allow-all-servers"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error[TOOL_ERROR] in step `f`: no"), "{}", stderr(&out));
    let partial =
        d.file("partial.json", json!({ "blueprint": 1, "id": "partial", "on_error": "continue", "steps": [step] }));
    let out = d.run(&partial, &["--allow-all-servers"]);
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn ctrl_c_cancels_the_run_exits_130_and_leaves_no_server_running() {
    let d = Dir::new();
    let f = d.file("hang.json", json!({ "blueprint": 1, "id": "hang", "steps": [{ "id": "h", "kind": "tool", "server": "faulty", "tool": "hang" }] }));
    let servers = d.dir.path().join("servers.json").display().to_string();
    let child =
        d.cmd(&["run", &f, "--servers", &servers, "--allow-all-servers"]).stderr(Stdio::piped()).spawn().unwrap();
    // Wait until the call is in flight: the server marks it.
    let mark = d.dir.path().join("hang.mark");
    let called = crate::spawned::wait_for(std::time::Duration::from_secs(20), || mark.exists().then_some(()));
    assert!(called.is_some(), "the `hang` call never reached the server");
    let server_pid = child_of(child.id(), "mcpflow-testkit").expect("the server is the run's child");
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!std::path::Path::new(&format!("/proc/{server_pid}")).exists(), "the server {server_pid} is still there");
    let _ = stdout(&out);
}

/// A child of `parent` whose command line mentions `needle`.
fn child_of(parent: u32, needle: &str) -> Option<u32> {
    mcpflow_testkit::procs::children_of(parent).into_iter().find(|c| c.cmdline.contains(needle)).map(|c| c.pid)
}

#[test]
fn cmdb_sync_builds_the_whole_graph_in_server_memory() {
    let dir = tempfile::tempdir().unwrap();
    let memory = dir.path().join("memory.jsonl");
    // demo/servers.json starts the fixture from target/debug; make sure it is built.
    let _ = mcpflow_testkit::binary();
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args([
            "run",
            "workflows/cmdb-sync.blueprint.json",
            "--servers",
            "demo/servers.json",
            "--allow-all-servers",
            "--json",
            "-q",
        ])
        .current_dir(repo())
        .env("MCPFLOW_MEMORY_FILE", &memory)
        .env("MCPFLOW_HOME", dir.path().join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["status"], "succeeded");
    assert_eq!(env["summary"]["steps"], 67);
    assert!(env["summary"]["tool_calls"].as_u64().unwrap() >= 2_000, "{}", env["summary"]);
    // Count the graph as server-memory stored it, independently of the run's output.
    let (mut entities, mut relations) = (0, 0);
    for line in std::fs::read_to_string(&memory).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("entity") => entities += 1,
            Some("relation") => relations += 1,
            other => panic!("unexpected record type {other:?}"),
        }
    }
    assert_eq!(entities, 1_180, "one entity per cluster-sim object");
    assert_eq!(relations, 2_672);
    assert_eq!(env["output"]["entities"], entities);
    assert_eq!(env["output"]["relations"], relations);
}

#[test]
fn a_disabled_step_is_skipped_with_a_null_output_and_the_steps_after_it_still_run() {
    let d = Dir::new();
    let calls = d.dir.path().join("calls.txt");
    let calls_s = calls.display().to_string();
    let f = d.file(
        "disabled.json",
        json!({ "blueprint": 1, "id": "disabled",
            "steps": [
                { "id": "first", "kind": "tool", "server": "echo", "tool": "record", "args": { "file": calls_s, "line": "first" } },
                { "id": "off", "kind": "tool", "server": "echo", "tool": "record", "args": { "file": calls_s, "line": "off" }, "disabled": true },
                { "id": "last", "kind": "tool", "server": "echo", "tool": "record", "args": { "file": calls_s, "line": "last" } },
                { "id": "seen", "kind": "transform", "value": "{{ off }}" }
            ],
            "output": { "off": "{{ off }}", "seen": "{{ seen }}" } }),
    );
    let events = d.dir.path().join("events.ndjson");
    let out = d.run(&f, &["--allow-server", "echo", "--json", "--events", events.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["status"], "succeeded", "{env}");
    assert_eq!(env["output"], json!({ "off": null, "seen": null }), "{env}");
    // `last` runs after the disabled step (list order); `off` never reached the server.
    assert_eq!(std::fs::read_to_string(&calls).unwrap(), "first\nlast\n");
    let text = std::fs::read_to_string(&events).unwrap();
    let skipped: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["type"] == "StepSkipped")
        .collect();
    assert_eq!(skipped.len(), 1, "{text}");
    assert_eq!(skipped[0]["step"], "off");
    assert_eq!(skipped[0]["reason"], "disabled");
    let started_off = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .any(|e| e["type"] == "StepStarted" && e["step"] == "off");
    assert!(!started_off, "{text}");
}
