//! An OTLP receiver on loopback for tests: `POST /v1/traces` and `/v1/metrics` bodies
//! (OTLP/HTTP, [`Receiver::start`]) or the `TraceService`/`MetricsService` `Export` calls
//! (OTLP/gRPC, [`Receiver::start_grpc`], `grpc.rs`) are decoded with the official protobuf
//! definitions (`opentelemetry-proto`) into flat [`SpanRec`]s and [`MetricRec`]s when they
//! are read, not as they arrive: while a run exports, the receiver only takes the bytes,
//! so its own decoding does not compete with the process it measures for the machine's
//! cores (a collector is not part of the engine's overhead, `benches/engine.rs` case d);
//! other requests are answered and counted. [`Receiver::stop`] closes the port, so a collector
//! that is down can be simulated. A current-thread tokio runtime on a thread of its own
//! ([`crate::loopback`]; hyper through axum for HTTP/1.1, `h2` for gRPC): it works the
//! same from a sync test and beside any async runtime.

mod grpc;

use crate::loopback::{self, Served};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use prost::Message;
use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Request bodies larger than this are refused (the OTLP exporter's own cap).
const BODY_MAX: usize = 64 * 1024 * 1024;

/// One received span, ids in lower-case hex.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpanRec {
    pub trace_id: String,
    pub span_id: String,
    /// `None` for a root.
    pub parent_span_id: Option<String>,
    pub name: String,
    /// `internal`, `server`, `client`, `producer`, `consumer`, `unspecified`.
    pub kind: &'static str,
    pub attrs: BTreeMap<String, serde_json::Value>,
    /// `unset`, `ok`, `error`.
    pub status: &'static str,
    pub status_message: String,
    /// The resource's `service.name`.
    pub service: String,
}

/// One data point of a received metric (the last export's, as sent).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PointRec {
    /// `counter`/`up_down_counter` (sums), `gauge`, `histogram`, `other`.
    pub kind: &'static str,
    pub attrs: BTreeMap<String, serde_json::Value>,
    /// A sum's or gauge's value, a histogram's sum.
    pub value: f64,
    /// A histogram's count (0 otherwise).
    pub count: u64,
}

/// A metric as received, with its unit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MetricRec {
    pub name: String,
    pub unit: String,
    pub points: Vec<PointRec>,
}

#[derive(Debug, Default)]
struct Received {
    /// Bodies taken and not yet decoded (`None`: not even framed as one message).
    pending: Vec<(Signal, Option<Vec<u8>>)>,
    spans: Vec<SpanRec>,
    metrics: Vec<MetricRec>,
    /// Requests to other paths (or gRPC methods), by path.
    other: BTreeMap<String, usize>,
    /// Bodies that did not decode.
    undecodable: usize,
}

/// What an OTLP request carries.
#[derive(Debug, Clone, Copy)]
enum Signal {
    Traces,
    Metrics,
}

impl Received {
    /// Keeps one request's protobuf message (`None`: it could not even be framed) for
    /// [`Received::decode`].
    fn record(&mut self, signal: Signal, message: Option<Vec<u8>>) {
        self.pending.push((signal, message));
    }

    /// Decodes the messages kept so far, in arrival order.
    fn decode(&mut self) {
        for (signal, message) in std::mem::take(&mut self.pending) {
            let Some(message) = message else {
                self.undecodable += 1;
                continue;
            };
            match signal {
                Signal::Traces => match ExportTraceServiceRequest::decode(message.as_slice()) {
                    Ok(request) => self.spans.extend(flatten(request)),
                    Err(_) => self.undecodable += 1,
                },
                Signal::Metrics => match ExportMetricsServiceRequest::decode(message.as_slice()) {
                    Ok(request) => self.metrics.extend(flatten_metrics(request)),
                    Err(_) => self.undecodable += 1,
                },
            }
        }
    }
}

