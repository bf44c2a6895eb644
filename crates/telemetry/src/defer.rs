//! The part of telemetry a run need not wait for. Ending a span in the SDK (building its
//! export data, handing it to the batch processor) and recording a measurement (hashing
//! its attributes into the SDK's aggregation) cost a run's thread more than the rest of
//! tracing together (`valgrind --tool=callgrind` on `benches/engine.rs` case d: about
//! 14,000 instructions per traced tool call). A run's thread only queues them, with the
//! end time taken at once; a worker thread of the exporter does them a moment later
//! ([`PERIOD`], one wake-up per period at most, none while idle). The exported spans and
//! metrics are the same as if done inline.
//!
//! The queue is bounded ([`CAPACITY`]): past it, and once the exporter is shut down, the
//! work is done inline on the caller's thread, so nothing is lost and nothing grows.

use crate::metrics::Instruments;
use mcpflow_engine::telemetry::{Measure, SpanStatus};
use opentelemetry::trace::Span as _;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

/// How long queued work waits for more to come before the worker does it all.
const PERIOD: Duration = Duration::from_millis(50);
/// Jobs queued at most; past it the caller does the work itself.
const CAPACITY: usize = 8 * 1024;

pub(crate) enum Job {
    /// An SDK span to end at `at` with `status` (a root's, one per run: boxed, so that
    /// every job is not as large as an SDK span, 288 bytes, to queue).
    End {
        span: Box<opentelemetry_sdk::trace::Span>,
        status: SpanStatus,
        at: SystemTime,
    },
    /// A span of a local parent, made in the SDK only now (`crate::LateSpan`) and ended
    /// at `at` with `status`.
    Late {
        late: crate::Late,
        status: SpanStatus,
        at: SystemTime,
    },
    Measure(Measure),
}

struct Queue {
    jobs: Vec<Job>,
    /// False once [`Deferred::close`] was called: jobs are done inline from then on.
    open: bool,
}

pub(crate) struct Deferred {
    queue: Mutex<Queue>,
    wake: Condvar,
    /// `None` when metrics are off.
    instruments: Option<Instruments>,
    /// Where late spans are made.
    tracer: opentelemetry_sdk::trace::SdkTracer,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred").field("queued", &self.lock().jobs.len()).finish_non_exhaustive()
    }
}

