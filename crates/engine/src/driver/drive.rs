//! One run's driver loop ([`Engine::run_nested`]): it performs the scheduler's actions
//! (events to the sink, calls polled here in the loop's own task, timers, saves), then
//! waits for the next input — cancellation and timers first, then control, log lines,
//! finished calls, task handles, more of the steps that need no call, progress — and
//! hands it to the scheduler, until the run finishes.

use super::{Call, Engine, EventSink, PROGRESS_QUEUE, TaskStart};
use crate::event::{Envelope, RunEvent};
use crate::run_trace::RunTrace;
use crate::scheduler::{Action, Control, Input, Retired, Scheduler, TimerId};
use crate::servers::CallError;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt as _, StreamExt as _};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// A call's id and what it answered.
type Done = (u64, Result<Value, CallError>);

/// The loop's state between the scheduler's actions and its next input.
pub(super) struct Drive<'e> {
    engine: &'e Engine,
    bp_id: String,
    stack: Vec<String>,
    cancel: CancellationToken,
    trace: Option<RunTrace>,
    events: EventSink,
    start: Instant,
    timer_tx: mpsc::UnboundedSender<TimerId>,
    tx: mpsc::Sender<Input>,
    task_tx: mpsc::UnboundedSender<TaskStart>,
    calls: HashMap<u64, CancellationToken>,
    /// Calls are polled here, in the driver's own task: no spawn and no channel hop
    /// between a call finishing and the scheduler hearing of it.
    inflight: FuturesUnordered<BoxFuture<'e, Done>>,
    /// Calls found finished before their turn (see [`Drive::poll_ready`]).
    finished: VecDeque<Done>,
    timers: HashMap<TimerId, JoinHandle<()>>,
    /// Events already handed to the sink. They, and the values the scheduler retired,
    /// are freed when the driver would otherwise wait (see [`Garbage`]).
    garbage: Garbage,
    /// A task handle whose event the actions just performed record: acknowledged once
    /// synced.
    task_recorded: Option<tokio::sync::oneshot::Sender<()>>,
}

/// What comes to the loop from outside the scheduler. Timers and progress come in
/// apart: timers are served first, and progress is bounded (a server controls how much
/// of it there is; the scheduler, timers).
pub(super) struct Inbox {
    timer_rx: mpsc::UnboundedReceiver<TimerId>,
    rx: mpsc::Receiver<Input>,
    /// Task handles: one per call at most, each acknowledged once recorded and synced.
    task_rx: mpsc::UnboundedReceiver<TaskStart>,
    pub(super) control: Option<mpsc::UnboundedReceiver<Control>>,
    pub(super) logs: Option<mpsc::Receiver<(String, String)>>,
}

impl<'e> Drive<'e> {
    /// The loop of blueprint `bp_id`'s run on `engine`, and its inbox (with no control
    /// and no log lines: the caller gives those).
    pub(super) fn new(
        engine: &'e Engine,
        bp_id: &str,
        stack: Vec<String>,
        cancel: CancellationToken,
        trace: Option<RunTrace>,
        events: EventSink,
    ) -> (Self, Inbox) {
        let (timer_tx, timer_rx) = mpsc::unbounded_channel::<TimerId>();
        let (tx, rx) = mpsc::channel::<Input>(PROGRESS_QUEUE);
        let (task_tx, task_rx) = mpsc::unbounded_channel::<TaskStart>();
        let drive = Drive {
            engine,
            bp_id: bp_id.to_owned(),
            stack,
            cancel,
            trace,
            events,
            start: Instant::now(),
            timer_tx,
            tx,
            task_tx,
            calls: HashMap::new(),
            inflight: FuturesUnordered::new(),
            finished: VecDeque::new(),
            timers: HashMap::new(),
            garbage: Garbage::default(),
            task_recorded: None,
        };
        (drive, Inbox { timer_rx, rx, task_rx, control: None, logs: None })
    }

