//! Blueprints that succeed: pipelines, loops, sub-workflows, saved values.

use crate::{repo, run, setup};
use mcpflow_engine::RunStatus;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_pipes_tool_results_through_templates() {
    let s = setup(json!({}));
    let ran = run(&s, json!({ "blueprint": 1, "id": "pipe",
        "inputs": { "type": "object", "properties": { "a": { "type": "number" } } },
        "steps": [
            { "id": "sum", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": "{{ inputs.a }}", "b": 2 } },
            { "id": "times", "kind": "tool", "tool": "multiply", "args": { "a": "{{ prev.sum }}", "b": 10 } },
            { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "result={{ times.product }}" } }
        ] }), &["a=40"]).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output, json!("result=420.0"), "the echo fixture computes in floating point");
    assert_eq!(ran.envelope.summary.tool_calls, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_fans_out_over_the_cluster_with_bounded_concurrency() {
    let s = setup(json!({}));
    let ran = run(&s, json!({ "blueprint": 1, "id": "ns",
        "steps": [
            { "id": "namespaces", "kind": "tool", "server": "cluster", "tool": "list_namespaces" },
            { "id": "each", "kind": "loop", "for_each": "{{ namespaces.items }}", "as": "ns", "concurrency": 8, "steps": [
                { "id": "svc", "kind": "tool", "server": "cluster", "tool": "list_resources",
                  "args": { "kind": "services", "namespace": "{{ ns.metadata.name }}" } }
            ], "collect": "{{ length(svc.items) }}" },
            { "id": "total", "kind": "transform", "value": "{{ sum(each) }}" }
        ] }), &[]).await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output, json!(113.0), "cluster-sim has 113 services");
    assert_eq!(ran.envelope.summary.tool_calls, 39);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_workflow_runs_from_the_folder_and_returns_its_output() {
    let s = setup(json!({}));
    std::fs::write(
        s.dir.path().join("child.blueprint.json"),
        json!({ "blueprint": 1, "id": "child", "inputs": { "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] },
            "steps": [{ "id": "sq", "kind": "tool", "server": "echo", "tool": "multiply", "args": { "a": "{{ inputs.n }}", "b": "{{ inputs.n }}" } }],
            "output": "{{ sq.product }}" })
        .to_string(),
    )
    .unwrap();
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "parent", "steps": [
        { "id": "call", "kind": "workflow", "workflow": "child", "args": { "n": 7 } }
    ] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Succeeded, "{:?}", ran.envelope.errors);
    assert_eq!(ran.envelope.output, json!(49.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_workflows_that_call_each_other_are_stopped() {
    let s = setup(json!({}));
    for (me, other) in [("ping", "pong"), ("pong", "ping")] {
        std::fs::write(
            s.dir.path().join(format!("{me}.blueprint.json")),
            json!({ "blueprint": 1, "id": me, "steps": [{ "id": "call", "kind": "workflow", "workflow": other }] })
                .to_string(),
        )
        .unwrap();
    }
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "top", "steps": [{ "id": "go", "kind": "workflow", "workflow": "ping" }] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Failed);
    let e = &ran.envelope.errors[0];
    assert_eq!(e.code, "WORKFLOW_RECURSION", "{e:?}");
    assert!(e.message.contains("ping → pong → ping"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_values_reach_the_next_run() {
    let s = setup(json!({}));
    let bp = json!({ "blueprint": 1, "id": "counter", "steps": [
        { "id": "next", "kind": "transform", "value": "{{ sum([saved.count || `0`, `1`]) }}", "save": "count" }
    ] });
    let first = run(&s, bp.clone(), &[]).await;
    let second = run(&s, bp, &[]).await;
    assert_eq!(first.envelope.output, json!(1.0));
    assert_eq!(second.envelope.output, json!(2.0));
    let _ = repo();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sub_workflows_nested_deeper_than_the_limit_are_stopped() {
    let s = setup(json!({}));
    // level0 → level1 → … → level9: ten distinct blueprints, no cycle.
    for i in 0..10 {
        let steps = if i < 9 {
            json!([{ "id": "down", "kind": "workflow", "workflow": format!("level{}", i + 1) }])
        } else {
            json!([{ "id": "bottom", "kind": "transform", "value": "reached" }])
        };
        std::fs::write(
            s.dir.path().join(format!("level{i}.blueprint.json")),
            json!({ "blueprint": 1, "id": format!("level{i}"), "steps": steps }).to_string(),
        )
        .unwrap();
    }
    let ran = run(
        &s,
        json!({ "blueprint": 1, "id": "top", "steps": [{ "id": "go", "kind": "workflow", "workflow": "level0" }] }),
        &[],
    )
    .await;
    assert_eq!(ran.envelope.status, RunStatus::Failed);
    let e = &ran.envelope.errors[0];
    assert_eq!(e.code, "WORKFLOW_DEPTH", "{e:?}");
    assert!(e.message.contains("deeper than 8"), "{}", e.message);
    // Within the limit it works.
    let ok = run(
        &s,
        json!({ "blueprint": 1, "id": "top", "steps": [{ "id": "go", "kind": "workflow", "workflow": "level3" }] }),
        &[],
    )
    .await;
    assert_eq!(ok.envelope.status, RunStatus::Succeeded, "{:?}", ok.envelope.errors);
    assert_eq!(ok.envelope.output, json!("reached"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_keeps_the_document_it_ran_and_a_stored_run_its_revision() {
    use mcpflow_app::runs::{StartRun, Target, Trigger};
    use mcpflow_app::{App, AppOptions};
    let app =
        App::with_store(mcpflow_store::Store::open_temporary().unwrap(), Vec::new(), AppOptions::default()).unwrap();
    let doc = json!({ "blueprint": 1, "id": "kept", "steps": [ { "id": "a", "kind": "transform", "value": "one" } ] });
    let inline = app.run_to_end(StartRun::new(Target::Inline(doc.clone()), json!({}), Trigger::Studio)).await.unwrap();
    let record = app.run_detail(&inline.run_id).unwrap().record;
    assert_eq!((record.definition, record.blueprint_rev), (Some(doc.clone()), None), "the studio's document is kept");

    app.save_blueprint(&doc).unwrap();
    let stored = app.run_to_end(StartRun::new(Target::Stored("kept".into()), json!({}), Trigger::Cli)).await.unwrap();
    let record = app.run_detail(&stored.run_id).unwrap().record;
    assert_eq!((record.definition, record.blueprint_rev), (None, Some(1)), "a stored run names its revision");
    assert_eq!(app.blueprint_revision("kept", 1).unwrap().json, doc);
    let missing = app.blueprint_revision("kept", 2).unwrap_err().to_string();
    assert!(missing.contains("kept@2"), "{missing}");
}