impl Deferred {
    /// Starts the worker; without a thread (the system refused one) every job is done
    /// inline.
    pub(crate) fn start(
        instruments: Option<Instruments>,
        tracer: opentelemetry_sdk::trace::SdkTracer,
    ) -> Arc<Deferred> {
        let deferred = Arc::new(Deferred {
            queue: Mutex::new(Queue { jobs: Vec::new(), open: true }),
            wake: Condvar::new(),
            instruments,
            tracer,
            worker: Mutex::new(None),
        });
        let worker = deferred.clone();
        match std::thread::Builder::new().name("otel-defer".into()).spawn(move || worker.work()) {
            Ok(handle) => *deferred.worker.lock().unwrap_or_else(PoisonError::into_inner) = Some(handle),
            Err(_) => deferred.lock().open = false,
        }
        deferred
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `job`, or does it now when the queue is full or closed.
    pub(crate) fn push(&self, job: Job) {
        let mut queue = self.lock();
        if !queue.open || queue.jobs.len() >= CAPACITY {
            drop(queue);
            self.run(job);
            return;
        }
        let was_empty = queue.jobs.is_empty();
        queue.jobs.push(job);
        drop(queue);
        if was_empty {
            self.wake.notify_one();
        }
    }

    /// Whether measurements are recorded at all (metrics on).
    pub(crate) fn measures(&self) -> bool {
        self.instruments.is_some()
    }

    fn run(&self, job: Job) {
        match job {
            Job::End { span, status, at } => end(*span, status, at),
            Job::Late { late, status, at } => end(late.make(&self.tracer), status, at),
            Job::Measure(measure) => {
                if let Some(instruments) = &self.instruments {
                    instruments.record(measure);
                }
            }
        }
    }

    /// The worker: waits for a first job, lets [`PERIOD`] pass (or the close) for more to
    /// come, does them all; ends once closed and empty.
    fn work(&self) {
        let mut batch = Vec::new();
        let mut sums = InFlightSums::default();
        loop {
            let mut queue = self.lock();
            while queue.jobs.is_empty() && queue.open {
                queue = self.wake.wait(queue).unwrap_or_else(PoisonError::into_inner);
            }
            if queue.jobs.is_empty() {
                return;
            }
            if queue.open {
                queue = self.wake.wait_timeout(queue, PERIOD).unwrap_or_else(PoisonError::into_inner).0;
            }
            std::mem::swap(&mut queue.jobs, &mut batch);
            drop(queue);
            for job in batch.drain(..) {
                match job {
                    Job::Measure(Measure::InFlight { method, server, delta }) => sums.add(method, server, delta),
                    job => self.run(job),
                }
            }
            for measure in sums.drain() {
                self.run(Job::Measure(measure));
            }
        }
    }

    /// Has the worker do what is queued and stop; later jobs are done inline. With
    /// `wait`, blocks until the worker is done (call it off the async runtime).
    pub(crate) fn close(&self, wait: bool) {
        self.lock().open = false;
        self.wake.notify_one();
        if !wait {
            return;
        }
        let worker = self.worker.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
    }
}

/// A batch's changes to the requests in flight, summed per method and server: every
/// request adds one as it starts and takes it away as it ends, mostly within the same
/// batch, so the SDK is told the net change once per method and server (the counter's
/// value is the same, and each change it is told costs it a hash of the attributes). A
/// net of zero is told too: the series exists, at 0, once a request was made.
#[derive(Default)]
struct InFlightSums(Vec<(&'static str, Arc<str>, i64)>);

impl InFlightSums {
    fn add(&mut self, method: &'static str, server: Arc<str>, delta: i64) {
        let same =
            |(m, s, _): &&mut (&'static str, Arc<str>, i64)| *m == method && (Arc::ptr_eq(s, &server) || *s == server);
        match self.0.iter_mut().find(same) {
            Some((_, _, sum)) => *sum += delta,
            None => self.0.push((method, server, delta)),
        }
    }

    /// The sums as measurements, in the order their keys first came; empty afterwards.
    fn drain(&mut self) -> impl Iterator<Item = Measure> + '_ {
        self.0.drain(..).map(|(method, server, delta)| Measure::InFlight { method, server, delta })
    }
}

fn end(mut span: opentelemetry_sdk::trace::Span, status: SpanStatus, at: SystemTime) {
    match status {
        SpanStatus::Unset => {}
        SpanStatus::Ok => span.set_status(opentelemetry::trace::Status::Ok),
        SpanStatus::Error(message) => span.set_status(opentelemetry::trace::Status::error(message)),
    }
    span.end_with_timestamp(at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Tracer as _, TracerProvider as _};
    use opentelemetry_sdk::error::OTelSdkResult;
    use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};

    #[derive(Debug, Clone, Default)]
    struct Kept(Arc<Mutex<Vec<SpanData>>>);

    impl SpanExporter for Kept {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.0.lock().unwrap().extend(batch);
            Ok(())
        }
    }

    #[test]
    fn in_flight_changes_are_summed_per_method_and_server_once_each() {
        let mut sums = InFlightSums::default();
        let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
        sums.add("tools/call", a.clone(), 1);
        sums.add("tools/call", b.clone(), 1);
        sums.add("tools/call", "a".into(), -1); // the same name in another allocation
        sums.add("tasks/get", a.clone(), 1);
        sums.add("tools/call", b.clone(), 1);
        let nets: Vec<_> = sums
            .drain()
            .map(|m| match m {
                Measure::InFlight { method, server, delta } => (method, server.to_string(), delta),
                other => panic!("{other:?}"),
            })
            .collect();
        let nets_expected =
            [("tools/call", "a".to_owned(), 0), ("tools/call", "b".to_owned(), 2), ("tasks/get", "a".to_owned(), 1)];
        assert_eq!(nets, nets_expected);
        assert_eq!(sums.drain().count(), 0, "drained");
    }

    #[test]
    fn a_queued_end_keeps_its_time_and_status_and_after_close_ends_are_done_at_once() {
        let kept = Kept::default();
        let provider = SdkTracerProvider::builder().with_simple_exporter(kept.clone()).build();
        let tracer = provider.tracer("t");
        let deferred = Deferred::start(None, tracer.clone());
        let at = SystemTime::now() - Duration::from_secs(3);
        deferred.push(Job::End { span: Box::new(tracer.start("queued")), status: SpanStatus::Ok, at });
        deferred.close(true);
        {
            let spans = kept.0.lock().unwrap();
            assert_eq!(spans.len(), 1, "close does what was queued");
            assert_eq!((spans[0].name.as_ref(), spans[0].end_time), ("queued", at));
            assert_eq!(spans[0].status, opentelemetry::trace::Status::Ok);
        }
        let message = "the call went away";
        deferred.push(Job::End {
            span: Box::new(tracer.start("late")),
            status: SpanStatus::Error(message.into()),
            at: SystemTime::now(),
        });
        let spans = kept.0.lock().unwrap();
        assert_eq!(spans.len(), 2, "after close an end is done by the caller");
        assert_eq!(spans[1].status, opentelemetry::trace::Status::error(message));
    }
}