    /// Milliseconds since the run started: the scheduler's clock.
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Runs `sched` to its end; its envelope.
    pub(super) async fn run(mut self, mut sched: Scheduler, mut inbox: Inbox) -> Envelope {
        let mut actions = sched.apply(self.now(), Input::Start);
        loop {
            for action in actions.drain(..) {
                if let Some(envelope) = self.perform(action) {
                    return envelope;
                }
            }
            self.acknowledge_task();
            self.poll_ready();
            self.garbage.retired.push(sched.take_retired());
            // Piece by piece, while no result waits.
            while self.finished.is_empty() && self.garbage.free_one() {
                self.poll_ready();
            }
            let input = self.next_input(&mut inbox, sched.has_more()).await;
            if let Input::Completed { inv, .. } = &input {
                self.calls.remove(inv);
                // What the call said before it ended (its progress, its questions and
                // their answers) goes first: at most the queue's bound.
                while let Ok(early) = inbox.rx.try_recv() {
                    queue(&mut actions, sched.apply(self.now(), early));
                }
            }
            if let Input::Timer { timer } = &input {
                self.timers.remove(timer);
            }
            queue(&mut actions, sched.apply(self.now(), input));
        }
    }

    /// Performs one action; the run's envelope when it is [`Action::Finish`].
    fn perform(&mut self, action: Action) -> Option<Envelope> {
        match action {
            Action::Emit(e) => {
                // Before the sink: a sub-workflow's sink is a no-op.
                if let Some(trace) = &mut self.trace {
                    trace.on_event(&e);
                }
                (self.events)(&e);
                self.garbage.events.push(e);
            }
            Action::Invoke { inv, step, path, invocation, sync, resume, confirm } => {
                // What this call reads is on disk before it starts.
                if sync && let Some(journal) = &self.engine.journal {
                    journal.sync();
                }
                let token = self.cancel.child_token();
                self.calls.insert(inv, token.clone());
                let (engine, tx, tasks, stack) =
                    (self.engine, self.tx.clone(), self.task_tx.clone(), self.stack.clone());
                // The call's span parent: its step's attempt. Its log lines carry the
                // attempt's span id.
                let parent = self.trace.as_ref().map(|t| t.parent_for(&step, &path));
                let log_span = match &parent {
                    Some(p) => tracing::info_span!("step", step = %step, span_id = %p.span_id_hex()),
                    None => tracing::Span::none(),
                };
                let call = async move {
                    let call =
                        Call { inv, step, path, cancel: token, tx: &tx, tasks, resume, stack, confirm, trace: parent };
                    (inv, engine.invoke(invocation, call).await)
                };
                self.inflight.push(Box::pin(call.instrument(log_span)));
            }
            Action::Cancel { inv } => {
                if let Some(t) = self.calls.remove(&inv) {
                    t.cancel();
                }
            }
            Action::SetTimer { timer, at_ms } => {
                let timer_tx = self.timer_tx.clone();
                let at = self.start + std::time::Duration::from_millis(at_ms);
                let handle = tokio::spawn(async move {
                    tokio::time::sleep_until(at).await;
                    let _ = timer_tx.send(timer);
                });
                self.timers.insert(timer, handle);
            }
            Action::Save { name, value } => {
                if let Some(saved) = &self.engine.saved
                    && let Err(e) = saved.save(&self.bp_id, &name, &value)
                {
                    tracing::warn!(blueprint = %self.bp_id, name, error = %e, "could not save a value");
                }
            }
            Action::IterationClosed { step, path } => {
                if let Some(trace) = &mut self.trace {
                    trace.iteration_closed(&step, &path);
                }
            }
            Action::Finish(envelope) => return Some(self.finish(envelope)),
        }
        None
    }

    /// Ends what the run still has going: calls, sub-workflows (their spans end here,
    /// before this run's root), timers; then the run's span.
    fn finish(&mut self, envelope: Envelope) -> Envelope {
        for (_, t) in self.calls.drain() {
            t.cancel();
        }
        drop(std::mem::take(&mut self.inflight));
        for (_, h) in self.timers.drain() {
            h.abort();
        }
        if let Some(trace) = self.trace.take() {
            trace.finish(&envelope);
        }
        envelope
    }

