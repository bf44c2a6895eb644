//! The raw `tools/list` answers of a streamable HTTP server, read for the tools that run
//! only as tasks (`execution.taskSupport`, which rmcp's `Tool` drops: see [`TaskTools`]).
//!
//! [`Listed`] wraps the HTTP client under rmcp's transport: a `tools/list` request whose
//! answer comes as an SSE stream has each event's data read raw on its way to rmcp (the
//! event is already held to the pool's message limit). An answer that comes as one
//! `application/json` body reaches us parsed by rmcp, without `execution`: for those
//! servers the pool learns a task-only tool from its refusal of a plain call
//! (`pool/call.rs`).
//!
//! It also notes the session id the server assigned (`Mcp-Session-Id`), as each request
//! is sent with it, for the client spans (`trace.rs`: `mcp.session.id`), and weighs every
//! SSE event's data before rmcp parses it (`weigh.rs`).

use super::discovery::TaskTools;
use super::notes::ServerNotes;
use super::trace::SessionId;
use super::weigh::weigh_event;
use futures::StreamExt;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;
use std::collections::HashMap;
use std::sync::Arc;

/// An HTTP client whose `tools/list` answers are read raw into `tap`, whose session id is
/// noted in `session`, and whose SSE events are weighed against `max_message`.
#[derive(Clone)]
pub(crate) struct Listed<C> {
    inner: C,
    tap: Arc<TaskTools>,
    session: Arc<SessionId>,
    max_message: usize,
    notes: Arc<ServerNotes>,
}

impl<C> Listed<C> {
    pub fn new(
        inner: C,
        tap: Arc<TaskTools>,
        session: Arc<SessionId>,
        max_message: usize,
        notes: Arc<ServerNotes>,
    ) -> Self {
        Listed { inner, tap, session, max_message, notes }
    }

    /// `stream` with each event weighed before rmcp parses it.
    fn weighed(&self, stream: BoxStream<'static, Result<Sse, SseError>>) -> BoxStream<'static, Result<Sse, SseError>> {
        let (max, notes) = (self.max_message, self.notes.clone());
        stream
            .filter_map(move |event| {
                let event = match event {
                    Ok(event) => weigh_event(event, max, &notes).map(Ok),
                    Err(error) => Some(Err(error)),
                };
                std::future::ready(event)
            })
            .boxed()
    }

    fn note_session(&self, session_id: Option<&Arc<str>>) {
        if let Some(id) = session_id {
            self.session.set(id);
        }
    }

    /// The answer, with its SSE events read on their way when `message` is `tools/list`.
    fn read<E>(
        &self,
        message_was_list: bool,
        answer: Result<StreamableHttpPostResponse, E>,
    ) -> Result<StreamableHttpPostResponse, E> {
        let answer = match answer {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => {
                Ok(StreamableHttpPostResponse::Sse(self.weighed(stream), session))
            }
            other => other,
        };
        match answer {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) if message_was_list => {
                let tap = self.tap.clone();
                let stream = stream.inspect(move |event| {
                    if let Ok(Sse { data: Some(data), .. }) = event {
                        tap.read_list(data.as_bytes());
                    }
                });
                Ok(StreamableHttpPostResponse::Sse(stream.boxed(), session))
            }
            other => other,
        }
    }
}

fn is_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(JsonRpcRequest { request: ClientRequest::ListToolsRequest(_), .. }))
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for Listed<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        let list = is_list(&message);
        self.note_session(session_id.as_ref());
        let answer = self.inner.post_message(uri, message, session_id, auth_header, custom_headers).await;
        self.read(list, answer)
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        let list = is_list(&message);
        self.note_session(session_id.as_ref());
        let answer = self
            .inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.read(list, answer)
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<C::Error>> {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<C::Error>> {
        let stream = self.inner.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await?;
        Ok(self.weighed(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<C::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.weighed(stream))
    }
}
