//! The cluster-sim fixture: default shape, determinism, relations, paging, selectors and errors.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use mcpflow_testkit::{ClusterConfig, Fixture};
use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::support::{BOTH, Client, Via, call, connect, structured, text, tool_names};

fn sim() -> Fixture {
    Fixture::ClusterSim(ClusterConfig::default())
}

async fn items(client: &Client, tool: &str, args: Value) -> Vec<Value> {
    let result = call(client, tool, args).await;
    structured(&result)["items"].as_array().expect("items").clone()
}

async fn resource_types(client: &Client) -> Vec<Value> {
    items(client, "list_resource_types", json!({})).await
}

#[tokio::test]
async fn lists_its_five_tools() {
    for via in BOTH {
        let client = connect(via, sim()).await;
        assert_eq!(
            tool_names(&client).await,
            ["get_resource", "list_namespaces", "list_nodes", "list_resource_types", "list_resources"],
            "{via:?}"
        );
    }
}

#[tokio::test]
async fn default_cluster_has_38_namespaces_13_nodes_22_types_and_about_1200_objects() {
    for via in BOTH {
        let client = connect(via, sim()).await;
        assert_eq!(items(&client, "list_namespaces", json!({})).await.len(), 38, "{via:?}");
        assert_eq!(items(&client, "list_nodes", json!({})).await.len(), 13, "{via:?}");
        let types = resource_types(&client).await;
        assert_eq!(types.len(), 22, "{via:?}");
        assert!(types.iter().all(|t| t["kind"].is_string() && t["plural"].is_string() && t["namespaced"].is_boolean()));
        let mut total = 0;
        for t in &types {
            let count = items(&client, "list_resources", json!({ "kind": t["plural"] })).await.len();
            assert!(count > 0, "no {}", t["plural"]);
            total += count;
        }
        assert!((1_100..=1_300).contains(&total), "{via:?}: {total} objects");

        let summary = client.read_resource(ReadResourceRequestParams::new("cluster://summary")).await.unwrap();
        let [ResourceContents::TextResourceContents { text, .. }] = summary.contents.as_slice() else {
            panic!("summary is one text item");
        };
        let summary: Value = serde_json::from_str(text).unwrap();
        assert_eq!(summary["total"], json!(total));
        assert_eq!(summary["counts"]["namespaces"], json!(38));
    }
}

#[tokio::test]
async fn two_instances_list_identical_resources() {
    let first = connect(Via::InProcess, sim()).await;
    let second = connect(Via::InProcess, sim()).await;
    let child = connect(Via::ChildProcess, sim()).await;
    for kind in ["pods", "services", "persistentvolumes", "nodes"] {
        let args = json!({ "kind": kind });
        let a = call(&first, "list_resources", args.clone()).await;
        let b = call(&second, "list_resources", args.clone()).await;
        let c = call(&child, "list_resources", args).await;
        assert_eq!(a.structured_content, b.structured_content, "{kind}");
        assert_eq!(a.structured_content, c.structured_content, "{kind}");
        assert_eq!(text(&a), text(&c), "{kind}");
    }
}

