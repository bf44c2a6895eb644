//! mcpflow's OpenTelemetry export. [`Otel`] implements the engine's
//! [`Telemetry`](mcpflow_engine::Telemetry) over the OTel SDK: spans go through a bounded
//! batch processor on its own thread to an OTLP exporter (HTTP/protobuf with the blocking
//! reqwest client; gRPC through tonic on a small runtime of its own), so a run never
//! waits for a collector. [`Config::resolve`] decides whether it is on at all (`config.rs`); `gate.rs`
//! bounds the queue and counts what is dropped.
#![forbid(unsafe_code)]

mod config;
mod defer;
mod export;
mod gate;
pub mod log;
mod metrics;
mod priority;

pub use config::{Config, Flags, Protocol, Settings, env_reference};
pub use gate::Reporter;

use defer::{Deferred, Job};
use gate::{Counted, Gate, Shared, Told};
use mcpflow_engine::telemetry::{
    Attr, Measure, OpenSpan, SpanKind, SpanName, SpanStart, SpanStatus, Telemetry, TraceContext,
};
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::{
    Span as _, SpanContext, TraceContextExt as _, TraceFlags, TraceState, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Array, Context, Key, KeyValue, StringValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, IdGenerator, RandomIdGenerator, SdkTracer, SdkTracerProvider,
};
use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Telemetry's errors; each says what to change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(
        "the OTLP endpoint `{value}` (from {from}) is not an http:// or https:// URL with a host; give the collector's base URL, e.g. http://localhost:4318"
    )]
    EndpointInvalid { value: String, from: &'static str },
    #[error("the OTLP protocol `{value}` (from {from}) is not supported; use `http/protobuf` or `grpc`")]
    ProtocolUnknown { value: String, from: &'static str },
    #[error(
        "this build of mcpflow has no {protocol} exporter; choose the other OTLP protocol (OTEL_EXPORTER_OTLP_PROTOCOL, or `protocol` in settings), or use a build with the `otlp-http`/`otlp-grpc` feature"
    )]
    ProtocolUnavailable { protocol: &'static str },
    #[error(
        "the telemetry header `{name}` in settings.json must be written as `${{env:NAME}}`, so that the secret stays out of the file; put the value in an environment variable"
    )]
    HeaderLiteral { name: String },
    #[error(
        "the telemetry header name `{name}` is not a valid HTTP header name; use letters, digits and `-` (e.g. x-honeycomb-team)"
    )]
    HeaderNameInvalid { name: String },
    #[error(
        "the telemetry header `{name}` reads the environment variable `{var}`, which is not set; set it or remove the header"
    )]
    HeaderEnvMissing { name: String, var: String },
    #[error("{var}=`{value}` is not {expected}; fix or unset it")]
    EnvInvalid { var: &'static str, value: String, expected: &'static str },
    #[error(
        "could not set up the OTLP exporter for {endpoint}: {message}; check the endpoint and the OTEL_EXPORTER_OTLP_* variables"
    )]
    Exporter { endpoint: String, message: String },
    #[error(
        "telemetry to {endpoint} is off for this process: it is https, and no root certificate could be loaded \
         from the system's trust store ({reason}); install the CA certificates (e.g. `apt-get install \
         ca-certificates`), or set SSL_CERT_FILE to a PEM file of them (SSL_CERT_DIR to a folder of them)"
    )]
    TlsRootsMissing { endpoint: String, reason: String },
}

