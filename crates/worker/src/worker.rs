//! The worker's side (`mcpflow worker`): reads the run from standard input, runs it with
//! the engine, and reaches everything outside the run — servers, people, the sampler,
//! the store, telemetry — through its supervisor. Whatever the run does to this process
//! (a stack overflow, memory exhausted, an abort), the supervisor lives on.

use crate::link::{Link, Reply, read_line};
use crate::wire::{
    MAX_LINE, Parts, Start, SupervisorAsk, ToSupervisor, ToWorker, WireAttr, WireCall, WireKind, WireMeasure,
    WireSample, WireSpan, WireTrace, answer_value, broken, value_answer, word,
};
use futures::future::BoxFuture;
use mcpflow_blueprint::{Options, validate};
use mcpflow_engine::driver::LOG_QUEUE;
use mcpflow_engine::telemetry::{Attr, Measure, OpenSpan, RunOrigin, SpanStart, SpanStatus, Telemetry, TraceContext};
use mcpflow_engine::{
    Answer, AskSink, BlueprintSource, CallError, CallRequest, Control, Engine, EventSink, Journal, People,
    ProgressSink, Question, RunEvent, RunRequest, SampleRequest, SampleSink, Sampler, SavedValues, Servers, TaskSink,
};
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

type ChildLink = Link<ToSupervisor>;

/// Runs the one run its supervisor sends on `input`, answering on `output`. Returns the
/// process's exit code: 0 when the run ended (whatever its status), 2 when no run came.
pub fn serve(input: impl Read + Send + 'static, output: impl Write + Send + 'static) -> u8 {
    first_to_go();
    let mut input = BufReader::new(input);
    let start = match read_line(&mut input, MAX_LINE) {
        Ok(Some(line)) => match serde_json::from_slice::<ToWorker>(&line) {
            Ok(ToWorker::Start(start)) => start,
            Ok(_) => return refuse("the first message is not the run to start"),
            Err(e) => return refuse(&format!("the first message cannot be read ({e})")),
        },
        Ok(None) => return refuse("no run came on standard input"),
        Err(e) => return refuse(&format!("standard input cannot be read ({e})")),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return refuse(&format!("no async runtime ({e})")),
    };
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = std::thread::Builder::new().name("worker-out".into()).spawn(move || write_lines(output, out_rx));
    let Ok(writer) = writer else { return refuse("no thread to write with") };
    let link = Arc::new(ChildLink::new(out_tx.clone()));
    let hooks = Arc::new(Hooks::default());
    let (control_tx, control_rx) = mpsc::unbounded_channel::<Control>();
    let (logs_tx, logs_rx) = mpsc::channel::<(String, String)>(LOG_QUEUE);
    let cancel = CancellationToken::new();
    {
        let reader = Reader {
            link: link.clone(),
            hooks: hooks.clone(),
            runtime: runtime.handle().clone(),
            control: control_tx,
            logs: logs_tx,
            cancel: cancel.clone(),
        };
        // Left blocked on standard input when the run ends: the process exits then.
        let spawned = std::thread::Builder::new().name("worker-in".into()).spawn(move || reader.read(input));
        if spawned.is_err() {
            return refuse("no thread to read with");
        }
    }
    let envelope = runtime.block_on(run(*start, link.clone(), hooks, control_rx, logs_rx, cancel));
    link.send(&ToSupervisor::Done { envelope });
    // An empty line asks the writer to stop once everything before it is written.
    let _ = out_tx.send(Vec::new());
    let _ = writer.join();
    runtime.shutdown_background();
    0
}

/// Asks the kernel, should memory run out, to end this worker before anything else
/// (Linux's `oom_score_adj`, which a process may raise for itself): a run that grows
/// without bound is what is killed, not its supervisor.
fn first_to_go() {
    #[cfg(target_os = "linux")]
    if let Err(e) = std::fs::write("/proc/self/oom_score_adj", "1000") {
        tracing::debug!(error = %e, "oom_score_adj is not writable here");
    }
}

#[allow(clippy::print_stderr)]
fn refuse(why: &str) -> u8 {
    eprintln!("mcpflow worker: {why}; this command is started by `mcpflow service` and `mcpflow serve`, not by hand");
    2
}

fn write_lines(output: impl Write, mut lines: mpsc::UnboundedReceiver<Vec<u8>>) {
    let mut output = std::io::BufWriter::new(output);
    while let Some(line) = lines.blocking_recv() {
        let last = line.is_empty();
        if !last && output.write_all(&line).is_err() {
            return;
        }
        // Write what is queued in one go, then flush.
        if last {
            let _ = output.flush();
            return;
        }
        if lines.is_empty() && output.flush().is_err() {
            return;
        }
    }
}

