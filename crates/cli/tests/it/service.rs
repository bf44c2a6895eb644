//! One engine per data folder: `mcpflow service` holds the folder, and the other front
//! doors go through it — the official TypeScript SDK client launches `mcpflow serve`
//! twice at once (each a bridge to the service), `mcpflow runs` and `list` read through
//! it, a subscriber hears the save. Killed with SIGKILL mid-run, its bridge says so and
//! the run is `interrupted` for the next owner; idle, it exits by itself. In a data
//! folder too deep for a socket it answers on a loopback port with a token; with a
//! schedule stored it stays up, alone, and fires it.

use crate::spawned::{Killed, serve_client, serve_client_with, wait_for};
use crate::{repo, stderr, stdout};
use mcpflow_service::{Client, endpoint, endpoint_file, socket_path};
use serde_json::{Value, json};
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn mcpflow_in(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(args)
        .env("MCPFLOW_HOME", home)
        .current_dir(repo())
        .output()
        .unwrap()
}

/// `mcpflow service` on `home` with the echo server, once its endpoint answers.
fn service(home: &Path, servers: &Path, idle: &str) -> Child {
    started(&mut service_command(home, servers, idle), home)
}

/// The command [`service`] runs.
fn service_command(home: &Path, servers: &Path, idle: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command
        .args(["service", "--allow-all-servers", "--idle", idle, "--servers"])
        .arg(servers)
        .env("MCPFLOW_HOME", home)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Starts a service `command` for `home`; its process once its endpoint (socket or port)
/// answers.
fn started(command: &mut Command, home: &Path) -> Child {
    let child = command.spawn().unwrap();
    let rt = runtime();
    let up = wait_for(Duration::from_secs(20), || rt.block_on(endpoint::connect(home)).unwrap());
    assert!(up.is_some(), "the service did not answer for {}", home.display());
    child
}

/// Whether process `pid` runs (is there and not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or_default().trim_start().starts_with('Z'))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// `mcpflow serve` on `home` (a bridge into its service), initialized, with a
/// `run_workflow` of `blueprint` sent as request 2; its stdin (kept open) and stdout.
fn bridge_running(home: &Path, blueprint: &Value, stdout: Stdio) -> (Child, std::process::ChildStdin) {
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("serve")
        .env("MCPFLOW_HOME", home)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = bridge.stdin.take().unwrap();
    for message in [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_workflow","arguments":{"blueprint": blueprint}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    (bridge, stdin)
}

/// The id of the run in flight on the service, once there is one.
fn active_run(rt: &tokio::runtime::Runtime, client: &mut Client) -> String {
    let active = wait_for(Duration::from_secs(30), || {
        let active = rt.block_on(client.call("runs/active", json!({}))).unwrap();
        active.as_array().and_then(|a| a.first()).map(|r| r["run_id"].as_str().unwrap().to_owned())
    });
    active.expect("a run started on the service")
}

/// The line of `bridge`'s stdout answering request 2.
fn answer_to_run(bridge: &mut Child) -> String {
    let lines = std::io::BufRead::lines(std::io::BufReader::new(bridge.stdout.take().unwrap()));
    lines
        .map(Result::unwrap)
        .find(|l| serde_json::from_str::<Value>(l).is_ok_and(|m| m["id"] == 2))
        .expect("run_workflow answered")
}

fn runs_json(home: &Path) -> Vec<Value> {
    let out = mcpflow_in(home, &["runs", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn two_sdk_hosts_share_one_service_and_the_cli_reads_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let _service = Killed(service(&home, &servers, "60"));
    let rt = runtime();
    let mut subscriber = rt.block_on(Client::connect(&home, "test")).unwrap().expect("the service answers");
    rt.block_on(subscriber.call("subscribe", json!({}))).unwrap();

    let (out, _) = serve_client("ts-service-client.mjs", &home, &servers);
    assert!(out.contains("ok - a blueprint saved through one bridge is listed through the other"), "{out}");
    assert!(out.contains("ok - both runs succeeded at the same time"), "{out}");
    let ids: Vec<&str> = out.lines().find_map(|l| l.strip_prefix("runs: ")).unwrap().split(' ').collect();

    // The save and both runs' starts reached the subscriber as they happened, each run
    // with the MCP host that asked for it.
    let mut heard = Vec::new();
    while heard.len() < 3 {
        let next = rt
            .block_on(async { tokio::time::timeout(Duration::from_secs(5), subscriber.notification()).await })
            .unwrap_or_else(|_| panic!("only {heard:?} within 5 s"))
            .unwrap();
        assert_eq!(next["method"], "notifications/changed");
        heard.push(next["params"].clone());
    }
    assert_eq!(heard[0]["what"], "blueprints", "{heard:?}");
    let mut started: Vec<(String, String)> = heard[1..]
        .iter()
        .map(|p| {
            assert_eq!((&p["what"], &p["trigger"]), (&json!("runs"), &json!("mcp")), "{p}");
            (p["run_id"].as_str().unwrap().to_owned(), p["client"].as_str().unwrap().to_owned())
        })
        .collect();
    started.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(started.iter().map(|(_, c)| c.as_str()).collect::<Vec<_>>(), ["host-a", "host-b"]);

    // The store is the service's; `runs` and `list` read through it.
    let runs = runs_json(&home);
    for id in &ids {
        let run = runs.iter().find(|r| r["id"] == *id).unwrap_or_else(|| panic!("{id} not in {runs:?}"));
        assert_eq!(run["status"], "succeeded");
        let client = run["client"].as_str().unwrap_or_default();
        assert!(started.iter().any(|(r, c)| r == id && c == client), "{run} vs {started:?}");
    }
    let list = mcpflow_in(&home, &["list"]);
    assert!(stdout(&list).contains("from-host-a"), "{}", stdout(&list));
    let shown = mcpflow_in(&home, &["show", ids[0], "--json"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let shown: Value = serde_json::from_str(&stdout(&shown)).unwrap();
    assert_eq!(shown["run"]["id"], ids[0]);
    assert_eq!(shown["steps"].as_array().map(Vec::len), Some(2), "{shown}");
    let waiting = mcpflow_in(&home, &["runs", "--waiting"]);
    assert!(stdout(&waiting).contains("no run waits for an answer"), "{}", stdout(&waiting));
    // Export and import go through it too: the import is saved by the service, which
    // tells its subscribers.
    let exported = mcpflow_in(&home, &["export"]);
    assert_eq!(exported.status.code(), Some(0), "{}", stderr(&exported));
    let backup: Value = serde_json::from_str(&stdout(&exported)).unwrap();
    assert!(backup["blueprints"].to_string().contains("from-host-a"), "{backup}");
    let file = dir.path().join("imported.json");
    std::fs::write(
        &file,
        json!({ "blueprint": 1, "id": "imported-meanwhile", "steps": [
        { "id": "t", "kind": "transform", "value": 1 } ] })
        .to_string(),
    )
    .unwrap();
    let imported = mcpflow_in(&home, &["import", file.to_str().unwrap()]);
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));
    let list = mcpflow_in(&home, &["list"]);
    assert!(stdout(&list).contains("imported-meanwhile"), "{}", stdout(&list));
    let heard = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(5), subscriber.notification()).await })
        .expect("the import is heard")
        .unwrap();
    assert_eq!(heard["params"]["what"], "blueprints");

    // A serve with options of its own cannot bend the service's: refused, saying why.
    let refused = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["serve", "--allow-all-servers"])
        .env("MCPFLOW_HOME", &home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("error[SERVICE_OPTIONS_DIFFER]"), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--allow-all-servers"), "{}", stderr(&refused));
}

#[test]
fn a_service_killed_mid_run_is_reported_by_its_bridge_and_the_run_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let mut owner = service(&home, &servers, "60");
    let blueprint = json!({ "blueprint": 1, "id": "long", "steps": [
        { "id": "wait", "kind": "tool", "server": "echo", "tool": "sleep", "args": { "ms": 30000 } } ] });
    let (mut bridge, stdin) = bridge_running(&home, &blueprint, Stdio::null());
    // The run is in flight on the service.
    let rt = runtime();
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().unwrap();
    let run_id = active_run(&rt, &mut client);
    owner.kill().unwrap();
    owner.wait().unwrap();

    // The bridge says the service went away, and ends.
    let ended = wait_for(Duration::from_secs(10), || bridge.try_wait().unwrap());
    assert_eq!(ended.and_then(|s| s.code()), Some(1), "the bridge did not end with the service");
    let mut said = String::new();
    bridge.stderr.take().unwrap().read_to_string(&mut said).unwrap();
    assert!(said.contains("error[SERVICE_UNAVAILABLE]") && said.contains("stopped or restarted"), "{said}");
    drop(stdin);

    // Nothing else is lost: the next owner of the folder finds the run interrupted.
    assert!(!socket_path(&home).exists() || std::os::unix::net::UnixStream::connect(socket_path(&home)).is_err());
    let runs = runs_json(&home);
    let run = runs.iter().find(|r| r["id"] == run_id).unwrap_or_else(|| panic!("{run_id} not in {runs:?}"));
    assert_eq!(run["status"], "interrupted", "{run}");

    // The next MCP host's `serve` starts a new service on demand and is answered by it.
    let old_pid = owner.id();
    let mut next = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("serve")
        .env("MCPFLOW_HOME", &home)
        .env("MCPFLOW_SERVICE_IDLE", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = next.stdin.take().unwrap();
    writeln!(input, "{}", json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})).unwrap();
    let mut answer = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(next.stdout.take().unwrap()), &mut answer).unwrap();
    assert!(answer.contains("\"serverInfo\"") && answer.contains("mcpflow"), "{answer}");
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().expect("a new service answers");
    assert_ne!(client.pid, old_pid, "a new service");
    let runs = rt.block_on(client.call("runs/list", json!({}))).unwrap();
    assert!(runs.to_string().contains(&run_id), "{runs}");
    drop((input, client));
    let _ = next.kill();
    let _ = next.wait();
}

