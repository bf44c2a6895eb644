//! The seam for traces and metrics. The engine and the pool describe spans and
//! measurements in these types and hand them to a [`Telemetry`] they are given; what
//! records them (the OpenTelemetry SDK in `mcpflow-telemetry`, a recording fake in tests)
//! lives outside, so neither crate depends on OpenTelemetry. With no `Telemetry` (the
//! default) nothing is built.
//!
//! [`TraceContext`] is the W3C trace context (`traceparent` / `tracestate`): parsed from a
//! caller (`_meta`, an HTTP header) and formatted for a server's `_meta`.

use crate::event::RunStatus;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Records spans and measurements. Implementations must not block the caller: a span's
/// start and end, and a measurement, are at most a queue push.
pub trait Telemetry: Send + Sync + fmt::Debug {
    /// Starts a span now. It is exported when [`OpenSpan::end`] is called; a span dropped
    /// without `end` is ended by the implementation (status unset).
    fn start(&self, span: SpanStart<'_>) -> Box<dyn OpenSpan>;
    /// Records a measurement (a metric).
    fn measure(&self, measure: Measure);
    /// Whether arguments and results may go on spans (`--otlp-capture-payloads`).
    fn capture_payloads(&self) -> bool;
}

/// A span that has started.
pub trait OpenSpan: Send {
    /// Its context: its trace id and its own span id (the parent of its children).
    fn context(&self) -> &TraceContext;
    /// Sets (or replaces) an attribute.
    fn set(&mut self, key: &'static str, value: Attr);
    /// Ends it now with this status.
    fn end(self: Box<Self>, status: SpanStatus);
}

/// What a span starts with.
#[derive(Debug, Clone)]
pub struct SpanStart<'a> {
    /// `run {blueprint}`, `step {id}`, `tools/call {tool}`, …
    pub name: SpanName,
    pub kind: SpanKind,
    /// `None`: the root of a new trace.
    pub parent: Option<&'a TraceContext>,
    pub attrs: Vec<(&'static str, Attr)>,
}

/// A span's name: fixed, shared (a step's, made once per run however often the step
/// runs: starting its span then costs no allocation), or made for this one span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanName {
    Static(&'static str),
    Shared(Arc<str>),
    Owned(String),
}

impl SpanName {
    pub fn as_str(&self) -> &str {
        match self {
            SpanName::Static(s) => s,
            SpanName::Shared(s) => s,
            SpanName::Owned(s) => s,
        }
    }

    /// The name as an owned or static string (a shared one is copied).
    pub fn into_cow(self) -> Cow<'static, str> {
        match self {
            SpanName::Static(s) => Cow::Borrowed(s),
            SpanName::Shared(s) => Cow::Owned(s.as_ref().to_owned()),
            SpanName::Owned(s) => Cow::Owned(s),
        }
    }
}

impl From<&'static str> for SpanName {
    fn from(name: &'static str) -> SpanName {
        SpanName::Static(name)
    }
}

impl From<String> for SpanName {
    fn from(name: String) -> SpanName {
        SpanName::Owned(name)
    }
}

impl From<Arc<str>> for SpanName {
    fn from(name: Arc<str>) -> SpanName {
        SpanName::Shared(name)
    }
}

/// The OpenTelemetry span kinds mcpflow uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Internal,
    /// A request to an MCP server.
    Client,
    /// A request `mcpflow serve` answers.
    Server,
}

/// An attribute's value. Strings are shared (`Arc<str>`) or static, so that the ids a run
/// repeats are not copied per span.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    Static(&'static str),
    Str(Arc<str>),
    Int(i64),
    Bool(bool),
    F64(f64),
    IntArray(Arc<[i64]>),
}

impl From<&'static str> for Attr {
    fn from(value: &'static str) -> Self {
        Attr::Static(value)
    }
}

impl From<Arc<str>> for Attr {
    fn from(value: Arc<str>) -> Self {
        Attr::Str(value)
    }
}