#[tokio::test]
async fn every_pod_runs_on_an_existing_node_under_a_deployment_chain() {
    let client = connect(Via::InProcess, sim()).await;
    let nodes: BTreeSet<String> = items(&client, "list_nodes", json!({}))
        .await
        .iter()
        .map(|n| n["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    let replica_sets: BTreeMap<(String, String), Value> =
        items(&client, "list_resources", json!({ "kind": "replicasets" }))
            .await
            .into_iter()
            .map(|rs| {
                let key = (
                    rs["metadata"]["namespace"].as_str().unwrap().to_owned(),
                    rs["metadata"]["name"].as_str().unwrap().to_owned(),
                );
                (key, rs)
            })
            .collect();
    let pods = items(&client, "list_resources", json!({ "kind": "pods" })).await;
    let mut via_replica_set = 0;
    for pod in &pods {
        let node = pod["spec"]["nodeName"].as_str().unwrap();
        assert!(nodes.contains(node), "pod {} on unknown node {node}", pod["metadata"]["name"]);
        let owner = &pod["metadata"]["ownerReferences"][0];
        if owner["kind"] == "ReplicaSet" {
            via_replica_set += 1;
            let key =
                (pod["metadata"]["namespace"].as_str().unwrap().to_owned(), owner["name"].as_str().unwrap().to_owned());
            let rs = &replica_sets[&key];
            assert_eq!(rs["metadata"]["uid"], owner["uid"]);
            assert_eq!(rs["metadata"]["ownerReferences"][0]["kind"], "Deployment");
        }
    }
    assert!(via_replica_set > pods.len() / 2, "most pods belong to deployments");
}

#[tokio::test]
async fn every_service_selects_at_least_one_pod() {
    let client = connect(Via::InProcess, sim()).await;
    let pods = items(&client, "list_resources", json!({ "kind": "pods" })).await;
    let services = items(&client, "list_resources", json!({ "kind": "services" })).await;
    assert!(!services.is_empty());
    for service in &services {
        let selector = service["spec"]["selector"].as_object().expect("a selector");
        assert!(selector.contains_key("app"));
        let selected = pods.iter().filter(|pod| {
            pod["metadata"]["namespace"] == service["metadata"]["namespace"]
                && selector.iter().all(|(k, v)| &pod["metadata"]["labels"][k] == v)
        });
        assert!(selected.count() >= 1, "service {} selects no pod", service["metadata"]["name"]);
    }
}

#[tokio::test]
async fn namespace_and_label_selector_filter_and_kind_names_are_interchangeable() {
    let client = connect(Via::InProcess, sim()).await;
    let in_payments = items(&client, "list_resources", json!({ "kind": "Pod", "namespace": "payments" })).await;
    assert!(!in_payments.is_empty());
    assert!(in_payments.iter().all(|p| p["metadata"]["namespace"] == "payments"));
    let app = in_payments[0]["metadata"]["labels"]["app"].as_str().unwrap().to_owned();
    let selected = items(
        &client,
        "list_resources",
        json!({ "kind": "pods", "namespace": "payments", "label_selector": format!("app={app}") }),
    )
    .await;
    assert!(!selected.is_empty());
    assert!(selected.iter().all(|p| p["metadata"]["labels"]["app"] == app.as_str()));
    assert!(selected.len() < in_payments.len() || in_payments.len() == 1);
}

#[tokio::test]
async fn limit_and_continue_page_through_everything_once() {
    let client = connect(Via::InProcess, sim()).await;
    let all = items(&client, "list_resources", json!({ "kind": "pods" })).await;
    let mut paged = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut args = json!({ "kind": "pods", "limit": 50 });
        if let Some(token) = &token {
            args["continue"] = json!(token);
        }
        let page = call(&client, "list_resources", args).await;
        let page = structured(&page);
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 50);
        paged.extend(items.iter().cloned());
        assert!(page.get("continue").is_none(), "the token is in `metadata`");
        match page["metadata"].get("continue").and_then(Value::as_str) {
            Some(next) => token = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(paged, all);
}

#[tokio::test]
async fn get_resource_returns_the_object_or_a_not_found_tool_error() {
    let client = connect(Via::InProcess, sim()).await;
    let pod = items(&client, "list_resources", json!({ "kind": "pods", "limit": 1 })).await.remove(0);
    let meta = &pod["metadata"];
    let got =
        call(&client, "get_resource", json!({ "kind": "pods", "name": meta["name"], "namespace": meta["namespace"] }))
            .await;
    assert_eq!(structured(&got), &pod);

    let node = call(&client, "get_resource", json!({ "kind": "Node", "name": "node-01" })).await;
    assert_eq!(structured(&node)["kind"], "Node");

    let missing =
        call(&client, "get_resource", json!({ "kind": "pods", "name": "nope", "namespace": "default" })).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("not found"), "{}", text(&missing));

    let unknown = call(&client, "list_resources", json!({ "kind": "widgets" })).await;
    assert_eq!(unknown.is_error, Some(true));
}

#[tokio::test]
async fn configured_latency_delays_every_call() {
    let config = ClusterConfig { latency: Duration::from_millis(150), ..ClusterConfig::default() };
    let client = connect(Via::InProcess, Fixture::ClusterSim(config)).await;
    let started = Instant::now();
    call(&client, "list_nodes", json!({})).await;
    assert!(started.elapsed() >= Duration::from_millis(150));
}

#[tokio::test]
async fn size_options_reach_the_binary() {
    let config = ClusterConfig { namespaces: 12, nodes: 3, scale: 0.5, latency: Duration::ZERO };
    let client = connect(Via::ChildProcess, Fixture::ClusterSim(config)).await;
    assert_eq!(items(&client, "list_namespaces", json!({})).await.len(), 12);
    assert_eq!(items(&client, "list_nodes", json!({})).await.len(), 3);
}