impl Error {
    /// A stable code for each kind of error.
    pub fn code(&self) -> &'static str {
        match self {
            Error::EndpointInvalid { .. } => "OTLP_ENDPOINT_INVALID",
            Error::ProtocolUnknown { .. } => "OTLP_PROTOCOL_UNKNOWN",
            Error::ProtocolUnavailable { .. } => "OTLP_PROTOCOL_UNAVAILABLE",
            Error::HeaderLiteral { .. } => "OTLP_HEADER_LITERAL",
            Error::HeaderNameInvalid { .. } => "OTLP_HEADER_NAME_INVALID",
            Error::HeaderEnvMissing { .. } => "OTLP_HEADER_ENV_MISSING",
            Error::EnvInvalid { .. } => "OTEL_ENV_INVALID",
            Error::Exporter { .. } => "OTLP_EXPORTER_FAILED",
            Error::TlsRootsMissing { .. } => "OTLP_TLS_ROOTS_MISSING",
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How long [`Otel::shutdown`] waits for the last spans and metrics to be sent, in all.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(2);

/// The OpenTelemetry SDK behind the engine's `Telemetry`. Build it outside any async
/// runtime's worker or from one (the exporter's HTTP client is made on a thread of its
/// own); call [`Otel::shutdown`] once, off the runtime, when the process is done.
pub struct Otel {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    /// The span ids of late spans.
    ids: RandomIdGenerator,
    /// `None`: metrics are off (`OTEL_METRICS_EXPORTER=none`).
    meter_provider: Option<SdkMeterProvider>,
    /// Span ends and measurements, done off the run's thread (`defer.rs`).
    deferred: Arc<Deferred>,
    shared: Arc<Shared>,
    capture_payloads: bool,
    /// Kept until the last spans are sent (the gRPC exporter's runtime).
    keep: Arc<export::Keep>,
}

impl fmt::Debug for Otel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Otel").field("shared", &self.shared).finish_non_exhaustive()
    }
}

/// An exporter that may be set up (`None`: no endpoint), with one that cannot be for want
/// of root certificates left out after `warn` — the run goes on without it.
fn left_out_without_roots<T>(exporter: Option<Result<T>>, warn: impl Fn(&Error)) -> Result<Option<T>> {
    match exporter.transpose() {
        Err(error @ Error::TlsRootsMissing { .. }) => {
            warn(&error);
            Ok(None)
        }
        other => other,
    }
}

impl Otel {
    /// Sets up the exporter, the bounded batch processor and the tracer. Nothing is sent
    /// until spans end.
    /// Its threads (the batch processor's, the metrics reader's, the HTTP client's, the
    /// gRPC runtime's, `defer.rs`'s worker) run at a lower priority than the caller
    /// (`priority.rs`, on Linux).
    pub fn start(config: &Config, report: Reporter) -> Result<Otel> {
        priority::lowered(|| Otel::start_here(config, report.clone()))
    }

    fn start_here(config: &Config, report: Reporter) -> Result<Otel> {
        let endpoint = config.traces_endpoint.clone().unwrap_or_default();
        let shared = Shared::new(endpoint, config.max_queue, report);
        let resource = Resource::builder().with_service_name(config.service_name.clone()).build();
        let keep = Arc::new(export::Keep::new(config)?);
        // Without a traces endpoint spans are still made, so that ids propagate, and go nowhere.
        let mut builder =
            SdkTracerProvider::builder().with_resource(resource.clone()).with_id_generator(Pinned::default());
        // Without a trust store an https collector is told once and left out: the run goes on.
        let told = Cell::new(false);
        let warn = |error: &Error| {
            if !told.replace(true) {
                (shared.report)(&format!("warning[{}]: {error}", error.code()));
            }
        };
        let traces = config.traces_endpoint.as_deref().map(|e| export::spans(config, e, &keep));
        let traces = left_out_without_roots(traces, warn)?;
        if let Some(exporter) = traces {
            let batch = BatchConfigBuilder::default()
                .with_max_queue_size(config.max_queue)
                .with_scheduled_delay(config.scheduled_delay)
                .build();
            let processor = BatchSpanProcessor::builder(Counted { inner: exporter, shared: shared.clone() })
                .with_batch_config(batch)
                .build();
            builder = builder.with_span_processor(Gate { inner: processor, shared: shared.clone() });
        }
        let provider = builder.build();
        let tracer = provider.tracer("mcpflow");
        let metrics = config.metrics_endpoint.as_ref().map(|e| export::metrics(config, e, &keep).map(|x| (x, e)));
        let metrics = left_out_without_roots(metrics, warn)?;
        let (meter_provider, instruments) = match metrics {
            Some((inner, endpoint)) => {
                let exporter = Told { inner, endpoint: endpoint.clone(), shared: shared.clone() };
                let reader = PeriodicReader::builder(exporter).with_interval(config.metric_interval).build();
                let meter_provider = SdkMeterProvider::builder().with_reader(reader).with_resource(resource).build();
                let instruments = metrics::Instruments::new(&meter_provider.meter("mcpflow"), shared.clone());
                (Some(meter_provider), Some(instruments))
            }
            None => (None, None),
        };
        let deferred = Deferred::start(instruments, tracer.clone());
        Ok(Otel {
            provider,
            tracer,
            ids: RandomIdGenerator::default(),
            meter_provider,
            deferred,
            shared,
            capture_payloads: config.capture_payloads,
            keep,
        })
    }

