//! Sampling in the application (the studio's runs, `run --store`, `serve`): the provider of
//! the data folder's `settings.json` answers — a loopback OpenAI-compatible endpoint that
//! records what it receives (`crates/cli/tests/fixtures/openai_endpoint.py`) — and is never
//! called for a server whose switch is off; with no provider, the studio shows the request
//! to a person (a question of the run) and the server gets what they write.

use crate::reference::node_server;
use crate::repo;
use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::people::Answer;
use mcpflow_engine::{EventKind, RunStatus};
use serde_json::{Value, json};
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The loopback endpoint, killed when dropped.
struct Endpoint {
    child: Child,
    port: u16,
    record: PathBuf,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Endpoint {
    fn start(dir: &Path) -> Endpoint {
        let record = dir.join("endpoint-requests.jsonl");
        let mut child = Command::new("python3")
            .arg(repo().join("crates/cli/tests/fixtures/openai_endpoint.py"))
            .arg(&record)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().parse().unwrap_or_else(|_| panic!("the endpoint printed no port: {line:?}"));
        Endpoint { child, port, record }
    }

    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The studio's application over data folder `home`: server-everything as `everything`
/// (switch on) and `everything_off`.
fn app(home: &Path) -> App {
    let mut on = node_server("server-everything", &["stdio"]);
    on["sampling"] = json!(true);
    let servers = home.join("servers.json");
    let doc =
        json!({ "mcpServers": { "everything": on, "everything_off": node_server("server-everything", &["stdio"]) } });
    std::fs::write(&servers, doc.to_string()).unwrap();
    App::open(home, AppOptions { server_files: vec![servers], allow_all: true, ..AppOptions::default() }).unwrap()
}

fn sampling_run(server: &str, prompt: &str) -> StartRun {
    let doc = json!({ "blueprint": 1, "id": "sampling", "steps": [
        { "id": "ask", "kind": "tool", "server": server, "tool": "trigger-sampling-request",
          "args": { "prompt": prompt, "maxTokens": 30 } }
    ]});
    StartRun::new(Target::Inline(doc), json!({}), Trigger::Studio)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_apps_provider_answers_and_is_never_called_for_a_server_whose_switch_is_off() {
    let home = tempfile::tempdir().unwrap();
    let endpoint = Endpoint::start(home.path());
    let settings = json!({ "sampling": { "baseUrl": format!("http://127.0.0.1:{}/v1", endpoint.port), "model": "m" } });
    std::fs::write(home.path().join("settings.json"), settings.to_string()).unwrap();
    let app = app(home.path());

    let envelope = app.start_run(sampling_run("everything", "name a bird")).unwrap().finish().await;
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:#?}", envelope.errors);
    let output = envelope.output.as_str().unwrap();
    assert!(output.contains("loopback says: Resource trigger-sampling-request context: name a bird"), "{output}");
    assert_eq!(endpoint.requests().len(), 1);
    // The recorded run has the request and the answer.
    let detail = app.run_detail(&envelope.run_id).unwrap();
    assert!(
        detail
            .events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::StepSampling { server, .. } if server == "everything"))
    );
    assert!(detail.events.iter().any(|e| matches!(&e.kind, EventKind::StepSampled { result: Some(_), .. })));

    let refused = app.start_run(sampling_run("everything_off", "a secret")).unwrap().finish().await;
    assert_eq!(refused.status, RunStatus::Failed);
    assert_eq!(refused.errors[0].code, "SAMPLING_NOT_ALLOWED", "{:#?}", refused.errors);
    assert_eq!(endpoint.requests().len(), 1, "the provider was called for a server whose switch is off");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_provider_the_studio_shows_the_request_to_a_person_whose_answer_the_server_gets() {
    let home = tempfile::tempdir().unwrap();
    let app = app(home.path());
    let started = app.start_run(sampling_run("everything", "name a river")).unwrap();
    let run_id = started.run_id.clone();
    let start = Instant::now();
    let question = loop {
        if let Some((_, q)) = app.questions(Some(&run_id)).into_iter().next() {
            break q;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no question was asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!((question.step.as_str(), question.server.as_deref()), ("ask", Some("everything")));
    assert!(
        question.message.contains("user: Resource trigger-sampling-request context: name a river"),
        "{}",
        question.message
    );
    assert!(question.message.contains("system: You are a helpful test server."), "{}", question.message);
    assert_eq!(question.fields(), ["answer"]);
    app.answer(&run_id, &question.id, Answer::Accept { content: json!({ "answer": "the Loire" }) }).unwrap();
    let envelope = started.finish().await;
    assert_eq!(envelope.status, RunStatus::Succeeded, "{:#?}", envelope.errors);
    let output = envelope.output.as_str().unwrap();
    assert!(output.contains("\"text\": \"the Loire\"") && output.contains("\"model\": \"person\""), "{output}");
    app.shutdown().await;
}
