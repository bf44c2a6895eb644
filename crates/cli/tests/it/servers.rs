//! `mcpflow servers` and `mcpflow servers test` against real processes: the echo fixture,
//! servers that fail to start, hang or die writing to stderr, server-everything from npm,
//! and a closed HTTP port; consent (nothing starts unapproved) and header values never
//! printed.

use crate::{repo, stderr, stdout};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SECRET: &str = "k3-secret-9d2e-never-printed";
const LITERAL: &str = "literal-key-55aa-never-printed";

fn write_servers(dir: &Path, servers: Value) -> PathBuf {
    let path = dir.join("servers.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).unwrap();
    path
}

fn echo() -> Value {
    json!({ "command": mcpflow_testkit::binary().display().to_string(), "args": ["echo"] })
}

/// `mcpflow servers ARGS` with a data folder of its own and `K3_SECRET` set.
fn servers(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("servers")
        .args(args)
        .current_dir(repo())
        .env("MCPFLOW_HOME", home)
        .env("K3_SECRET", SECRET)
        .output()
        .unwrap()
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

#[test]
fn test_reports_the_working_server_and_each_failure_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    // Each hanging server marks that it started; `all-at-once` (tested first) answers only
    // once all three have: servers tested one after the other would leave it waiting.
    let marker = |name: &str| dir.path().join(name).display().to_string();
    let hangs = |name: &str| json!({ "command": "sh", "args": ["-c", "touch \"$0\"; exec sleep 30", marker(name)] });
    let waits = "until [ -e \"$1\" ] && [ -e \"$2\" ] && [ -e \"$3\" ]; do sleep 0.05; done; exec \"$0\" echo";
    let file = write_servers(
        dir.path(),
        json!({
            "all-at-once": { "command": "sh", "args": ["-c", waits, mcpflow_testkit::binary().display().to_string(),
                marker("hangs"), marker("hangs-too"), marker("hangs-three")] },
            "hangs": hangs("hangs"),
            "hangs-too": hangs("hangs-too"),
            "hangs-three": hangs("hangs-three"),
            "echo": echo(),
            "missing": { "command": dir.path().join("no-such-server").display().to_string() },
            "dies": { "command": "sh", "args": ["-c", "echo 'cannot open the database' >&2; exit 3"] },
        }),
    );
    let f = file.to_str().unwrap();
    let out = servers(dir.path(), &["test", "--servers", f, "--allow-all-servers", "--timeout", "5s"]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    // Tested at once: the hanging ones were all running while `all-at-once` started.
    assert!(text.contains("all-at-once: ok"), "{text}");
    // Each hanging one is bounded by --timeout.
    assert!(text.contains("hangs-three: FAILED error[SERVER_START_FAILED]"), "{text}");
    assert!(text.contains("echo: ok"), "{text}");
    // The fixture is an rmcp 3.9 server: it answers `server/discover` (2026-07-28).
    assert!(text.contains("protocol:     2026-07-28"), "{text}");
    assert!(text.contains("server:       mcpflow-testkit-echo"), "{text}");
    assert!(text.contains("capabilities: ") && text.contains("tools (listChanged)"), "{text}");
    assert!(text.contains("offers:       8 tools"), "{text}");
    assert!(text.contains("missing: FAILED error[SERVER_START_FAILED]"), "{text}");
    assert!(text.contains("what to do: run its command line in a terminal"), "{text}");
    assert!(text.contains("hangs: FAILED error[SERVER_START_FAILED]"), "{text}");
    assert!(text.contains("no answer to `server/discover` or `initialize` within 5000 ms"), "{text}");
    assert!(text.contains("dies: FAILED error[SERVER_START_FAILED]"), "{text}");
    assert!(text.contains("last stderr: cannot open the database"), "{text}");

    // Only the working one: exit 0.
    let out = servers(dir.path(), &["test", "echo", "--servers", f, "--allow-server", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    // A name nobody configured is a failure that lists the ones there are.
    let out = servers(dir.path(), &["test", "nope", "--servers", f]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("nope: FAILED error[SERVER_NOT_CONFIGURED]"), "{}", stdout(&out));
}

#[test]
fn test_json_against_server_everything() {
    let everything = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(everything.is_file(), "run `npm ci` in the repository root: {} is missing", everything.display());
    let dir = tempfile::tempdir().unwrap();
    let file = write_servers(
        dir.path(),
        json!({
            "everything": { "command": "node", "args": [everything.display().to_string(), "stdio"] },
            "echo": echo(),
        }),
    );
    let out = servers(dir.path(), &["test", "--servers", file.to_str().unwrap(), "--allow-all-servers", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.iter().map(|l| l["name"].as_str().unwrap()).collect::<Vec<_>>(), ["everything", "echo"]);
    let e = &lines[0];
    assert_eq!(e["ok"], true, "{e}");
    assert_eq!(e["protocol_version"], "2025-11-25", "{e}");
    assert!(e["server_name"].as_str().unwrap().contains("everything"), "{e}");
    assert!(e["server_version"].is_string(), "{e}");
    for cap in ["tools", "resources", "prompts", "logging"] {
        assert!(e["capabilities"][cap].is_object(), "{cap}: {e}");
    }
    for count in ["tools", "resources", "prompts"] {
        assert!(e["counts"][count].as_u64().unwrap() > 0, "{count}: {e}");
    }
    assert!(e.get("error").is_none(), "{e}");
}

#[test]
fn without_consent_nothing_starts() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let touch = json!({ "command": "sh", "args": ["-c", format!("touch '{}'", marker.display())] });
    let file = write_servers(dir.path(), json!({ "toucher": touch }));
    let f = file.to_str().unwrap();

    let out = servers(dir.path(), &["--servers", f]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("toucher (stdio)") && text.contains("consent:  not approved"), "{text}");
    assert!(text.contains("command:  sh -c"), "{text}");
    let listed = json_lines(&servers(dir.path(), &["--servers", f, "--json"]));
    assert_eq!(listed[0]["approved"], false);
    assert_eq!(listed[0]["needs_approval"], true);
    assert_eq!(listed[0]["auth"], json!({ "kind": "none" }));

    let out = servers(dir.path(), &["test", "--servers", f]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("toucher: FAILED error[SERVER_NOT_APPROVED]"), "{text}");
    assert!(text.contains("what to do: Run again with `--allow-server toucher`"), "{text}");
    assert!(!marker.exists(), "an unapproved server was started");

    // Approved, it does start (and fails the handshake): the marker would have shown it.
    let out = servers(dir.path(), &["test", "--servers", f, "--allow-server", "toucher", "--timeout", "2s"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(marker.exists(), "{}", stdout(&out));
}

#[test]
fn header_values_are_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    // A closed port: connecting fails, and the error must not carry the headers' values.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let file = write_servers(
        dir.path(),
        json!({ "remote": {
            "url": format!("http://127.0.0.1:{port}/mcp?key=${{env:K3_SECRET}}"),
            "headers": { "Authorization": "Bearer ${env:K3_SECRET}", "X-Api-Key": LITERAL },
        } }),
    );
    let f = file.to_str().unwrap();
    for args in [
        vec!["--servers", f],
        vec!["--servers", f, "--json"],
        vec!["test", "--servers", f, "--timeout", "2s"],
        vec!["test", "--servers", f, "--timeout", "2s", "--json"],
    ] {
        let out = servers(dir.path(), &args);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains(SECRET) && !all.contains(LITERAL), "{args:?} printed a header value:\n{all}");
        if args[0] == "test" {
            assert_eq!(out.status.code(), Some(1), "{all}");
            assert!(all.contains("SERVER_START_FAILED"), "{all}");
        } else {
            assert!(all.contains("Authorization") && all.contains("X-Api-Key"), "{all}");
        }
    }
    let text = stdout(&servers(dir.path(), &["--servers", f]));
    assert!(text.contains("auth:     headers: Authorization, X-Api-Key"), "{text}");
}

/// server-everything over streamable HTTP on a free port, killed on drop.
fn everything_over_http() -> (crate::spawned::Spawned, u16) {
    use crate::spawned::{Logs, Spawned};
    let everything = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server =
        Spawned::node_with_args(&everything, &["streamableHttp"], &[("PORT", &port.to_string())], Logs::Stderr);
    server.wait_for_line("listening on port");
    (server, port)
}

#[test]
fn http_server_answers_and_its_header_values_stay_hidden() {
    let (_server, port) = everything_over_http();
    let dir = tempfile::tempdir().unwrap();
    let file = write_servers(
        dir.path(),
        json!({ "remote": {
            "url": format!("http://127.0.0.1:{port}/mcp"),
            "headers": { "Authorization": "Bearer ${env:K3_SECRET}" },
        } }),
    );
    let out = servers(dir.path(), &["test", "--servers", file.to_str().unwrap(), "--json"]);
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(!all.contains(SECRET), "{all}");
    let r = &json_lines(&out)[0];
    assert_eq!(r["protocol_version"], "2025-11-25", "{r}");
    assert!(r["capabilities"]["tools"].is_object(), "{r}");
    assert!(r["counts"]["tools"].as_u64().unwrap() > 0, "{r}");
}

#[test]
fn store_servers_and_their_approvals() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    {
        let opened = mcpflow_store::Store::open(&home.join("store")).unwrap();
        opened.store.put_server("stored-echo", &echo()).unwrap();
    }
    let out = servers(&home, &[]);
    assert!(stdout(&out).contains("no servers configured"), "{}", stdout(&out));
    let out = servers(&home, &["--store"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("stored-echo (stdio)"), "{}", stdout(&out));
    assert!(stdout(&out).contains("not approved"), "{}", stdout(&out));
    let out = servers(&home, &["test", "--store", "--allow-server", "stored-echo", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(json_lines(&out)[0]["counts"]["tools"], 8);
}
