//! The supervisor's side: starts a worker process for one run, serves what the run asks
//! of the outside world with the supervisor's own engine parts, and turns the worker's
//! death into an `interrupted` run instead of its own.

use crate::link::{Link, Reply, read_line_async};
use crate::wire::{
    MAX_LINE, Parts, Start, SupervisorAsk, ToSupervisor, ToWorker, WireCall, WireSample, WireSpan, WireTrace,
    answer_value, broken, value_answer, word,
};
use futures::future::BoxFuture;
use mcpflow_engine::event::{ErrorEntry, EventKind, RunStatus, Summary};
use mcpflow_engine::telemetry::{CallTrace, OpenSpan, SpanStart};
use mcpflow_engine::{
    CallAsk, CallError, CallRequest, Control, Engine, Envelope, EventSink, RunEvent, RunRequest, SampleRequest,
    TaskHooks,
};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

type SupervisorLink = Link<ToWorker>;

/// How to start a worker: a program and its arguments (`mcpflow worker`).
#[derive(Debug, Clone)]
pub struct Command {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl Command {
    /// This program, as `PROGRAM worker`: what `mcpflow service` and `serve` use.
    pub fn this_program() -> std::io::Result<Self> {
        Ok(Command { program: std::env::current_exe()?, args: vec!["worker".into()] })
    }
}

/// How long a worker that sent its envelope may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Runs `request` in a worker process started with `command`, as
/// [`Engine::run_with_logs`] runs it in this one: the same events, controls, logs and
/// envelope. `engine`'s parts serve the worker (its servers, people, store, telemetry).
/// When the worker dies before the end, the run is `interrupted` (`WORKER_DIED`, naming
/// the steps in flight and how to resume), ended with a `RunFinished` event of its own.
pub async fn run(
    command: &Command,
    engine: &Engine,
    request: RunRequest,
    events: EventSink,
    control: Option<mpsc::UnboundedReceiver<Control>>,
    logs: Option<mpsc::Receiver<(String, String)>>,
    cancel: CancellationToken,
) -> Envelope {
    let began = Instant::now();
    let run_id = request.config.run_id.clone();
    let blueprint_id = request.blueprint.id.clone();
    let mut child = match tokio::process::Command::new(&command.program)
        .args(&command.args)
        // `mcpflow worker` with a database is the queue's worker; this one speaks on stdio.
        .env_remove("MCPFLOW_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            let message = format!(
                "the run's worker process could not start (`{} worker`: {e}); check that the mcpflow program is still installed where it was started from",
                command.program.display()
            );
            return ended(run_id, blueprint_id, RunStatus::Failed, "WORKER_UNAVAILABLE", String::new(), message, began);
        }
    };
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return ended(
            run_id,
            blueprint_id,
            RunStatus::Failed,
            "WORKER_UNAVAILABLE",
            String::new(),
            "the run's worker process has no pipes".to_owned(),
            began,
        );
    };
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(async move {
        while let Some(line) = out_rx.recv().await {
            if stdin.write_all(&line).await.is_err() {
                break;
            }
            if out_rx.is_empty() && stdin.flush().await.is_err() {
                break;
            }
        }
    });
    let link = Arc::new(SupervisorLink::new(out_tx));
    let start = Start {
        blueprint: (*request.blueprint).clone(),
        config: request.config,
        stack: request.stack,
        trigger: request.origin.trigger.to_owned(),
        parent: request.origin.parent.as_ref().map(WireTrace::of),
        parts: Parts {
            source: engine.source.is_some(),
            saved: engine.saved.is_some(),
            journal: engine.journal.is_some(),
            people: engine.people.is_some(),
            sampler: engine.sampler.is_some(),
            telemetry: engine.telemetry.as_ref().map(|t| t.capture_payloads()),
        },
        logs: logs.is_some(),
    };
    link.send(&ToWorker::Start(Box::new(start)));
    let mut served = Served { link: link.clone(), engine: engine.clone(), spans: HashMap::new() };
    let mut seen = Seen::default();
    let mut input = BufReader::new(stdout);
    let forwards = forward(&link, control, logs);
    let mut cancel_sent = false;
    let outcome = loop {
        tokio::select! {
            line = read_line_async(&mut input, MAX_LINE) => {
                let message = match line {
                    Ok(Some(line)) => serde_json::from_slice::<ToSupervisor>(&line).map_err(|e| e.to_string()),
                    Ok(None) => break Ended::Closed,
                    Err(e) => Err(e.to_string()),
                };
                match message {
                    Ok(ToSupervisor::Done { envelope }) => break Ended::Done(envelope),
                    Ok(ToSupervisor::Event { event }) => {
                        seen.see(&event);
                        events(&event);
                    }
                    Ok(message) => served.take(message),
                    Err(e) => break Ended::Broken(e),
                }
            }
            () = cancel.cancelled(), if !cancel_sent => {
                cancel_sent = true;
                link.send(&ToWorker::CancelRun);
            }
        }
    };
    for task in forwards {
        task.abort();
    }
    link.close();
    drop(served);
    match outcome {
        Ended::Done(envelope) => {
            writer.abort();
            tokio::spawn(async move {
                if tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_err() {
                    let _ = child.kill().await;
                }
            });
            envelope
        }
        Ended::Closed | Ended::Broken(_) => {
            writer.abort();
            let status = match outcome {
                Ended::Broken(e) => {
                    tracing::error!(run = %run_id, error = %e, "the run's worker sent what cannot be read; it is stopped");
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    format!("sent what cannot be read ({e}) and was stopped")
                }
                _ => child.wait().await.map(|s| describe(&s)).unwrap_or_else(|e| format!("was lost ({e})")),
            };
            let steps = seen.in_flight();
            let during = if steps.is_empty() {
                String::new()
            } else {
                format!(" during step{} {}", if steps.len() == 1 { "" } else { "s" }, list(&steps))
            };
            let message = format!(
                "the run's worker process {status}{during}; the steps that finished keep their outputs: go on with `mcpflow resume {run_id}`"
            );
            let step = steps.into_iter().next().unwrap_or_default();
            let envelope = ended(run_id, blueprint_id, RunStatus::Interrupted, "WORKER_DIED", step, message, began);
            events(&RunEvent {
                seq: seen.next_seq,
                at_ms: seen.at_ms,
                kind: EventKind::RunFinished { envelope: envelope.clone() },
            });
            envelope
        }
    }
}

