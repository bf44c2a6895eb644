//! Streamable HTTP servers, through rmcp's reqwest client transport, with the pool's
//! answer bound applied as on stdio.
//!
//! | answer | bound | over it |
//! |---|---|---|
//! | SSE event | the pool's `max_message_bytes`, while reading (rmcp) | the read stops; the call fails (`SERVER_DISCONNECTED`: rmcp reports a closed response stream without its cause) |
//! | `application/json` body | read up to rmcp's fixed 16 MiB ([`JSON_BODY_LIMIT`]), then held to the pool's bound here | `OUTPUT_TOO_LARGE` for that call; the session goes on |
//!
//! So an answer costs at most the pool's bound (SSE) or 16 MiB (JSON) of memory while it
//! is read, and no answer over the pool's bound reaches a caller.
//!
//! Signing in ([`open`]): an entry with its own `Authorization` header sends it and
//! nothing else. Otherwise every request carries the stored OAuth login for the
//! server's URL as `Authorization: Bearer …` (`signed.rs`: refreshed when it expires
//! within a minute, and once more after a 401). When the handshake still fails because
//! the server refused it (401, or 403 `insufficient_scope`), the start fails fast with
//! `AUTH_REQUIRED` naming what to do (one probe request reads the server's challenge
//! when the reason is not known yet). No browser is ever opened here.

use super::handler::Handler;
use super::lines::made_up_error;
use super::listed::Listed;
use super::notes::ServerNotes;
use super::reissue::Reissue;
use super::signed::{self, Signed, Tokens};
use super::{Context, connection};
use crate::error::{Error, Result};
use http::{HeaderName, HeaderValue};
use mcpflow_auth as auth;
use mcpflow_blueprint::{ProtocolEra, ServerConfig};
use mcpflow_config::Error as ConfigError;
use mcpflow_config::launch::HttpLaunch;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpClientTransportConfig};
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use std::collections::HashMap;
use std::io;
use std::sync::Arc;

/// rmcp's own limit on a plain JSON answer body (`MAX_JSON_RESPONSE_SIZE`, not configurable).
pub(crate) const JSON_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Connects to an HTTP server with its sign-in, if any: `Ok(Err(message))` is a start
/// failure as for any transport, `Err` an `AUTH_REQUIRED` (or a configuration error).
pub(crate) async fn open(
    server: &str,
    config: &ServerConfig,
    launch: &HttpLaunch,
    handler: Handler,
    cx: &Context,
    notes: Arc<ServerNotes>,
    pin: Option<ProtocolEra>,
) -> Result<std::result::Result<RunningService<RoleClient, Handler>, String>> {
    let max = cx.options.max_message_bytes;
    let own_header = auth::has_static_authorization(config);
    let Some(authenticator) = cx.options.auth.clone().filter(|_| !own_header) else {
        let client = signed::plain_client(server, &launch.url)?;
        let listed = Listed::new(
            client.clone(),
            handler.discovery.task_tools().clone(),
            handler.http_session.clone(),
            max,
            notes.clone(),
        );
        let opened =
            connection::handshake_or_refusal(handler, transport(server, launch, listed, max, notes)?, cx, server, pin)
                .await;
        if let Err(failure) = &opened
            && !own_header
            && failure.sign_in
            && let Ok(Some(challenge)) = auth::flow::probe(&client, &launch.url, None).await
        {
            // A pool without sign-ins (a library user's): say what happened all the same.
            return Err(Error::Auth(auth::Error::AuthRequired {
                server: server.to_owned(),
                reason: "it answered 401 and this pool keeps no sign-ins".to_owned(),
                scope: challenge.scope,
                advice: format!("run `mcpflow auth login {server}`"),
            }));
        }
        return Ok(opened.map_err(|failure| failure.message));
    };
    let oauth = config.oauth.clone();
    let env = cx.options.env.clone();
    // A vault that cannot be read costs only the servers that need a sign-in: the
    // others connect, and a refused one reports the vault's error.
    let (first, vault_error) = match authenticator.current(server, &launch.url, oauth.as_ref(), &env).await {
        Ok(first) => (first, None),
        Err(error @ auth::Error::AuthVault { .. }) => {
            tracing::warn!(server, %error, "the sign-in vault cannot be read; connecting without a token");
            (None, Some(error.into()))
        }
        Err(error) => return Err(error.into()),
    };
    let had_login = first.is_some();
    let tokens =
        Arc::new(Tokens::new(authenticator.clone(), server, &launch.url, oauth, env, first.as_ref(), notes.clone()));
    let client = Listed::new(
        Signed::new(tokens.clone())?,
        handler.discovery.task_tools().clone(),
        handler.http_session.clone(),
        max,
        notes.clone(),
    );
    let opened =
        connection::handshake_or_refusal(handler, transport(server, launch, client, max, notes)?, cx, server, pin)
            .await;
    let refused = matches!(&opened, Err(failure) if failure.sign_in);
    let opened = opened.map_err(|failure| failure.message);
    if !refused {
        return Ok(opened);
    }
    // Refused even after the client renewed the token once: why, in the server's words.
    if let Some(error) = vault_error.or_else(|| tokens.take_refusal()) {
        return Err(error);
    }
    let challenge = match authenticator.probe(&launch.url, tokens.token().as_deref()).await {
        Ok(Some(challenge)) => challenge,
        // Not refused after all (or unreachable now): the handshake's error stands.
        _ => return Ok(opened),
    };
    if challenge.is_insufficient_scope() {
        let oauth = config.oauth.as_ref();
        let token = tokens.token();
        return Err(
            match authenticator
                .unauthorized(server, &launch.url, oauth, &cx.options.env, token.as_deref(), &challenge)
                .await
            {
                Err(error) => error.into(),
                Ok(_) => authenticator.required(server, "the server asks for a wider scope", challenge.scope).into(),
            },
        );
    }
    let reason = if had_login {
        "it refused the sign-in mcpflow holds, and renewing it did not help"
    } else {
        "it answered 401 and mcpflow holds no sign-in for it"
    };
    Err(authenticator.required(server, reason, None).into())
}