/// A data folder whose store configures and approves `echo` (what a person does once in
/// the studio), so a service started without options can run it.
fn home_with_echo(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("home");
    let rt = runtime();
    rt.block_on(async {
        let app = mcpflow_app::App::open(&home, mcpflow_app::AppOptions::default()).unwrap();
        let echo = json!({ "command": mcpflow_testkit::binary().display().to_string(), "args": ["echo"] });
        app.put_server("echo", &echo).unwrap();
        app.approve_server("echo").unwrap();
        app.shutdown().await;
    });
    home
}

#[test]
fn the_first_serve_starts_the_service_on_demand_the_next_shares_it_and_it_exits_when_idle() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with_echo(dir.path());
    // No service runs: the two serves of the script start one between them (a second
    // started at the same moment loses the store's lock and exits).
    let out = Command::new("node")
        .arg(repo().join("tests/mcp/ts-service-client.mjs"))
        .env("MCPFLOW_BIN", env!("CARGO_BIN_EXE_mcpflow"))
        .env("MCPFLOW_HOME", &home)
        .env("MCPFLOW_SERVICE_IDLE", "3")
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("ok - both runs succeeded at the same time"), "{}", stdout(&out));
    // The service outlives the serves that started it, answering the CLI...
    let rt = runtime();
    let client = rt.block_on(Client::connect(&home, "test")).unwrap().expect("the service started on demand answers");
    let pid = client.pid;
    drop(client);
    let runs = runs_json(&home);
    assert_eq!(runs.iter().filter(|r| r["client"] == "host-a" || r["client"] == "host-b").count(), 2, "{runs:?}");
    // ...then, with nothing to do, exits by itself.
    let gone = wait_for(Duration::from_secs(20), || {
        (!Path::new(&format!("/proc/{pid}")).exists() || !socket_path(&home).exists()).then_some(())
    });
    assert!(gone.is_some(), "the service started on demand (pid {pid}) did not exit when idle");
    let log = std::fs::read_to_string(home.join("service.log")).unwrap_or_default();
    assert!(log.contains("answers at"), "{log}");
}

