//! Configured servers through the app: add, approve (kept in the store), test a
//! connection; an unapproved command does not start.

use mcpflow_app::{App, AppOptions};
use mcpflow_store::Store;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_needs_approval_to_start_and_the_approval_outlives_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open(dir.path()).unwrap().store, Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"], "env": { "TOKEN": "${env:PATH}" } })).unwrap();

    let view = &app.servers()[0];
    assert_eq!((view.name.as_str(), view.transport, view.approved), ("echo", "stdio", false));
    let command = view.command.clone().unwrap();
    assert!(command.ends_with("echo (env: TOKEN)"), "the exact command line, env names only: {command}");
    let refused = app.test_server("echo").await.unwrap_err();
    assert_eq!(refused.code(), "SERVER_NOT_APPROVED", "{refused}");

    assert_eq!(app.approve_server("echo").unwrap(), command);
    let tools = app.test_server("echo").await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo" && t.server == "echo"), "{tools:?}");
    app.shutdown().await;
    drop(app);

    // sled lets go of its lock file when its last background thread has stopped, which
    // on a busy machine can be a moment after the app is dropped.
    let mut opened = Store::open(dir.path());
    for _ in 0..50 {
        if opened.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        opened = Store::open(dir.path());
    }
    let again = App::with_store(opened.unwrap().store, Vec::new(), AppOptions::default()).unwrap();
    assert!(again.servers()[0].approved, "the consent is kept in the store");
    assert_eq!(again.store().servers().unwrap()[0].1["env"]["TOKEN"], "${env:PATH}", "stored unresolved");
    let err = again.approve_server("nope").unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_FOUND");
    again.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_asks_for_the_servers_it_starts_its_own_over_the_configured_and_approving_one_lets_it_run() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"] })).unwrap();
    app.put_server("unused", &json!({ "command": bin, "args": ["faulty"] })).unwrap();
    // The document brings its own `math` (the echo fixture under another name) and uses
    // the configured `echo`; `ghost` is known to no one.
    let doc = json!({
        "blueprint": 1, "id": "needs",
        "servers": { "math": { "command": bin, "args": ["echo", "--latency-ms", "1"] } },
        "steps": [
            { "id": "a", "kind": "tool", "server": "math", "tool": "add", "args": { "a": 1, "b": 2 } },
            { "id": "each", "kind": "loop", "for_each": "{{ `[1]` }}", "steps": [
                { "id": "b", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "sum {{ a.sum }}" } }
            ] },
            { "id": "c", "kind": "tool", "server": "ghost", "tool": "x", "after": ["a"] }
        ]
    });
    let asked = app.run_servers(&doc).unwrap();
    let names: Vec<_> = asked.iter().map(|s| (s.name.as_str(), s.approved)).collect();
    assert_eq!(names, [("math", false), ("echo", false)], "in step order, the loop body included; {asked:?}");
    let math = asked[0].command.clone().unwrap();
    assert!(math.contains("echo --latency-ms 1"), "the document's own command: {math}");

    assert_eq!(app.approve_run_server(&doc, "math").unwrap(), math);
    assert_eq!(app.approve_run_server(&doc, "echo").unwrap(), asked[1].command.clone().unwrap());
    assert!(app.run_servers(&doc).unwrap().iter().all(|s| s.approved));
    assert!(!app.servers().iter().any(|s| s.name == "unused" && s.approved), "only what was asked is approved");
    assert_eq!(app.approve_run_server(&doc, "ghost").unwrap_err().code(), "SERVER_NOT_FOUND");

    // The approvals are the ones the run checks: it gets past both servers.
    let mut runnable = doc.clone();
    runnable["steps"].as_array_mut().unwrap().pop();
    let spec = mcpflow_app::runs::StartRun::new(
        mcpflow_app::runs::Target::Inline(runnable),
        json!({}),
        mcpflow_app::runs::Trigger::Studio,
    );
    let envelope = app.run_to_end(spec).await.unwrap();
    assert_eq!(envelope.status, mcpflow_engine::RunStatus::Succeeded, "{envelope:?}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validating_checks_tools_of_the_servers_started_so_far_and_starts_none() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"] })).unwrap();
    app.approve_server("echo").unwrap();
    let doc = json!({ "blueprint": 1, "id": "typos", "steps": [
        { "id": "a", "kind": "tool", "server": "echo", "tool": "ecco", "args": { "message": "hi" } },
        { "id": "b", "kind": "tool", "server": "echo", "tool": "echo", "args": {} },
        { "id": "c", "kind": "tool", "server": "ehco", "tool": "echo" }
    ] });
    let codes = |app: &App| -> Vec<(String, String)> {
        app.validate(&doc).diagnostics.iter().map(|d| (d.code.name().to_owned(), d.pointer.clone())).collect()
    };

    // Not started yet: its tools are unknown, so only the unconfigured server is flagged.
    assert_eq!(codes(&app), [("SERVER_UNKNOWN".to_owned(), "/steps/2/server".to_owned())]);
    assert_eq!(app.pool().pid("echo").await, None, "validating started nothing");

    app.test_server("echo").await.unwrap();
    let found = codes(&app);
    assert!(found.contains(&("TOOL_UNKNOWN".to_owned(), "/steps/0/tool".to_owned())), "{found:?}");
    assert!(found.contains(&("ARG_MISSING".to_owned(), "/steps/1".to_owned())), "{found:?}");
    let report = app.validate(&doc);
    let typo = report.diagnostics.iter().find(|d| d.code.name() == "TOOL_UNKNOWN").unwrap();
    assert_eq!(typo.hint.as_deref(), Some("did you mean `echo`?"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_shows_a_blueprints_http_server_that_sends_a_variable_as_needing_consent_until_approved() {
    let dir = tempfile::tempdir().unwrap();
    let app = App::with_store(Store::open(dir.path()).unwrap().store, Vec::new(), AppOptions::default()).unwrap();
    // The user's own entries are trusted; a blueprint's server under a name nobody
    // configured (a configured one would win: `SERVER_SHADOWED`) asks first.
    app.put_server("local", &json!({ "url": "http://127.0.0.1:9/mcp" })).unwrap();
    assert!(app.servers()[0].approved && app.servers()[0].command.is_none());
    let doc = json!({ "blueprint": 1, "id": "b",
        "servers": { "remote": { "url": "http://127.0.0.1:9/mcp", "headers": { "Authorization": "Bearer ${env:PATH}" } } },
        "steps": [{ "id": "a", "kind": "tool", "server": "remote", "tool": "t" }] });
    let view = &app.run_servers(&doc).unwrap()[0];
    assert_eq!((view.transport, view.approved), ("http", false));
    let shown = view.command.clone().unwrap();
    assert_eq!(shown, "URL http://127.0.0.1:9/mcp (sends: PATH)", "the variable's name, never its value");
    assert_eq!(app.approve_run_server(&doc, "remote").unwrap(), shown);
    assert!(app.run_servers(&doc).unwrap()[0].approved, "approved for this endpoint");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_documents_server_never_shadows_a_configured_one_of_the_same_name_and_each_step_is_told() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"] })).unwrap();
    // The document brings its own `echo` with a relative path that exists nowhere (as
    // the examples did): the configured `echo` is the one asked about, approved and run.
    let doc = json!({
        "blueprint": 1, "id": "shadow",
        "servers": { "echo": { "command": "node", "args": ["node_modules/nowhere/index.js"] } },
        "steps": [
            { "id": "a", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": 1, "b": 2 } },
            { "id": "each", "kind": "loop", "for_each": [1], "steps": [
                { "id": "b", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "x" } }
            ] }
        ]
    });
    let shadowed: Vec<(String, String, Option<String>)> = app
        .validate(&doc)
        .diagnostics
        .iter()
        .filter(|d| d.code.name() == "SERVER_SHADOWED")
        .map(|d| (d.pointer.clone(), d.message.clone(), d.step.clone()))
        .collect();
    assert_eq!(shadowed.len(), 2, "{shadowed:?}");
    assert_eq!((shadowed[0].0.as_str(), shadowed[0].2.as_deref()), ("/steps/0/server", Some("a")));
    assert_eq!((shadowed[1].0.as_str(), shadowed[1].2.as_deref()), ("/steps/1/steps/0/server", Some("b")));
    let message = &shadowed[0].1;
    assert!(message.contains("node_modules/nowhere/index.js") && message.contains(&bin), "names both: {message}");
    assert!(app.validate(&doc).diagnostics.iter().all(|d| d.position.is_some()), "positions for the studio");

    let asked = app.run_servers(&doc).unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].command, app.servers()[0].command, "the configured command is the one to approve");
    app.approve_run_server(&doc, "echo").unwrap();
    assert!(app.servers()[0].approved, "approving for the run approves what the Servers panel shows");
    let spec = mcpflow_app::runs::StartRun::new(
        mcpflow_app::runs::Target::Inline(doc.clone()),
        json!({}),
        mcpflow_app::runs::Trigger::Studio,
    );
    let envelope = app.run_to_end(spec).await.unwrap();
    assert_eq!(envelope.status, mcpflow_engine::RunStatus::Succeeded, "{envelope:?}");

    // No clash, no warning.
    let mut own = doc.clone();
    own["servers"] = json!({});
    assert!(app.validate(&own).diagnostics.iter().all(|d| d.code.name() != "SERVER_SHADOWED"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_server_is_explained_in_the_studios_words_and_the_clis_in_its_own() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let doc = json!({ "blueprint": 1, "id": "asks", "steps": [
        { "id": "a", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "hi" } }
    ] });
    let run = |front: mcpflow_app::advice::Front| {
        let doc = doc.clone();
        let bin = bin.clone();
        async move {
            let options = AppOptions { front, ..AppOptions::default() };
            let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), options).unwrap();
            app.put_server("echo", &json!({ "command": bin, "args": ["echo"] })).unwrap();
            let spec = mcpflow_app::runs::StartRun::new(
                mcpflow_app::runs::Target::Inline(doc),
                json!({}),
                mcpflow_app::runs::Trigger::Studio,
            );
            let envelope = app.run_to_end(spec).await.unwrap();
            app.shutdown().await;
            assert_eq!(envelope.errors[0].code, "SERVER_NOT_APPROVED", "{envelope:?}");
            envelope.errors[0].message.clone()
        }
    };
    let studio = run(mcpflow_app::advice::Front::Studio).await;
    assert!(studio.contains(&bin), "what would start: {studio}");
    assert!(studio.contains("Servers panel") && !studio.contains("--allow-server"), "GUI words: {studio}");
    let cli = run(mcpflow_app::advice::Front::Cli).await;
    assert!(cli.contains("--allow-server echo"), "{cli}");
}