async fn run(
    start: Start,
    link: Arc<ChildLink>,
    hooks: Arc<Hooks>,
    control: mpsc::UnboundedReceiver<Control>,
    logs: mpsc::Receiver<(String, String)>,
    cancel: CancellationToken,
) -> mcpflow_engine::Envelope {
    let Start { blueprint, config, stack, trigger, parent, parts, logs: with_logs } = start;
    let (_, plan) = validate(&blueprint, &Options::default());
    let Some(plan) = plan else {
        // The supervisor checked it; a blueprint that passes there and not here is a bug.
        return mcpflow_engine::Envelope::lost(config.run_id, blueprint.id);
    };
    let engine = engine(&link, &hooks, parts);
    let origin = RunOrigin { trigger: word(&trigger), parent: parent.as_ref().and_then(WireTrace::context) };
    let request = RunRequest { blueprint: Arc::new(blueprint), plan: Arc::new(plan), config, stack, origin };
    let events: EventSink = {
        let link = link.clone();
        Arc::new(move |event: &RunEvent| link.send(&ToSupervisor::Event { event: event.clone() }))
    };
    if with_logs {
        engine.run_with_logs(request, events, Some(control), logs, cancel).await
    } else {
        engine.run(request, events, Some(control), cancel).await
    }
}

fn engine(link: &Arc<ChildLink>, hooks: &Arc<Hooks>, parts: Parts) -> Engine {
    let to = || To { link: link.clone(), hooks: hooks.clone() };
    Engine {
        servers: Arc::new(to()),
        source: parts.source.then(|| Arc::new(to()) as Arc<dyn BlueprintSource>),
        saved: parts.saved.then(|| Arc::new(to()) as Arc<dyn SavedValues>),
        journal: parts.journal.then(|| Arc::new(to()) as Arc<dyn Journal>),
        people: parts.people.then(|| Arc::new(to()) as Arc<dyn People>),
        sampler: parts.sampler.then(|| Arc::new(to()) as Arc<dyn Sampler>),
        telemetry: parts.telemetry.map(|capture| {
            Arc::new(Traced { link: link.clone(), capture, next: AtomicU64::new(1) }) as Arc<dyn Telemetry>
        }),
    }
}

/// The hooks of the worker's requests in flight, which the supervisor calls back.
#[derive(Default)]
struct Hooks {
    calls: Mutex<HashMap<u64, CallHooks>>,
    /// Sample requests that may ask people: their way to them.
    samples: Mutex<HashMap<u64, AskSink>>,
}

#[derive(Clone, Default)]
struct CallHooks {
    ask: Option<AskSink>,
    sample: Option<SampleSink>,
    task: Option<TaskSink>,
    progress: Option<ProgressSink>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The engine's parts, reached through the supervisor.
struct To {
    link: Arc<ChildLink>,
    hooks: Arc<Hooks>,
}

impl To {
    /// Asks the supervisor and waits for the reply; once `cancel` fires the request is
    /// called off and the answer is `cancelled`, as an in-process part would give it.
    async fn ask(&self, ask: crate::wire::WorkerAsk, cancel: &CancellationToken) -> Reply {
        let id = self.link.id();
        self.ask_as(id, ask, cancel).await
    }

    async fn ask_as(&self, id: u64, ask: crate::wire::WorkerAsk, cancel: &CancellationToken) -> Reply {
        let asked = self.link.request(id, &ToSupervisor::Request { id, ask }, ToSupervisor::Cancel { id });
        tokio::select! {
            reply = asked.reply() => reply,
            () = cancel.cancelled() => Err(CallError::cancelled()),
        }
    }

    fn ask_blocking(&self, ask: crate::wire::WorkerAsk) -> Reply {
        ask_blocking(&self.link, ask)
    }
}

/// Asks the supervisor and blocks this thread until the reply, for the engine's parts
/// whose methods are not async (see [`Link::request_blocking`]).
fn ask_blocking(link: &ChildLink, ask: crate::wire::WorkerAsk) -> Reply {
    let id = link.id();
    link.request_blocking(id, &ToSupervisor::Request { id, ask })
}

impl Servers for To {
    fn call(&self, request: CallRequest) -> BoxFuture<'_, Result<Value, CallError>> {
        Box::pin(async move {
            let id = self.link.id();
            let hooks = CallHooks {
                ask: request.ask.as_ref().map(|a| a.sink.clone()),
                sample: request.sample.clone(),
                task: request.tasks.started.clone(),
                progress: request.progress.clone(),
            };
            let call = WireCall {
                target: request.target,
                timeout_ms: request.timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
                stack: request.stack,
                resume: request.tasks.resume,
                progress: hooks.progress.is_some(),
                task_sink: hooks.task.is_some(),
                ask: request.ask.as_ref().map(|a| a.confirm_destructive),
                sample: hooks.sample.is_some(),
                trace: request.trace.as_ref().map(|t| WireTrace::of(&t.parent)),
            };
            lock(&self.hooks.calls).insert(id, hooks);
            let reply = self.ask_as(id, crate::wire::WorkerAsk::Call(Box::new(call)), &request.cancel).await;
            lock(&self.hooks.calls).remove(&id);
            reply
        })
    }
}

