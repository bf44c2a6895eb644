//! The era probe within the pool's connect timeout. rmcp's `Auto` lifecycle waits a fixed
//! 10 s for an answer to `server/discover` before it falls back to `initialize`; with a
//! shorter connect timeout the whole open ran out first, so a 2025-11-25 server that drops
//! `server/discover` unanswered could never be reached. [`Probe`] wraps the transport and
//! gives `server/discover` at most [`probe_wait`] (half the connect timeout, at most
//! rmcp's 10 s): past it, the probe is answered here with "method not found" — rmcp then
//! falls back to `initialize` on the same connection, within the other half — and a late
//! answer from the server is dropped. When rmcp's own wait ends first (both are 10 s with
//! the default timeout), the request it sends next abandons the probe the same way.
//!
//! An answer to the probe is believed only when it is a `server/discover` result: many
//! servers of earlier eras answer a method they do not know with an empty result `{}`
//! rather than "method not found", and rmcp would take that for a failed handshake. Such
//! an answer is turned into "method not found" here, so rmcp falls back to `initialize`.

use rmcp::model::ServerJsonRpcMessage;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, RequestId, ServerResult};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use std::borrow::Cow;
use std::time::Duration;
use tokio::time::Instant;

/// rmcp's own wait for `server/discover` in its `Auto` lifecycle.
const RMCP_DISCOVER_WAIT: Duration = Duration::from_secs(10);

/// How long `server/discover` may go unanswered: half of `connect_timeout`, at most 10 s.
pub(crate) fn probe_wait(connect_timeout: Duration) -> Duration {
    (connect_timeout / 2).min(RMCP_DISCOVER_WAIT)
}

pub(crate) struct Probe<T> {
    inner: T,
    wait: Duration,
    /// The `server/discover` in flight and when its wait ends.
    pending: Option<(RequestId, Instant)>,
    /// A `server/discover` answered here: the server's late answer is dropped.
    given_up: Option<RequestId>,
}

impl<T> Probe<T> {
    pub fn new(inner: T, wait: Duration) -> Self {
        Probe { inner, wait, pending: None, given_up: None }
    }
}

fn answer_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(response) => Some(&response.id),
        JsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Probe<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        let discover = match &item {
            JsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::DiscoverRequest(_)) => {
                Some(request.id.clone())
            }
            _ => None,
        };
        if discover.is_none()
            && matches!(item, JsonRpcMessage::Request(_))
            && let Some((abandoned, _)) = self.pending.take()
        {
            // rmcp's own wait for the probe ended first (both waits can be 10 s) and it has
            // moved on to `initialize`: the probe is not answered here any more, and a late
            // answer to it is dropped, or rmcp would take it for the answer to `initialize`.
            self.given_up = Some(abandoned);
        }
        let sending = self.inner.send(item);
        let Some(id) = discover else { return futures::future::Either::Left(sending) };
        // A wait too long to add (an enormous connect timeout) is a day: the connect
        // timeout ends the open first.
        let deadline =
            Instant::now().checked_add(self.wait).unwrap_or_else(|| Instant::now() + Duration::from_secs(24 * 60 * 60));
        self.pending = Some((id, deadline));
        // Over HTTP the POST itself may hang: past the wait it counts as sent, and
        // `receive` answers it.
        futures::future::Either::Right(async move {
            match tokio::time::timeout_at(deadline, sending).await {
                Ok(sent) => sent,
                Err(_) => Ok(()),
            }
        })
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let message = match self.pending.clone() {
                Some((id, deadline)) => {
                    tokio::select! {
                        message = self.inner.receive() => message,
                        () = tokio::time::sleep_until(deadline) => {
                            self.pending = None;
                            tracing::debug!(wait_ms = self.wait.as_millis(), "no answer to `server/discover`: trying `initialize`");
                            let error = ErrorData::new(
                                ErrorCode::METHOD_NOT_FOUND,
                                format!("no answer to `server/discover` within {} ms", self.wait.as_millis()),
                                None,
                            );
                            self.given_up = Some(id.clone());
                            return Some(ServerJsonRpcMessage::error(error, Some(id)));
                        }
                    }
                }
                None => self.inner.receive().await,
            }?;
            let id = answer_id(&message);
            if id.is_some() && id == self.given_up.as_ref() {
                self.given_up = None;
                continue;
            }
            if id.is_some() && id == self.pending.as_ref().map(|(pending, _)| pending) {
                self.pending = None;
                return Some(believed(message));
            }
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}

/// The answer to `server/discover` as rmcp should see it: a `server/discover` result or an
/// error as it came; any other result (`{}` from a server that answers unknown methods
/// so) as "method not found", so rmcp goes on with `initialize`.
fn believed(answer: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let JsonRpcMessage::Response(response) = &answer else { return answer };
    if matches!(response.result, ServerResult::DiscoverResult(_)) {
        return answer;
    }
    tracing::debug!("the answer to `server/discover` is not a `server/discover` result: trying `initialize`");
    let error = ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        "the answer to `server/discover` is not a `server/discover` result (a server of an earlier era)",
        None,
    );
    ServerJsonRpcMessage::error(error, Some(response.id.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::mpsc;
    use futures::{SinkExt, StreamExt};
    use rmcp::transport::sink_stream::SinkStreamTransport;
    use serde_json::json;

    fn message<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn once_rmcp_has_moved_on_to_initialize_the_probe_is_neither_answered_here_nor_by_the_server() {
        let (to_server, mut server_reads) = mpsc::unbounded::<ClientJsonRpcMessage>();
        let (mut server_writes, from_server) = mpsc::unbounded::<ServerJsonRpcMessage>();
        let mut probe = Probe::new(SinkStreamTransport::new(to_server, from_server), Duration::from_secs(10));
        probe
            .send(message(json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}})))
            .await
            .unwrap();
        // rmcp's wait ends a moment before ours and it sends `initialize`.
        tokio::time::advance(Duration::from_millis(9_999)).await;
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
        probe.send(message(initialize)).await.unwrap();
        assert_eq!(server_reads.next().await.map(|m| answer_id_of(&m)), Some(Some(RequestId::Number(0))));
        // The server answers the probe late, then `initialize`.
        server_writes
            .send(message(json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "late"}})))
            .await
            .unwrap();
        let initialized = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}});
        tokio::time::advance(Duration::from_secs(1)).await;
        server_writes.send(message(initialized)).await.unwrap();
        let received = probe.receive().await.expect("the answer to initialize");
        assert_eq!(answer_id(&received), Some(&RequestId::Number(1)), "{received:?}");
    }

    fn answer_id_of(message: &ClientJsonRpcMessage) -> Option<RequestId> {
        match message {
            JsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        }
    }

    #[test]
    fn the_probe_takes_half_the_connect_timeout_at_most_10_s() {
        assert_eq!(probe_wait(Duration::from_secs(1)), Duration::from_millis(500));
        assert_eq!(probe_wait(Duration::from_secs(30)), Duration::from_secs(10));
    }
}