/// How the worker's output ended.
enum Ended {
    Done(Envelope),
    /// Closed without the envelope: the worker died.
    Closed,
    /// A message that cannot be read.
    Broken(String),
}

/// Forwards the run's controls and the servers' log lines to the worker, each on a task
/// of its own (aborted when the run ends).
fn forward(
    link: &Arc<SupervisorLink>,
    control: Option<mpsc::UnboundedReceiver<Control>>,
    logs: Option<mpsc::Receiver<(String, String)>>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    if let Some(mut control) = control {
        let link = link.clone();
        tasks.push(tokio::spawn(async move {
            while let Some(control) = control.recv().await {
                link.send(&ToWorker::Control { control });
            }
        }));
    }
    if let Some(mut logs) = logs {
        let link = link.clone();
        tasks.push(tokio::spawn(async move {
            while let Some((server, line)) = logs.recv().await {
                link.send(&ToWorker::Log { server, line });
            }
        }));
    }
    tasks
}

/// How a process ended, in words.
fn describe(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => " (SIGABRT: it aborted, as on a stack overflow)",
                9 => " (SIGKILL: killed, as by the kernel out of memory)",
                11 => " (SIGSEGV)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("died of signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code} before the run ended"),
        None => "died".to_owned(),
    }
}

fn list(steps: &[String]) -> String {
    steps.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

fn ended(
    run_id: String,
    blueprint: String,
    status: RunStatus,
    code: &str,
    step: String,
    message: String,
    began: Instant,
) -> Envelope {
    Envelope {
        run_id,
        blueprint,
        status,
        output: Value::Null,
        summary: Summary::default(),
        errors: vec![ErrorEntry { step, path: Vec::new(), code: code.to_owned(), message }],
        duration_ms: u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX),
        trace_id: None,
    }
}

/// What the worker's events said so far: where the next event goes, and the top-level
/// steps started and not finished.
#[derive(Default)]
struct Seen {
    next_seq: u64,
    at_ms: u64,
    running: BTreeSet<String>,
}

