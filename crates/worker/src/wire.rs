//! What a worker and its supervisor say to each other: one JSON message per line, each
//! way, over the worker's standard input (supervisor → worker) and output (worker →
//! supervisor). Either side may ask the other something (`Request`, answered by a
//! `Reply` with the same id, or called off with `Cancel`); the rest are notices.

use mcpflow_blueprint::Blueprint;
use mcpflow_engine::event::IterationPath;
use mcpflow_engine::telemetry::{Attr, Measure, SpanKind, SpanStatus, TraceContext};
use mcpflow_engine::{
    Answer, CallError, CallTarget, Control, Envelope, Progress, Question, RunConfig, RunEvent, TaskHandle,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Mutex;

/// The longest line either side reads: the largest value a run may hold
/// (`limits.max_value_bytes` at its maximum) twice over, as an event or a start
/// message may carry it escaped.
#[allow(clippy::cast_possible_truncation)]
pub const MAX_LINE: usize = 2 * mcpflow_blueprint::limits::MAX_MAX_VALUE_BYTES as usize + (1 << 20);

/// Supervisor → worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // made and sent at once, never kept
pub enum ToWorker {
    /// The run to run: always the first message, sent once.
    Start(Box<Start>),
    Request {
        id: u64,
        ask: SupervisorAsk,
    },
    Reply {
        id: u64,
        result: Result<Value, CallError>,
    },
    /// The worker's request `id` is no longer wanted.
    Cancel {
        id: u64,
    },
    /// A progress notification of the worker's call `call`.
    Progress {
        call: u64,
        progress: Progress,
    },
    Control {
        control: Control,
    },
    /// Cancel the run (Ctrl-C, `cancel`, the run's deadline in the supervisor, parking).
    CancelRun,
    /// A server's log line, for the run's events.
    Log {
        server: String,
        line: String,
    },
}

/// Worker → supervisor.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ToSupervisor {
    Event {
        event: RunEvent,
    },
    /// The run ended: the last message.
    Done {
        envelope: Envelope,
    },
    Request {
        id: u64,
        ask: WorkerAsk,
    },
    Reply {
        id: u64,
        result: Result<Value, CallError>,
    },
    Cancel {
        id: u64,
    },
    SpanSet {
        span: u64,
        key: String,
        value: WireAttr,
    },
    SpanEnd {
        span: u64,
        status: WireStatus,
    },
    Measure {
        measure: WireMeasure,
    },
}

/// The run, as the supervisor prepared it (inputs checked, saved values loaded).
#[derive(Debug, Serialize, Deserialize)]
pub struct Start {
    pub blueprint: Blueprint,
    pub config: RunConfig,
    pub stack: Vec<String>,
    pub trigger: String,
    pub parent: Option<WireTrace>,
    /// Which of the engine's parts the supervisor has (the others stay `None` in the worker).
    pub parts: Parts,
    /// Whether server log lines come (`Log`): the worker then runs with logs.
    pub logs: bool,
}

/// The engine's optional parts the supervisor serves.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Parts {
    pub source: bool,
    pub saved: bool,
    pub journal: bool,
    pub people: bool,
    pub sampler: bool,
    /// Telemetry is on; whether payloads may go on spans.
    pub telemetry: Option<bool>,
}

/// What the worker asks of its supervisor.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // made and sent at once, never kept
pub enum WorkerAsk {
    /// A call to a server (`Servers::call`), with the hooks the worker's request has.
    Call(Box<WireCall>),
    /// Ask the run's people (`People::ask`).
    People {
        question: Question,
    },
    /// Ask the run's sampler; `ask`: the request may ask people (`SampleAsk` comes back).
    Sample {
        request: WireSample,
    },
    /// A blueprint's text for a `workflow` step; answered with a string.
    Source {
        id: String,
    },
    /// A blueprint's saved values (a `workflow` step's blueprint).
    Load {
        blueprint: String,
    },
    Save {
        blueprint: String,
        name: String,
        value: Value,
    },
    /// Flush the store (the engine's journal).
    Sync,
    /// Start a span; answered with its context (`WireTrace`) and the span's number in
    /// the reply's `span` field.
    SpanStart {
        span: u64,
        start: WireSpan,
    },
}

