//! `mcpflow run --otlp`: the telemetry configuration is checked before anything runs, and
//! a collector that is down does not change the run.

use crate::{repo, stderr};
use serde_json::{Value, json};
use std::process::{Command, Output};

struct Dir {
    dir: tempfile::TempDir,
}

impl Dir {
    fn new() -> Dir {
        let dir = tempfile::tempdir().unwrap();
        let bin = mcpflow_testkit::binary().display().to_string();
        let servers = json!({ "mcpServers": { "echo": { "command": bin, "args": ["echo"] } } });
        std::fs::write(dir.path().join("servers.json"), servers.to_string()).unwrap();
        let bp = json!({ "blueprint": 1, "id": "hello", "steps": [
            { "id": "greet", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi" } }
        ] });
        std::fs::write(dir.path().join("hello.json"), bp.to_string()).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Dir { dir }
    }

    fn settings(&self, settings: &Value) {
        std::fs::write(self.dir.path().join("home/settings.json"), settings.to_string()).unwrap();
    }

    /// `mcpflow run hello.json --servers … --allow-server echo --json EXTRA`.
    fn run(&self, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let file = self.dir.path().join("hello.json").display().to_string();
        self.run_file(&[], &file, extra, env)
    }

    /// `mcpflow GLOBAL run FILE --servers … --allow-server echo --json EXTRA`.
    fn run_file(&self, global: &[&str], file: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let servers = self.dir.path().join("servers.json").display().to_string();
        let mut args = global.to_vec();
        args.extend(["run", file, "--servers", &servers, "--allow-server", "echo", "--json"]);
        args.extend(extra);
        mcpflow_on(&self.dir.path().join("home"), &args, env).output().unwrap()
    }
}

#[test]
fn an_otlp_url_that_is_not_http_is_refused_before_anything_runs() {
    let d = Dir::new();
    let out = d.run(&["--otlp", "localhost:4318"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("error[OTLP_ENDPOINT_INVALID]") && err.contains("--otlp"), "{err}");
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
fn otel_sdk_disabled_turns_telemetry_off_even_with_the_flag() {
    let d = Dir::new();
    let out = d.run(&["--otlp", "localhost:4318"], &[("OTEL_SDK_DISABLED", "true")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn a_run_with_the_collector_down_succeeds_and_says_nothing_about_it_when_nothing_was_lost() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let d = Dir::new();
    let out = d.run(&["--otlp", &format!("http://127.0.0.1:{port}")], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded");
    assert!(!stderr(&out).contains("dropped"), "{}", stderr(&out));
}

#[test]
fn a_settings_header_written_as_a_literal_is_refused_without_showing_it() {
    let d = Dir::new();
    d.settings(&json!({ "telemetry": {
        "endpoint": "https://api.honeycomb.io",
        "headers": { "x-honeycomb-team": "the-secret-key" }
    } }));
    let out = d.run(&[], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("error[OTLP_HEADER_LITERAL]") && err.contains("${env:NAME}"), "{err}");
    assert!(!err.contains("the-secret-key"), "{err}");
}

#[test]
fn the_standard_environment_turns_telemetry_on_and_without_configuration_nothing_is_sent() {
    let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
    let d = Dir::new();
    let out = d.run(&[], &[("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url()), ("OTEL_SERVICE_NAME", "cli-test")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The engine opens no spans yet; the metrics' final collection is sent at exit.
    let names: Vec<String> = receiver.metrics().into_iter().map(|m| m.name).collect();
    assert!(names.iter().any(|n| n == "mcpflow.telemetry.spans.dropped"), "{names:?}");

    // Nothing configured: the SDK's default endpoint (localhost:4318) is never used. The
    // port is what is tested, so it is fixed; on a machine where it is taken the check
    // cannot be made, which fails under CI.
    let default_port = match mcpflow_testkit::otlp::Receiver::start(4318) {
        Ok(receiver) => receiver,
        Err(e) if std::env::var("CI").is_ok_and(|ci| ci == "true") => panic!("port 4318 is taken ({e})"),
        Err(_) => return,
    };
    let out = d.run(&[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // An exporter sends at exit and waits for the answer, which the receiver gives after
    // recording the request: once the process has exited, whatever it sent is recorded.
    assert!(default_port.metrics().is_empty() && default_port.spans().is_empty());
    assert!(default_port.other_requests().is_empty());
}

/// `mcpflow ARGS` on data folder `home` with no OTEL_* of the machine's, stdin closed at
/// once (a `serve` bridge then ends).
fn mcpflow_on(home: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mcpflow"));
    c.args(args).current_dir(repo()).env("MCPFLOW_HOME", home).stdin(std::process::Stdio::null());
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("OTEL_")) {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Whether the metrics a process sends when its telemetry shuts down reached `receiver`.
fn final_metrics_arrive(receiver: &mcpflow_testkit::otlp::Receiver) -> bool {
    crate::spawned::wait_for(std::time::Duration::from_secs(20), || {
        receiver.metrics().iter().any(|m| m.name == "mcpflow.telemetry.spans.dropped").then_some(())
    })
    .is_some()
}

#[test]
fn serve_starts_the_service_with_its_otlp_flag_and_the_service_sends_when_it_exits() {
    let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // No service runs: this serve starts one, with its --otlp; stdin closes, the bridge
    // ends, and the service, idle, exits and sends its last metrics there.
    let out =
        mcpflow_on(&home, &["serve", "--otlp", &receiver.url()], &[("MCPFLOW_SERVICE_IDLE", "1")]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    assert!(final_metrics_arrive(&receiver), "the service started by serve did not get --otlp");
}

#[test]
fn a_service_applies_its_otlp_flag_and_serve_flags_it_cannot_apply_are_told_once() {
    let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut service = mcpflow_on(&home, &["service", "--idle", "60", "--otlp", &receiver.url()], &[])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let up = crate::spawned::wait_for(std::time::Duration::from_secs(20), || {
        rt.block_on(mcpflow_service::endpoint::connect(&home)).unwrap()
    });
    assert!(up.is_some(), "the service did not answer");
    let out =
        mcpflow_on(&home, &["serve", "--otlp", "http://127.0.0.1:9", "--otlp-capture-payloads"], &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the serve goes on through the service: {}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    let pid = service.id();
    assert!(
        err.contains("--otlp and --otlp-capture-payloads do not apply")
            && err.contains(&format!("(pid {pid})"))
            && err.contains("settings.json"),
        "{err}"
    );
    // Its own --otlp is the service's: SIGTERM ends it, and its last metrics go there.
    let killed = Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let ended = crate::spawned::wait_for(std::time::Duration::from_secs(20), || service.try_wait().unwrap());
    assert!(ended.is_some(), "the service did not stop on SIGTERM");
    assert!(final_metrics_arrive(&receiver), "the service's --otlp did not apply");
}

#[test]
fn serve_daemon_and_service_refuse_an_otlp_url_that_is_not_http() {
    let dir = tempfile::tempdir().unwrap();
    for args in
        [&["serve", "--otlp", "localhost:4318"][..], &["daemon", "--otlp", "x"], &["service", "--otlp", "ftp://h"]]
    {
        let out = mcpflow_on(dir.path(), args, &[]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("error[OTLP_ENDPOINT_INVALID]"), "{args:?}: {}", stderr(&out));
    }
}

/// Writes a blueprint of a `for_each` loop of `n` echo calls into the dir.
fn loop_of(d: &Dir, n: usize) -> String {
    let bp = json!({ "blueprint": 1, "id": "many", "steps": [
        { "id": "each", "kind": "loop", "for_each": (0..n).collect::<Vec<_>>(),
          "steps": [{ "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "item {{ item }}" } }] }
    ] });
    let path = d.dir.path().join("many.json");
    std::fs::write(&path, bp.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn a_traced_run_sends_its_tree_and_show_prints_the_trace_id_the_envelope_carries() {
    let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
    let d = Dir::new();
    let out = d.run(&["--store", "--otlp", &receiver.url()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let trace = envelope["trace_id"].as_str().unwrap_or_else(|| panic!("no trace id: {envelope}")).to_owned();
    assert_eq!(trace.len(), 32);
    // The exporter was shut down before the process exited: the spans are there.
    let spans = receiver.wait_for(3, std::time::Duration::from_secs(10));
    let tree = mcpflow_testkit::otlp::tree(&spans);
    assert!(spans.iter().all(|s| s.trace_id == trace), "{tree}");
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    for name in ["run hello", "step greet", "tools/call echo"] {
        assert!(names.contains(&name), "{name} missing:\n{tree}");
    }
    let run_id = envelope["run_id"].as_str().unwrap();
    let show = mcpflow_on(&d.dir.path().join("home"), &["show", run_id], &[]).output().unwrap();
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.lines().any(|l| l == format!("trace {trace}")), "{text}");
    let json = mcpflow_on(&d.dir.path().join("home"), &["show", run_id, "--json"], &[]).output().unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["trace_id"], trace.as_str());
}

#[test]
fn with_the_collector_down_and_the_queue_full_spans_are_dropped_the_run_succeeds_and_it_is_told_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let d = Dir::new();
    let file = loop_of(&d, 300);
    let collector = format!("http://127.0.0.1:{port}");
    let out = d.run_file(&[], &file, &["--otlp", &collector], &[("OTEL_BSP_MAX_QUEUE_SIZE", "8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded");
    assert_eq!(envelope["summary"]["tool_calls"], 300);
    let err = stderr(&out);
    assert_eq!(err.matches("spans are being dropped").count(), 1, "{err}");
    assert!(err.contains("(runs are not affected)"), "{err}");
    let total = err.lines().find(|l| l.ends_with(" spans dropped")).unwrap_or_else(|| panic!("no final count: {err}"));
    let n: u64 = total.trim_start_matches("telemetry: ").split(' ').next().unwrap().parse().unwrap();
    assert!(n > 0, "{total}");
}

#[test]
fn log_format_json_lines_carry_the_runs_trace_id_and_each_steps_span_id() {
    let receiver = mcpflow_testkit::otlp::Receiver::start(0).unwrap();
    let d = Dir::new();
    let file = d.dir.path().join("hello.json").display().to_string();
    let out = d.run_file(&["--log-format", "json"], &file, &["--otlp", &receiver.url()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let trace = envelope["trace_id"].as_str().unwrap().to_owned();
    let err = stderr(&out);
    let lines: Vec<Value> = err.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let line = |message: &str| {
        lines
            .iter()
            .find(|l| l["fields"]["message"] == message)
            .unwrap_or_else(|| panic!("no `{message}` line in:\n{err}"))
            .clone()
    };
    let ended = line("run ended");
    assert_eq!(ended["span"]["trace_id"], trace.as_str(), "{ended}");
    assert_eq!(ended["fields"]["status"], "succeeded");
    let step = line("step ended");
    assert_eq!(step["span"]["trace_id"], trace.as_str(), "{step}");
    assert_eq!(step["fields"]["step"], "greet");
    let spans = receiver.wait_for(3, std::time::Duration::from_secs(10));
    let greet = spans.iter().find(|s| s.name == "step greet").unwrap();
    assert_eq!(step["fields"]["span_id"], greet.span_id.as_str(), "{step}");
}

/// `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`: the same tree reaches a gRPC receiver, in the
/// envelope's trace, and the final metrics with it.
#[test]
fn over_grpc_a_traced_run_sends_its_tree_in_the_trace_the_envelope_carries() {
    let receiver = mcpflow_testkit::otlp::Receiver::start_grpc(0).unwrap();
    let d = Dir::new();
    let out = d.run(&[], &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), ("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.url())]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("telemetry"), "{}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    let trace = envelope["trace_id"].as_str().unwrap_or_else(|| panic!("no trace id: {envelope}")).to_owned();
    let spans = receiver.wait_for(3, std::time::Duration::from_secs(10));
    let tree = mcpflow_testkit::otlp::tree(&spans);
    assert!(spans.iter().all(|s| s.trace_id == trace), "{tree}");
    let by_name = |name: &str| spans.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("no {name}:\n{tree}"));
    let (run, step, call) = (by_name("run hello"), by_name("step greet"), by_name("tools/call echo"));
    assert_eq!(run.parent_span_id, None, "{tree}");
    assert_eq!(step.parent_span_id.as_deref(), Some(run.span_id.as_str()), "{tree}");
    assert_eq!(call.parent_span_id.as_deref(), Some(step.span_id.as_str()), "{tree}");
    assert_eq!((run.kind, step.kind, call.kind), ("internal", "internal", "client"), "{tree}");
    assert_eq!(step.attrs["mcpflow.step.id"], "greet", "{tree}");
    assert_eq!(run.service, "mcpflow");
    let metrics: Vec<String> = receiver.metrics().into_iter().map(|m| m.name).collect();
    assert!(metrics.iter().any(|n| n == "mcpflow.runs"), "{metrics:?}");
    assert_eq!(receiver.undecodable(), 0);
}

#[test]
fn over_grpc_a_run_with_the_collector_down_succeeds_promptly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let d = Dir::new();
    let started = std::time::Instant::now();
    let out = d.run(
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &format!("http://127.0.0.1:{port}")),
        ],
    );
    let spent = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(spent < std::time::Duration::from_secs(5), "the run took {spent:?}: {}", stderr(&out));
    let envelope: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(envelope["status"], "succeeded");
    let err = stderr(&out);
    assert!(!err.contains("dropped"), "{err}");
    // The failed export is told once, naming the endpoint.
    assert_eq!(err.matches("telemetry:").count(), 1, "{err}");
    assert!(err.contains(&format!("sending spans to http://127.0.0.1:{port} failed")), "{err}");
}
