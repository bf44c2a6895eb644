//! Sampling through `mcpflow serve`: a downstream server's request for a model completion,
//! made during a run that a client started (`run_workflow`, an exposed blueprint,
//! `run_pipeline`), is forwarded to that client when it declared sampling — the agent's own
//! model answers, and the mediator stays transparent. A client that did not declare it
//! leaves the request to the application's provider (`settings.json`), else
//! `SAMPLING_UNAVAILABLE`. The server's own switch (`"sampling": true`) is checked first,
//! either way.

// Sampling is deprecated upstream (SEP-2577) but clients and servers still use it.
#![expect(deprecated)]

use futures::future::BoxFuture;
use mcpflow_engine::{CallError, SampleRequest, Sampler};
use rmcp::RoleServer;
use rmcp::model::CreateMessageRequestParams;
use rmcp::service::{Peer, RequestContext};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The client of this call, when it declared sampling: the runs it starts ask it.
pub(super) fn forwarding(context: &RequestContext<RoleServer>) -> Option<Arc<dyn Sampler>> {
    let declared = context.peer.peer_info().is_some_and(|info| info.capabilities.sampling.is_some());
    declared.then(|| Arc::new(ToClient { peer: context.peer.clone() }) as Arc<dyn Sampler>)
}

/// Asks the client that called `mcpflow serve`.
struct ToClient {
    peer: Peer<RoleServer>,
}

impl Sampler for ToClient {
    fn sample(
        &self,
        request: SampleRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Value, CallError>> {
        let peer = self.peer.clone();
        Box::pin(async move {
            let failed = |why: String| {
                CallError::new(
                    "SAMPLING_FAILED",
                    format!(
                        "server `{}` asked the model during step `{}`; the client of `mcpflow serve` did not \
                         answer: {why}",
                        request.server, request.step
                    ),
                    false,
                )
            };
            let params: CreateMessageRequestParams = serde_json::from_value(request.params.clone())
                .map_err(|e| failed(format!("the server's request is not a valid sampling request: {e}")))?;
            let answer = tokio::select! {
                answer = peer.create_message(params) => answer,
                () = cancel.cancelled() => return Err(CallError::cancelled()),
            };
            let result = answer.map_err(|e| failed(mcpflow_engine::sampling::clip(&e.to_string(), 1024)))?;
            serde_json::to_value(result).map_err(|e| failed(e.to_string()))
        })
    }
}
