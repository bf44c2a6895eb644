//! Re-issuing a request whose response stream broke (streamable HTTP). MCP 2026-07-28 has
//! no stream resumption: "a broken response stream loses the in-flight request; clients
//! MUST re-issue it as a new request with a new request ID". rmcp reports such a break as
//! a made-up error answer marked `io.modelcontextprotocol/transportClosed`; [`Reissue`]
//! catches it and sends the request again, once, under a new id, and hands rmcp the
//! answer under the id it waits for.
//!
//! Only requests that are safe to repeat are re-issued: `ping`, `server/discover`, the
//! lists (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`),
//! `resources/read`, `prompts/get`, `completion/complete` and `tasks/get`. A `tools/call`
//! never is: the broken stream may have carried away a call the server already ran, and
//! running a side effect twice is worse than a failed step — it fails with
//! `SERVER_DISCONNECTED`, and the step's `retry` decides. A second break fails as before.

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, NumberOrString, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::collections::HashMap;
use tokio::sync::mpsc;

/// The key rmcp puts in the `data` of the error it makes up for a broken response stream.
const TRANSPORT_CLOSED: &str = "io.modelcontextprotocol/transportClosed";

pub(crate) struct Reissue<T> {
    inner: T,
    /// Safe requests in flight, by the id rmcp sent them under.
    tracked: HashMap<RequestId, Tracked>,
    /// A re-issued request's new id → the id rmcp waits for.
    aliases: HashMap<RequestId, RequestId>,
    next: u64,
    /// Re-issues whose sending failed: the original id.
    failed_tx: mpsc::UnboundedSender<RequestId>,
    failed_rx: mpsc::UnboundedReceiver<RequestId>,
}

struct Tracked {
    request: ClientJsonRpcMessage,
    /// Set once re-issued: the break rmcp reported, handed on if the re-issue fails.
    broken: Option<ServerJsonRpcMessage>,
    new_id: Option<RequestId>,
}

impl<T> Reissue<T> {
    pub fn new(inner: T) -> Self {
        let (failed_tx, failed_rx) = mpsc::unbounded_channel();
        Reissue { inner, tracked: HashMap::new(), aliases: HashMap::new(), next: 0, failed_tx, failed_rx }
    }
}

/// Whether `request` may be sent twice without harm.
fn safe_to_repeat(request: &ClientRequest) -> bool {
    matches!(
        request,
        ClientRequest::PingRequest(_)
            | ClientRequest::DiscoverRequest(_)
            | ClientRequest::ListToolsRequest(_)
            | ClientRequest::ListResourcesRequest(_)
            | ClientRequest::ListResourceTemplatesRequest(_)
            | ClientRequest::ListPromptsRequest(_)
            | ClientRequest::ReadResourceRequest(_)
            | ClientRequest::GetPromptRequest(_)
            | ClientRequest::CompleteRequest(_)
            | ClientRequest::GetTaskRequest(_)
    )
}

fn answer_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

fn is_broken_stream(message: &ServerJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Error(error)
        if error.error.data.as_ref().is_some_and(|data| data.get(TRANSPORT_CLOSED).is_some()))
}

impl<T: Transport<RoleClient>> Reissue<T> {
    /// Sends `original`'s request again under a new id; false when it is not tracked or
    /// was re-issued already.
    fn reissue(&mut self, original: &RequestId, broken: ServerJsonRpcMessage) -> bool {
        let Some(tracked) = self.tracked.get_mut(original) else { return false };
        if tracked.new_id.is_some() {
            return false;
        }
        self.next += 1;
        let new_id = NumberOrString::String(format!("mcpflow-reissue-{}", self.next).into());
        let mut request = tracked.request.clone();
        if let JsonRpcMessage::Request(r) = &mut request {
            r.id = new_id.clone();
        }
        tracked.broken = Some(broken);
        tracked.new_id = Some(new_id.clone());
        self.aliases.insert(new_id, original.clone());
        tracing::info!(id = %original, "the response stream broke before the answer: re-issuing the request once");
        let sending = self.inner.send(request);
        let failed = self.failed_tx.clone();
        let original = original.clone();
        // Not awaited here: the transport may need this reader to make progress.
        tokio::spawn(async move {
            if sending.await.is_err() {
                let _ = failed.send(original);
            }
        });
        true
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Reissue<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(&mut self, mut item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        match &mut item {
            JsonRpcMessage::Request(request) if safe_to_repeat(&request.request) => {
                self.tracked.insert(request.id.clone(), Tracked { request: item.clone(), broken: None, new_id: None });
            }
            // A cancellation of a re-issued request goes to the new one; either way the
            // request is no longer tracked.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) = &mut notification.notification
                    && let Some(id) = cancelled.params.request_id.clone()
                    && let Some(tracked) = self.tracked.remove(&id)
                    && let Some(new_id) = tracked.new_id
                {
                    self.aliases.remove(&new_id);
                    cancelled.params.request_id = Some(new_id);
                }
            }
            _ => {}
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let mut message = tokio::select! {
                message = self.inner.receive() => message?,
                Some(original) = self.failed_rx.recv() => {
                    // The re-issue could not be sent: the break as rmcp reported it.
                    match self.tracked.remove(&original) {
                        Some(Tracked { broken: Some(broken), new_id, .. }) => {
                            if let Some(new_id) = new_id {
                                self.aliases.remove(&new_id);
                            }
                            return Some(broken);
                        }
                        _ => continue,
                    }
                }
            };
            let Some(id) = answer_id(&message).cloned() else { return Some(message) };
            if let Some(original) = self.aliases.remove(&id) {
                // The answer to a re-issue (or its own break): under the id rmcp waits for.
                self.tracked.remove(&original);
                match &mut message {
                    JsonRpcMessage::Response(response) => response.id = original,
                    JsonRpcMessage::Error(error) => error.id = Some(original),
                    _ => {}
                }
                return Some(message);
            }
            if is_broken_stream(&message) && self.reissue(&id, message.clone()) {
                continue;
            }
            self.tracked.remove(&id);
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ListToolsRequest, PaginatedRequestParams};

    #[test]
    fn lists_are_repeated_calls_are_not() {
        let list = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(PaginatedRequestParams::default()));
        assert!(safe_to_repeat(&list));
    }
}
