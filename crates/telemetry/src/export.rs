//! The OTLP exporters for spans and metrics: HTTP/protobuf through the blocking reqwest
//! client (feature `otlp-http`), gRPC through tonic (feature `otlp-grpc`) on a tokio
//! runtime of its own ([`Keep`]), `https://` with rustls and the system's root
//! certificates. A protocol this build lacks is refused with `OTLP_PROTOCOL_UNAVAILABLE`.

#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
use crate::Protocol;
use crate::{Config, Error, Result};

#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
pub(crate) type Spans = opentelemetry_otlp::SpanExporter;
#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
pub(crate) type Metrics = opentelemetry_otlp::MetricExporter;
#[cfg(not(any(feature = "otlp-http", feature = "otlp-grpc")))]
pub(crate) type Spans = none::NoExporter;
#[cfg(not(any(feature = "otlp-http", feature = "otlp-grpc")))]
pub(crate) type Metrics = none::NoExporter;

#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
fn failed(endpoint: &str, e: impl std::fmt::Display) -> Error {
    Error::Exporter { endpoint: endpoint.to_owned(), message: e.to_string() }
}

/// What the exporters need kept alive as long as they may export: for gRPC, the tokio
/// runtime its channel lives on. tonic's channel spawns its connection tasks on the
/// runtime it is built in, while the SDK's batch processor and periodic reader call the
/// exporter from threads of their own; a runtime of our own serves both the CLI (whose
/// runtime is gone when [`crate::Otel::shutdown`] sends the last spans) and the studio.
#[derive(Debug, Default)]
pub(crate) struct Keep {
    #[cfg(feature = "otlp-grpc")]
    runtime: Option<tokio::runtime::Runtime>,
}

impl Keep {
    /// Starts the gRPC runtime (one worker thread) when `config` exports over gRPC.
    pub(crate) fn new(config: &Config) -> Result<Keep> {
        #[cfg(feature = "otlp-grpc")]
        if config.protocol == Protocol::Grpc && (config.traces_endpoint.is_some() || config.metrics_endpoint.is_some())
        {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("otel-grpc")
                .enable_all()
                .build()
                .map_err(|e| failed(config.traces_endpoint.as_deref().unwrap_or_default(), e))?;
            return Ok(Keep { runtime: Some(runtime) });
        }
        let _ = config;
        Ok(Keep::default())
    }
}

#[cfg(feature = "otlp-grpc")]
impl Drop for Keep {
    fn drop(&mut self) {
        // Without waiting for its tasks, and allowed where blocking is not (the last
        // holder may be dropped inside the studio's runtime).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Builds one exporter over the configured protocol; `$builder` is the signal's
/// `…Exporter::builder()`.
#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
macro_rules! build {
    ($config:expr, $endpoint:expr, $keep:expr, $builder:expr) => {{
        let (config, endpoint, keep): (&Config, &str, &Keep) = ($config, $endpoint, $keep);
        let _ = keep;
        match config.protocol {
            #[cfg(feature = "otlp-http")]
            Protocol::HttpProtobuf => {
                use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
                let mut builder = $builder.with_http().with_endpoint(endpoint.to_owned()).with_timeout(config.timeout);
                if !config.headers.is_empty() {
                    builder = builder.with_headers(config.headers.iter().cloned().collect());
                }
                if !config.retries {
                    builder = builder.with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled());
                }
                builder
                    .with_http_client(http_client(endpoint, config.timeout)?)
                    .build()
                    .map_err(|e| failed(endpoint, e))
            }
            #[cfg(feature = "otlp-grpc")]
            Protocol::Grpc => {
                use opentelemetry_otlp::{WithExportConfig, WithTonicConfig};
                let mut builder = $builder
                    .with_tonic()
                    .with_endpoint(endpoint.to_owned())
                    .with_timeout(config.timeout)
                    .with_metadata(grpc_metadata(config, endpoint)?);
                if is_https(endpoint) {
                    // tonic's default TLS config trusts no root at all.
                    let tls = opentelemetry_otlp::tonic_types::transport::ClientTlsConfig::new().with_native_roots();
                    builder = builder.with_tls_config(tls);
                }
                if !config.retries {
                    builder = builder.with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled());
                }
                // The channel's tasks are spawned on our runtime as it is built.
                let _entered = keep.runtime.as_ref().map(tokio::runtime::Runtime::enter);
                builder.build().map_err(|e| failed(endpoint, e))
            }
            #[allow(unreachable_patterns)] // with both features every protocol has an arm
            other => Err(Error::ProtocolUnavailable { protocol: other.as_str() }),
        }
    }};
}