#[test]
fn an_idle_service_exits_by_itself_and_removes_its_socket() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let mut owner = service(&home, &servers, "1");
    let ended = wait_for(Duration::from_secs(15), || owner.try_wait().unwrap());
    assert_eq!(ended.and_then(|s| s.code()), Some(0), "the idle service did not exit");
    let mut said = String::new();
    owner.stderr.take().unwrap().read_to_string(&mut said).unwrap();
    assert!(said.contains("idle for 1 s, exiting"), "{said}");
    assert!(!socket_path(&home).exists());
}

#[test]
fn service_install_writes_a_user_unit_that_systemd_accepts_and_uninstall_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let data = home.join("data folder");
    let install = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mcpflow"))
            .arg("service")
            .args(args)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("MCPFLOW_HOME", &data)
            .output()
            .unwrap()
    };
    let unit = home.join(".config/systemd/user/mcpflow.service");
    let printed = install(&["install", "--print"]);
    assert_eq!(printed.status.code(), Some(0), "{}", stderr(&printed));
    assert!(!unit.exists(), "--print writes nothing");
    let out = install(&["install"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("systemctl --user enable --now mcpflow.service"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&unit).unwrap();
    assert_eq!(text, stdout(&printed));
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_mcpflow")).unwrap();
    assert!(text.contains(&format!("ExecStart={} service --keep", binary.display())), "{text}");
    assert!(text.contains(&format!("Environment=\"MCPFLOW_HOME={}\"", data.display())), "{text}");
    // systemd's own checker accepts it (it fails on unknown keys' units, missing binaries).
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .expect("systemd-analyze runs (scripts/test.sh installs systemd)");
    assert!(verify.status.success(), "{}{}", stdout(&verify), stderr(&verify));
    let out = install(&["uninstall"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!unit.exists());
}

#[test]
fn an_idle_service_hands_the_folder_over_and_a_busy_one_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let mut owner = service(&home, &servers, "60");
    let rt = runtime();
    // Busy: a run in flight (an inline blueprint sleeping, through a bridge's MCP session).
    let mut bridge = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .arg("serve")
        .env("MCPFLOW_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = bridge.stdin.take().unwrap();
    let blueprint = json!({ "blueprint": 1, "id": "long", "steps": [
        { "id": "wait", "kind": "tool", "server": "echo", "tool": "sleep", "args": { "ms": 2000 } } ] });
    for message in [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_workflow","arguments":{"blueprint": blueprint}}}),
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().unwrap();
    let busy = wait_for(Duration::from_secs(20), || {
        let active = rt.block_on(client.call("runs/active", json!({}))).unwrap();
        active.as_array().is_some_and(|a| !a.is_empty()).then_some(())
    });
    assert!(busy.is_some(), "the run started");
    let refused = rt.block_on(mcpflow_service::take_over(&home)).unwrap_err();
    assert!(refused.message.contains("1 run(s) in flight") && refused.message.contains("kill"), "{refused:?}");
    // Idle again: it hands the folder over and exits; the store opens here.
    let idle = wait_for(Duration::from_secs(20), || {
        rt.block_on(client.call("runs/active", json!({}))).unwrap().as_array().is_some_and(Vec::is_empty).then_some(())
    });
    assert!(idle.is_some(), "the run ended");
    drop((stdin, client));
    assert!(rt.block_on(mcpflow_service::take_over(&home)).unwrap());
    assert!(!socket_path(&home).exists());
    let ended = wait_for(Duration::from_secs(10), || owner.try_wait().unwrap());
    assert_eq!(ended.and_then(|s| s.code()), Some(0));
    rt.block_on(async {
        let app = mcpflow_app::App::open(&home, mcpflow_app::AppOptions::default()).expect("the store is free");
        assert_eq!(app.runs(None, 10).unwrap().len(), 1);
        app.shutdown().await;
    });
    let _ = bridge.kill();
    let _ = bridge.wait();
}

/// A data folder in `dir` too deep for a socket: its socket's path is past `sun_path`
/// (108 bytes on Linux).
fn deep_home(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("a-data-folder-deep-enough-that-no-socket-fits-".repeat(3));
    assert!(socket_path(&home).as_os_str().len() > 108, "{} is not deep enough", home.display());
    home
}

/// Says `hello` over a new connection to loopback `port`: the welcome line, and the
/// connection to read on.
fn raw_hello(port: u16, hello: &Value) -> (String, std::io::BufReader<std::net::TcpStream>) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    writeln!(stream, "{hello}").unwrap();
    let mut read = std::io::BufReader::new(stream);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut read, &mut line).unwrap();
    (line, read)
}

#[test]
fn a_service_too_deep_for_a_socket_answers_on_loopback_and_refuses_a_hello_without_its_token() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let home = deep_home(dir.path());
    let servers = crate::echo_servers(dir.path());
    let _service = Killed(service(&home, &servers, "60"));
    assert!(!socket_path(&home).exists(), "no socket where none fits");
    let file = endpoint_file(&home);
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let port = u16::try_from(written["port"].as_u64().unwrap()).unwrap();
    let token = written["token"].as_str().unwrap().to_owned();
    assert_eq!(token.len(), 64, "{written}");

    // Two MCP hosts' `serve`s bridge through the port (neither starts a service of its own:
    // the store is this one's)...
    let (out, _) = serve_client("ts-service-client.mjs", &home, &servers);
    assert!(out.contains("ok - both runs succeeded at the same time"), "{out}");
    let ids: Vec<&str> = out.lines().find_map(|l| l.strip_prefix("runs: ")).unwrap().split(' ').collect();
    // ...and `runs` and `list` read through it.
    let runs = runs_json(&home);
    for id in &ids {
        let run = runs.iter().find(|r| r["id"] == *id).unwrap_or_else(|| panic!("{id} not in {runs:?}"));
        assert_eq!(run["status"], "succeeded", "{run}");
    }
    let list = mcpflow_in(&home, &["list"]);
    assert!(stdout(&list).contains("from-host-a"), "{}{}", stdout(&list), stderr(&list));

    // A hello without the token, or with another, is refused and closed, and never shown it.
    let hello = json!({ "mcpflow": mcpflow_service::PROTOCOL, "session": "api", "client": "stranger" });
    let mut wrong = hello.clone();
    wrong["token"] = json!("0".repeat(64));
    for refused in [&hello, &wrong] {
        let (line, mut rest) = raw_hello(port, refused);
        let welcome: Value = serde_json::from_str(&line).unwrap();
        assert_eq!((&welcome["ok"], &welcome["error"]["code"]), (&json!(false), &json!("BAD_TOKEN")), "{line}");
        let message = welcome["error"]["message"].as_str().unwrap();
        assert!(message.contains(&file.display().to_string()), "says where the token is: {message}");
        assert!(!line.contains(&token), "{line}");
        assert_eq!(rest.read_to_end(&mut Vec::new()).ok(), Some(0), "the refused connection is closed");
    }
    // The token from the file is let in.
    let mut right = hello;
    right["token"] = json!(token);
    let (line, _) = raw_hello(port, &right);
    assert!(line.contains(r#""ok":true"#), "{line}");
}

#[test]
fn mcpflow_endpoint_tcp_puts_the_service_on_loopback_and_another_value_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let refused = service_command(&home, &servers, "60").env("MCPFLOW_ENDPOINT", "udp").output().unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("MCPFLOW_ENDPOINT is `udp`: set it to `tcp`"), "{}", stderr(&refused));

    let owner = Killed(started(service_command(&home, &servers, "60").env("MCPFLOW_ENDPOINT", "tcp"), &home));
    assert!(!socket_path(&home).exists() && endpoint_file(&home).exists());
    assert_eq!(runs_json(&home), Vec::<Value>::new());
    let client = runtime().block_on(Client::connect(&home, "test")).unwrap().expect("it answers");
    assert_eq!(client.pid, owner.0.id());
}