/// A running receiver.
#[derive(Debug)]
pub struct Receiver {
    addr: SocketAddr,
    received: Arc<Mutex<Received>>,
    served: Served,
}

impl Receiver {
    /// Listens for OTLP/HTTP on `127.0.0.1:port` (0: any free port).
    pub fn start(port: u16) -> io::Result<Receiver> {
        Receiver::listen(port, "otlp-receiver", |listener, received| {
            let router = axum::Router::new().fallback(http_request).with_state(received);
            loopback::serve_http(listener, router)
        })
    }

    /// Listens for OTLP/gRPC on `127.0.0.1:port` (0: any free port): plain-text HTTP/2,
    /// as an exporter given an `http://` endpoint speaks it.
    pub fn start_grpc(port: u16) -> io::Result<Receiver> {
        Receiver::listen(port, "otlp-grpc-receiver", grpc::serve)
    }

    fn listen<Fut: Future<Output = ()>>(
        port: u16,
        name: &str,
        serve: impl FnOnce(tokio::net::TcpListener, Arc<Mutex<Received>>) -> Fut + Send + 'static,
    ) -> io::Result<Receiver> {
        let listener = loopback::bind(port)?;
        let addr = listener.local_addr()?;
        let received = Arc::new(Mutex::new(Received::default()));
        let r = received.clone();
        let served = Served::start(listener, name, move |listener| serve(listener, r))?;
        Ok(Receiver { addr, received, served })
    }

    /// The base URL to give an exporter (`http://127.0.0.1:PORT`), for either protocol.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// What was received, every message kept so far decoded.
    fn lock(&self) -> MutexGuard<'_, Received> {
        let mut received = self.received.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        received.decode();
        received
    }

    /// The spans received so far, in arrival order.
    pub fn spans(&self) -> Vec<SpanRec> {
        self.lock().spans.clone()
    }

    /// The metrics received so far, every export's in arrival order (a cumulative
    /// counter appears once per export).
    pub fn metrics(&self) -> Vec<MetricRec> {
        self.lock().metrics.clone()
    }

    /// Requests received on other paths (or gRPC methods), by path.
    pub fn other_requests(&self) -> BTreeMap<String, usize> {
        self.lock().other.clone()
    }

    /// Bodies that were not a valid `Export…ServiceRequest` (or gRPC messages not framed
    /// as one uncompressed message).
    pub fn undecodable(&self) -> usize {
        self.lock().undecodable
    }

    /// Waits until at least `n` spans have arrived, or `timeout`; returns what arrived.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<SpanRec> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if spans.len() >= n || Instant::now() >= deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes the port and the open connections: from now on a client is refused.
    pub fn stop(&mut self) {
        self.served.stop();
    }
}

/// The spans as indented trees, one per trace, children under their parent in arrival
/// order; a span whose parent did not arrive is shown as a root with its parent id.
pub fn tree(spans: &[SpanRec]) -> String {
    let ids: std::collections::HashSet<(&str, &str)> =
        spans.iter().map(|s| (s.trace_id.as_str(), s.span_id.as_str())).collect();
    let mut traces: Vec<&str> = Vec::new();
    for s in spans {
        if !traces.contains(&s.trace_id.as_str()) {
            traces.push(&s.trace_id);
        }
    }
    let mut out = String::new();
    for trace in traces {
        out.push_str(&format!("trace {trace}\n"));
        let roots = spans
            .iter()
            .filter(|s| s.trace_id == trace && s.parent_span_id.as_deref().is_none_or(|p| !ids.contains(&(trace, p))));
        for root in roots {
            write_span(&mut out, spans, root, 1);
        }
    }
    out
}