    /// Spans dropped so far because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped()
    }

    /// Sends what is queued, waiting at most [`SHUTDOWN_TIMEOUT`] in all, and reports the
    /// spans dropped, if any. Blocking: call it off the async runtime. The SDK's meter
    /// provider does not bound its own shutdown, so both run on a thread of their own and
    /// are left behind when the cap passes (the process is about to exit).
    pub fn shutdown(&self) {
        let (done, finished) = std::sync::mpsc::channel();
        if self.shutdown_on_a_thread(done) {
            let _ = finished.recv_timeout(SHUTDOWN_TIMEOUT);
        }
        self.tell_dropped();
    }

    /// [`Otel::shutdown`] without waiting: the last spans are sent on a thread of its own,
    /// which then reports the spans dropped. For a process that goes on (the studio's
    /// service replacing its exporter after a settings change); never blocks the caller.
    pub fn shutdown_detached(&self) {
        let (done, finished) = std::sync::mpsc::channel();
        if self.shutdown_on_a_thread(done) {
            let shared = self.shared.clone();
            let waiter = std::thread::Builder::new().name("otel-shutdown-wait".into()).spawn(move || {
                let _ = finished.recv_timeout(SHUTDOWN_TIMEOUT);
                tell_dropped(&shared);
            });
            if waiter.is_ok() {
                return;
            }
        }
        self.tell_dropped();
    }

    /// Shuts both providers down on a thread of its own, each within half the cap; false
    /// when no thread could be made.
    fn shutdown_on_a_thread(&self, done: std::sync::mpsc::Sender<()>) -> bool {
        let provider = self.provider.clone();
        let meter_provider = self.meter_provider.clone();
        let deferred = self.deferred.clone();
        // The gRPC runtime outlives the last export even when `self` is dropped first.
        let keep = self.keep.clone();
        std::thread::Builder::new()
            .name("otel-shutdown".into())
            .spawn(move || {
                // What the runs queued goes to the providers before they send their last.
                deferred.close(true);
                // Errors here are a collector that did not answer in time; the first failed
                // export was reported already, and no run's result depends on it.
                let _ = provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT / 2);
                if let Some(meter_provider) = meter_provider {
                    let _ = meter_provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT / 2);
                }
                let _ = done.send(());
                drop(keep);
            })
            .is_ok()
    }

    fn tell_dropped(&self) {
        tell_dropped(&self.shared);
    }
}

impl Drop for Otel {
    /// An exporter dropped without [`Otel::shutdown`] still has its worker do what the
    /// runs queued (the SDK then sends it when its own providers drop), and stop.
    fn drop(&mut self) {
        self.deferred.close(false);
    }
}

fn tell_dropped(shared: &Shared) {
    let dropped = shared.dropped();
    if dropped > 0 {
        (shared.report)(&format!("telemetry: {dropped} spans dropped"));
    }
}