/// Kills process `pid` when dropped, if it is still there (a service a failed test
/// would leave running).
struct KilledPid(u32);

impl Drop for KilledPid {
    fn drop(&mut self) {
        if alive(self.0) {
            let _ = Command::new("kill").args(["-KILL", &self.0.to_string()]).status();
        }
    }
}

#[test]
fn a_schedule_an_mcp_host_saved_fires_on_the_service_alone_and_its_runs_outlive_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let blueprint = json!({ "blueprint": 1, "id": "every-two-seconds", "schedule": { "every": "2s" },
        "steps": [ { "id": "stamp", "kind": "transform", "value": "{{ run.id }}" } ] });
    // No service runs: the host's `serve` starts one (idle after 1 s), saves through it,
    // and leaves.
    let (out, _) = serve_client_with(
        Command::new("node")
            .arg(repo().join("tests/mcp/ts-save-client.mjs"))
            .env("BLUEPRINT", blueprint.to_string())
            .env("MCPFLOW_SERVICE_IDLE", "1"),
        &home,
        Path::new("no-servers-file"),
    );
    assert!(out.contains("ok - saved every-two-seconds as revision 1"), "{out}");
    let rt = runtime();
    let pid = rt.block_on(Client::connect(&home, "test")).unwrap().expect("the service started on demand answers").pid;
    let _reaped = KilledPid(pid);

    // Nobody is connected from here on (that connection closed at once), no studio, no
    // terminal: with a schedule due, the service stays past its idle time...
    // watched through its log, which asks it nothing: two fires, 2 s apart, come after
    // its idle second.
    let fires = wait_for(Duration::from_secs(30), || {
        (service_log(&home).matches("scheduled run started").count() >= 2).then_some(())
    });
    assert!(fires.is_some(), "the service did not fire twice; service.log:\n{}", service_log(&home));
    assert!(alive(pid), "the service (pid {pid}) exited with a schedule due");
    // ...and `runs` reads the runs through it.
    let fired = wait_for(Duration::from_secs(20), || {
        let runs: Vec<Value> = runs_json(&home).into_iter().filter(|r| r["blueprint"] == "every-two-seconds").collect();
        runs.iter().any(|r| r["status"] == "succeeded").then_some(runs)
    });
    let fired = fired.unwrap_or_else(|| panic!("no scheduled run succeeded; service.log:\n{}", service_log(&home)));
    for run in &fired {
        assert_eq!(run["trigger"], "schedule", "{run}");
    }

    // Stopped (asked again while a fire is in flight), it leaves the store to the CLI,
    // which reads the same runs from it.
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().expect("the same service answers");
    assert_eq!(client.pid, pid);
    let stopped = wait_for(Duration::from_secs(10), || rt.block_on(client.call("service/stop", json!({}))).ok());
    assert!(stopped.is_some(), "the service would not stop");
    drop(client);
    let gone = wait_for(Duration::from_secs(20), || (!alive(pid)).then_some(()));
    assert!(gone.is_some(), "the service (pid {pid}) did not exit when asked");
    assert!(!endpoint::present(&home), "its endpoint went with it");
    let stored = runs_json(&home);
    for run in &fired {
        let kept = stored.iter().find(|r| r["id"] == run["id"]).unwrap_or_else(|| panic!("{run} not in {stored:?}"));
        assert_eq!(kept["trigger"], "schedule", "{kept}");
    }
}