impl People for To {
    fn ask(&self, question: Question, cancel: CancellationToken) -> BoxFuture<'static, Result<Answer, CallError>> {
        let to = To { link: self.link.clone(), hooks: self.hooks.clone() };
        Box::pin(async move {
            let reply = to.ask(crate::wire::WorkerAsk::People { question }, &cancel).await;
            reply.and_then(value_answer)
        })
    }
}

impl Sampler for To {
    fn sample(
        &self,
        request: SampleRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<Value, CallError>> {
        let to = To { link: self.link.clone(), hooks: self.hooks.clone() };
        Box::pin(async move {
            let id = to.link.id();
            let SampleRequest { step, path, server, allowed, params, ask } = request;
            let wire = WireSample { step, path, server, allowed, params, ask: ask.is_some() };
            if let Some(ask) = ask {
                lock(&to.hooks.samples).insert(id, ask);
            }
            let reply = to.ask_as(id, crate::wire::WorkerAsk::Sample { request: wire }, &cancel).await;
            lock(&to.hooks.samples).remove(&id);
            reply
        })
    }
}

impl BlueprintSource for To {
    fn load(&self, id: &str) -> Result<Vec<u8>, String> {
        match self.ask_blocking(crate::wire::WorkerAsk::Source { id: id.to_owned() }) {
            Ok(Value::String(text)) => Ok(text.into_bytes()),
            Ok(_) => Err(broken("a blueprint's text that is not text").message),
            Err(e) => Err(e.message),
        }
    }
}

impl SavedValues for To {
    fn load(&self, blueprint: &str) -> Result<Value, String> {
        self.ask_blocking(crate::wire::WorkerAsk::Load { blueprint: blueprint.to_owned() }).map_err(|e| e.message)
    }

    fn save(&self, blueprint: &str, name: &str, value: &Value) -> Result<(), String> {
        let ask = crate::wire::WorkerAsk::Save {
            blueprint: blueprint.to_owned(),
            name: name.to_owned(),
            value: value.clone(),
        };
        self.ask_blocking(ask).map(|_| ()).map_err(|e| e.message)
    }
}

impl Journal for To {
    fn sync(&self) {
        if let Err(e) = self.ask_blocking(crate::wire::WorkerAsk::Sync) {
            tracing::warn!(error = %e, "the supervisor could not flush the run's journal");
        }
    }
}

/// Telemetry through the supervisor: each span is started there (its ids made there)
/// and named here by a number.
struct Traced {
    link: Arc<ChildLink>,
    capture: bool,
    next: AtomicU64,
}

impl std::fmt::Debug for Traced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traced").finish_non_exhaustive()
    }
}

impl Telemetry for Traced {
    fn start(&self, span: SpanStart<'_>) -> Box<dyn OpenSpan> {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let start = WireSpan {
            name: span.name.as_str().to_owned(),
            kind: WireKind::from(span.kind),
            parent: span.parent.map(WireTrace::of),
            attrs: span.attrs.iter().map(|(k, v)| ((*k).to_owned(), WireAttr::from(v))).collect(),
        };
        let ask = crate::wire::WorkerAsk::SpanStart { span: number, start };
        let context = match ask_blocking(&self.link, ask) {
            Ok(value) => serde_json::from_value::<WireTrace>(value).ok().and_then(|t| t.context()),
            Err(_) => None,
        };
        let context = context.unwrap_or_else(|| span.parent.cloned().unwrap_or_else(unsampled));
        Box::new(ChildSpan { link: self.link.clone(), number, context, ended: false })
    }

    fn measure(&self, measure: Measure) {
        if let Some(measure) = WireMeasure::of(&measure) {
            self.link.send(&ToSupervisor::Measure { measure });
        }
    }

    fn capture_payloads(&self) -> bool {
        self.capture
    }
}

/// A context for a span the supervisor did not start (the line is gone): not sampled.
fn unsampled() -> TraceContext {
    TraceContext { trace_id: [0; 16], span_id: [0; 8], sampled: false, remote: false, state: None }
}

