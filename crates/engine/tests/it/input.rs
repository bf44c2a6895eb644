//! `input` steps: a question to a person as an invocation, the answer as the output, an
//! approval gate, the timeout's two ways, and the driver asking a [`People`] with the
//! question and answer on record.

use crate::sim::{Sim, bp, text};
use futures::future::BoxFuture;
use mcpflow_engine::people::{Answer, Asking, People, Question};
use mcpflow_engine::{CallError, CallRequest, Engine, EventKind, Input, Invocation, RunRequest, RunStatus, Servers};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

fn question(sim: &Sim, step: &str) -> Question {
    sim.inflight
        .iter()
        .find_map(|(_, s, _, inv)| match inv {
            Invocation::Ask(q) if s == step => Some((**q).clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no question of `{step}` in flight: {:?}", sim.inflight_steps()))
}

#[test]
fn an_input_step_asks_with_its_form_and_its_answer_is_the_output_the_next_step_reads() {
    let mut sim = Sim::new(bp(json!([
        { "id": "first", "kind": "transform", "value": 2 },
        { "id": "how_many", "kind": "input", "prompt": "How many replicas (now {{ first }})?",
          "schema": { "type": "integer", "minimum": 1 }, "default": "{{ first }}" },
        { "id": "use", "kind": "tool", "server": "s", "tool": "scale", "args": { "n": "{{ how_many }}" } }
    ])))
    .start();
    let q = question(&sim, "how_many");
    assert_eq!(q.asking, Asking::Input);
    assert_eq!(q.message, "How many replicas (now 2)?", "the prompt's template is resolved");
    assert_eq!(q.schema.as_ref().unwrap()["properties"]["value"]["type"], "integer");
    assert_eq!(q.default, Some(json!({ "value": 2 })), "the default pre-fills the one field");
    assert_eq!(sim.inflight_steps(), ["how_many"], "nothing after it starts before the answer");
    sim.answer("how_many", Ok(json!({ "action": "accept", "content": { "value": 5 } })));
    assert_eq!(sim.tool_args("use"), json!({ "n": 5 }));
    sim.ok("use", json!("ok"));
    assert_eq!(sim.envelope().status, RunStatus::Succeeded, "{:?}", sim.envelope().errors);
}

#[test]
fn a_rejected_approval_gate_fails_its_step_and_the_blueprint_decides_what_follows() {
    let doc = |on_error: &str| {
        bp(json!([
            { "id": "gate", "kind": "input", "prompt": "Delete the pods?", "approve": true, "on_error": on_error },
            { "id": "delete", "kind": "tool", "server": "s", "tool": "delete", "after": ["gate"] }
        ]))
    };
    let mut sim = Sim::new(doc("abort")).start();
    assert_eq!(question(&sim, "gate").asking, Asking::Approval);
    sim.answer("gate", Ok(json!({ "action": "accept", "content": { "approve": false } })));
    let env = sim.envelope();
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].code, "INPUT_REJECTED");
    assert!(!sim.invokes.iter().any(|(_, s, _)| s == "delete"), "the destructive half never ran");

    let mut sim = Sim::new(doc("continue")).start();
    sim.answer("gate", Ok(json!({ "action": "decline" })));
    sim.ok("delete", json!("gone"));
    assert_eq!(sim.envelope().status, RunStatus::Partial, "continue: the run goes on, marked partial");

    let mut sim = Sim::new(doc("abort")).start();
    sim.answer("gate", Ok(json!({ "action": "accept", "content": { "approve": true } })));
    sim.ok("delete", json!("gone"));
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
    assert!(sim.events.iter().any(|e| matches!(&e.kind,
        EventKind::StepFinished { step, output: Some(Value::Bool(true)), .. } if step == "gate")));
}

#[test]
fn a_timeout_takes_the_default_or_fails_with_input_timeout_as_the_step_says() {
    let mut sim = Sim::new(bp(json!([
        { "id": "ask", "kind": "input", "prompt": "Namespace?", "default": "prod",
          "timeout_ms": 1000, "on_timeout": "default" }
    ])))
    .start();
    sim.advance_to(1000);
    assert_eq!(sim.envelope().status, RunStatus::Succeeded);
    assert_eq!(sim.envelope().output, json!("prod"));
    assert_eq!(sim.cancelled.len(), 1, "the question is withdrawn");

    let mut sim = Sim::new(bp(json!([
        { "id": "ask", "kind": "input", "prompt": "Namespace?", "timeout_ms": 1000 }
    ])))
    .start();
    sim.advance_to(1000);
    assert_eq!(sim.envelope().errors[0].code, "INPUT_TIMEOUT");
}

#[test]
fn declined_and_dismissed_questions_fail_with_their_own_codes() {
    for (action, code) in [("decline", "INPUT_DECLINED"), ("cancel", "INPUT_CANCELLED")] {
        let mut sim = Sim::new(bp(json!([{ "id": "ask", "kind": "input", "prompt": "Name?" }]))).start();
        sim.answer("ask", Ok(json!({ "action": action })));
        assert_eq!(sim.envelope().errors[0].code, code);
    }
}

#[test]
fn a_calls_question_and_answer_are_recorded_on_its_step() {
    let mut sim = Sim::new(bp(json!([{ "id": "call", "kind": "tool", "server": "s", "tool": "ask_me" }]))).start();
    let inv = sim.inflight[0].0;
    let question = Question {
        id: String::new(),
        step: String::new(),
        path: Vec::new(),
        asking: Asking::Elicitation,
        server: Some("s".into()),
        message: "Your name?".into(),
        schema: Some(json!({ "type": "object", "properties": { "name": { "type": "string" } } })),
        default: None,
        url: None,
        call: None,
    };
    sim.feed(Input::Waiting { inv, question: Box::new(question) });
    sim.feed(Input::Answered { inv, answer: Answer::Accept { content: json!({ "name": "Ada" }) } });
    sim.answer("call", Ok(text(json!("hi Ada"))));
    let waiting = sim.events.iter().find_map(|e| match &e.kind {
        EventKind::StepWaiting { step, question, .. } => Some((step.clone(), question.clone())),
        _ => None,
    });
    let (step, q) = waiting.expect("a StepWaiting event");
    assert_eq!((step.as_str(), q.step.as_str()), ("call", "call"), "the scheduler names the step");
    assert!(sim.events.iter().any(|e| matches!(&e.kind,
        EventKind::StepAnswered { step, answer: Answer::Accept { .. }, .. } if step == "call")));
}

/// Answers from a list, recording each question.
struct Scripted {
    answers: Mutex<Vec<Answer>>,
    asked: Mutex<Vec<Question>>,
}

impl People for Scripted {
    fn ask(&self, question: Question, _cancel: CancellationToken) -> BoxFuture<'static, Result<Answer, CallError>> {
        self.asked.lock().unwrap().push(question.clone());
        let next = self.answers.lock().unwrap().pop();
        Box::pin(async move { next.ok_or_else(|| question.unanswerable("the script ran out")) })
    }
}