/// The log (stderr) of the service a `serve` started for data folder `home`.
fn service_log(home: &Path) -> String {
    std::fs::read_to_string(home.join("service.log")).unwrap_or_default()
}

/// `mcpflow service` on `home` as its store configures it (no options), once it answers.
fn plain_service(home: &Path) -> Killed {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    command
        .args(["service", "--idle", "60"])
        .env("MCPFLOW_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Killed(started(&mut command, home))
}

#[test]
fn run_store_and_rerun_go_through_the_service_holding_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with_echo(dir.path());
    let service = plain_service(&home);
    let file = dir.path().join("pair.json");
    std::fs::write(
        &file,
        json!({ "blueprint": 1, "id": "pair", "steps": [
            { "id": "hello", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi" } },
            { "id": "again", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "{{ hello }}" } } ],
            "output": "{{ again }}" })
        .to_string(),
    )
    .unwrap();
    let file_arg = file.to_str().unwrap();

    // The store is the service's: the run is asked of it, and recorded by it as the CLI's.
    let events = dir.path().join("events.ndjson");
    let out = mcpflow_in(&home, &["run", "--store", "--json", "--events", events.to_str().unwrap(), file_arg]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(envelope["output"], "hi", "{envelope}");
    let text = std::fs::read_to_string(&events).unwrap();
    assert!(text.contains("\"StepFinished\"") && text.contains("\"again\""), "the events reach this CLI: {text}");
    let runs = runs_json(&home);
    let run = runs.iter().find(|r| r["blueprint"] == "pair").unwrap_or_else(|| panic!("{runs:?}"));
    assert_eq!((run["trigger"].as_str(), run["status"].as_str()), (Some("cli"), Some("succeeded")), "{run}");
    let run_id = run["id"].as_str().unwrap().to_owned();

    // A re-run of its second step, through the service too.
    let out = mcpflow_in(&home, &["rerun", &run_id, "again", "--file", file_arg, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(envelope["status"], "succeeded", "{envelope}");
    assert_eq!(envelope["summary"]["tool_calls"], 1, "the first step is pinned: {envelope}");
    let runs = runs_json(&home);
    let rerun = runs.iter().find(|r| r["id"] != run_id.as_str() && r["blueprint"] == "pair").unwrap();
    assert_eq!(rerun["rerun_of"]["run"], run_id.as_str(), "{rerun}");
    assert_eq!(rerun["trigger"], "cli");

    // Options only a process of its own could honour are refused, saying why.
    let servers = crate::echo_servers(dir.path());
    let out = mcpflow_in(&home, &["run", "--store", "--servers", servers.to_str().unwrap(), file_arg]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("SERVICE_OPTIONS_DIFFER"), "{}", stderr(&out));

    // Ctrl-C to the CLI cancels its run in the service.
    let long = dir.path().join("long.json");
    std::fs::write(
        &long,
        json!({ "blueprint": 1, "id": "long", "steps": [
        { "id": "wait", "kind": "tool", "server": "echo", "tool": "sleep", "args": { "ms": 30000 } } ] })
        .to_string(),
    )
    .unwrap();
    let mut running = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", long.to_str().unwrap()])
        .env("MCPFLOW_HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = wait_for(Duration::from_secs(20), || {
        runs_json(&home).into_iter().find(|r| r["blueprint"] == "long" && r["status"] == "running")
    });
    assert!(started.is_some(), "the long run started on the service");
    let interrupt = Command::new("kill").args(["-INT", &running.id().to_string()]).status().unwrap();
    assert!(interrupt.success());
    let ended = wait_for(Duration::from_secs(20), || running.try_wait().unwrap());
    assert_eq!(ended.and_then(|s| s.code()), Some(130), "the CLI exits as Ctrl-C says");
    let cancelled = wait_for(Duration::from_secs(20), || {
        runs_json(&home).into_iter().find(|r| r["blueprint"] == "long" && r["status"] == "cancelled")
    });
    assert!(cancelled.is_some(), "{:?}", runs_json(&home));
    drop(service);
}

#[test]
fn a_run_waiting_in_the_service_is_answered_by_mcpflow_answer_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with_echo(dir.path());
    let service = plain_service(&home);
    let file = dir.path().join("ask.json");
    std::fs::write(
        &file,
        json!({ "blueprint": 1, "id": "ask", "steps": [
            { "id": "name", "kind": "input", "prompt": "Whom to greet?", "schema": { "type": "string" } },
            { "id": "greet", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hello {{ name }}" } } ],
            "output": "{{ greet }}" })
        .to_string(),
    )
    .unwrap();
    // `run --store --wait` through the service: the question waits there.
    let waiting = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "--wait", "--json", file.to_str().unwrap()])
        .env("MCPFLOW_HOME", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = wait_for(Duration::from_secs(20), || {
        runs_json(&home).into_iter().find(|r| r["blueprint"] == "ask" && r["status"] == "waiting")
    })
    .expect("the run waits in the service");
    let run_id = run["id"].as_str().unwrap();

    // Another terminal answers it, through the service.
    let answers = dir.path().join("answers.json");
    std::fs::write(&answers, json!({ "name": "Ada" }).to_string()).unwrap();
    let out = mcpflow_in(&home, &["answer", run_id, "name", "--answers", answers.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (envelope["status"].as_str(), envelope["output"].as_str()),
        (Some("succeeded"), Some("hello Ada")),
        "{envelope}"
    );
    // The run goes on in flight: the `run --wait` that started it ends with the same result.
    let first = waiting.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let envelope: Value = serde_json::from_str(&stdout(&first)).unwrap();
    assert_eq!(
        (envelope["run_id"].as_str(), envelope["output"].as_str()),
        (Some(run_id), Some("hello Ada")),
        "{envelope}"
    );
    drop(service);
}

#[test]
fn a_blueprint_nesting_a_value_deeper_each_iteration_fails_its_run_and_the_service_answers_on() {
    // Before the depth limit, this run overflowed the service's stack: the service died
    // for every client, leaving its socket behind.
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let mut owner = service(&home, &servers, "60");
    let blueprint = crate::budget::deepening_blueprint(Some(100));
    let (mut bridge, stdin) = bridge_running(&home, &blueprint, Stdio::piped());
    let answer = answer_to_run(&mut bridge);
    assert!(answer.contains("TEMPLATE_TOO_DEEP") && answer.contains("limits.max_value_depth"), "{answer}");
    // The service lives and answers another client.
    assert!(owner.try_wait().unwrap().is_none(), "the service ended");
    let rt = runtime();
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().expect("the service answers");
    let runs = rt.block_on(client.call("runs/list", json!({}))).unwrap();
    assert!(runs.to_string().contains("deepening"), "{runs}");
    drop((stdin, client));
    let _ = bridge.kill();
    let _ = bridge.wait();
    let _ = owner.kill();
    let _ = owner.wait();
}

#[test]
fn runs_export_and_runs_remove_through_the_service_skip_then_remove_an_unreadable_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let (deep, fine) = crate::history::deep_and_fine_runs(dir.path(), &home);
    let remove = format!("mcpflow runs --remove {deep}");

    // The service holds the folder (and swept it on open); the CLI asks it.
    let _service = plain_service(&home);
    let runs = mcpflow_in(&home, &["runs"]);
    assert_eq!(runs.status.code(), Some(0), "{}", stderr(&runs));
    assert!(stdout(&runs).contains(&fine) && stderr(&runs).contains(&remove), "{}\n{}", stdout(&runs), stderr(&runs));
    let exported = mcpflow_in(&home, &["export"]);
    assert_eq!(exported.status.code(), Some(3), "{}", stderr(&exported));
    assert!(stderr(&exported).contains(&remove), "{}", stderr(&exported));
    let doc: Value = serde_json::from_slice(&exported.stdout).unwrap();
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1), "{doc}");
    let shown = mcpflow_in(&home, &["show", &deep]);
    assert!(stderr(&shown).contains(&remove), "{}", stderr(&shown));

    let removed = mcpflow_in(&home, &["runs", "--remove", &deep]);
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let runs = mcpflow_in(&home, &["runs"]);
    assert!(!stderr(&runs).contains(&deep) && stdout(&runs).contains(&fine), "{}", stderr(&runs));
    assert_eq!(mcpflow_in(&home, &["export"]).status.code(), Some(0));
}

