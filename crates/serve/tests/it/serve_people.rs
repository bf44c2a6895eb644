//! A run's questions through `mcpflow serve` over streamable HTTP: the client that called
//! `run_workflow` declared elicitation (an rmcp client: the pool, whose call carries an
//! ask sink), so an `input` step's question travels to it as `elicitation/create` on the
//! call's own response stream, and its answer — or its refusal — is the step's.

use crate::serve::{TOKEN, app, call as plain_call, client};
use crate::setup;
use mcpflow_engine::people::{Answer, Asking, Question};
use mcpflow_engine::{AskSink, CallError, CallRequest, CallTarget};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use mcpflow_serve::http::{HttpOptions, serve_http};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// An rmcp client pool whose one server, `mcpflow`, is the mediator at `addr`, spoken to
/// in the 2025-11-25 era (server-to-client requests; the pool does not answer a
/// 2026-07-28 `input_required` result).
fn client_2025(addr: SocketAddr) -> Pool {
    let doc = json!({ "mcpServers": { "mcpflow": {
        "url": format!("http://{addr}/mcp"), "headers": { "Authorization": format!("Bearer {TOKEN}") },
        "protocol": "2025-11-25" } } });
    let configs = ServerConfigs::parse(&doc.to_string(), "test").unwrap();
    Pool::new(configs, Approvals::new(), PoolOptions::default())
}

