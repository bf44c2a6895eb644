//! SIGTERM and SIGHUP are handled like Ctrl-C by `run`, `serve` and `daemon`: what is
//! running is cancelled, every server's process group is reaped (a grandchild the server
//! left running too), and the exit code is the signal's (143, 129).

use crate::spawned::wait_for;
use crate::stderr;
use serde_json::{Value, json};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// A folder with an `mcpServers` file whose `faulty` server is started through `sh`,
/// which first leaves a `sleep 300` grandchild behind and writes its pid to a file.
struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        let dir = tempfile::tempdir().unwrap();
        let bin = mcpflow_testkit::binary().display().to_string();
        let pidfile = dir.path().join("grandchild.pid").display().to_string();
        let script = format!("sleep 300 & echo $! > '{pidfile}'; exec '{bin}' faulty");
        let mark = dir.path().join("hang.mark").display().to_string();
        let servers = json!({ "mcpServers": { "faulty": { "command": "sh", "args": ["-c", script],
            "env": { mcpflow_testkit::HANG_MARK: mark } } } });
        std::fs::write(dir.path().join("servers.json"), servers.to_string()).unwrap();
        Dir { dir }
    }

    fn servers(&self) -> String {
        self.dir.path().join("servers.json").display().to_string()
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
        c.args(args)
            .current_dir(crate::repo())
            .env("MCPFLOW_HOME", self.dir.path().join("home"))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// `mcpflow run` of a blueprint whose one step hangs in the faulty server.
    fn run_hanging(&self) -> Child {
        let bp = json!({ "blueprint": 1, "id": "hang",
            "steps": [{ "id": "h", "kind": "tool", "server": "faulty", "tool": "hang" }] });
        let file = self.dir.path().join("hang.json");
        std::fs::write(&file, bp.to_string()).unwrap();
        let file = file.display().to_string();
        self.cmd(&["run", &file, "--servers", &self.servers(), "--allow-all-servers"]).spawn().unwrap()
    }

    /// Waits for the grandchild's pid, then for the `hang` call to be in flight.
    fn grandchild(&self) -> u32 {
        let path: PathBuf = self.dir.path().join("grandchild.pid");
        let pid = wait_for(Duration::from_secs(20), || {
            std::fs::read_to_string(&path).ok().and_then(|t| t.trim().parse::<u32>().ok())
        })
        .expect("the server never started");
        assert!(alive(pid), "the grandchild {pid} should be running");
        let mark = self.dir.path().join("hang.mark");
        let called = wait_for(Duration::from_secs(20), || mark.exists().then_some(()));
        assert!(called.is_some(), "the `hang` call never reached the server");
        pid
    }
}

/// Whether `pid` is a live process (a zombie awaiting its reaper counts as gone).
fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = stat.rsplit(')').next().unwrap_or_default().split_whitespace().next().unwrap_or("?");
    state != "Z" && state != "X"
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

/// Waits for the process to end, asserts the grandchild is gone, then returns the output.
fn ended(child: Child, grandchild: Option<u32>) -> std::process::Output {
    let out = child.wait_with_output().unwrap();
    if let Some(pid) = grandchild {
        let deadline = Instant::now() + Duration::from_secs(3);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let still = alive(pid);
        if still {
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
        }
        assert!(!still, "the server's grandchild {pid} was left running; stderr:\n{}", stderr(&out));
    }
    out
}

#[test]
fn sigterm_cancels_a_run_reaps_the_servers_grandchild_and_exits_143() {
    let d = Dir::new();
    let child = d.run_hanging();
    let grandchild = d.grandchild();
    signal(&child, "TERM");
    let out = ended(child, Some(grandchild));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(stderr(&out).contains("cancelling (SIGTERM again"), "{}", stderr(&out));
}

#[test]
fn sighup_cancels_a_run_reaps_the_servers_grandchild_and_exits_129() {
    let d = Dir::new();
    let child = d.run_hanging();
    let grandchild = d.grandchild();
    signal(&child, "HUP");
    let out = ended(child, Some(grandchild));
    assert_eq!(out.status.code(), Some(129), "{}", stderr(&out));
}

