//! `mcpflow serve` over streamable HTTP, driven by an rmcp client (the pool, pointed at
//! the mediator as a downstream server): save, run by id with progress, pipelines, the
//! guard (401 / 403), recursion through `run_workflow`, 20 concurrent runs, the cap.

use crate::setup;
use mcpflow_app::runs::{StartRun, Target, Trigger};
use mcpflow_app::{App, AppOptions};
use mcpflow_engine::{CallRequest, CallTarget, Progress, ProgressSink, RunStatus};
use mcpflow_mcp::{Approvals, Pool, PoolOptions, ServerConfigs};
use mcpflow_serve::http::{HttpOptions, HttpServer, serve_http};
use mcpflow_store::Store;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;

pub(crate) const TOKEN: &str = "test-token-0123456789";

/// An app over a temporary store with the testkit servers, allowed to start them.
pub(crate) fn app(servers: Vec<std::path::PathBuf>, max_runs: Option<usize>) -> App {
    let store = Store::open_temporary().unwrap();
    let options = AppOptions { server_files: servers, allow_all: true, max_runs, ..AppOptions::default() };
    App::with_store(store, Vec::new(), options).unwrap()
}

async fn serve(app: App, addr: SocketAddr) -> HttpServer {
    serve_http(app, HttpOptions { addr, token: TOKEN.into(), hosts: Vec::new(), limits: Default::default() })
        .await
        .unwrap()
}

/// An rmcp client pool whose one server, `mcpflow`, is the mediator at `addr`.
pub(crate) fn client(addr: SocketAddr, token: &str) -> Pool {
    let doc = json!({ "mcpServers": { "mcpflow": {
        "url": format!("http://{addr}/mcp"), "headers": { "Authorization": format!("Bearer {token}") } } } });
    let configs = ServerConfigs::parse(&doc.to_string(), "test").unwrap();
    Pool::new(configs, Approvals::new(), PoolOptions::default())
}

