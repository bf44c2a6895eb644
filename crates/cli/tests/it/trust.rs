//! A machine without CA certificates (a slim container), simulated with `SSL_CERT_FILE`
//! naming an empty file and `SSL_CERT_DIR` a missing folder: a run that needs no TLS
//! runs, a step that needs it fails with `TLS_ROOTS_MISSING`, an `https://` collector
//! is a warning — never a panic.

use crate::{echo_servers, repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `mcpflow run` on `bp` with `servers` and `extra`, without a trust store.
fn run_without_roots(dir: &Path, bp: &Value, servers: &Path, extra: &[&str]) -> Output {
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let file = dir.join("bp.json");
    std::fs::write(&file, bp.to_string()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("run")
        .arg(&file)
        .arg("--servers")
        .arg(servers)
        .args(["--allow-all-servers", "--json"])
        .args(extra)
        .current_dir(repo())
        .env("MCPFLOW_HOME", dir.join("home"))
        .env("SSL_CERT_FILE", &empty)
        .env("SSL_CERT_DIR", dir.join("no-such-folder"))
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_SDK_DISABLED")
        .output()
        .unwrap()
}

fn no_panic(out: &Output) {
    let err = stderr(out);
    assert_ne!(out.status.code(), Some(101), "mcpflow panicked: {err}");
    assert!(!err.contains("panicked"), "mcpflow panicked: {err}");
}

/// A port nobody listens on (bound by the OS, then let go).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_run_that_needs_no_tls_runs_on_a_machine_without_ca_certificates() {
    let dir = tempfile::tempdir().unwrap();
    let servers = echo_servers(dir.path());
    let bp = json!({ "blueprint": 1, "id": "plain",
        "steps": [
            { "id": "n", "kind": "transform", "value": "{{ `41` }}" },
            { "id": "said", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "n={{ n }}" } }
        ],
        "output": "{{ said }}" });
    let out = run_without_roots(dir.path(), &bp, &servers, &[]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert!(envelope["output"].to_string().contains("n=41"), "{envelope}");
}

#[test]
fn an_https_server_on_a_machine_without_ca_certificates_fails_with_tls_roots_missing() {
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers.json");
    let url = format!("https://127.0.0.1:{}/mcp", closed_port());
    std::fs::write(&servers, json!({ "mcpServers": { "web": { "url": url } } }).to_string()).unwrap();
    let bp = json!({ "blueprint": 1, "id": "web",
        "steps": [ { "id": "call", "kind": "tool", "server": "web", "tool": "echo", "args": { "message": "x" } } ] });
    let out = run_without_roots(dir.path(), &bp, &servers, &[]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1), "a failed run: stdout {}\nstderr {}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let error = &envelope["errors"][0];
    assert_eq!((&error["step"], &error["code"]), (&json!("call"), &json!("TLS_ROOTS_MISSING")), "{envelope}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("server `web`") && message.contains("SSL_CERT_FILE"), "whom, and what to do: {message}");
}

#[test]
fn an_https_collector_on_a_machine_without_ca_certificates_is_a_warning_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let servers = echo_servers(dir.path());
    let bp = json!({ "blueprint": 1, "id": "traced",
        "steps": [ { "id": "n", "kind": "transform", "value": "{{ `1` }}" } ], "output": "{{ n }}" });
    let otlp = format!("https://127.0.0.1:{}", closed_port());
    let out = run_without_roots(dir.path(), &bp, &servers, &["--otlp", &otlp]);
    no_panic(&out);
    assert_eq!(out.status.code(), Some(0), "stdout: {}\nstderr: {}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("OTLP_TLS_ROOTS_MISSING") && err.contains("SSL_CERT_FILE"), "{err}");
}
