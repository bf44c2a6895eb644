//! No secret in what a run leaves behind: a `${env:NAME}` resolved into a server's URL,
//! headers or arguments never appears in the error messages, `--events` output, the run
//! history of `--store` or the server log lines of a failed run.

use crate::{repo, stderr, stdout};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const SECRET: &str = "s3cret-Value-4242";

/// A plain HTTP server on loopback answering every request with `status` and an HTML body,
/// for as long as the test runs (a thread; at most 64 requests).
fn answering(status: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let status = status.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 16 * 1024];
            let _ = stream.read(&mut buf);
            let body = "<html><body>Internal trouble</body></html>";
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{}", addr.port())
}

/// A loopback port nothing listens on.
fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// Runs a one-step blueprint against `server` with `--store` and `--events`; returns
/// everything the run left: stderr, stdout, the events file and every file of the data
/// folder (the run history), as bytes.
fn run_and_collect(dir: &Path, server: serde_json::Value) -> Vec<u8> {
    let doc = json!({ "blueprint": 1, "id": "secrets",
        "steps": [{ "id": "a", "kind": "tool", "server": "remote", "tool": "echo", "args": {} }] });
    let (out, all) = run_stored(dir, json!({ "remote": server }), &doc, ("SECRET", SECRET));
    assert_eq!(out.status.code(), Some(1), "the run must fail: {}{}", stdout(&out), stderr(&out));
    // What the user sees says where the server is, as configured.
    let text = stderr(&out);
    assert!(text.contains("${env:SECRET}") || text.contains("<"), "{text}");
    all
}

/// `mcpflow run --store --events` of blueprint `doc` against `servers` (an `mcpServers`
/// object), with `env` set; its output, and everything the run left — stderr, stdout,
/// the events file and every file of the data folder (the run history) — as bytes.
fn run_stored(dir: &Path, servers: serde_json::Value, doc: &serde_json::Value, env: (&str, &str)) -> (Output, Vec<u8>) {
    let servers_file = dir.join("servers.json");
    std::fs::write(&servers_file, json!({ "mcpServers": servers }).to_string()).unwrap();
    let blueprint = dir.join("bp.json");
    std::fs::write(&blueprint, doc.to_string()).unwrap();
    let events = dir.join("events.jsonl");
    let home = dir.join("home");
    let out = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "--allow-all-servers", "--events"])
        .arg(&events)
        .arg("--servers")
        .arg(&servers_file)
        .arg(&blueprint)
        .current_dir(repo())
        .env("MCPFLOW_HOME", &home)
        .env(env.0, env.1)
        .output()
        .unwrap();
    let mut all = out.stderr.clone();
    all.extend_from_slice(&out.stdout);
    all.extend(std::fs::read(&events).unwrap());
    let mut files = 0;
    for entry in walk(&home) {
        all.extend(std::fs::read(entry).unwrap());
        files += 1;
    }
    assert!(files > 0, "the run history was written");
    (out, all)
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn assert_no_secret(all: &[u8]) {
    let found = all.windows(SECRET.len()).position(|w| w == SECRET.as_bytes());
    assert!(
        found.is_none(),
        "the secret leaked: …{}…",
        String::from_utf8_lossy(&all[found.unwrap_or(0).saturating_sub(200)..][..400.min(all.len())])
    );
}

#[test]
fn a_secret_in_the_url_and_headers_never_shows_when_the_port_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/mcp?token=${{env:SECRET}}", closed_port());
    let all =
        run_and_collect(dir.path(), json!({ "url": url, "headers": { "Authorization": "Bearer ${env:SECRET}" } }));
    assert_no_secret(&all);
    let text = String::from_utf8_lossy(&all);
    assert!(text.contains("mcp?token=${env:SECRET}"), "the URL is shown as configured: {text}");
}

#[test]
fn a_secret_in_the_url_never_shows_when_the_server_answers_500() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/mcp?token=${{env:SECRET}}", answering("500 Internal Server Error"));
    let all = run_and_collect(dir.path(), json!({ "url": url, "headers": { "X-Key": "${env:SECRET}" } }));
    assert_no_secret(&all);
}

#[test]
fn a_secret_in_a_stdio_servers_arguments_never_shows_in_its_log_or_error() {
    let dir = tempfile::tempdir().unwrap();
    // The server prints its argument on stderr and exits: that line is in the error
    // message (the last stderr lines) and in the run's server log.
    let server = json!({ "command": "sh", "args": ["-c", "echo \"token is $1\" >&2; exit 3", "sh", "${env:SECRET}"],
        "env": { "API_KEY": "${env:SECRET}" } });
    let all = run_and_collect(dir.path(), server);
    assert_no_secret(&all);
    let text = String::from_utf8_lossy(&all);
    assert!(text.contains("token is ${env:SECRET}"), "the line is kept, the value hidden: {text}");
}

/// A lower-case hex key, as a server is given it.
const HEX_KEY: &str = "9f86d081884c7d659a2feaa0c55ad015";

#[test]
fn a_server_logging_its_key_in_upper_case_shows_its_line_as_written_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let loud = json!({ "command": bin, "args": ["faulty"], "env": { "API_KEY": "${env:HEX_KEY}" } });
    // The second call gives the log message (sent before the first answer) time to be shown.
    let doc = json!({ "blueprint": 1, "id": "loud-key", "steps": [
        { "id": "shout", "kind": "tool", "server": "loud", "tool": "shout_env", "args": { "name": "API_KEY" } },
        { "id": "after", "kind": "tool", "server": "loud", "tool": "echo", "args": { "message": "done" } }
    ] });
    let (out, all) = run_stored(dir.path(), json!({ "loud": loud }), &doc, ("HEX_KEY", HEX_KEY));
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("[loud] [warning] Connected With Key ${env:HEX_KEY}"),
        "the log line is shown as the server wrote it, the key hidden: {text}"
    );
    let all = String::from_utf8_lossy(&all);
    for key in [HEX_KEY.to_owned(), HEX_KEY.to_ascii_uppercase()] {
        assert!(!all.contains(&key), "the key leaked as {key}: {all}");
    }
}