impl From<String> for Attr {
    fn from(value: String) -> Self {
        Attr::Str(value.into())
    }
}

impl From<i64> for Attr {
    fn from(value: i64) -> Self {
        Attr::Int(value)
    }
}

impl From<u32> for Attr {
    fn from(value: u32) -> Self {
        Attr::Int(i64::from(value))
    }
}

impl From<bool> for Attr {
    fn from(value: bool) -> Self {
        Attr::Bool(value)
    }
}

/// How a span ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpanStatus {
    Unset,
    Ok,
    /// Failed; the message is shown by the trace viewer (already redacted of secrets).
    Error(Cow<'static, str>),
}

/// A measurement for the metrics (DESIGN: no run ids or arguments go on metrics).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Measure {
    /// A run ended (`mcpflow.runs`, `mcpflow.run.duration`).
    RunEnded { blueprint: Arc<str>, trigger: &'static str, status: RunStatus, duration: Duration },
    /// A step attempt ended (`mcpflow.step.duration`). `outcome`: `succeeded`, `failed`,
    /// `retrying`, …; `error`: the error code.
    StepEnded {
        blueprint: Arc<str>,
        step: Arc<str>,
        kind: &'static str,
        outcome: &'static str,
        error: Option<Arc<str>>,
        duration: Duration,
    },
    /// A step is retried (`mcpflow.step.retries`).
    Retry { blueprint: Arc<str>, kind: &'static str, error: Arc<str> },
    /// One MCP request ended (`mcp.client.operation.duration`); `attrs` are the
    /// semantic-convention attributes the pool knows (method, tool, error type, …).
    McpCall { duration: Duration, attrs: Vec<(&'static str, Attr)> },
    /// A request to a server started (`+1`) or ended (`-1`)
    /// (`mcpflow.client.active_requests`).
    InFlight { method: &'static str, server: Arc<str>, delta: i64 },
}

/// What a call takes along for tracing: where to record, and the span to parent its
/// client span to (the step attempt's).
#[derive(Clone)]
pub struct CallTrace {
    pub telemetry: Arc<dyn Telemetry>,
    pub parent: TraceContext,
}

impl fmt::Debug for CallTrace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallTrace").field("parent", &self.parent).finish_non_exhaustive()
    }
}

/// Where a run comes from, for its root span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOrigin {
    /// `cli`, `studio`, `mcp`, `schedule`, `workflow`.
    pub trigger: &'static str,
    /// The caller's span (a `traceparent` received by `mcpflow serve`): the run joins its
    /// trace. `None`: the run starts a trace of its own.
    pub parent: Option<TraceContext>,
}

impl Default for RunOrigin {
    fn default() -> Self {
        RunOrigin { trigger: "cli", parent: None }
    }
}

/// The longest `traceparent` read: version 00 is 55 characters, and a later version
/// may append fields; anything longer is refused rather than scanned.
pub const TRACEPARENT_MAX: usize = 256;
/// The longest `tracestate` kept (W3C: at least 512 characters should be propagated);
/// a longer one is dropped whole, the `traceparent` kept.
pub const TRACESTATE_MAX: usize = 512;
/// W3C: at most 32 list members.
const TRACESTATE_MEMBERS: usize = 32;

/// A W3C trace context: a trace id, the id of the span that is the parent, the sampled
/// flag, and the vendors' `tracestate`.
#[derive(Clone, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub sampled: bool,
    /// Received from another process (a caller), as opposed to made here.
    pub remote: bool,
    /// The `tracestate` as received (checked, at most [`TRACESTATE_MAX`] characters).
    pub state: Option<Arc<str>>,
}

impl fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceContext")
            .field("traceparent", &self.traceparent())
            .field("remote", &self.remote)
            .field("state", &self.state)
            .finish()
    }
}

