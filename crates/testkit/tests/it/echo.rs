//! The echo fixture: tools, resource and prompt, in-process and through the binary.

use mcpflow_testkit::Fixture;
use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents, Role};
use serde_json::json;

use crate::support::{BOTH, call, connect, structured, text, tool_names};

#[tokio::test]
async fn lists_its_tools() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        assert_eq!(
            tool_names(&client).await,
            ["add", "add_tool", "echo", "meta", "multiply", "progress", "record", "sleep"],
            "{via:?}"
        );
    }
}

#[tokio::test]
async fn add_tool_adds_a_listed_tool_that_echoes_and_refuses_a_taken_name() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        let added = call(&client, "add_tool", json!({ "name": "shout" })).await;
        assert_eq!(structured(&added), &json!({ "added": "shout" }), "{via:?}");
        assert!(tool_names(&client).await.contains(&"shout".to_owned()), "{via:?}");
        assert_eq!(text(&call(&client, "shout", json!({ "message": "hey" })).await), "hey", "{via:?}");
        for taken in ["shout", "echo"] {
            let again = call(&client, "add_tool", json!({ "name": taken })).await;
            assert_eq!(again.is_error, Some(true), "{via:?}");
            assert_eq!(text(&again), format!("a tool named {taken} exists already"), "{via:?}");
        }
    }
}

#[tokio::test]
async fn echo_returns_the_message_as_text() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        let result = call(&client, "echo", json!({ "message": "hi there" })).await;
        assert_eq!(text(&result), "hi there", "{via:?}");
        assert_ne!(result.is_error, Some(true));
    }
}

#[tokio::test]
async fn arithmetic_returns_structured_results() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        let sum = call(&client, "add", json!({ "a": 2, "b": 3.5 })).await;
        assert_eq!(structured(&sum), &json!({ "sum": 5.5 }), "{via:?}");
        let product = call(&client, "multiply", json!({ "a": 4, "b": -2.5 })).await;
        assert_eq!(structured(&product), &json!({ "product": -10.0 }), "{via:?}");
    }
}

#[tokio::test]
async fn sleep_reports_how_long_it_slept() {
    let client = connect(crate::support::Via::InProcess, Fixture::Echo).await;
    let started = std::time::Instant::now();
    let result = call(&client, "sleep", json!({ "ms": 50 })).await;
    assert_eq!(structured(&result), &json!({ "slept_ms": 50 }));
    assert!(started.elapsed() >= std::time::Duration::from_millis(50));
}

#[tokio::test]
async fn progress_sends_one_notification_per_step() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        let result = call(&client, "progress", json!({ "steps": 4, "interval_ms": 5 })).await;
        assert_eq!(structured(&result), &json!({ "steps": 4 }), "{via:?}");
        let progress = client.service().progress(4).await;
        let steps: Vec<f64> = progress.iter().map(|p| p.progress).collect();
        assert_eq!(steps, [1.0, 2.0, 3.0, 4.0], "{via:?}");
        assert!(progress.iter().all(|p| p.total == Some(4.0)));
    }
}

#[tokio::test]
async fn hello_resource_reads_hello() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(resources.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["echo://hello"]);
        let read = client.read_resource(ReadResourceRequestParams::new("echo://hello")).await.unwrap();
        match read.contents.as_slice() {
            [ResourceContents::TextResourceContents { text, .. }] => assert_eq!(text, "hello", "{via:?}"),
            other => panic!("unexpected contents {other:?}"),
        }
    }
}

#[tokio::test]
async fn greet_prompt_is_one_user_message_with_the_name() {
    for via in BOTH {
        let client = connect(via, Fixture::Echo).await;
        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(prompts.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["greet"]);
        let arguments = json!({ "name": "Ada" }).as_object().cloned().unwrap();
        let prompt = client.get_prompt(GetPromptRequestParams::new("greet").with_arguments(arguments)).await.unwrap();
        assert_eq!(prompt.messages.len(), 1, "{via:?}");
        assert_eq!(prompt.messages[0].role, Role::User);
        assert!(prompt.messages[0].content.as_text().unwrap().text.contains("Ada"));
    }
}