pub(crate) async fn call(pool: &Pool, tool: &str, args: Value, progress: Option<ProgressSink>) -> Value {
    let request = CallRequest {
        target: CallTarget::Tool {
            server: Some("mcpflow".into()),
            tool: tool.into(),
            args: args.as_object().cloned().unwrap_or_default(),
        },
        timeout: None,
        cancel: CancellationToken::new(),
        progress,
        stack: Vec::new(),
        tasks: Default::default(),
        ask: None,
        sample: None,
        trace: None,
    };
    pool.call(request).await.unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn greeter() -> Value {
    json!({ "blueprint": 1, "id": "greeter",
        "inputs": { "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] },
        "steps": [
            { "id": "hello", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi {{ inputs.name }}" } },
            { "id": "pause", "kind": "wait", "ms": 20 },
            { "id": "sum", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": 1, "b": 2 } }
        ],
        "output": "{{ hello }} {{ sum.sum }}" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_client_saves_runs_by_id_with_progress_and_runs_a_pipeline_over_http() {
    let s = setup(json!({}));
    let server = serve(app(vec![s.servers.clone()], None), "127.0.0.1:0".parse().unwrap()).await;
    let pool = client(server.addr, TOKEN);

    let tools = pool.discover("mcpflow").await.unwrap();
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"run_workflow") && names.contains(&"run_pipeline"), "{names:?}");

    let saved = call(&pool, "save_workflow", json!({ "blueprint": greeter() }), None).await;
    assert_eq!(saved["isError"], false, "{saved}");
    assert_eq!(saved["structuredContent"]["rev"], 1);

    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink: ProgressSink = {
        let seen = seen.clone();
        Arc::new(move |p| seen.lock().unwrap().push(p))
    };
    let ran = call(&pool, "run_workflow", json!({ "id": "greeter", "inputs": { "name": "http" } }), Some(sink)).await;
    let envelope = &ran["structuredContent"];
    assert_eq!(envelope["status"], "succeeded", "{ran}");
    assert_eq!(envelope["output"], "hi http 3.0");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "one progress notification per step: {seen:?}");
    assert_eq!(seen.last().map(|p| (p.progress, p.total)), Some((3.0, Some(3.0))));

    let pipe = call(
        &pool,
        "run_pipeline",
        json!({ "steps": [
        { "id": "a", "server": "echo", "tool": "add", "args": { "a": 20, "b": 1 } },
        { "id": "b", "server": "echo", "tool": "multiply", "args": { "a": "{{ a.sum }}", "b": 2 } }
    ] }),
        None,
    )
    .await;
    let report = &pipe["structuredContent"];
    assert_eq!(report["aborted"], false, "{pipe}");
    assert_eq!(report["steps"][1]["result"]["product"], 42.0);

    let run = call(&pool, "get_run", json!({ "run_id": envelope["run_id"] }), None).await;
    assert_eq!(run["structuredContent"]["status"], "succeeded");
    pool.shutdown().await;
    server.stop().await.unwrap();
}

/// Sends one raw HTTP request and returns the status code.
pub(crate) async fn status(addr: SocketAddr, host: &str, extra: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_needs_the_token_401_and_refuses_foreign_hosts_and_origins_403() {
    let server = serve(app(Vec::new(), None), "127.0.0.1:0".parse().unwrap()).await;
    let addr = server.addr;
    let host = format!("127.0.0.1:{}", addr.port());
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    assert_eq!(status(addr, &host, "").await, 401, "no token");
    assert_eq!(status(addr, &host, "Authorization: Bearer wrong\r\n").await, 401, "wrong token");
    assert_eq!(status(addr, &format!("evil.example:{}", addr.port()), &auth).await, 403, "foreign Host");
    let origin = format!("{auth}Origin: https://evil.example\r\n");
    assert_eq!(status(addr, &host, &origin).await, 403, "foreign Origin");
    let ok = status(addr, &host, &auth).await;
    assert!(ok != 401 && ok != 403, "the right token and host pass the guard (got {ok})");
    // A real client with a wrong token is refused too.
    let pool = client(addr, "not-the-token");
    let refused = pool.discover("mcpflow").await.map(|_| ()).unwrap_err();
    assert!(refused.to_string().contains("401") || refused.to_string().to_lowercase().contains("auth"), "{refused}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blueprint_whose_run_workflow_reaches_itself_is_refused() {
    // The mediator's own app lists the mediator as a downstream server, so a blueprint can
    // call `run_workflow` on itself.
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers.json");
    let doc = json!({ "mcpServers": { "self": {
        "url": format!("http://127.0.0.1:{port}/mcp"), "headers": { "Authorization": format!("Bearer {TOKEN}") } } } });
    std::fs::write(&servers, doc.to_string()).unwrap();
    let app = app(vec![servers], None);
    let server = serve(app.clone(), SocketAddr::from(([127, 0, 0, 1], port))).await;
    app.save_blueprint(&json!({ "blueprint": 1, "id": "ouroboros", "steps": [
        { "id": "again", "kind": "tool", "server": "self", "tool": "run_workflow", "args": { "id": "ouroboros" } }
    ] }))
    .unwrap();
    let envelope =
        app.run_to_end(StartRun::new(Target::Stored("ouroboros".into()), json!({}), Trigger::Cli)).await.unwrap();
    assert_eq!(envelope.status, RunStatus::Failed);
    let message = &envelope.errors[0].message;
    assert!(message.contains("WORKFLOW_RECURSION") && message.contains("ouroboros → ouroboros"), "{message}");
    app.shutdown().await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_runs_over_http_all_complete() {
    let s = setup(json!({}));
    let server = serve(app(vec![s.servers.clone()], None), "127.0.0.1:0".parse().unwrap()).await;
    let pool = client(server.addr, TOKEN);
    let saved = call(&pool, "save_workflow", json!({ "blueprint": greeter() }), None).await;
    assert_eq!(saved["isError"], false, "{saved}");
    let runs = (0..20).map(|i| {
        let pool = &pool;
        async move {
            let r = call(pool, "run_workflow", json!({ "id": "greeter", "inputs": { "name": format!("n{i}") } }), None)
                .await;
            r["structuredContent"].clone()
        }
    });
    let envelopes = futures::future::join_all(runs).await;
    for (i, e) in envelopes.iter().enumerate() {
        assert_eq!(e["status"], "succeeded", "run {i}: {e}");
        assert_eq!(e["output"], format!("hi n{i} 3.0"));
    }
    let ids: std::collections::BTreeSet<_> = envelopes.iter().map(|e| e["run_id"].to_string()).collect();
    assert_eq!(ids.len(), 20, "20 distinct runs");
    pool.shutdown().await;
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_a_run_is_refused_with_a_busy_error() {
    let app = app(Vec::new(), Some(1));
    let slow = json!({ "blueprint": 1, "id": "slow", "steps": [{ "id": "w", "kind": "wait", "ms": 5000 }] });
    let first = app.start_run(StartRun::new(Target::Inline(slow.clone()), json!({}), Trigger::Mcp)).unwrap();
    let second = app.start_run(StartRun::new(Target::Inline(slow), json!({}), Trigger::Mcp)).unwrap_err();
    assert_eq!(second.code(), "RUNS_BUSY");
    assert!(second.to_string().contains("try again"), "{second}");
    app.control(&first.run_id, mcpflow_engine::Control::Cancel).unwrap();
    assert_eq!(first.finish().await.status, RunStatus::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_pipeline_step_aborts_and_skips_the_rest_unless_it_continues_on_error() {
    let s = setup(json!({}));
    let server = serve(app(vec![s.servers.clone()], None), "127.0.0.1:0".parse().unwrap()).await;
    let pool = client(server.addr, TOKEN);
    let steps = |continue_on_error: bool| {
        json!({ "steps": [
            { "id": "a", "server": "echo", "tool": "add", "args": { "a": 1, "b": 1 } },
            { "id": "b", "server": "faulty", "tool": "is_error", "args": { "message": "no such pod" }, "continue_on_error": continue_on_error },
            { "id": "c", "server": "echo", "tool": "echo", "args": { "message": "after {{ a.sum }}" } }
        ] })
    };
    let aborted = call(&pool, "run_pipeline", steps(false), None).await;
    let r = &aborted["structuredContent"];
    assert_eq!(r["aborted"], true, "{aborted}");
    assert_eq!(aborted["isError"], true, "an aborted pipeline failed: {aborted}");
    let statuses: Vec<&str> = r["steps"].as_array().unwrap().iter().map(|s| s["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["succeeded", "failed", "skipped"]);
    assert!(r["steps"][1]["error"]["message"].as_str().unwrap().contains("no such pod"), "{r}");
    assert!(r["total_duration_ms"].is_u64());

    let continued = call(&pool, "run_pipeline", steps(true), None).await;
    let r = &continued["structuredContent"];
    assert_eq!(r["aborted"], false, "{continued}");
    assert_eq!(continued["isError"], false, "{continued}");
    assert_eq!(r["status"], "partial");
    assert_eq!(r["steps"][2]["result"], "after 2.0");
    pool.shutdown().await;
    server.stop().await.unwrap();
}

/// A blueprint an agent sends as text is read by the same strict reader as `mcpflow
/// validate`: a key named twice is `JSON_DUPLICATE_KEY` at its line and column, for
/// `validate_workflow` and `save_workflow` alike, and nothing is saved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blueprint_given_as_text_with_a_duplicate_key_is_refused_at_its_position() {
    let server = serve(app(Vec::new(), None), "127.0.0.1:0".parse().unwrap()).await;
    let pool = client(server.addr, TOKEN);
    // The second `value` is on line 5, column 50 (the issue's example).
    let text = "{\n  \"blueprint\": 1,\n  \"id\": \"dup\",\n  \"steps\": [\n    {\"id\": \"a\", \"kind\": \"transform\", \"value\": 1, \"value\": 2}\n  ]\n}\n";
    assert_eq!(text.lines().nth(4).unwrap().find("\"value\": 2").unwrap() + 1, 50);

    let checked = call(&pool, "validate_workflow", json!({ "blueprint": text }), None).await;
    let report = &checked["structuredContent"];
    assert_eq!(report["valid"], false, "{checked}");
    let first = &report["diagnostics"][0];
    assert_eq!(first["code"], "JSON_DUPLICATE_KEY", "{checked}");
    assert_eq!(first["position"], json!({ "line": 5, "col": 50 }), "{checked}");

    let saved = call(&pool, "save_workflow", json!({ "blueprint": text }), None).await;
    assert_eq!(saved["isError"], true, "{saved}");
    let diagnostics = &saved["structuredContent"]["error"]["diagnostics"];
    assert_eq!(diagnostics[0]["code"], "JSON_DUPLICATE_KEY", "{saved}");
    assert_eq!(diagnostics[0]["position"], json!({ "line": 5, "col": 50 }), "{saved}");
    let listed = call(&pool, "list_workflows", json!({}), None).await;
    assert_eq!(listed["structuredContent"]["workflows"], json!([]), "{listed}");

    // The same text without the duplicate is valid: the refusal was the duplicate.
    let clean = text.replace(", \"value\": 2", "");
    let checked = call(&pool, "validate_workflow", json!({ "blueprint": clean }), None).await;
    assert_eq!(checked["structuredContent"]["valid"], true, "{checked}");
    pool.shutdown().await;
    server.stop().await.unwrap();
}

/// A 2026-07-28 request to `mcpflow serve --http`, with its `Mcp-Method` header.
async fn request_2026(addr: SocketAddr, header_method: &str, method: &str) -> (u16, String) {
    let meta = json!({
        "io.modelcontextprotocol/clientInfo": { "name": "t", "version": "1" },
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": { "_meta": meta } });
    let answer = mcpflow_auth::trust::client_builder()
        .build()
        .unwrap()
        .post(format!("http://{addr}/mcp"))
        .bearer_auth(TOKEN)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", header_method)
        .json(&body)
        .send()
        .await
        .unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_tools_list_carries_caching_hints_and_a_method_header_that_lies_is_refused() {
    let server = serve(app(Vec::new(), None), "127.0.0.1:0".parse().unwrap()).await;
    // SEP-2549: the list says how long it stays fresh and whose it is.
    let (status, text) = request_2026(server.addr, "tools/list", "tools/list").await;
    assert_eq!(status, 200, "{text}");
    let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&text);
    let answer: Value = serde_json::from_str(data).unwrap();
    assert_eq!(answer["result"]["ttlMs"], 0, "{answer}");
    assert_eq!(answer["result"]["cacheScope"], "private", "{answer}");
    assert!(answer["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{answer}");
    // SEP-2243: a middlebox routes on `Mcp-Method`; one that contradicts the body is refused.
    let (status, text) = request_2026(server.addr, "tools/call", "tools/list").await;
    assert_eq!(status, 400, "{text}");
    assert!(text.contains("does not match body method"), "{text}");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exposed_blueprint_declares_its_output_schema_and_answers_with_its_output_as_structured_content() {
    let server = serve(app(Vec::new(), None), "127.0.0.1:0".parse().unwrap()).await;
    let pool = client(server.addr, TOKEN);
    let shaped = json!({ "blueprint": 1, "id": "shaped", "expose": true,
        "inputs": { "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] },
        "steps": [ { "id": "twice", "kind": "transform", "value": "{{ [inputs.n, inputs.n] }}" } ],
        "output": { "pair": "{{ twice }}", "label": "double" } });
    let liar = json!({ "blueprint": 1, "id": "liar", "expose": true,
        "steps": [ { "id": "word", "kind": "transform", "value": "many" } ],
        "output": { "count": "{{ word }}" },
        "output_schema": { "type": "object", "properties": { "count": { "type": "integer" } }, "required": ["count"] } });
    let plain = json!({ "blueprint": 1, "id": "plain", "expose": true,
        "steps": [ { "id": "word", "kind": "transform", "value": "hi" } ], "output": "{{ word }}" });
    for blueprint in [shaped, liar, plain] {
        let saved = call(&pool, "save_workflow", json!({ "blueprint": blueprint }), None).await;
        assert_eq!(saved["isError"], false, "{saved}");
    }

    // The tools say what they answer: derived from an object output, or as declared (a
    // client connecting now lists them).
    let lister = client(server.addr, TOKEN);
    let tools = lister.discover("mcpflow").await.unwrap().tools.clone();
    lister.shutdown().await;
    let schema_of = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no tool {name}"));
        tool.output_schema.as_ref().map(|s| Value::Object((**s).clone()))
    };
    let derived = schema_of("shaped").expect("an object output gives an output schema");
    assert_eq!(derived["type"], "object");
    assert_eq!(derived["required"], json!(["pair", "label"]), "{derived}");
    assert_eq!(schema_of("liar").unwrap()["properties"]["count"]["type"], "integer");
    assert_eq!(schema_of("plain"), None, "a string output has no object schema");

    // The answer is the output itself; the run is in `_meta`.
    let answer = call(&pool, "shaped", json!({ "n": 21 }), None).await;
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(answer["structuredContent"], json!({ "pair": [21, 21], "label": "double" }), "{answer}");
    let run = &answer["_meta"]["mcpflow/run"];
    assert_eq!(run["status"], "succeeded", "{answer}");
    assert!(run["run_id"].as_str().is_some_and(|id| !id.is_empty()), "{answer}");
    assert!(run.get("output").is_none(), "the output is not repeated: {answer}");

    // An output that breaks the declared schema is an error saying where, not bad data.
    let answer = call(&pool, "liar", json!({}), None).await;
    assert_eq!(answer["isError"], true, "{answer}");
    let error = &answer["structuredContent"]["error"];
    assert_eq!(error["code"], "OUTPUT_NOT_AS_DECLARED", "{answer}");
    assert!(error["message"].as_str().unwrap().contains("/count"), "{answer}");

    // Without a schema, the envelope as before.
    let answer = call(&pool, "plain", json!({}), None).await;
    assert_eq!(answer["structuredContent"]["output"], "hi", "{answer}");
    pool.shutdown().await;
    server.stop().await.unwrap();
}

/// `test_workflow`: an agent saves a finished run as a test and replays it with no server;
/// a draft that calls the tool differently fails (isError), naming why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_workflow_saves_a_run_as_a_test_and_replays_it_without_servers() {
    let s = setup(json!({}));
    let options = AppOptions { server_files: vec![s.servers.clone()], allow_all: true, ..AppOptions::default() };
    let app = App::open(&s.dir.path().join("home"), options).unwrap();
    let server = serve(app, "127.0.0.1:0".parse().unwrap()).await;
    let pool = client(server.addr, TOKEN);
    let saved = call(&pool, "save_workflow", json!({ "blueprint": greeter() }), None).await;
    assert_eq!(saved["isError"], false, "{saved}");
    let none = call(&pool, "test_workflow", json!({ "id": "greeter" }), None).await;
    assert_eq!(
        (none["isError"].clone(), none["structuredContent"]["error"]["code"].clone()),
        (json!(true), json!("NO_TESTS")),
        "{none}"
    );

    let ran = call(&pool, "run_workflow", json!({ "id": "greeter", "inputs": { "name": "ada" } }), None).await;
    let run_id = ran["structuredContent"]["run_id"].as_str().unwrap().to_owned();
    let tested = call(&pool, "test_workflow", json!({ "id": "greeter", "save_run": run_id }), None).await;
    assert_eq!(tested["isError"], false, "{tested}");
    let answer = &tested["structuredContent"];
    assert_eq!((answer["passed"].clone(), answer["failed"].clone()), (json!(1), json!(0)), "{tested}");
    assert_eq!(answer["saved"]["exchanges"], 2, "{tested}");

    // A draft that sends another message: the recorded exchange does not match.
    let mut draft = greeter();
    draft["steps"][0]["args"]["message"] = json!("hello {{ inputs.name }}");
    let broken = call(&pool, "test_workflow", json!({ "id": "greeter", "blueprint": draft }), None).await;
    assert_eq!(broken["isError"], true, "{broken}");
    let failure = broken["structuredContent"]["tests"][0]["failure"].as_str().unwrap_or_default().to_owned();
    assert!(failure.contains("CASSETTE_UNMATCHED") || failure.contains("echo"), "{broken}");
    pool.shutdown().await;
    server.stop().await.unwrap();
}
