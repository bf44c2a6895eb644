//! The bound on spans waiting to be sent, and the count of those dropped. [`Gate`] wraps
//! the SDK's batch processor: past `max_queue` spans pending (queued or being exported) a
//! new span is dropped and counted, never waited for. [`Counted`] wraps the exporter and
//! gives the pending spans back when a batch is done, sent or not. The first drop and the
//! first failed export (spans or metrics, [`Told`]) are reported once each, in words, through the front door's
//! [`Reporter`] (the SDK keeps its own drop count private and prints nothing here).

use opentelemetry::Context;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Where telemetry's own problems are told: one line each (the CLI prints it on stderr,
/// the service and the studio log it).
pub type Reporter = Arc<dyn Fn(&str) + Send + Sync>;

/// The counts shared by the gate and the exporter.
pub(crate) struct Shared {
    pub(crate) endpoint: String,
    pub(crate) max_queue: usize,
    pending: AtomicUsize,
    dropped: AtomicU64,
    told_drop: AtomicBool,
    told_failure: AtomicBool,
    pub(crate) report: Reporter,
}

impl Shared {
    pub(crate) fn new(endpoint: String, max_queue: usize, report: Reporter) -> Arc<Shared> {
        Arc::new(Shared {
            endpoint,
            max_queue,
            pending: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            told_drop: AtomicBool::new(false),
            told_failure: AtomicBool::new(false),
            report,
        })
    }

    /// Spans dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Takes a place in the queue, or counts a drop.
    fn admit(&self) -> bool {
        let admitted = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.max_queue).then_some(n + 1))
            .is_ok();
        if !admitted {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            if !self.told_drop.swap(true, Ordering::AcqRel) {
                (self.report)(&format!(
                    "telemetry: the collector at {} is down or slow; spans are being dropped (runs are not affected)",
                    self.endpoint
                ));
            }
        }
        admitted
    }

    fn release(&self, n: usize) {
        let _ = self.pending.fetch_update(Ordering::AcqRel, Ordering::Acquire, |p| Some(p.saturating_sub(n)));
    }

    /// An export failed: the first failure (of spans or metrics) is told.
    fn failed(&self, what: &str, endpoint: &str, error: &dyn fmt::Display) {
        if !self.told_failure.swap(true, Ordering::AcqRel) {
            (self.report)(&format!(
                "telemetry: sending {what} to {endpoint} failed ({error}); check that an OTLP collector listens there (runs are not affected)"
            ));
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("endpoint", &self.endpoint)
            .field("max_queue", &self.max_queue)
            .field("pending", &self.pending)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

/// A span processor that bounds what waits to be sent.
#[derive(Debug)]
pub(crate) struct Gate<P> {
    pub(crate) inner: P,
    pub(crate) shared: Arc<Shared>,
}

impl<P: SpanProcessor> SpanProcessor for Gate<P> {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        self.inner.on_start(span, cx);
    }

    fn on_end(&self, span: SpanData) {
        if self.shared.admit() {
            self.inner.on_end(span);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// An exporter that gives back the gate's places when a batch is done.
#[derive(Debug)]
pub(crate) struct Counted<E> {
    pub(crate) inner: E,
    pub(crate) shared: Arc<Shared>,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        let n = batch.len();
        let sent = self.inner.export(batch);
        async move {
            let result = sent.await;
            self.shared.release(n);
            if let Err(e) = &result {
                self.shared.failed("spans", &self.shared.endpoint, e);
            }
            result
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// A metric exporter that tells its first failure like [`Counted`] does.
#[derive(Debug)]
pub(crate) struct Told<E> {
    pub(crate) inner: E,
    pub(crate) endpoint: String,
    pub(crate) shared: Arc<Shared>,
}

impl<E: PushMetricExporter> PushMetricExporter for Told<E> {
    fn export(&self, metrics: &ResourceMetrics) -> impl Future<Output = OTelSdkResult> + Send {
        let sent = self.inner.export(metrics);
        async move {
            let result = sent.await;
            if let Err(e) = &result {
                self.shared.failed("metrics", &self.endpoint, e);
            }
            result
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn recorder() -> (Reporter, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        (Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned())), lines)
    }

    #[test]
    fn past_the_cap_spans_are_dropped_counted_and_told_once() {
        let (report, lines) = recorder();
        let shared = Shared::new("http://127.0.0.1:9/v1/traces".into(), 3, report);
        let admitted = (0..10).filter(|_| shared.admit()).count();
        assert_eq!(admitted, 3);
        assert_eq!(shared.dropped(), 7);
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("http://127.0.0.1:9/v1/traces") && lines[0].contains("dropped"), "{lines:?}");
    }

    #[test]
    fn an_exported_batch_gives_its_places_back() {
        let (report, _) = recorder();
        let shared = Shared::new("x".into(), 2, report);
        assert!(shared.admit() && shared.admit() && !shared.admit());
        shared.release(2);
        assert!(shared.admit());
        assert_eq!(shared.dropped(), 1);
    }

    #[test]
    fn only_the_first_failure_is_told() {
        let (report, lines) = recorder();
        let shared = Shared::new("http://c:4318/v1/traces".into(), 2, report);
        shared.failed("spans", "http://c:4318/v1/traces", &"connection refused");
        shared.failed("metrics", "http://c:4318/v1/metrics", &"connection refused");
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("connection refused") && lines[0].contains("check that"), "{lines:?}");
    }
}