struct ChildSpan {
    link: Arc<ChildLink>,
    number: u64,
    context: TraceContext,
    ended: bool,
}

impl OpenSpan for ChildSpan {
    fn context(&self) -> &TraceContext {
        &self.context
    }

    fn set(&mut self, key: &'static str, value: Attr) {
        self.link.send(&ToSupervisor::SpanSet {
            span: self.number,
            key: key.to_owned(),
            value: WireAttr::from(&value),
        });
    }

    fn end(mut self: Box<Self>, status: SpanStatus) {
        self.ended = true;
        self.link.send(&ToSupervisor::SpanEnd { span: self.number, status: status.into() });
    }
}

impl Drop for ChildSpan {
    fn drop(&mut self) {
        if !self.ended {
            self.link.send(&ToSupervisor::SpanEnd { span: self.number, status: SpanStatus::Unset.into() });
        }
    }
}

/// Reads the supervisor's messages on a thread of its own.
struct Reader {
    link: Arc<ChildLink>,
    hooks: Arc<Hooks>,
    runtime: tokio::runtime::Handle,
    control: mpsc::UnboundedSender<Control>,
    logs: mpsc::Sender<(String, String)>,
    cancel: CancellationToken,
}

impl Reader {
    fn read(self, mut input: impl std::io::BufRead) {
        // Until the supervisor goes away: the run is then cancelled, and nothing more sent.
        while let Ok(Some(line)) = read_line(&mut input, MAX_LINE) {
            match serde_json::from_slice::<ToWorker>(&line) {
                Ok(message) => self.take(message),
                Err(e) => {
                    tracing::error!(error = %e, "a message from the supervisor cannot be read; the run stops");
                    break;
                }
            }
        }
        self.link.close();
        self.cancel.cancel();
    }

    fn take(&self, message: ToWorker) {
        match message {
            ToWorker::Start(_) => tracing::warn!("a second run was sent to a worker; it runs one"),
            ToWorker::Request { id, ask } => self.serve(id, ask),
            ToWorker::Reply { id, result } => self.link.replied(id, result),
            ToWorker::Cancel { id } => self.link.cancel_served(id),
            ToWorker::Progress { call, progress } => {
                let sink = lock(&self.hooks.calls).get(&call).and_then(|h| h.progress.clone());
                if let Some(sink) = sink {
                    sink(progress);
                }
            }
            ToWorker::Control { control } => {
                let _ = self.control.send(control);
            }
            ToWorker::CancelRun => self.cancel.cancel(),
            // Bounded: a line that does not fit is dropped, as in the supervisor.
            ToWorker::Log { server, line } => {
                let _ = self.logs.try_send((server, line));
            }
        }
    }

    /// Serves one of the supervisor's requests: a hook of one of this worker's calls.
    fn serve(&self, id: u64, ask: SupervisorAsk) {
        let call_hooks = |call: u64| lock(&self.hooks.calls).get(&call).cloned().unwrap_or_default();
        let work: BoxFuture<'static, Reply> = match ask {
            SupervisorAsk::CallAsk { call, question } => match call_hooks(call).ask {
                Some(sink) => Box::pin(async move { sink(question).await.map(|a| answer_value(&a)) }),
                None => missing("a question", call),
            },
            SupervisorAsk::CallSample { call, server, allowed, params } => match call_hooks(call).sample {
                Some(sink) => {
                    let request =
                        SampleRequest { step: String::new(), path: Vec::new(), server, allowed, params, ask: None };
                    Box::pin(async move { sink(request).await })
                }
                None => missing("a sampling request", call),
            },
            SupervisorAsk::CallTask { call, handle } => match call_hooks(call).task {
                Some(sink) => Box::pin(async move {
                    sink(handle).await;
                    Ok(Value::Null)
                }),
                None => missing("a task's handle", call),
            },
            SupervisorAsk::SampleAsk { sample, question } => match lock(&self.hooks.samples).get(&sample).cloned() {
                Some(sink) => Box::pin(async move { sink(question).await.map(|a| answer_value(&a)) }),
                None => missing("a sampling request's question", sample),
            },
        };
        self.link.serve(
            &self.runtime,
            id,
            move |token| {
                Box::pin(async move {
                    tokio::select! {
                        reply = work => reply,
                        () = token.cancelled() => Err(CallError::cancelled()),
                    }
                })
            },
            |id, result| ToSupervisor::Reply { id, result },
        );
    }
}

fn missing(what: &str, id: u64) -> BoxFuture<'static, Reply> {
    let error = broken(&format!("{what} for request {id}, which has no such hook or is over"));
    Box::pin(async move { Err(error) })
}