impl Telemetry for Otel {
    fn start(&self, span: SpanStart<'_>) -> Box<dyn OpenSpan> {
        // A span of a span of ours (a step's, an iteration's, a call's) takes its parent's
        // sampling decision, which is what every standard sampler decides for it (parent
        // based, always on or off, or by the trace id's ratio): it gets its id now and is
        // made in the SDK when it has ended, off the run's thread (`defer.rs`).
        if let Some(parent) = span.parent.filter(|p| !p.remote) {
            let context = TraceContext {
                trace_id: parent.trace_id,
                span_id: self.ids.new_span_id().to_bytes(),
                sampled: parent.sampled,
                remote: false,
                state: parent.state.clone(),
            };
            return Box::new(LateSpan {
                late: Some(Late {
                    name: span.name,
                    kind: span.kind,
                    parent: parent.clone(),
                    span_id: context.span_id,
                    start: std::time::SystemTime::now(),
                    attrs: span.attrs,
                }),
                context,
                deferred: self.deferred.clone(),
            });
        }
        let sdk = sdk_span(&self.tracer, span.name.into_cow(), span.kind, span.parent, span.attrs, None);
        let context = trace_context(sdk.span_context(), span.parent);
        Box::new(OtelSpan { sdk, context, deferred: self.deferred.clone() })
    }

    fn measure(&self, measure: Measure) {
        if self.deferred.measures() {
            self.deferred.push(Job::Measure(measure));
        }
    }

    fn capture_payloads(&self) -> bool {
        self.capture_payloads
    }
}

/// A span whose parent is a span of ours, until it ends: what the SDK will be told.
pub(crate) struct Late {
    name: SpanName,
    kind: SpanKind,
    parent: TraceContext,
    span_id: [u8; 8],
    start: std::time::SystemTime,
    attrs: Vec<(&'static str, Attr)>,
}

thread_local! {
    /// The span id the next span made on this thread gets ([`Pinned`]).
    static NEXT_SPAN_ID: Cell<Option<opentelemetry::trace::SpanId>> = const { Cell::new(None) };
}

/// The SDK's random ids, but for a late span, which gets the id it was given when it
/// started (the SDK 0.33 tracer takes span ids only from its generator).
#[derive(Debug, Default)]
struct Pinned(RandomIdGenerator);

impl IdGenerator for Pinned {
    fn new_trace_id(&self) -> opentelemetry::trace::TraceId {
        self.0.new_trace_id()
    }

    fn new_span_id(&self) -> opentelemetry::trace::SpanId {
        NEXT_SPAN_ID.with(Cell::take).unwrap_or_else(|| self.0.new_span_id())
    }
}

impl Late {
    /// The SDK span, with the id, start time and attributes the run gave it.
    pub(crate) fn make(self, tracer: &SdkTracer) -> opentelemetry_sdk::trace::Span {
        NEXT_SPAN_ID.with(|next| next.set(Some(opentelemetry::trace::SpanId::from_bytes(self.span_id))));
        let span = sdk_span(tracer, self.name.into_cow(), self.kind, Some(&self.parent), self.attrs, Some(self.start));
        NEXT_SPAN_ID.with(Cell::take);
        span
    }
}

/// A span of a span of ours (see [`Otel`]'s `start`).
struct LateSpan {
    /// Taken when ended.
    late: Option<Late>,
    context: TraceContext,
    deferred: Arc<Deferred>,
}

impl OpenSpan for LateSpan {
    fn context(&self) -> &TraceContext {
        &self.context
    }

    fn set(&mut self, key: &'static str, value: Attr) {
        if let Some(late) = &mut self.late {
            late.attrs.push((key, value));
        }
    }