impl Seen {
    fn see(&mut self, event: &RunEvent) {
        self.next_seq = event.seq.saturating_add(1);
        self.at_ms = event.at_ms;
        match &event.kind {
            EventKind::StepStarted { step, path, .. } if path.is_empty() => {
                self.running.insert(step.clone());
            }
            EventKind::StepFinished { step, path, .. } | EventKind::StepSkipped { step, path, .. }
                if path.is_empty() =>
            {
                self.running.remove(step);
            }
            _ => {}
        }
    }

    fn in_flight(&self) -> Vec<String> {
        self.running.iter().cloned().collect()
    }
}

/// Serves the worker's requests with the supervisor's engine parts.
struct Served {
    link: Arc<SupervisorLink>,
    engine: Engine,
    /// The worker's spans open here, by the worker's number.
    spans: HashMap<u64, Box<dyn OpenSpan>>,
}

/// Most spans a worker may hold open at once; past it new ones are not started here.
const MAX_OPEN_SPANS: usize = 100_000;

/// Asks the worker (a hook of one of its calls) and waits for its reply; dropped before
/// it, the worker is told to stop.
async fn ask_worker(link: Arc<SupervisorLink>, ask: SupervisorAsk) -> Reply {
    let id = link.id();
    link.request(id, &ToWorker::Request { id, ask }, ToWorker::Cancel { id }).reply().await
}

fn reply(id: u64, result: Reply) -> ToWorker {
    ToWorker::Reply { id, result }
}

impl Served {
    fn take(&mut self, message: ToSupervisor) {
        match message {
            ToSupervisor::Request { id, ask } => self.serve(id, ask),
            ToSupervisor::Reply { id, result } => self.link.replied(id, result),
            ToSupervisor::Cancel { id } => self.link.cancel_served(id),
            ToSupervisor::SpanSet { span, key, value } => {
                if let Some(open) = self.spans.get_mut(&span) {
                    open.set(word(&key), value.into());
                }
            }
            ToSupervisor::SpanEnd { span, status } => {
                if let Some(open) = self.spans.remove(&span) {
                    open.end(status.into());
                }
            }
            ToSupervisor::Measure { measure } => {
                if let Some(telemetry) = &self.engine.telemetry {
                    telemetry.measure(measure.measure());
                }
            }
            ToSupervisor::Event { .. } | ToSupervisor::Done { .. } => {}
        }
    }

