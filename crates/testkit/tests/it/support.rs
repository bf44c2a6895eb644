//! A recording rmcp client and helpers to connect it to a fixture in-process or as a child process.

use std::{
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use mcpflow_testkit::{Fixture, binary, spawn_in_process};
use rmcp::{
    ClientHandler, RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam},
    service::{NotificationContext, RunningService, ServiceError},
    transport::{TokioChildProcess, async_rw::AsyncRwTransport},
};
use serde_json::Value;
use tokio::process::{Child, Command};

/// Long enough for a debug build on a busy 2-core machine, short enough to fail a hung test quickly.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// A client handler that records progress notifications.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl Recorder {
    /// Waits until at least `count` progress notifications arrived (they may trail the response), then
    /// returns all of them.
    pub async fn progress(&self, count: usize) -> Vec<ProgressNotificationParam> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        loop {
            let seen = self.progress.lock().unwrap().clone();
            if seen.len() >= count || tokio::time::Instant::now() >= deadline {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _ctx: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// How a test reaches the fixture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    InProcess,
    ChildProcess,
}

pub const BOTH: [Via; 2] = [Via::InProcess, Via::ChildProcess];

fn command(fixture: &Fixture) -> Command {
    let mut command = Command::new(binary());
    command.args(fixture.args()).env("RUST_LOG", "error");
    command
}

pub async fn connect(via: Via, fixture: Fixture) -> Client {
    let client = match via {
        Via::InProcess => Recorder::default().serve(spawn_in_process(fixture)).await,
        Via::ChildProcess => {
            let transport = TokioChildProcess::new(command(&fixture)).expect("spawn the fixture binary");
            Recorder::default().serve(transport).await
        }
    };
    client.expect("MCP handshake")
}

/// A child-process fixture with the client's line limit raised to `max_line` bytes (rmcp's default is
/// 16 MiB), keeping the child so the test can check how it exited.
pub async fn connect_child_with_max_line(fixture: Fixture, max_line: usize) -> (Client, Child) {
    let mut child = command(&fixture)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the fixture binary");
    let stdout = child.stdout.take().unwrap();
    let stdin = child.stdin.take().unwrap();
    let transport = AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin).with_max_line_length(max_line);
    let client = Recorder::default().serve(transport).await.expect("MCP handshake");
    (client, child)
}

pub async fn try_call(client: &Client, tool: &str, args: Value) -> Result<CallToolResult, ServiceError> {
    let arguments = args.as_object().cloned().unwrap_or_default();
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    tokio::time::timeout(TIMEOUT, client.call_tool(params)).await.unwrap_or_else(|_| panic!("{tool} timed out"))
}

pub async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    try_call(client, tool, args).await.unwrap_or_else(|e| panic!("{tool} failed: {e}"))
}

/// The first content item's text.
pub fn text(result: &CallToolResult) -> &str {
    &result.content.first().and_then(|c| c.as_text()).expect("a text content item").text
}

/// The structured content, after checking that the text item carries the same JSON.
pub fn structured(result: &CallToolResult) -> &Value {
    assert_ne!(result.is_error, Some(true), "unexpected tool error: {}", text(result));
    let value = result.structured_content.as_ref().expect("structuredContent");
    let from_text: Value = serde_json::from_str(text(result)).expect("the text item is JSON");
    assert_eq!(&from_text, value, "text and structuredContent differ");
    value
}

pub async fn tool_names(client: &Client) -> Vec<String> {
    let mut names: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|t| t.name.into_owned()).collect();
    names.sort();
    names
}