/// What the supervisor asks of the worker: the hooks of the worker's call `call` (or of
/// its sample request `sample`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum SupervisorAsk {
    CallAsk { call: u64, question: Question },
    CallSample { call: u64, server: String, allowed: bool, params: Value },
    CallTask { call: u64, handle: TaskHandle },
    SampleAsk { sample: u64, question: Question },
}

#[derive(Debug, Serialize, Deserialize)]
pub struct WireCall {
    pub target: CallTarget,
    pub timeout_ms: Option<u64>,
    pub stack: Vec<String>,
    pub resume: Option<TaskHandle>,
    pub progress: bool,
    pub task_sink: bool,
    /// `Some(confirm_destructive)` when the call has a way to a person.
    pub ask: Option<bool>,
    pub sample: bool,
    pub trace: Option<WireTrace>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct WireSample {
    pub step: String,
    pub path: IterationPath,
    pub server: String,
    pub allowed: bool,
    pub params: Value,
    pub ask: bool,
}

/// A trace context as its W3C headers.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireTrace {
    pub traceparent: String,
    pub tracestate: Option<String>,
    pub remote: bool,
}

impl WireTrace {
    pub fn of(context: &TraceContext) -> Self {
        WireTrace {
            traceparent: context.traceparent(),
            tracestate: context.tracestate().map(str::to_owned),
            remote: context.remote,
        }
    }

