//! Processes the tests start beside `mcpflow`: servers nobody here wrote (node), their
//! output kept line by line, killed when dropped; and the SDK client scripts in
//! `tests/mcp/` that drive `mcpflow serve`.

use crate::repo;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which of a server's streams it logs on.
#[derive(Debug, Clone, Copy)]
pub enum Logs {
    Stdout,
    Stderr,
    Both,
}

/// A child process killed when dropped.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A process killed when dropped, with the lines it logged.
pub struct Spawned {
    _child: Killed,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Spawned {
    /// Starts `node script` with `env`, keeping the lines of `logs`.
    pub fn node(script: &Path, env: &[(&str, &str)], logs: Logs) -> Spawned {
        Spawned::node_with_args(script, &[], env, logs)
    }

    /// Starts `node script args…` with `env`, keeping the lines of `logs`.
    pub fn node_with_args(script: &Path, args: &[&str], env: &[(&str, &str)], logs: Logs) -> Spawned {
        assert!(script.is_file(), "{} is missing: run `npm ci`", script.display());
        let mut command = Command::new("node");
        command.arg(script).args(args).envs(env.iter().copied()).stdin(Stdio::null());
        let (out, err) = match logs {
            Logs::Stdout => (Stdio::piped(), Stdio::null()),
            Logs::Stderr => (Stdio::null(), Stdio::piped()),
            Logs::Both => (Stdio::piped(), Stdio::piped()),
        };
        let mut child = command.stdout(out).stderr(err).spawn().expect("node runs");
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let streams: [Option<Box<dyn std::io::Read + Send>>; 2] = [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ];
        for stream in streams.into_iter().flatten() {
            let sink = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    sink.lock().unwrap().push(line);
                }
            });
        }
        Spawned { _child: Killed(child), lines }
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The first line containing `ready`, waiting up to 20 s for it.
    pub fn wait_for_line(&self, ready: &str) -> String {
        wait_for(Duration::from_secs(20), || self.lines().into_iter().find(|l| l.contains(ready)))
            .unwrap_or_else(|| panic!("the server did not say `{ready}`: {:?}", self.lines()))
    }
}

/// Reads `child`'s stderr until a line contains `needle` (failing after 30 s of silence):
/// what it said so far, and the lines after it.
pub fn said_on_stderr(child: &mut Child, needle: &str) -> (String, Rest) {
    let lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads to the end even when nobody listens any more, so the child never blocks on a
    // full pipe.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut said = String::new();
    while !said.contains(needle) {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => said.push_str(&(line + "\n")),
            Err(e) => panic!("`{needle}` was never said ({e}); it said:\n{said}"),
        }
    }
    (said, Rest(rx))
}

/// The lines a child says on stderr after [`said_on_stderr`] found its line.
pub struct Rest(std::sync::mpsc::Receiver<String>);

impl Rest {
    /// Waits for a line that contains `needle` (failing after 30 s of silence); what was
    /// said until it.
    pub fn wait_for_line(&self, needle: &str) -> String {
        let mut said = String::new();
        while !said.contains(needle) {
            match self.0.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => said.push_str(&(line + "\n")),
                Err(e) => panic!("`{needle}` was never said ({e}); it said:\n{said}"),
            }
        }
        said
    }

    /// Every line after, once the child has ended (its stderr closed).
    pub fn after_the_end(self) -> String {
        self.0.iter().map(|line| line + "\n").collect()
    }
}

/// Waits up to `limit` for `found` to find something.
pub fn wait_for<T>(limit: Duration, mut found: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        if let Some(value) = found() {
            return Some(value);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The TypeScript SDK's `simpleTaskInteractive` example (streamable HTTP), on a free
/// loopback port (it prints the port it was given, not the one it got, so one is chosen).
pub fn simple_task_interactive() -> (Spawned, u16) {
    let script =
        repo().join("node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleTaskInteractive.js");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Spawned::node(&script, &[("PORT", &port.to_string())], Logs::Both);
    server.wait_for_line("Starting server on");
    (server, port)
}

/// Runs an SDK client script of `tests/mcp/` against `mcpflow serve`: it is given the
/// binary, the data folder `home` and the servers file; its stdout and stderr, and the
/// assertion that it printed `all checks passed` and exited 0.
pub fn serve_client(script: &str, home: &Path, servers: &Path) -> (String, String) {
    serve_client_with(Command::new("node").arg(repo().join("tests/mcp").join(script)), home, servers)
}

/// [`serve_client`] for a command of its own (another interpreter).
pub fn serve_client_with(command: &mut Command, home: &Path, servers: &Path) -> (String, String) {
    let out: Output = command
        .current_dir(repo())
        .env("MCPFLOW_BIN", env!("CARGO_BIN_EXE_mcpflow"))
        .env("MCPFLOW_HOME", home)
        .env("SERVERS_FILE", servers)
        .output()
        .expect("the client runs (npm ci installs @modelcontextprotocol/sdk)");
    let (stdout, stderr) = (crate::stdout(&out), crate::stderr(&out));
    assert!(out.status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("all checks passed"), "stdout:\n{stdout}\nstderr:\n{stderr}");
    (stdout, stderr)
}