#[test]
fn a_busy_run_in_the_service_delays_no_other_client_and_cancel_ends_it() {
    // 900,000 transforms on a service with one worker thread: before the driver yielded
    // between pieces, the run held that thread until it ended, and every other client
    // waited for it (30 s through `serve` in the issue's trial).
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let servers = crate::echo_servers(dir.path());
    let mut command = service_command(&home, &servers, "60");
    command.env("TOKIO_WORKER_THREADS", "1");
    let mut owner = started(&mut command, &home);
    let file = crate::signals::busy_blueprint(dir.path());
    let blueprint: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let (mut bridge, stdin) = bridge_running(&home, &blueprint, Stdio::piped());
    let rt = runtime();
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().expect("the service answers");
    let run_id = active_run(&rt, &mut client);
    // Another client is answered while the run is busy, many times over.
    for _ in 0..20 {
        let active = rt.block_on(client.call("runs/active", json!({}))).unwrap();
        assert!(active.to_string().contains(&run_id), "the run ended before the other client was served: {active}");
        rt.block_on(client.call("blueprints/list", json!({}))).unwrap();
    }
    rt.block_on(client.call("control_run", json!({ "run_id": run_id, "action": "cancel" }))).unwrap();
    let answer = answer_to_run(&mut bridge);
    assert!(answer.contains("cancelled"), "{answer}");
    drop((stdin, client));
    let _ = bridge.kill();
    let _ = bridge.wait();
    let _ = owner.kill();
    let _ = owner.wait();
}