    fn serve(&mut self, id: u64, ask: crate::wire::WorkerAsk) {
        use crate::wire::WorkerAsk;
        // What is quick and must keep its order with the events is answered here, in
        // the order it came: a journal flush before the call that follows it.
        let now = match ask {
            WorkerAsk::Sync => {
                if let Some(journal) = &self.engine.journal {
                    journal.sync();
                }
                Some(Ok(Value::Null))
            }
            WorkerAsk::Source { id: blueprint } => Some(match &self.engine.source {
                Some(source) => source
                    .load(&blueprint)
                    .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "the blueprint is not UTF-8 text".into()))
                    .map(Value::String)
                    .map_err(|e| CallError::new("WORKFLOW_NOT_FOUND", e, false)),
                None => Err(broken("a blueprint asked for with no source")),
            }),
            WorkerAsk::Load { blueprint } => Some(match &self.engine.saved {
                Some(saved) => saved.load(&blueprint).map_err(|e| CallError::new("SAVED_UNREADABLE", e, false)),
                None => Ok(Value::Object(Default::default())),
            }),
            WorkerAsk::Save { blueprint, name, value } => Some(match &self.engine.saved {
                Some(saved) => saved
                    .save(&blueprint, &name, &value)
                    .map(|()| Value::Null)
                    .map_err(|e| CallError::new("SAVE_FAILED", e, false)),
                None => Err(broken("a value saved with no store")),
            }),
            WorkerAsk::SpanStart { span, start } => Some(self.start_span(span, start)),
            WorkerAsk::Call(call) => {
                self.call(id, *call);
                None
            }
            WorkerAsk::People { question } => {
                let people = self.engine.people.clone();
                self.link.serve(
                    &tokio::runtime::Handle::current(),
                    id,
                    move |cancel| match people {
                        Some(people) => {
                            let asked = people.ask(question, cancel);
                            Box::pin(async move { asked.await.map(|a| answer_value(&a)) })
                        }
                        None => Box::pin(async move { Err(broken("a question with no one to ask")) }),
                    },
                    reply,
                );
                None
            }
            WorkerAsk::Sample { request } => {
                self.sample(id, request);
                None
            }
        };
        if let Some(result) = now {
            self.link.send(&reply(id, result));
        }
    }

    fn start_span(&mut self, number: u64, start: WireSpan) -> Reply {
        let Some(telemetry) = &self.engine.telemetry else { return Err(broken("a span with telemetry off")) };
        if self.spans.len() >= MAX_OPEN_SPANS {
            return Err(broken("too many spans open"));
        }
        let parent = start.parent.as_ref().and_then(WireTrace::context);
        let open = telemetry.start(SpanStart {
            name: start.name.into(),
            kind: start.kind.into(),
            parent: parent.as_ref(),
            attrs: start.attrs.into_iter().map(|(k, v)| (word(&k), v.into())).collect(),
        });
        let context = WireTrace::of(open.context());
        self.spans.insert(number, open);
        serde_json::to_value(context).map_err(|e| broken(&e.to_string()))
    }

    /// A call to a server, its hooks calling back into the worker.
    fn call(&self, id: u64, call: WireCall) {
        let servers = self.engine.servers.clone();
        let link = self.link.clone();
        let progress_link = self.link.clone();
        let telemetry = self.engine.telemetry.clone();
        self.link.serve(
            &tokio::runtime::Handle::current(),
            id,
            move |cancel| {
                Box::pin(async move {
                    let hook = move |ask: SupervisorAsk| ask_worker(link.clone(), ask);
                    let progress = call.progress.then(|| {
                        let link = progress_link.clone();
                        Arc::new(move |progress| link.send(&ToWorker::Progress { call: id, progress }))
                            as mcpflow_engine::ProgressSink
                    });
                    let started = call.task_sink.then(|| {
                        let hook = hook.clone();
                        Arc::new(move |handle| {
                            let asked = hook(SupervisorAsk::CallTask { call: id, handle });
                            Box::pin(async move {
                                let _ = asked.await;
                            }) as BoxFuture<'static, ()>
                        }) as mcpflow_engine::TaskSink
                    });
                    let ask = call.ask.map(|confirm_destructive| {
                        let hook = hook.clone();
                        CallAsk {
                            sink: Arc::new(move |question| {
                                let asked = hook(SupervisorAsk::CallAsk { call: id, question });
                                Box::pin(async move { asked.await.and_then(value_answer) })
                            }),
                            confirm_destructive,
                        }
                    });
                    let sample = call.sample.then(|| {
                        let hook = hook.clone();
                        Arc::new(move |request: SampleRequest| {
                            let asked = hook(SupervisorAsk::CallSample {
                                call: id,
                                server: request.server,
                                allowed: request.allowed,
                                params: request.params,
                            });
                            Box::pin(asked) as BoxFuture<'static, Result<Value, CallError>>
                        }) as mcpflow_engine::SampleSink
                    });
                    let trace = telemetry
                        .zip(call.trace.as_ref().and_then(WireTrace::context))
                        .map(|(telemetry, parent)| CallTrace { telemetry, parent });
                    let request = CallRequest {
                        target: call.target,
                        timeout: call.timeout_ms.map(Duration::from_millis),
                        cancel,
                        progress,
                        stack: call.stack,
                        tasks: TaskHooks { started, resume: call.resume },
                        ask,
                        sample,
                        trace,
                    };
                    servers.call(request).await
                })
            },
            reply,
        );
    }

    /// A sampling request of the worker's, its question to people calling back into it.
    fn sample(&self, id: u64, request: WireSample) {
        let sampler = self.engine.sampler.clone();
        let link = self.link.clone();
        self.link.serve(
            &tokio::runtime::Handle::current(),
            id,
            move |cancel| {
                let Some(sampler) = sampler else {
                    return Box::pin(async move { Err(broken("a sampling request with no sampler")) });
                };
                let WireSample { step, path, server, allowed, params, ask } = request;
                let ask = ask.then(|| {
                    Arc::new(move |question| {
                        let asked = ask_worker(link.clone(), SupervisorAsk::SampleAsk { sample: id, question });
                        Box::pin(async move { asked.await.and_then(value_answer) }) as BoxFuture<'static, _>
                    }) as mcpflow_engine::AskSink
                });
                sampler.sample(SampleRequest { step, path, server, allowed, params, ask }, cancel)
            },
            reply,
        );
    }
}
