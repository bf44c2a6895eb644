//! Streamable HTTP servers, through rmcp's reqwest client transport.
//!
//! Size bounds over HTTP are rmcp's: one SSE event is limited to the pool's
//! `max_message_bytes`; a plain `application/json` answer is limited to rmcp's fixed
//! 16 MiB. A larger answer fails the call (`OUTPUT_TOO_LARGE`) without being buffered.

use crate::config::launch::HttpLaunch;
use crate::error::{Error, Result};
use http::{HeaderName, HeaderValue};
use rmcp::service::RoleClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, Transport};
use std::collections::HashMap;

pub(crate) fn transport(
    server: &str,
    launch: &HttpLaunch,
    max_message: usize,
) -> Result<impl Transport<RoleClient> + 'static> {
    let invalid = |message: String| Error::ServerConfigInvalid { server: server.to_owned(), message };
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
    Ok(StreamableHttpClientTransport::from_config(config))
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