    pub fn context(&self) -> Option<TraceContext> {
        let mut context = TraceContext::parse(&self.traceparent, self.tracestate.as_deref()).ok()?;
        context.remote = self.remote;
        Some(context)
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub struct WireSpan {
    pub name: String,
    pub kind: WireKind,
    pub parent: Option<WireTrace>,
    pub attrs: Vec<(String, WireAttr)>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireKind {
    Internal,
    Client,
    Server,
}

impl From<SpanKind> for WireKind {
    fn from(kind: SpanKind) -> Self {
        match kind {
            SpanKind::Internal => WireKind::Internal,
            SpanKind::Client => WireKind::Client,
            SpanKind::Server => WireKind::Server,
        }
    }
}

impl From<WireKind> for SpanKind {
    fn from(kind: WireKind) -> Self {
        match kind {
            WireKind::Internal => SpanKind::Internal,
            WireKind::Client => SpanKind::Client,
            WireKind::Server => SpanKind::Server,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireAttr {
    Str(String),
    Int(i64),
    Bool(bool),
    F64(f64),
    Ints(Vec<i64>),
}

impl From<&Attr> for WireAttr {
    fn from(attr: &Attr) -> Self {
        match attr {
            Attr::Static(s) => WireAttr::Str((*s).to_owned()),
            Attr::Str(s) => WireAttr::Str(s.to_string()),
            Attr::Int(i) => WireAttr::Int(*i),
            Attr::Bool(b) => WireAttr::Bool(*b),
            Attr::F64(f) => WireAttr::F64(*f),
            Attr::IntArray(a) => WireAttr::Ints(a.to_vec()),
        }
    }
}

impl From<WireAttr> for Attr {
    fn from(attr: WireAttr) -> Self {
        match attr {
            WireAttr::Str(s) => Attr::Str(s.into()),
            WireAttr::Int(i) => Attr::Int(i),
            WireAttr::Bool(b) => Attr::Bool(b),
            WireAttr::F64(f) => Attr::F64(f),
            WireAttr::Ints(a) => Attr::IntArray(a.into()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WireStatus {
    Unset,
    Ok,
    Error(String),
}

impl From<SpanStatus> for WireStatus {
    fn from(status: SpanStatus) -> Self {
        match status {
            SpanStatus::Unset => WireStatus::Unset,
            SpanStatus::Ok => WireStatus::Ok,
            SpanStatus::Error(message) => WireStatus::Error(message.into_owned()),
        }
    }
}

impl From<WireStatus> for SpanStatus {
    fn from(status: WireStatus) -> Self {
        match status {
            WireStatus::Unset => SpanStatus::Unset,
            WireStatus::Ok => SpanStatus::Ok,
            WireStatus::Error(message) => SpanStatus::Error(message.into()),
        }
    }
}

/// A [`Measure`] on the wire: durations in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "m", rename_all = "snake_case")]
pub enum WireMeasure {
    RunEnded { blueprint: String, trigger: String, status: mcpflow_engine::RunStatus, micros: u64 },
    StepEnded { blueprint: String, step: String, kind: String, outcome: String, error: Option<String>, micros: u64 },
    Retry { blueprint: String, kind: String, error: String },
    McpCall { micros: u64, attrs: Vec<(String, WireAttr)> },
    InFlight { method: String, server: String, delta: i64 },
}

fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn duration(micros: u64) -> std::time::Duration {
    std::time::Duration::from_micros(micros)
}

impl WireMeasure {
    /// `None`: a kind of measure this version does not know (it is dropped).
    pub fn of(measure: &Measure) -> Option<Self> {
        Some(match measure {
            Measure::RunEnded { blueprint, trigger, status, duration } => WireMeasure::RunEnded {
                blueprint: blueprint.to_string(),
                trigger: (*trigger).to_owned(),
                status: *status,
                micros: micros(*duration),
            },
            Measure::StepEnded { blueprint, step, kind, outcome, error, duration } => WireMeasure::StepEnded {
                blueprint: blueprint.to_string(),
                step: step.to_string(),
                kind: (*kind).to_owned(),
                outcome: (*outcome).to_owned(),
                error: error.as_ref().map(|e| e.to_string()),
                micros: micros(*duration),
            },
            Measure::Retry { blueprint, kind, error } => WireMeasure::Retry {
                blueprint: blueprint.to_string(),
                kind: (*kind).to_owned(),
                error: error.to_string(),
            },
            Measure::McpCall { duration, attrs } => WireMeasure::McpCall {
                micros: micros(*duration),
                attrs: attrs.iter().map(|(k, v)| ((*k).to_owned(), v.into())).collect(),
            },
            Measure::InFlight { method, server, delta } => {
                WireMeasure::InFlight { method: (*method).to_owned(), server: server.to_string(), delta: *delta }
            }
            _ => return None,
        })
    }

    pub fn measure(self) -> Measure {
        match self {
            WireMeasure::RunEnded { blueprint, trigger, status, micros } => Measure::RunEnded {
                blueprint: blueprint.into(),
                trigger: word(&trigger),
                status,
                duration: duration(micros),
            },
            WireMeasure::StepEnded { blueprint, step, kind, outcome, error, micros } => Measure::StepEnded {
                blueprint: blueprint.into(),
                step: step.into(),
                kind: word(&kind),
                outcome: word(&outcome),
                error: error.map(Into::into),
                duration: duration(micros),
            },
            WireMeasure::Retry { blueprint, kind, error } => {
                Measure::Retry { blueprint: blueprint.into(), kind: word(&kind), error: error.into() }
            }
            WireMeasure::McpCall { micros, attrs } => Measure::McpCall {
                duration: duration(micros),
                attrs: attrs.into_iter().map(|(k, v)| (word(&k), v.into())).collect(),
            },
            WireMeasure::InFlight { method, server, delta } => {
                Measure::InFlight { method: word(&method), server: server.into(), delta }
            }
        }
    }
}

/// How many distinct words [`word`] keeps.
const MAX_WORDS: usize = 512;

/// A `&'static str` for a word of the engine's vocabulary (attribute keys, step kinds,
/// outcomes, triggers), which crosses the wire as a string: each distinct word is kept
/// once, at most [`MAX_WORDS`] of them (then `other`), so a worker cannot grow this.
pub fn word(text: &str) -> &'static str {
    static WORDS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut words = WORDS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = words.iter().find(|w| **w == text) {
        return found;
    }
    if words.len() >= MAX_WORDS || text.len() > 64 {
        return "other";
    }
    let kept: &'static str = Box::leak(text.to_owned().into_boxed_str());
    words.push(kept);
    kept
}

/// An answer as a reply value.
pub fn answer_value(answer: &Answer) -> Value {
    serde_json::to_value(answer).unwrap_or(Value::Null)
}

/// A reply value as an answer.
pub fn value_answer(value: Value) -> Result<Answer, CallError> {
    serde_json::from_value(value).map_err(|e| broken(&format!("an answer that is not one ({e})")))
}

/// The error of a message that does not say what it should: the worker and its
/// supervisor are the same program, so this is a bug, told as such.
pub fn broken(what: &str) -> CallError {
    CallError::new("WORKER_PROTOCOL", format!("the run's worker and its supervisor disagree: {what}"), false)
}