/// Sends one JSON-RPC message on a line.
fn send(stdin: &mut ChildStdin, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn sigterm_stops_serve_over_stdio_with_a_call_in_flight_reaping_the_server() {
    let d = Dir::new();
    let mut child =
        d.cmd(&["serve", "--servers", &d.servers(), "--allow-all-servers"]).stdin(Stdio::piped()).spawn().unwrap();
    // Keep stdin open: the client has not gone away.
    let mut stdin = child.stdin.take().unwrap();
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } } }),
    );
    send(&mut stdin, json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    send(
        &mut stdin,
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": { "server": "faulty", "tool": "hang", "args": {} } } }),
    );
    let grandchild = d.grandchild();
    signal(&child, "TERM");
    let started = Instant::now();
    let out = ended(child, Some(grandchild));
    drop(stdin);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10), "serve took {:?} to stop", started.elapsed());
}

#[test]
fn sigterm_and_sighup_stop_the_daemon_with_their_exit_codes() {
    for (name, code) in [("TERM", 143), ("HUP", 129)] {
        let d = Dir::new();
        let mut child = d.cmd(&["daemon"]).spawn().unwrap();
        wait_until_started(&mut child);
        signal(&child, name);
        let out = ended(child, None);
        assert_eq!(out.status.code(), Some(code), "SIG{name}: {}", stderr(&out));
    }
}

/// Waits until the daemon says it fires scheduled runs: its signal handlers are installed
/// before. What it says after that is not kept.
fn wait_until_started(child: &mut Child) {
    let (_said, _rest) = crate::spawned::said_on_stderr(child, "mcpflow fires scheduled runs");
}

#[test]
fn sigterm_stops_serve_over_http_promptly_even_with_a_slow_client_connected() {
    use std::io::BufRead as _;
    let d = Dir::new();
    let mut child = d.cmd(&["serve", "--http", "127.0.0.1:0", "--token", "t0k"]).spawn().unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("serve printed its address").unwrap();
        if let Some(rest) = line.split("http://").nth(1) {
            break rest.split('/').next().unwrap().to_owned();
        }
    };
    // A client that sent half a request line and nothing since.
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.write_all(b"POST /mcp HT").unwrap();
    // Once a later connection is answered, serve has accepted the slow one (connections
    // are accepted in the order they came).
    let mut later = std::net::TcpStream::connect(&addr).unwrap();
    later.write_all(b"GET /mcp HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut later, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    signal(&child, "TERM");
    let started = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(started.elapsed() < Duration::from_secs(6), "serve took {:?} to stop", started.elapsed());
}

/// A blueprint of 900,000 transforms in two nested loops (within the default
/// `max_step_runs`): long synchronous work on the run's thread, which must still hear its
/// timeout and its signals.
pub fn busy_blueprint(dir: &Path) -> String {
    let thousand: Vec<u32> = (0..1000).collect();
    let nine_hundred: Vec<u32> = (0..900).collect();
    let bp = json!({ "blueprint": 1, "id": "busy", "steps": [
        { "id": "outer", "kind": "loop", "for_each": thousand, "as": "i", "steps": [
            { "id": "inner", "kind": "loop", "for_each": nine_hundred, "as": "j", "steps": [
                { "id": "t", "kind": "transform", "value": "{{ [i, j] }}" } ] } ] } ] });
    let file = dir.join("busy.json");
    std::fs::write(&file, bp.to_string()).unwrap();
    file.display().to_string()
}

#[test]
fn a_run_of_many_cheap_transforms_ends_at_its_timeout() {
    // Before the driver yielded between pieces, the run's timer never fired: the run
    // succeeded minutes later.
    let d = Dir::new();
    let file = busy_blueprint(d.dir.path());
    let out = d.cmd(&["run", &file, "--timeout", "1s", "--json"]).output().unwrap();
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(out.status.code(), Some(1), "{envelope}");
    assert_eq!(envelope["status"], "failed", "{envelope}");
    assert_eq!(envelope["errors"][0]["code"], "RUN_TIMEOUT", "{envelope}");
}

#[test]
fn sigterm_cancels_a_run_of_many_cheap_transforms_and_exits_143() {
    let d = Dir::new();
    let file = busy_blueprint(d.dir.path());
    let events = d.dir.path().join("events.ndjson");
    let child = d.cmd(&["run", &file, "--json", "--events", &events.display().to_string()]).spawn().unwrap();
    // The run is busy once the first iterations' events are written.
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&events).map_or(0, |t| t.lines().count()) < 100 {
        assert!(Instant::now() < deadline, "the run wrote no events");
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(&child, "TERM");
    let out = ended(child, None);
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(out.status.code(), Some(143), "{envelope}");
    assert_eq!(envelope["status"], "cancelled", "{envelope}");
}
