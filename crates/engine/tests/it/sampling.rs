//! The driver's side of sampling: a server's request during a call is recorded on the call's
//! step (cut), given to the run's sampler — never when the server's switch is off — and its
//! answer recorded; a refused or unanswered request ends the call at once with why.

use crate::sim::bp;
use futures::future::BoxFuture;
use mcpflow_engine::{
    CallError, CallRequest, Engine, EventKind, RunRequest, RunStatus, SampleRequest, Sampler, Servers,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A server that asks the model once per call (its switch as given) and answers with the
/// model's text; when the request fails it never answers (the driver must end the call).
struct Asking {
    allowed: bool,
    prompt: String,
}

impl Servers for Asking {
    fn call(&self, request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move {
            let sample = request.sample.clone().expect("the driver gives every call a sampling sink");
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": self.prompt } }],
                "maxTokens": 10,
            });
            let asked = SampleRequest {
                step: String::new(),
                path: Vec::new(),
                server: "s".into(),
                allowed: self.allowed,
                params,
                ask: None,
            };
            match sample(asked).await {
                Ok(result) => Ok(json!({ "content": [{ "type": "text", "text": result["content"]["text"] }] })),
                Err(_) => std::future::pending().await,
            }
        })
    }
}

/// Answers every request with `blue`, counting them.
#[derive(Default)]
struct Blue {
    asked: AtomicUsize,
}

impl Sampler for Blue {
    fn sample(
        &self,
        request: SampleRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Value, CallError>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        assert_eq!(request.step, "ask", "the sampler is told the step");
        Box::pin(async {
            Ok(json!({ "role": "assistant", "content": { "type": "text", "text": "blue" }, "model": "m" }))
        })
    }
}

async fn run(server: Asking, sampler: Option<Arc<dyn Sampler>>) -> (mcpflow_engine::Envelope, Vec<EventKind>) {
    let doc = bp(json!([{ "id": "ask", "kind": "tool", "server": "s", "tool": "colour" }]));
    let report = mcpflow_blueprint::check_value(doc, &mcpflow_blueprint::Options::default());
    let (bp, plan) = (report.blueprint.unwrap(), report.plan.unwrap());
    let mut engine = Engine::new(Arc::new(server));
    engine.sampler = sampler;
    let config = engine.config(&bp, "r".into(), json!({})).unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let request = RunRequest {
        blueprint: Arc::new(bp),
        plan: Arc::new(plan),
        config,
        stack: Vec::new(),
        origin: Default::default(),
    };
    let run = engine.run(
        request,
        Arc::new(move |e| sink.lock().unwrap().push(e.kind.clone())),
        None,
        CancellationToken::new(),
    );
    let env = tokio::time::timeout(std::time::Duration::from_secs(10), run).await.expect("the run ends");
    let events = events.lock().unwrap().clone();
    (env, events)
}

#[tokio::test]
async fn the_request_and_the_answer_are_recorded_on_the_step_cut_and_the_server_gets_the_answer() {
    let blue = Arc::new(Blue::default());
    let prompt = "x".repeat(10_000);
    let (env, events) = run(Asking { allowed: true, prompt }, Some(blue.clone())).await;
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!("blue"));
    assert_eq!(blue.asked.load(Ordering::SeqCst), 1);
    let order: Vec<&str> = events
        .iter()
        .filter_map(|k| match k {
            EventKind::StepSampling { step, .. } if step == "ask" => Some("sampling"),
            EventKind::StepSampled { step, result: Some(_), .. } if step == "ask" => Some("sampled"),
            EventKind::StepFinished { .. } => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["sampling", "sampled", "finished"]);
    let recorded = events
        .iter()
        .find_map(|k| match k {
            EventKind::StepSampling { request, .. } => request["messages"][0]["content"]["text"].as_str(),
            _ => None,
        })
        .unwrap();
    assert!(recorded.len() < 5000 && recorded.ends_with('…'), "a long prompt is cut in the events");
}

#[tokio::test]
async fn a_server_whose_switch_is_off_is_refused_without_asking_the_sampler_and_its_call_ends_at_once() {
    let blue = Arc::new(Blue::default());
    let (env, events) = run(Asking { allowed: false, prompt: "p".into() }, Some(blue.clone())).await;
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].code, "SAMPLING_NOT_ALLOWED");
    assert_eq!(blue.asked.load(Ordering::SeqCst), 0, "the sampler was asked");
    assert!(events.iter().any(|k| matches!(k,
        EventKind::StepSampled { error: Some(e), .. } if e.code == "SAMPLING_NOT_ALLOWED")));
}

#[tokio::test]
async fn with_no_sampler_the_request_fails_sampling_unavailable() {
    let (env, _) = run(Asking { allowed: true, prompt: "p".into() }, None).await;
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].code, "SAMPLING_UNAVAILABLE");
    assert!(env.errors[0].message.contains("server `s`") && env.errors[0].message.contains("step `ask`"));
}