/// Why a `traceparent` was not accepted. W3C: the receiver then starts a new trace; the
/// message says what was wrong, for a log line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid traceparent ({0}); expected `00-<32 lower-case hex>-<16 lower-case hex>-<2 hex>` with non-zero ids (W3C Trace Context), so the run starts a trace of its own"
)]
pub struct InvalidTraceparent(&'static str);

impl TraceContext {
    /// Parses a received `traceparent` and its `tracestate` (W3C Trace Context level 1).
    /// The context is marked remote. A `tracestate` that is malformed or too long is
    /// dropped and the `traceparent` kept, as the recommendation says.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Result<TraceContext, InvalidTraceparent> {
        let tp = traceparent.trim_matches([' ', '\t']).as_bytes();
        if tp.len() > TRACEPARENT_MAX {
            return Err(InvalidTraceparent("longer than 256 characters"));
        }
        if tp.len() < 55 {
            return Err(InvalidTraceparent("shorter than 55 characters"));
        }
        let version = hex_byte(&tp[0..2]).ok_or(InvalidTraceparent("the version is not 2 lower-case hex digits"))?;
        if version == 0xff {
            return Err(InvalidTraceparent("version ff is invalid"));
        }
        if version == 0 && tp.len() != 55 {
            return Err(InvalidTraceparent("version 00 must be exactly 55 characters"));
        }
        // A later version may append fields after a `-`; the first four are read alike.
        if tp.len() > 55 && tp[55] != b'-' {
            return Err(InvalidTraceparent("characters follow the flags without a `-`"));
        }
        if tp[2] != b'-' || tp[35] != b'-' || tp[52] != b'-' {
            return Err(InvalidTraceparent("the fields are not separated by `-`"));
        }
        let mut trace_id = [0u8; 16];
        for (i, byte) in trace_id.iter_mut().enumerate() {
            *byte = hex_byte(&tp[3 + 2 * i..5 + 2 * i])
                .ok_or(InvalidTraceparent("the trace id is not 32 lower-case hex digits"))?;
        }
        let mut span_id = [0u8; 8];
        for (i, byte) in span_id.iter_mut().enumerate() {
            *byte = hex_byte(&tp[36 + 2 * i..38 + 2 * i])
                .ok_or(InvalidTraceparent("the parent id is not 16 lower-case hex digits"))?;
        }
        let flags = hex_byte(&tp[53..55]).ok_or(InvalidTraceparent("the flags are not 2 lower-case hex digits"))?;
        if trace_id == [0; 16] {
            return Err(InvalidTraceparent("the trace id is all zeros"));
        }
        if span_id == [0; 8] {
            return Err(InvalidTraceparent("the parent id is all zeros"));
        }
        Ok(TraceContext {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
            remote: true,
            state: tracestate.and_then(checked_tracestate),
        })
    }

    /// The `traceparent` to send (version 00), written into a fixed-size buffer (one
    /// allocation; it is made for every request a traced call sends).
    pub fn traceparent(&self) -> String {
        let mut out = *b"00-00000000000000000000000000000000-0000000000000000-00";
        hex_into(&mut out[3..35], &self.trace_id);
        hex_into(&mut out[36..52], &self.span_id);
        if self.sampled {
            out[54] = b'1';
        }
        String::from(std::str::from_utf8(&out).unwrap_or_default())
    }

    /// The `tracestate` to send along, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.state.as_deref()
    }

    /// The trace id as 32 lower-case hex digits (what the envelope and `show` print).
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span id as 16 lower-case hex digits.
    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }
}

/// Two lower-case hex digits (W3C: upper case is invalid in version 00).
fn hex_byte(pair: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    match pair {
        [hi, lo] => Some(digit(*hi)? << 4 | digit(*lo)?),
        _ => None,
    }
}

/// `bytes` as lower-case hex.
fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 2];
    hex_into(&mut out, bytes);
    String::from_utf8(out).unwrap_or_default()
}

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex into `out` (twice as long).
fn hex_into(out: &mut [u8], bytes: &[u8]) {
    for (pair, b) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0xf)];
    }
}