struct NoServers;

impl Servers for NoServers {
    fn call(&self, _request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async { Err(CallError::new("SERVER_NOT_FOUND", "no servers here", false)) })
    }
}

async fn run(doc: Value, people: Option<Arc<dyn People>>) -> (mcpflow_engine::Envelope, Vec<EventKind>) {
    let report = mcpflow_blueprint::check_value(doc, &mcpflow_blueprint::Options::default());
    assert!(!report.has_errors(), "{:?}", report.diagnostics);
    let (bp, plan) = (report.blueprint.unwrap(), report.plan.unwrap());
    let mut engine = Engine::new(Arc::new(NoServers));
    engine.people = people;
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
    let env = engine
        .run(request, Arc::new(move |e| sink.lock().unwrap().push(e.kind.clone())), None, CancellationToken::new())
        .await;
    let events = events.lock().unwrap().clone();
    (env, events)
}

#[tokio::test]
async fn the_driver_asks_the_runs_people_and_records_the_question_and_the_answer() {
    let doc = bp(json!([
        { "id": "name", "kind": "input", "prompt": "Your name?" },
        { "id": "greet", "kind": "transform", "value": "hello {{ name }}" }
    ]));
    let people = Arc::new(Scripted {
        answers: Mutex::new(vec![Answer::Accept { content: json!({ "value": "Ada" }) }]),
        asked: Mutex::new(Vec::new()),
    });
    let (env, events) = run(doc.clone(), Some(people.clone())).await;
    assert_eq!(env.status, RunStatus::Succeeded, "{:?}", env.errors);
    assert_eq!(env.output, json!("hello Ada"));
    assert_eq!(people.asked.lock().unwrap()[0].step, "name", "the person is told which step asks");
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|k| match k {
            EventKind::StepWaiting { .. } => Some("waiting"),
            EventKind::StepAnswered { .. } => Some("answered"),
            EventKind::StepFinished { .. } => Some("finished"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["waiting", "answered", "finished", "finished"]);

    // Nobody to ask: INPUT_REQUIRED naming the step and the field, never a hang.
    let (env, _) = run(doc, None).await;
    assert_eq!(env.status, RunStatus::Failed);
    assert_eq!(env.errors[0].code, "INPUT_REQUIRED");
    assert!(
        env.errors[0].message.contains("step `name`") && env.errors[0].message.contains("value"),
        "{}",
        env.errors[0].message
    );
}
