//! The bound on spans waiting to be sent, and the count of those dropped. [`Gate`] wraps
//! the SDK's batch processor: past `max_queue` spans pending (queued or being exported) a
//! new span is dropped and counted, never waited for. [`Counted`] wraps the exporter and
//! gives the pending spans back when a batch is done, sent or not. The first drop and the
//! first failed export (spans or metrics, [`Told`]) are reported once each, in words, through the front door's
//! [`Reporter`] (the SDK keeps its own drop count private and prints nothing here).
//!
//! A collector that refuses an export is taken for down for a while (1 s, doubling with
//! each failure in a row up to 30 s): spans that end in that window are dropped and
//! counted at once, so a dead collector costs a run no encoding and no connection
//! attempts, only a clock read per span. The first export after the window tries again;
//! one that succeeds ends the backoff.

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
use std::time::{Duration, Instant};

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
    /// Until when (ms since `epoch`) the collector is taken for down; 0: it is not.
    down_until: AtomicU64,
    /// Failed span exports in a row (the backoff doubles with each).
    failures: AtomicU64,
    epoch: Instant,
    pub(crate) report: Reporter,
}

/// The first window a collector that refused an export is left alone.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
/// The longest.
const BACKOFF_MAX: Duration = Duration::from_secs(30);

impl Shared {
    pub(crate) fn new(endpoint: String, max_queue: usize, report: Reporter) -> Arc<Shared> {
        Arc::new(Shared {
            endpoint,
            max_queue,
            pending: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            told_drop: AtomicBool::new(false),
            told_failure: AtomicBool::new(false),
            down_until: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            epoch: Instant::now(),
            report,
        })
    }

    /// Spans dropped so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whether the collector is taken for down now (an export failed a moment ago).
    fn resting(&self) -> bool {
        let until = self.down_until.load(Ordering::Acquire);
        until != 0 && self.now_ms() < until
    }

    /// A span export failed: leave the collector alone for the next window.
    fn export_failed(&self) {
        let failures = self.failures.fetch_add(1, Ordering::AcqRel).min(16);
        let window = BACKOFF_FIRST.saturating_mul(1 << failures).min(BACKOFF_MAX);
        let window = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.down_until.store(self.now_ms().saturating_add(window), Ordering::Release);
    }

    /// A span export went through: the collector is up.
    fn export_succeeded(&self) {
        self.failures.store(0, Ordering::Release);
        self.down_until.store(0, Ordering::Release);
    }

    /// Takes a place in the queue, or counts a drop (the queue is full, or the collector
    /// refused the last export a moment ago).
    fn admit(&self) -> bool {
        let admitted = !self.resting()
            && self
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
            match &result {
                Ok(()) => self.shared.export_succeeded(),
                Err(e) => {
                    self.shared.export_failed();
                    self.shared.failed("spans", &self.shared.endpoint, e);
                }
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
    fn after_a_failed_export_spans_are_dropped_at_once_until_the_window_passes_and_a_success_ends_it() {
        let (report, lines) = recorder();
        let shared = Shared::new("http://127.0.0.1:9/v1/traces".into(), 100, report);
        assert!(shared.admit());
        shared.export_failed();
        assert!(shared.resting());
        assert!(!shared.admit() && !shared.admit(), "dropped while the collector rests");
        assert_eq!(shared.dropped(), 2);
        assert_eq!(lines.lock().unwrap().len(), 1, "the drop is told once");
        // A second failure in a row doubles the window; a success ends it.
        shared.export_failed();
        let until = shared.down_until.load(Ordering::Acquire);
        assert!(until >= shared.now_ms() + 1_500, "a 2 s window, got until {until} at {}", shared.now_ms());
        shared.export_succeeded();
        assert!(!shared.resting() && shared.admit());
        // Past the window, spans are let through again.
        shared.export_failed();
        std::thread::sleep(Duration::from_millis(5));
        shared.down_until.store(shared.now_ms() - 1, Ordering::Release);
        assert!(shared.admit());
    }

    #[test]
    fn the_window_never_passes_its_cap() {
        let (report, _) = recorder();
        let shared = Shared::new("x".into(), 2, report);
        for _ in 0..100 {
            shared.export_failed();
        }
        let until = shared.down_until.load(Ordering::Acquire);
        assert!(until <= shared.now_ms() + 30_000, "{until}");
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