/// A `tracestate` as W3C defines it (comma-separated `key=value` members, at most 32,
/// keys unique), re-joined without the optional white space; `None` when it is empty,
/// malformed or longer than [`TRACESTATE_MAX`].
fn checked_tracestate(raw: &str) -> Option<Arc<str>> {
    if raw.len() > TRACESTATE_MAX {
        return None;
    }
    let mut members: Vec<&str> = Vec::new();
    for member in raw.split(',') {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue; // empty members are allowed and ignored
        }
        let (key, value) = member.split_once('=')?;
        if !valid_key(key) || !valid_value(value) {
            return None;
        }
        if members.len() == TRACESTATE_MEMBERS || members.iter().any(|m| m.split_once('=').map(|(k, _)| k) == Some(key))
        {
            return None;
        }
        members.push(member);
    }
    if members.is_empty() {
        return None;
    }
    Some(members.join(",").into())
}

/// `simple-key` or `tenant@system`: lower-case letters, digits and `_-*/`, starting
/// with a letter (a tenant id may start with a digit); 256 characters at most
/// (tenant 241, system 14).
fn valid_key(key: &str) -> bool {
    let part = |s: &str, max: usize, digit_first: bool| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= max
            && (b[0].is_ascii_lowercase() || (digit_first && b[0].is_ascii_digit()))
            && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-' | b'*' | b'/'))
    };
    match key.split_once('@') {
        None => part(key, 256, false),
        Some((tenant, system)) => part(tenant, 241, true) && part(system, 14, false),
    }
}

/// Printable ASCII without `,` and `=`, 256 characters at most, not ending in a space.
fn valid_value(value: &str) -> bool {
    let b = value.as_bytes();
    !b.is_empty()
        && b.len() <= 256
        && b.last() != Some(&b' ')
        && b.iter().all(|c| (0x20..=0x7e).contains(c) && *c != b',' && *c != b'=')
}

/// A [`Telemetry`] that keeps every span and measurement in memory, with ids counted
/// from 1: the fake that the engine's, the pool's and the app's tests check their spans
/// against (the OpenTelemetry adapter is tested against a real receiver instead).
#[derive(Debug, Default)]
pub struct Recorder {
    state: Arc<std::sync::Mutex<Recorded>>,
    capture_payloads: bool,
}

/// What a [`Recorder`] holds.
#[derive(Debug, Default, Clone)]
pub struct Recorded {
    /// In the order they started.
    pub spans: Vec<RecordedSpan>,
    pub measures: Vec<Measure>,
}

/// One span a [`Recorder`] saw.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedSpan {
    pub name: String,
    pub kind: SpanKind,
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The parent's span id; `None` for a root.
    pub parent: Option<[u8; 8]>,
    /// The attributes it started with, then those set, in order (a key set twice appears twice).
    pub attrs: Vec<(&'static str, Attr)>,
    /// `None` while it is open, and for a span dropped without being ended (a leak the
    /// tests look for).
    pub status: Option<SpanStatus>,
}