/// The studio's Test shows the protocol era each server spoke: the testkit fixtures
/// (rmcp 3.9) answer `server/discover` (2026-07-28); server-everything (TypeScript SDK
/// 1.x) only the `initialize` handshake (2025-11-25). The palette's listing says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_test_reports_the_era_each_server_spoke() {
    let dir = tempfile::tempdir().unwrap();
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open(dir.path()).unwrap().store, Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"] })).unwrap();
    app.put_server("everything", &crate::reference::node_server("server-everything", &["stdio"])).unwrap();
    app.approve_server("echo").unwrap();
    app.approve_server("everything").unwrap();

    let echo = app.test_connection("echo").await.unwrap();
    assert_eq!(echo.protocol_version.as_deref(), Some("2026-07-28"));
    assert!(echo.tools.iter().any(|t| t.name == "echo"), "{:?}", echo.tools);
    let everything = app.test_connection("everything").await.unwrap();
    assert_eq!(everything.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(everything.tools.iter().any(|t| t.name == "echo"), "{:?}", everything.tools);
    assert_eq!(app.offer("everything").await.unwrap().protocol_version.as_deref(), Some("2025-11-25"));
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_switch_may_ask_the_model_is_written_on_the_stored_entry_and_keeps_the_rest_of_it() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    let entry = json!({ "command": bin, "args": ["echo"], "env": { "TOKEN": "${env:PATH}" }, "autoApprove": ["x"] });
    app.put_server("echo", &entry).unwrap();
    assert!(!app.servers()[0].sampling, "off by default");

    app.set_server_sampling("echo", true).unwrap();
    let stored = app.store().servers().unwrap()[0].1.clone();
    let mut expected = entry.clone();
    expected["sampling"] = json!(true);
    assert_eq!(stored, expected, "the entry as written, with the switch on");
    assert!(app.servers()[0].sampling, "the list shows it on");
    assert_eq!(app.servers()[0].config["sampling"], json!(true));

    app.set_server_sampling("echo", false).unwrap();
    assert_eq!(app.store().servers().unwrap()[0].1["sampling"], json!(false));
    assert!(!app.servers()[0].sampling);
    // The command line did not change: no new approval is needed for the switch.
    app.approve_server("echo").unwrap();
    app.set_server_sampling("echo", true).unwrap();
    assert!(app.servers()[0].approved, "the switch is not part of what consent approves");

    let err = app.set_server_sampling("ghost", true).unwrap_err();
    assert_eq!(err.code(), "SERVER_NOT_FOUND", "{err}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_listing_is_remembered_for_when_it_is_not_started_and_forgotten_with_the_server() {
    let bin = mcpflow_testkit::binary().display().to_string();
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"] })).unwrap();
    assert!(app.last_listing("echo").is_none(), "never listed");
    assert_eq!(app.offer("echo").await.unwrap_err().code(), "SERVER_NOT_APPROVED");
    assert!(app.last_listing("echo").is_none(), "a refusal lists nothing");

    app.approve_server("echo").unwrap();
    let offer = app.offer("echo").await.unwrap();
    let last = app.last_listing("echo").expect("remembered when listed");
    assert_eq!(last.offer, offer, "the listing as the palette showed it");
    assert!(last.offer.tools.iter().any(|t| t.name == "echo" && t.server == "echo"), "{:?}", last.offer.tools);
    assert!(chrono::DateTime::parse_from_rfc3339(&last.listed_at).is_ok(), "{}", last.listed_at);

    // Its command changes: not approved any more, and its last listing still stands.
    app.put_server("echo", &json!({ "command": bin, "args": ["echo"], "env": { "NEW": "1" } })).unwrap();
    assert!(!app.servers()[0].approved);
    assert_eq!(app.last_listing("echo").map(|l| l.offer), Some(offer));

    app.delete_server("echo").unwrap();
    assert!(app.last_listing("echo").is_none(), "forgotten with the server");
    app.shutdown().await;
}

/// `demo/listings.json`, which the studio remembers at first start so the demo servers'
/// tools are in the palette before anything is approved, is what those servers list now.
/// `MCPFLOW_BLESS=1` writes it anew from them (after a server changed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_demo_listings_are_what_the_demo_servers_list() {
    use mcpflow_app::listings::Shipped;
    let repo = crate::repo();
    let bin = mcpflow_testkit::binary().display().to_string();
    let npm = |package: &str| {
        repo.join("node_modules/@modelcontextprotocol").join(package).join("dist/index.js").display().to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    // The servers as src-tauri/src/seed.rs configures them.
    let servers = [
        ("cluster", json!({ "command": bin, "args": ["cluster-sim"] })),
        (
            "memory",
            json!({ "command": "node", "args": [npm("server-memory")],
            "env": { "MEMORY_FILE_PATH": dir.path().join("memory.json").display().to_string() }, "max_concurrency": 1 }),
        ),
        ("everything", json!({ "command": "node", "args": [npm("server-everything"), "stdio"] })),
        ("echo", json!({ "command": bin, "args": ["echo"] })),
        ("faulty", json!({ "command": bin, "args": ["faulty"] })),
    ];
    let app = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    let mut live = std::collections::BTreeMap::new();
    for (name, config) in &servers {
        app.put_server(name, config).unwrap();
        app.approve_server(name).unwrap();
        live.insert((*name).to_owned(), app.offer(name).await.unwrap());
    }
    app.shutdown().await;

    let file = repo.join("demo/listings.json");
    if std::env::var("MCPFLOW_BLESS").is_ok_and(|v| v == "1") {
        let shipped = Shipped { listed_at: chrono::Utc::now().to_rfc3339(), servers: live.clone() };
        std::fs::write(&file, serde_json::to_string_pretty(&shipped).unwrap() + "\n").unwrap();
    }
    let shipped: Shipped = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    for (name, offer) in &live {
        assert_eq!(
            shipped.servers.get(name),
            Some(offer),
            "demo/listings.json differs from what `{name}` lists now: run `MCPFLOW_BLESS=1 cargo test -p mcpflow-app \
             --test it the_shipped_demo_listings` and commit the file"
        );
    }
    assert_eq!(shipped.servers.len(), live.len(), "demo/listings.json lists servers the studio does not seed");

    // Remembered for configured servers never listed here, and only for them.
    let fresh = App::with_store(Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    fresh.put_server("echo", &servers[3].1).unwrap();
    assert_eq!(fresh.remember_shipped(&shipped), ["echo"]);
    assert_eq!(fresh.last_listing("echo").map(|l| l.offer), Some(live["echo"].clone()));
    assert!(fresh.remember_shipped(&shipped).is_empty(), "a listing made here is not replaced");
    fresh.shutdown().await;
}
