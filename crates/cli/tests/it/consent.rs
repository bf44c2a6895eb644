//! Consent for HTTP servers a blueprint declares: a loopback sink that records every
//! request shows that no `${env:…}` value leaves mcpflow before the user approved the
//! endpoint, from `mcpflow run` and from `mcpflow serve`'s inline `run_workflow`.

use crate::{stderr, stdout};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const SECRET: &str = "s3cret-value-7f1c-never-leaves";

/// A tiny HTTP listener on 127.0.0.1 that records the head of every request it gets and
/// answers 404, so an MCP client gives up after one request.
struct Sink {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sink {
    fn start() -> Sink {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (seen, done) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => Self::answer(stream, &seen),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Sink { port, requests, stop, thread: Some(thread) }
    }

    fn answer(mut stream: TcpStream, seen: &Mutex<Vec<String>>) {
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => break,
            }
        }
        seen.lock().unwrap().push(String::from_utf8_lossy(&head).into_owned());
        let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    fn leaked(&self) -> bool {
        self.requests().iter().any(|r| r.contains(SECRET))
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A blueprint whose own server `sink` is `server`, called by one tool step.
fn blueprint(server: Value) -> Value {
    json!({ "blueprint": 1, "id": "leak", "servers": { "sink": server },
        "steps": [{ "id": "call", "kind": "tool", "server": "sink", "tool": "anything" }] })
}

fn with_secret(url: &str) -> Value {
    json!({ "url": url, "headers": { "Authorization": "Bearer ${env:SOME_SECRET}" } })
}

fn run(dir: &std::path::Path, bp: &Value, extra: &[&str]) -> Output {
    let file = dir.join("leak.json");
    std::fs::write(&file, bp.to_string()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("run")
        .arg(&file)
        .args(["--json"])
        .args(extra)
        .env("SOME_SECRET", SECRET)
        .env("MCPFLOW_HOME", dir.join("home"))
        .output()
        .unwrap()
}

fn first_error(out: &Output) -> (String, String) {
    let env: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}{}", stdout(out), stderr(out)));
    let e = &env["errors"][0];
    (e["code"].as_str().unwrap_or_default().to_owned(), e["message"].as_str().unwrap_or_default().to_owned())
}

#[test]
fn run_sends_no_env_value_to_a_blueprints_http_server_until_it_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::start();
    let bp = blueprint(with_secret(&sink.url()));

    let out = run(dir.path(), &bp, &[]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let (code, message) = first_error(&out);
    assert_eq!(code, "SERVER_NOT_APPROVED", "{message}");
    assert!(message.contains(&format!("URL {} (sends: SOME_SECRET)", sink.url())), "{message}");
    assert!(message.contains("--allow-server sink"), "{message}");
    assert!(!stdout(&out).contains(SECRET) && !stderr(&out).contains(SECRET));
    assert_eq!(sink.requests(), Vec::<String>::new(), "nothing reaches the server before approval");

    // Approved: the header goes out (the sink is no MCP server, so the step then fails).
    let out = run(dir.path(), &bp, &["--allow-server", "sink"]);
    assert_ne!(first_error(&out).0, "SERVER_NOT_APPROVED", "{}", stdout(&out));
    assert!(sink.leaked(), "approved, the secret is sent: {:?}", sink.requests());
}

#[test]
fn a_blueprints_server_off_this_machine_needs_approval_even_without_variables() {
    let dir = tempfile::tempdir().unwrap();
    // TEST-NET-1: nothing answers there; consent is refused before any connection.
    let out = run(dir.path(), &blueprint(json!({ "url": "http://192.0.2.1/mcp" })), &[]);
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let (code, message) = first_error(&out);
    assert_eq!(code, "SERVER_NOT_APPROVED", "{message}");
    assert!(message.contains("URL http://192.0.2.1/mcp") && !message.contains("sends"), "{message}");
}

#[test]
fn the_users_own_http_servers_stay_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::start();
    let servers = dir.path().join("servers.json");
    std::fs::write(&servers, json!({ "mcpServers": { "sink": with_secret(&sink.url()) } }).to_string()).unwrap();
    let bp = json!({ "blueprint": 1, "id": "mine",
        "steps": [{ "id": "call", "kind": "tool", "server": "sink", "tool": "anything" }] });
    let out = run(dir.path(), &bp, &["--servers", servers.to_str().unwrap()]);
    assert_ne!(first_error(&out).0, "SERVER_NOT_APPROVED", "{}", stdout(&out));
    assert!(sink.leaked(), "the user's own server gets its header: {:?}", sink.requests());
}

/// `mcpflow serve` over stdio, spoken to line by line.
struct Serve {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Serve {
    fn start(home: &std::path::Path, flags: &[&str]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
            .arg("serve")
            .args(flags)
            .env("SOME_SECRET", SECRET)
            .env("MCPFLOW_HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut serve = Serve { child, stdin, lines };
        serve.request(
            1,
            "initialize",
            json!({ "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }),
        );
        serve.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        serve
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(60)).expect("serve answers");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// The structured answer of a tool call, and whether it is an error.
    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> (bool, Value) {
        let answer = self.request(id, "tools/call", json!({ "name": tool, "arguments": arguments }));
        let result = &answer["result"];
        (result["isError"] == json!(true), result["structuredContent"].clone())
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        drop(self.stdin.take());
        for _ in 0..100 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_refuses_inline_blueprints_whose_servers_read_the_environment_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Sink::start();
    let bp = blueprint(with_secret(&sink.url()));
    {
        let mut serve = Serve::start(&dir.path().join("home"), &["--allow-all-servers"]);
        let (failed, answer) = serve.call(2, "run_workflow", json!({ "blueprint": bp }));
        assert!(failed, "{answer}");
        assert_eq!(answer["error"]["code"], "BLUEPRINT_ENV_REFUSED", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("`sink`") && message.contains("SOME_SECRET"), "{message}");
        assert!(message.contains("--allow-blueprint-env"), "{message}");
        for tool in ["validate_workflow", "save_workflow"] {
            let (failed, answer) = serve.call(3, tool, json!({ "blueprint": bp.to_string() }));
            assert!(failed && answer["error"]["code"] == "BLUEPRINT_ENV_REFUSED", "{tool}: {answer}");
        }
    }
    assert_eq!(sink.requests(), Vec::<String>::new(), "nothing reaches the server");
    {
        // Allowed by the operator, the endpoint still needs consent.
        let mut serve = Serve::start(&dir.path().join("home"), &["--allow-blueprint-env"]);
        let (failed, answer) = serve.call(2, "run_workflow", json!({ "blueprint": bp }));
        assert!(failed, "{answer}");
        assert_eq!(answer["errors"][0]["code"], "SERVER_NOT_APPROVED", "{answer}");
        assert!(!answer.to_string().contains(SECRET), "{answer}");
    }
    assert_eq!(sink.requests(), Vec::<String>::new(), "nothing reaches the server");
    {
        let mut serve = Serve::start(&dir.path().join("home"), &["--allow-blueprint-env", "--allow-all-servers"]);
        let (_, answer) = serve.call(2, "run_workflow", json!({ "blueprint": bp }));
        assert_ne!(answer["errors"][0]["code"], "SERVER_NOT_APPROVED", "{answer}");
    }
    assert!(sink.leaked(), "allowed and approved, the header is sent: {:?}", sink.requests());
}