    /// The task handle the last actions recorded is on disk: its call may go on.
    fn acknowledge_task(&mut self) {
        if let Some(recorded) = self.task_recorded.take() {
            // The handle's event is recorded: on disk before the pool polls.
            if let Some(journal) = &self.engine.journal {
                journal.sync();
            }
            let _ = recorded.send(());
        }
    }

    /// Sends the new calls' requests now (one poll of each call, no waiting). Calls found
    /// finished wait in `finished` for their turn.
    fn poll_ready(&mut self) {
        if !self.inflight.is_empty() && !self.cancel.is_cancelled() {
            while let Some(Some(done)) = self.inflight.next().now_or_never() {
                self.finished.push_back(done);
            }
        }
    }

    /// The next input. Cancellation and timers first: nothing a server sends, however
    /// much, delays a timeout. Then what changes the run's course, then more of the steps
    /// that need no call (`more`), then progress.
    async fn next_input(&mut self, inbox: &mut Inbox, more: bool) -> Input {
        let Drive { cancel, finished, inflight, task_recorded, .. } = self;
        tokio::select! {
            biased;
            () = cancel.cancelled() => Input::Control(Control::Cancel),
            Some(timer) = inbox.timer_rx.recv() => Input::Timer { timer },
            Some(c) = recv_or_pending(&mut inbox.control) => Input::Control(c),
            Some((source, message)) = recv_logs(&mut inbox.logs) => Input::Log { source, message },
            Some((inv, result)) = async { finished.pop_front() }, if !finished.is_empty() => {
                Input::Completed { inv, result }
            }
            Some((inv, result)) = inflight.next(), if !inflight.is_empty() => Input::Completed { inv, result },
            Some(start) = inbox.task_rx.recv() => {
                let TaskStart { inv, handle, recorded } = start;
                *task_recorded = Some(recorded);
                Input::TaskStarted { inv, handle }
            }
            // Yields first: the next piece waits for the runtime's other tasks
            // (the run's timers, signals, other runs), however long the run.
            () = tokio::task::yield_now(), if more => Input::Continue,
            Some(i) = inbox.rx.recv() => i,
        }
    }
}

/// What inputs left behind: events the sink has seen, values the scheduler retired.
///
/// Freeing a large output takes about as long as building it, so the driver does it
/// only when it would otherwise wait: after the calls the last input started are on
/// their way, one piece at a time, and not while another call's result waits (in a
/// burst of results, each next call is started first).
#[derive(Default)]
struct Garbage {
    events: Vec<RunEvent>,
    retired: Vec<Retired>,
}

impl Garbage {
    /// Frees one piece; false when there was none.
    fn free_one(&mut self) -> bool {
        if let Some(event) = self.events.pop() {
            drop(event);
        } else if let Some(retired) = self.retired.pop() {
            drop(retired);
        } else {
            return false;
        }
        true
    }
}

/// Adds a batch of actions to those still to perform. Usually there are none: the batch
/// is taken as it is rather than copied over.
fn queue(actions: &mut Vec<Action>, more: Vec<Action>) {
    if actions.is_empty() {
        *actions = more;
    } else {
        actions.extend(more);
    }
}

/// The next message, or never once the channel is gone (so `select!` ignores it).
async fn recv_or_pending<T>(control: &mut Option<mpsc::UnboundedReceiver<T>>) -> Option<T> {
    match control {
        Some(rx) => match rx.recv().await {
            Some(c) => Some(c),
            None => {
                *control = None;
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}

/// The next log line, or never once the channel is gone (so `select!` ignores it).
async fn recv_logs<T>(logs: &mut Option<mpsc::Receiver<T>>) -> Option<T> {
    match logs {
        Some(rx) => match rx.recv().await {
            Some(line) => Some(line),
            None => {
                *logs = None;
                std::future::pending().await
            }
        },
        None => std::future::pending().await,
    }
}