impl RecordedSpan {
    /// The last value given to `key`.
    pub fn attr(&self, key: &str) -> Option<&Attr> {
        self.attrs.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

impl Recorder {
    /// A recorder whose `capture_payloads` answers `capture`.
    pub fn new(capture: bool) -> Self {
        Recorder { state: Arc::default(), capture_payloads: capture }
    }

    /// A copy of what was recorded so far.
    pub fn recorded(&self) -> Recorded {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

impl Telemetry for Recorder {
    fn start(&self, span: SpanStart<'_>) -> Box<dyn OpenSpan> {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = state.spans.len() as u64 + 1;
        let span_id = n.to_be_bytes();
        let trace_id = match span.parent {
            Some(p) => p.trace_id,
            None => u128::from(n).to_be_bytes(),
        };
        let context = TraceContext {
            trace_id,
            span_id,
            sampled: span.parent.is_none_or(|p| p.sampled),
            remote: false,
            state: span.parent.and_then(|p| p.state.clone()),
        };
        state.spans.push(RecordedSpan {
            name: span.name.as_str().to_owned(),
            kind: span.kind,
            trace_id,
            span_id,
            parent: span.parent.map(|p| p.span_id),
            attrs: span.attrs,
            status: None,
        });
        Box::new(RecordingSpan { state: self.state.clone(), index: state.spans.len() - 1, context })
    }

    fn measure(&self, measure: Measure) {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).measures.push(measure);
    }

    fn capture_payloads(&self) -> bool {
        self.capture_payloads
    }
}

struct RecordingSpan {
    state: Arc<std::sync::Mutex<Recorded>>,
    index: usize,
    context: TraceContext,
}

impl OpenSpan for RecordingSpan {
    fn context(&self) -> &TraceContext {
        &self.context
    }

    fn set(&mut self, key: &'static str, value: Attr) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.spans[self.index].attrs.push((key, value));
    }

    fn end(self: Box<Self>, status: SpanStatus) {
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        state.spans[self.index].status = Some(status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn parse(tp: &str) -> Result<TraceContext, InvalidTraceparent> {
        TraceContext::parse(tp, None)
    }

    #[test]
    fn a_valid_traceparent_parses_and_formats_back_the_same() {
        let ctx = parse(TP).unwrap();
        assert_eq!(ctx.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(ctx.span_id_hex(), "00f067aa0ba902b7");
        assert!(ctx.sampled);
        assert!(ctx.remote);
        assert_eq!(ctx.traceparent(), TP);
    }

    #[test]
    fn the_sampled_flag_is_bit_0_and_other_flags_are_not_sent_on() {
        let ctx = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").unwrap();
        assert!(!ctx.sampled);
        assert!(ctx.traceparent().ends_with("-00"));
        let ctx = parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03").unwrap();
        assert!(ctx.sampled);
        assert!(ctx.traceparent().ends_with("-01"));
    }

    #[test]
    fn malformed_traceparents_are_refused_without_panicking() {
        let cases = [
            "",
            "00",
            "garbage",
            // upper-case hex
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            // all-zero ids
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            // version ff, and version 00 with more fields
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            // wrong separators and lengths
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
            "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            // a later version with a field glued on
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            // multi-byte characters where hex digits go (byte slicing must not panic)
            "00-4bf92f3577b34da6a3ce929d0e0e47é-00f067aa0ba902b7-01",
            "00-ééééééééééééééééééééééééééééééééé-00f067aa0ba902b7-01",
        ];
        for case in cases {
            let err = parse(case).expect_err(case);
            assert!(err.to_string().contains("starts a trace of its own"), "{case}: {err}");
        }
        let huge = format!("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-{}", "a".repeat(10_000));
        assert!(parse(&huge).is_err());
    }

    #[test]
    fn a_later_version_is_read_by_its_first_four_fields() {
        let ctx = parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes-next").unwrap();
        assert_eq!(ctx.traceparent(), TP);
    }

    #[test]
    fn surrounding_white_space_is_ignored() {
        assert_eq!(parse(&format!(" \t{TP} ")).unwrap().traceparent(), TP);
    }

    #[test]
    fn a_valid_tracestate_is_kept_without_optional_white_space() {
        let ctx = TraceContext::parse(TP, Some("rojo=00f067aa0ba902b7 , ,congo=t61rcWkgMzE,tenant@vendor=x")).unwrap();
        assert_eq!(ctx.tracestate(), Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x"));
    }

    #[test]
    fn a_malformed_or_oversized_tracestate_is_dropped_and_the_traceparent_kept() {
        let too_many = (0..33).map(|i| format!("k{i}=v")).collect::<Vec<_>>().join(",");
        let too_long = format!("k={}", "v".repeat(600));
        for state in [
            "", " , ", "novalue", "Upper=1", "k=a,b", "k=v,k=w", "k=v=w", "1k=v", "k=\u{7f}", "k=é", &too_many,
            &too_long,
        ] {
            let ctx = TraceContext::parse(TP, Some(state)).unwrap();
            assert_eq!(ctx.tracestate(), None, "{state:?}");
            assert_eq!(ctx.traceparent(), TP);
        }
    }
}