/// `tool` of the mediator, with `answer` answering every question it forwards (kept in
/// `asked`).
async fn call(pool: &Pool, tool: &str, args: Value, asked: &Arc<Mutex<Vec<Question>>>, answer: Answer) -> Value {
    let sink: AskSink = {
        let asked = asked.clone();
        Arc::new(move |q: Question| {
            asked.lock().unwrap().push(q);
            let answer = answer.clone();
            Box::pin(async move { Ok::<_, CallError>(answer) })
        })
    };
    let request = CallRequest {
        target: CallTarget::Tool {
            server: Some("mcpflow".into()),
            tool: tool.into(),
            args: args.as_object().cloned().unwrap_or_default(),
        },
        timeout: None,
        cancel: CancellationToken::new(),
        progress: None,
        stack: Vec::new(),
        tasks: Default::default(),
        ask: Some(mcpflow_engine::CallAsk { sink, confirm_destructive: false }),
        sample: None,
        trace: None,
    };
    pool.call(request).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn asking() -> Value {
    json!({ "blueprint": 1, "id": "asking", "steps": [
        { "id": "count", "kind": "input", "prompt": "How many replicas?", "schema": { "type": "integer" } },
        { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "replicas={{ count }}" } }
    ], "output": "{{ say }}" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_steps_question_goes_to_the_http_client_that_declared_elicitation_and_its_answer_is_the_output() {
    let s = setup(json!({}));
    let options = HttpOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        token: TOKEN.into(),
        hosts: Vec::new(),
        limits: Default::default(),
    };
    let server = serve_http(app(vec![s.servers.clone()], None), options).await.unwrap();
    let pool = client_2025(server.addr);

    let asked: Arc<Mutex<Vec<Question>>> = Arc::default();
    let accept = Answer::Accept { content: json!({ "value": 3 }) };
    let ran = call(&pool, "run_workflow", json!({ "blueprint": asking() }), &asked, accept).await;
    let envelope = &ran["structuredContent"];
    assert_eq!(envelope["status"], "succeeded", "{ran}");
    assert_eq!(envelope["output"], "replicas=3");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    // To the client it is the elicitation of the server `mcpflow`, with the step's form.
    assert_eq!(asked[0].asking, Asking::Elicitation);
    assert_eq!(asked[0].server.as_deref(), Some("mcpflow"));
    assert_eq!(asked[0].message, "How many replicas?");
    assert_eq!(asked[0].schema.as_ref().unwrap()["properties"]["value"]["type"], "integer");

    // Declined by the client: the step fails as the blueprint says, nothing waits.
    let none: Arc<Mutex<Vec<Question>>> = Arc::default();
    let ran = call(&pool, "run_workflow", json!({ "blueprint": asking() }), &none, Answer::Decline).await;
    assert_eq!(ran["isError"], true, "{ran}");
    assert_eq!(ran["structuredContent"]["errors"][0]["code"], "INPUT_DECLINED", "{ran}");
    let run_id = ran["structuredContent"]["run_id"].as_str().unwrap().to_owned();
    let run = plain_call(&pool, "get_run", json!({ "run_id": run_id }), None).await;
    assert_eq!(run["structuredContent"]["questions"], json!([]), "{run}");

    // An answer that does not fit the form is the client's mistake, named field by field.
    let wrong: Arc<Mutex<Vec<Question>>> = Arc::default();
    let bad = Answer::Accept { content: json!({ "value": "three" }) };
    let ran = call(&pool, "run_workflow", json!({ "blueprint": asking() }), &wrong, bad).await;
    assert_eq!(ran["isError"], true, "{ran}");
    let error = &ran["structuredContent"]["errors"][0];
    assert_eq!(error["code"], "INPUT_INVALID", "{ran}");
    assert!(error["message"].as_str().unwrap().contains("value: expected integer"), "{ran}");

    pool.shutdown().await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_the_http_client_leaves_out_of_its_answer_take_the_forms_defaults() {
    let s = setup(json!({}));
    let options = HttpOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        token: TOKEN.into(),
        hosts: Vec::new(),
        limits: Default::default(),
    };
    let server = serve_http(app(vec![s.servers.clone()], None), options).await.unwrap();
    let pool = client_2025(server.addr);
    let blueprint = json!({ "blueprint": 1, "id": "deploy", "steps": [
        { "id": "what", "kind": "input", "prompt": "Deploy what?",
          "schema": { "type": "object", "required": ["name", "replicas"], "properties": {
              "name": { "type": "string" }, "replicas": { "type": "integer", "default": 2 },
              "region": { "type": "string", "enum": ["eu", "us"], "default": "eu" } } } }
    ], "output": "{{ what }}" });
    let asked: Arc<Mutex<Vec<Question>>> = Arc::default();
    let accept = Answer::Accept { content: json!({ "name": "web" }) };
    let ran = call(&pool, "run_workflow", json!({ "blueprint": blueprint }), &asked, accept).await;
    let envelope = &ran["structuredContent"];
    assert_eq!(envelope["status"], "succeeded", "{ran}");
    assert_eq!(envelope["output"], json!({ "name": "web", "replicas": 2, "region": "eu" }));
    pool.shutdown().await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_run_is_listed_and_refuses_a_run_that_waits_on_nothing() {
    let s = setup(json!({}));
    let options = HttpOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        token: TOKEN.into(),
        hosts: Vec::new(),
        limits: Default::default(),
    };
    let server = serve_http(app(vec![s.servers.clone()], None), options).await.unwrap();
    let pool = client(server.addr, TOKEN);
    let listed = pool.discover("mcpflow").await.unwrap();
    assert!(listed.tools.iter().any(|t| t.name == "answer_run"), "answer_run is listed");

    let nothing = plain_call(
        &pool,
        "answer_run",
        json!({ "run_id": "no-such-run", "answer": { "action": "accept", "content": {} } }),
        None,
    )
    .await;
    assert_eq!(nothing["isError"], true);
    assert_eq!(nothing["structuredContent"]["error"]["code"], "QUESTION_NOT_OPEN", "{nothing}");
    // A run that waits on nothing cannot be answered, whatever step is named.
    let ran = plain_call(
        &pool,
        "run_workflow",
        json!({ "blueprint": { "blueprint": 1, "id": "quick", "steps": [
        { "id": "sum", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": 1, "b": 2 } }] } }),
        None,
    )
    .await;
    let run_id = ran["structuredContent"]["run_id"].clone();
    let late = plain_call(
        &pool,
        "answer_run",
        json!({ "run_id": run_id, "step": "sum", "answer": { "action": "decline" } }),
        None,
    )
    .await;
    assert_eq!(late["structuredContent"]["error"]["code"], "QUESTION_NOT_OPEN", "{late}");

    pool.shutdown().await;
    server.stop().await.unwrap();
}