#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
pub(crate) fn spans(config: &Config, endpoint: &str, keep: &Keep) -> Result<Spans> {
    build!(config, endpoint, keep, opentelemetry_otlp::SpanExporter::builder())
}

#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
pub(crate) fn metrics(config: &Config, endpoint: &str, keep: &Keep) -> Result<Metrics> {
    build!(config, endpoint, keep, opentelemetry_otlp::MetricExporter::builder())
}

#[cfg(not(any(feature = "otlp-http", feature = "otlp-grpc")))]
pub(crate) fn spans(config: &Config, _endpoint: &str, _keep: &Keep) -> Result<Spans> {
    Err(Error::ProtocolUnavailable { protocol: config.protocol.as_str() })
}

#[cfg(not(any(feature = "otlp-http", feature = "otlp-grpc")))]
pub(crate) fn metrics(config: &Config, _endpoint: &str, _keep: &Keep) -> Result<Metrics> {
    Err(Error::ProtocolUnavailable { protocol: config.protocol.as_str() })
}

/// The blocking client the HTTP exporter sends with. reqwest loads the system's root
/// certificates when a client is built and refuses to build one without any (a slim
/// container): for an `https://` collector that is `OTLP_TLS_ROOTS_MISSING`, which
/// [`crate::Otel::start`] turns into a warning; a plain `http://` one gets a client that
/// trusts no root, since it never checks a certificate. Built on a thread of its own, as
/// the exporter would: the blocking client starts a runtime, which cannot be done inside one.
#[cfg(feature = "otlp-http")]
fn http_client(endpoint: &str, timeout: std::time::Duration) -> Result<reqwest::blocking::Client> {
    let build = move |plain: bool| {
        std::thread::spawn(move || {
            // ring, as for every HTTP client of mcpflow (mcpflow-auth's trust.rs says why).
            let _kept_if_one_is_installed = rustls::crypto::ring::default_provider().install_default();
            let builder = reqwest::blocking::Client::builder().timeout(timeout);
            let builder = if plain { builder.tls_certs_only(Vec::<reqwest::Certificate>::new()) } else { builder };
            builder.build().map_err(|e| with_sources(&e))
        })
        .join()
        .unwrap_or_else(|_| Err("the thread building the HTTP client panicked".to_owned()))
    };
    match build(false) {
        Ok(client) => Ok(client),
        Err(reason) if is_https(endpoint) => Err(Error::TlsRootsMissing { endpoint: endpoint.to_owned(), reason }),
        Err(_) => build(true).map_err(|e| failed(endpoint, e)),
    }
}

/// An error with its sources (reqwest's "no root certificates" is a source).
#[cfg(feature = "otlp-http")]
fn with_sources(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(any(feature = "otlp-http", feature = "otlp-grpc"))]
fn is_https(endpoint: &str) -> bool {
    endpoint.parse::<http::Uri>().is_ok_and(|uri| uri.scheme() == Some(&http::uri::Scheme::HTTPS))
}

/// The settings' headers as gRPC metadata; an invalid one is named.
#[cfg(feature = "otlp-grpc")]
fn grpc_metadata(config: &Config, endpoint: &str) -> Result<opentelemetry_otlp::tonic_types::metadata::MetadataMap> {
    let invalid =
        |name: &str| failed(endpoint, format!("the header `{name}` is not a valid gRPC metadata name and value"));
    let mut headers = http::HeaderMap::new();
    for (name, value) in &config.headers {
        let key = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid(name))?;
        let value = http::HeaderValue::from_str(value).map_err(|_| invalid(name))?;
        headers.insert(key, value);
    }
    Ok(opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(headers))
}

/// A build without exporters: the types exist, no value of them does.
#[cfg(not(any(feature = "otlp-http", feature = "otlp-grpc")))]
mod none {
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::metrics::Temporality;
    use opentelemetry_sdk::metrics::data::ResourceMetrics;
    use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
    use opentelemetry_sdk::trace::{SpanData, SpanExporter};
    use std::time::Duration;

    #[derive(Debug)]
    pub(crate) enum NoExporter {}

    impl SpanExporter for NoExporter {
        async fn export(&self, _batch: Vec<SpanData>) -> OTelSdkResult {
            match *self {}
        }
    }

    impl PushMetricExporter for NoExporter {
        async fn export(&self, _metrics: &ResourceMetrics) -> OTelSdkResult {
            match *self {}
        }
        fn force_flush(&self) -> OTelSdkResult {
            match *self {}
        }
        fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
            match *self {}
        }
        fn temporality(&self) -> Temporality {
            match *self {}
        }
    }
}
