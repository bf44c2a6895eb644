//! The launch's secrets hidden from the JSON-RPC errors a server answers with: a server
//! that quotes its token back ("token abc123 rejected") must not put it into a step's
//! error, a run event or the run history. Only the `message` (and string `data`) of error
//! answers is rewritten; results are the tool's data and are left as they are.

use super::notes::ServerNotes;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

pub(crate) struct Hidden<T> {
    inner: T,
    notes: Arc<ServerNotes>,
}

impl<T> Hidden<T> {
    pub fn new(inner: T, notes: Arc<ServerNotes>) -> Self {
        Hidden { inner, notes }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Hidden<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Error(error) = &mut message {
            let hidden = self.notes.hide(error.error.message.to_string());
            if hidden != error.error.message {
                error.error.message = hidden.into();
            }
            if let Some(Value::String(data)) = &mut error.error.data {
                *data = self.notes.hide(std::mem::take(data));
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}