#[test]
fn a_worker_killed_mid_run_leaves_its_run_interrupted_the_service_answers_on_and_resume_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = home_with_echo(dir.path());
    let service = plain_service(&home);
    let service_pid = service.0.id();
    let ledger = dir.path().join("ledger.txt");
    let blueprint = |ms: u64| {
        json!({ "blueprint": 1, "id": "two", "steps": [
            { "id": "first", "kind": "tool", "server": "echo", "tool": "record",
              "args": { "file": ledger.to_str().unwrap(), "line": "first ran" } },
            { "id": "wait", "kind": "tool", "server": "echo", "tool": "sleep", "after": ["first"], "args": { "ms": ms } } ],
            "output": "{{ first }}" })
        .to_string()
    };
    let file = dir.path().join("two.json");
    std::fs::write(&file, blueprint(60_000)).unwrap();
    let running = Command::new(env!("CARGO_BIN_EXE_mcpflow"))
        .args(["run", "--store", "--json", file.to_str().unwrap()])
        .env("MCPFLOW_HOME", &home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The run is in its second step, in a worker process of the service's.
    let rt = runtime();
    let mut client = rt.block_on(Client::connect(&home, "test")).unwrap().unwrap();
    let run_id = active_run(&rt, &mut client);
    let in_wait = wait_for(Duration::from_secs(30), || {
        let detail = rt.block_on(client.call("runs/get", json!({ "run_id": run_id }))).unwrap();
        let events = detail["events"].as_array().cloned().unwrap_or_default();
        events.iter().any(|e| e["type"] == "StepStarted" && e["step"] == "wait").then_some(())
    });
    assert!(in_wait.is_some(), "the run reached its second step");
    let workers: Vec<_> = mcpflow_testkit::procs::children_of(service_pid)
        .into_iter()
        .filter(|c| c.cmdline.split('\0').nth(1) == Some("worker"))
        .collect();
    assert_eq!(workers.len(), 1, "one worker for the one run: {workers:?}");
    let killed = Command::new("kill").args(["-KILL", &workers[0].pid.to_string()]).status().unwrap();
    assert!(killed.success());

    // The run ends interrupted, naming the step in flight and how to go on.
    let out = running.wait_with_output().unwrap();
    let envelope: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(envelope["status"], "interrupted", "{envelope}");
    let error = &envelope["errors"][0];
    assert_eq!((error["code"].as_str(), error["step"].as_str()), (Some("WORKER_DIED"), Some("wait")), "{envelope}");
    assert_eq!(envelope["run_id"], run_id.as_str());
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("signal 9") && message.contains(&format!("mcpflow resume {run_id}")), "{message}");

    // The service lives on: it answers the next run, in a worker of its own.
    let quick = dir.path().join("quick.json");
    std::fs::write(
        &quick,
        json!({ "blueprint": 1, "id": "quick", "steps": [
            { "id": "hello", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "still here" } } ],
            "output": "{{ hello }}" })
        .to_string(),
    )
    .unwrap();
    let out = mcpflow_in(&home, &["run", "--store", "--json", quick.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    assert!(alive(service_pid), "the service outlived the worker");
    let runs = runs_json(&home);
    let run = runs.iter().find(|r| r["id"] == run_id.as_str()).unwrap();
    assert_eq!(run["status"], "interrupted", "{run}");

    // `resume` goes on from there: the first step keeps its output and does not run again.
    std::fs::write(&file, blueprint(1)).unwrap();
    let out = mcpflow_in(&home, &["resume", &run_id, "--file", file.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", stdout(&out), stderr(&out));
    let resumed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(resumed["status"], "succeeded", "{resumed}");
    assert_eq!(resumed["summary"]["tool_calls"], 1, "only the step in flight ran again: {resumed}");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap().lines().count(), 1, "the first step ran once");
    drop((client, service));
}