fn write_span(out: &mut String, spans: &[SpanRec], span: &SpanRec, depth: usize) {
    let indent = "  ".repeat(depth);
    let status = match span.status {
        "error" if span.status_message.is_empty() => " ERROR".to_owned(),
        "error" => format!(" ERROR {}", span.status_message),
        _ => String::new(),
    };
    let attrs = span.attrs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
    let line = format!("{indent}{} [{}]{status} {attrs}", span.name, span.kind);
    out.push_str(line.trim_end());
    out.push('\n');
    if depth > 64 {
        return; // a cycle of ids cannot make it loop forever
    }
    for child in
        spans.iter().filter(|s| s.trace_id == span.trace_id && s.parent_span_id.as_deref() == Some(&span.span_id))
    {
        write_span(out, spans, child, depth + 1);
    }
}

/// One OTLP/HTTP request: its body is kept for decoding (traces, metrics) or its path
/// counted; the answer is an empty `Export…ServiceResponse` (nothing rejected).
async fn http_request(
    axum::extract::State(received): axum::extract::State<Arc<Mutex<Received>>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let Some(request) = loopback::read_whole(request, BODY_MAX).await else {
        return http::StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let path = request.uri().path().to_owned();
    let body = request.into_body().to_vec();
    let mut received = received.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    match path.as_str() {
        "/v1/traces" => received.record(Signal::Traces, Some(body)),
        "/v1/metrics" => received.record(Signal::Metrics, Some(body)),
        _ => *received.other.entry(path).or_default() += 1,
    }
    ([(http::header::CONTENT_TYPE, "application/x-protobuf")]).into_response()
}

fn flatten(request: ExportTraceServiceRequest) -> Vec<SpanRec> {
    let mut out = Vec::new();
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| kv.value.as_ref())
            .map(|v| match json(v) {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .unwrap_or_default();
        for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
            let status = span.status.unwrap_or_default();
            out.push(SpanRec {
                trace_id: hex::encode(&span.trace_id),
                span_id: hex::encode(&span.span_id),
                parent_span_id: (!span.parent_span_id.is_empty()).then(|| hex::encode(&span.parent_span_id)),
                name: span.name,
                kind: match span.kind {
                    1 => "internal",
                    2 => "server",
                    3 => "client",
                    4 => "producer",
                    5 => "consumer",
                    _ => "unspecified",
                },
                attrs: span
                    .attributes
                    .iter()
                    .map(|kv| (kv.key.clone(), kv.value.as_ref().map_or(serde_json::Value::Null, json)))
                    .collect(),
                status: match status.code {
                    1 => "ok",
                    2 => "error",
                    _ => "unset",
                },
                status_message: status.message,
                service: service.clone(),
            });
        }
    }
    out
}

fn flatten_metrics(request: ExportMetricsServiceRequest) -> Vec<MetricRec> {
    let attrs = |kvs: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        kvs.iter().map(|kv| (kv.key.clone(), kv.value.as_ref().map_or(serde_json::Value::Null, json))).collect()
    };
    let number = |v: Option<number_data_point::Value>| match v {
        Some(number_data_point::Value::AsDouble(f)) => f,
        #[allow(clippy::cast_precision_loss)] // test values are small
        Some(number_data_point::Value::AsInt(i)) => i as f64,
        None => 0.0,
    };
    let mut out = Vec::new();
    for metric in request.resource_metrics.into_iter().flat_map(|r| r.scope_metrics).flat_map(|s| s.metrics) {
        let points = match &metric.data {
            Some(metric::Data::Sum(sum)) => {
                let kind = if sum.is_monotonic { "counter" } else { "up_down_counter" };
                sum.data_points
                    .iter()
                    .map(|p| PointRec { kind, attrs: attrs(&p.attributes), value: number(p.value), count: 0 })
                    .collect()
            }
            Some(metric::Data::Gauge(gauge)) => gauge
                .data_points
                .iter()
                .map(|p| PointRec { kind: "gauge", attrs: attrs(&p.attributes), value: number(p.value), count: 0 })
                .collect(),
            Some(metric::Data::Histogram(h)) => h
                .data_points
                .iter()
                .map(|p| PointRec {
                    kind: "histogram",
                    attrs: attrs(&p.attributes),
                    value: p.sum.unwrap_or_default(),
                    count: p.count,
                })
                .collect(),
            _ => vec![PointRec { kind: "other", attrs: BTreeMap::new(), value: 0.0, count: 0 }],
        };
        out.push(MetricRec { name: metric.name, unit: metric.unit, points });
    }
    out
}