    fn end(mut self: Box<Self>, status: SpanStatus) {
        self.finish(status);
    }
}

impl LateSpan {
    fn finish(&mut self, status: SpanStatus) {
        // Not sampled: nothing is sent (its id still went to the servers).
        if let Some(late) = self.late.take().filter(|_| self.context.sampled) {
            self.deferred.push(Job::Late { late, status, at: std::time::SystemTime::now() });
        }
    }
}

impl Drop for LateSpan {
    /// Ended when dropped, as an SDK span is.
    fn drop(&mut self) {
        self.finish(SpanStatus::Unset);
    }
}

/// A started SDK span and its context in the engine's terms.
struct OtelSpan {
    sdk: opentelemetry_sdk::trace::Span,
    context: TraceContext,
    deferred: Arc<Deferred>,
}

impl OpenSpan for OtelSpan {
    fn context(&self) -> &TraceContext {
        &self.context
    }

    fn set(&mut self, key: &'static str, value: Attr) {
        self.sdk.set_attribute(key_value(key, value));
    }

    fn end(self: Box<Self>, status: SpanStatus) {
        let OtelSpan { sdk: span, deferred, .. } = *self;
        deferred.push(Job::End { span: Box::new(span), status, at: std::time::SystemTime::now() });
    }
}

/// Starts an SDK span: a child of `parent` (as a remote context: the SDK needs only its
/// ids), or the root of a new trace; at `start`, or now.
fn sdk_span(
    tracer: &SdkTracer,
    name: std::borrow::Cow<'static, str>,
    kind: SpanKind,
    parent: Option<&TraceContext>,
    attrs: Vec<(&'static str, Attr)>,
    start: Option<std::time::SystemTime>,
) -> opentelemetry_sdk::trace::Span {
    let parent = match parent {
        Some(p) => Context::new().with_remote_span_context(span_context(p)),
        None => Context::new(),
    };
    let kind = match kind {
        SpanKind::Internal => opentelemetry::trace::SpanKind::Internal,
        SpanKind::Client => opentelemetry::trace::SpanKind::Client,
        SpanKind::Server => opentelemetry::trace::SpanKind::Server,
    };
    let attrs = attrs.into_iter().map(|(k, v)| key_value(k, v)).collect::<Vec<_>>();
    let mut builder = tracer.span_builder(name).with_kind(kind).with_attributes(attrs);
    builder.start_time = start;
    builder.start_with_context(tracer, &parent)
}

pub(crate) fn key_value(key: &'static str, value: Attr) -> KeyValue {
    let value = match value {
        Attr::Static(s) => Value::String(StringValue::from(s)),
        Attr::Str(s) => Value::String(StringValue::from(s)),
        Attr::Int(i) => Value::I64(i),
        Attr::Bool(b) => Value::Bool(b),
        Attr::F64(f) => Value::F64(f),
        Attr::IntArray(a) => Value::Array(Array::I64(a.to_vec())),
    };
    KeyValue::new(Key::from_static_str(key), value)
}

/// The engine's context as the SDK's (a parent from elsewhere: remote).
fn span_context(ctx: &TraceContext) -> SpanContext {
    let flags = if ctx.sampled { TraceFlags::SAMPLED } else { TraceFlags::default() };
    // A tracestate that the SDK's stricter rules refuse is left out rather than failing.
    let state = ctx.state.as_deref().and_then(|s| s.parse::<TraceState>().ok()).unwrap_or_default();
    SpanContext::new(
        opentelemetry::trace::TraceId::from_bytes(ctx.trace_id),
        opentelemetry::trace::SpanId::from_bytes(ctx.span_id),
        flags,
        ctx.remote,
        state,
    )
}

/// A started span's context in the engine's terms; the tracestate is the parent's.
fn trace_context(sc: &SpanContext, parent: Option<&TraceContext>) -> TraceContext {
    TraceContext {
        trace_id: sc.trace_id().to_bytes(),
        span_id: sc.span_id().to_bytes(),
        sampled: sc.is_sampled(),
        remote: false,
        state: parent.and_then(|p| p.state.clone()),
    }
}