fn transport<C: StreamableHttpClient>(
    server: &str,
    launch: &HttpLaunch,
    client: C,
    max_message: usize,
    notes: Arc<ServerNotes>,
) -> Result<impl Transport<RoleClient> + 'static> {
    let invalid =
        |message: String| Error::from(ConfigError::ServerConfigInvalid { server: server.to_owned(), message });
    let mut headers = HashMap::new();
    for (name, value) in &launch.headers {
        let name = HeaderName::try_from(name.as_str()).map_err(|e| invalid(format!("header `{name}`: {e}")))?;
        // The value may hold a resolved secret: never echo it.
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| invalid(format!("header `{name}` has a value that is not valid in HTTP")))?;
        headers.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(launch.url.as_str())
        .custom_headers(headers)
        .max_sse_event_size(max_message);
    let bounded = BoundedAnswers {
        inner: StreamableHttpClientTransport::with_client(client, config),
        max: max_message,
        notes: notes.clone(),
    };
    // HTTP failures in words (`http_errors.rs`); a broken response stream re-issues a safe
    // request once (`reissue.rs`).
    Ok(Reissue::new(super::http_errors::Worded::new(bounded, launch, notes)))
}

/// An rmcp transport whose answers are held to `max` bytes: a larger one becomes the
/// same made-up `OUTPUT_TOO_LARGE` error the stdio transport gives its call.
struct BoundedAnswers<T> {
    inner: T,
    max: usize,
    notes: Arc<ServerNotes>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for BoundedAnswers<T> {
    type Error = T::Error;

    fn send(&mut self, item: ClientJsonRpcMessage) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await?;
        let JsonRpcMessage::Response(answer) = &message else { return Some(message) };
        let size = json_size(answer);
        if size <= self.max {
            return Some(message);
        }
        let server = self.notes.server().to_owned();
        tracing::warn!(server, size, max = self.max, "discarded an incoming message over the size limit");
        let error = Error::OutputTooLarge { server, limit: self.max, size: Some(size) };
        Some(made_up_error(answer.id.clone(), "OUTPUT_TOO_LARGE", error.to_string(), Some(size)))
    }

    fn close(&mut self) -> impl Future<Output = Result<(), T::Error>> + Send {
        self.inner.close()
    }
}

/// The length of `value` as compact JSON, counted without building the text.
fn json_size(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail; a value that cannot be written counts as what was.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Whether a transport error says an answer was over a size limit.
pub(crate) fn is_size_error(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.to_string().contains("exceeded the maximum size") {
            return true;
        }
        current = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_size_is_the_length_of_the_compact_text() {
        let value = json!({"a": [1, "two", null], "é": "\"quoted\"\n"});
        assert_eq!(json_size(&value), serde_json::to_string(&value).unwrap().len());
    }
}