fn json(value: &AnyValue) -> serde_json::Value {
    match &value.value {
        Some(any_value::Value::StringValue(s)) => s.clone().into(),
        Some(any_value::Value::BoolValue(b)) => (*b).into(),
        Some(any_value::Value::IntValue(i)) => (*i).into(),
        Some(any_value::Value::DoubleValue(f)) => (*f).into(),
        Some(any_value::Value::ArrayValue(a)) => a.values.iter().map(json).collect(),
        Some(any_value::Value::KvlistValue(kv)) => kv
            .values
            .iter()
            .map(|kv| (kv.key.clone(), kv.value.as_ref().map_or(serde_json::Value::Null, json)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        Some(any_value::Value::BytesValue(b)) => hex::encode(b).into(),
        _ => serde_json::Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::KeyValue;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};
    use std::io::{Read, Write};
    use std::net::TcpStream;

    fn post(port: u16, path: &str, body: &[u8]) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(s, "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len())
            .unwrap();
        s.write_all(body).unwrap();
        let mut answer = String::new();
        let mut buf = [0; 256];
        let n = s.read(&mut buf).unwrap();
        answer.push_str(&String::from_utf8_lossy(&buf[..n]));
        answer
    }

    fn rec(span: &str, parent: Option<&str>, name: &str) -> SpanRec {
        SpanRec {
            trace_id: "t".into(),
            span_id: span.into(),
            parent_span_id: parent.map(Into::into),
            name: name.into(),
            kind: "internal",
            attrs: BTreeMap::new(),
            status: "unset",
            status_message: String::new(),
            service: "mcpflow".into(),
        }
    }

    #[test]
    fn the_tree_puts_children_under_their_parents_in_arrival_order() {
        let spans = [
            rec("c", Some("b"), "tools/call echo"),
            rec("b", Some("a"), "step x"),
            rec("d", Some("a"), "step y"),
            rec("a", None, "run bp"),
            rec("e", Some("gone"), "orphan"),
        ];
        let expected = "trace t
  run bp [internal]
    step x [internal]
      tools/call echo [internal]
    step y [internal]
  orphan [internal]
";
        assert_eq!(tree(&spans), expected);
    }

    #[test]
    fn a_posted_request_is_decoded_and_a_stopped_receiver_refuses() {
        let mut receiver = Receiver::start(0).unwrap();
        let span = Span {
            trace_id: vec![1; 16],
            span_id: vec![2; 8],
            parent_span_id: vec![3; 8],
            name: "step a".into(),
            kind: 1,
            attributes: vec![KeyValue {
                key: "mcpflow.step.id".into(),
                value: Some(AnyValue { value: Some(any_value::Value::StringValue("a".into())) }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans { spans: vec![span], ..Default::default() }],
                ..Default::default()
            }],
        };
        assert!(post(receiver.port(), "/v1/traces", &request.encode_to_vec()).starts_with("HTTP/1.1 200"));
        assert!(post(receiver.port(), "/v1/traces", b"\xff\xff not protobuf").starts_with("HTTP/1.1 200"));
        let spans = receiver.wait_for(1, Duration::from_secs(5));
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].trace_id, "01".repeat(16));
        assert_eq!(spans[0].parent_span_id.as_deref(), Some("0303030303030303"));
        assert_eq!((spans[0].name.as_str(), spans[0].kind), ("step a", "internal"));
        assert_eq!(spans[0].attrs["mcpflow.step.id"], "a");
        assert_eq!(receiver.undecodable(), 1);
        let port = receiver.port();
        receiver.stop();
        assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    }
}
