//! Re-issuing a request whose answer broke off (streamable HTTP). MCP 2026-07-28 has no
//! stream resumption: "a broken response stream loses the in-flight request; clients MUST
//! re-issue it as a new request with a new request ID". A break shows two ways: an SSE
//! answer that ends early (rmcp makes up an error answer marked
//! `io.modelcontextprotocol/transportClosed`), and a JSON answer whose body breaks off
//! (sending the request fails with [`HttpFailure::Broken`]). [`Reissue`] catches both,
//! sends the request again, once, under a new id, and hands rmcp the answer under the id
//! it waits for.
//!
//! Only requests that are safe to repeat are re-issued: `ping`, `server/discover`, the
//! lists (`tools/list`, `resources/list`, `resources/templates/list`, `prompts/list`),
//! `resources/read`, `prompts/get`, `completion/complete` and `tasks/get` (`server/discover`
//! only after an SSE break: rmcp reads nothing while it sends the opening). A `tools/call`
//! never is: the broken stream may have carried away a call the server already ran, and
//! running a side effect twice is worse than a failed step — it fails with
//! `SERVER_DISCONNECTED`, and the step's `retry` decides. A second break fails as before.

use super::http_errors::{HttpError, HttpFailure};
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, NumberOrString, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::collections::HashMap;
use tokio::sync::{mpsc, oneshot};

/// The key rmcp puts in the `data` of the error it makes up for a broken response stream.
const TRANSPORT_CLOSED: &str = "io.modelcontextprotocol/transportClosed";

/// A request whose JSON answer broke off while it was sent: its id, and where the
/// re-issue's sending result goes (dropped when there is no re-issue: the first failure
/// stands).
type Retry<E> = (RequestId, oneshot::Sender<Result<(), E>>);

pub(crate) struct Reissue<T: Transport<RoleClient>> {
    inner: T,
    /// Safe requests in flight, by the id rmcp sent them under.
    tracked: HashMap<RequestId, Tracked>,
    /// A re-issued request's new id → the id rmcp waits for.
    aliases: HashMap<RequestId, RequestId>,
    next: u64,
    /// Re-issues whose sending failed: the original id.
    failed_tx: mpsc::UnboundedSender<RequestId>,
    failed_rx: mpsc::UnboundedReceiver<RequestId>,
    /// Requests whose JSON answer broke off, to send again from `receive`.
    retry_tx: mpsc::UnboundedSender<Retry<T::Error>>,
    retry_rx: mpsc::UnboundedReceiver<Retry<T::Error>>,
}

struct Tracked {
    request: ClientJsonRpcMessage,
    /// Set once re-issued: the break rmcp reported, handed on if the re-issue fails.
    broken: Option<ServerJsonRpcMessage>,
    new_id: Option<RequestId>,
}

impl<T: Transport<RoleClient>> Reissue<T> {
    pub fn new(inner: T) -> Self {
        let (failed_tx, failed_rx) = mpsc::unbounded_channel();
        let (retry_tx, retry_rx) = mpsc::unbounded_channel();
        Reissue {
            inner,
            tracked: HashMap::new(),
            aliases: HashMap::new(),
            next: 0,
            failed_tx,
            failed_rx,
            retry_tx,
            retry_rx,
        }
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

/// Whether sending failed because the answer broke off (the request went out).
fn broke_off(error: &(dyn std::error::Error + 'static)) -> bool {
    error.downcast_ref::<HttpError>().is_some_and(|error| error.kind == HttpFailure::Broken)
}

fn is_broken_stream(message: &ServerJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Error(error)
        if error.error.data.as_ref().is_some_and(|data| data.get(TRANSPORT_CLOSED).is_some()))
}

impl<T: Transport<RoleClient>> Reissue<T> {
    /// Sends `original`'s request again under a new id, after rmcp reported its stream
    /// `broken`; false when it is not tracked or was re-issued already.
    fn reissue(&mut self, original: &RequestId, broken: ServerJsonRpcMessage) -> bool {
        let Some(sending) = self.send_again(original, Some(broken)) else { return false };
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

    /// The request `original` under a new id (the future sends it), unless it is not
    /// tracked or was re-issued already.
    fn send_again(
        &mut self,
        original: &RequestId,
        broken: Option<ServerJsonRpcMessage>,
    ) -> Option<impl Future<Output = Result<(), T::Error>> + Send + 'static> {
        let tracked = self.tracked.get_mut(original)?;
        if tracked.new_id.is_some() {
            return None;
        }
        self.next += 1;
        let new_id = NumberOrString::String(format!("mcpflow-reissue-{}", self.next).into());
        let mut request = tracked.request.clone();
        if let JsonRpcMessage::Request(r) = &mut request {
            r.id = new_id.clone();
        }
        tracked.broken = broken;
        tracked.new_id = Some(new_id.clone());
        self.aliases.insert(new_id, original.clone());
        tracing::info!(id = %original, "the answer broke off before it was complete: re-issuing the request once");
        Some(self.inner.send(request))
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Reissue<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(&mut self, mut item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        let mut safe = None;
        match &mut item {
            JsonRpcMessage::Request(request) if safe_to_repeat(&request.request) => {
                // During the opening rmcp awaits this send before it reads again, so a
                // JSON re-issue of `server/discover` (which `receive` performs) would wait
                // for nothing; its SSE break is still re-issued.
                if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
                    safe = Some(request.id.clone());
                }
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
        let sending = self.inner.send(item);
        let retry = self.retry_tx.clone();
        async move {
            let (error, id) = match (sending.await, safe) {
                (Err(error), Some(id)) if broke_off(&error) => (error, id),
                (sent, _) => return sent,
            };
            // The JSON answer broke off: `receive` sends the request again, and its
            // sending result is this one's.
            let (tx, rx) = oneshot::channel();
            if retry.send((id, tx)).is_err() {
                return Err(error);
            }
            rx.await.unwrap_or(Err(error))
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let mut message = tokio::select! {
                message = self.inner.receive() => message?,
                Some((original, done)) = self.retry_rx.recv() => {
                    if let Some(sending) = self.send_again(&original, None) {
                        tokio::spawn(async move {
                            let _ = done.send(sending.await);
                        });
                    }
                    // Not re-issued: `done` is dropped and the first failure stands.
                    continue;
                }
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
