//! One run's spans, made from what the driver already sees: the events it emits, the
//! calls it starts, the iterations the scheduler closes ([`crate::Action::IterationClosed`])
//! and the envelope it finishes with. The driver keeps a [`RunTrace`] only when the
//! engine has a [`Telemetry`]; without one it keeps `None` and pays one branch per event.
//!
//! The tree:
//!
//! | span | opened | ended | parent |
//! |---|---|---|---|
//! | `run {blueprint}` | the run starts | [`RunTrace::finish`] (or drop) | the caller's span, a sub-workflow's calling step, or none |
//! | `step {id}` | `StepStarted` | `StepRetrying`, `StepFinished` | its iteration, else the root |
//! | `iteration {loop}` | its first step's `StepStarted` | `IterationClosed`, or its loop's `StepFinished` | the loop step's attempt |
//!
//! Pinned steps (finished without starting) and skipped steps get no span. Every span
//! opened is ended once: a run that ends early (its future dropped, the driver gone)
//! ends what is still open when its `RunTrace` is dropped.

use crate::event::{Envelope, EventKind, IterationPath, RunEvent, RunStatus};
use crate::telemetry::{
    Attr, CallTrace, Measure, OpenSpan, RunOrigin, SpanKind, SpanName, SpanStart, SpanStatus, Telemetry, TraceContext,
};
use mcpflow_blueprint::{Plan, StepIdx, StepKind};
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

/// How many step lookups [`RunTrace::index_of`] remembers: a loop body of up to three
/// steps and the loop itself.
const FOUND: usize = 4;

/// The status message of a span the run ended while it was open (the run's future was
/// dropped, or the run finished before the span's own end arrived).
pub const ENDED_WITH_THE_RUN: &str = "ended with the run";

/// The attribute keys, as the OpenTelemetry export and the docs name them.
mod key {
    pub const BLUEPRINT_ID: &str = "mcpflow.blueprint.id";
    pub const RUN_ID: &str = "mcpflow.run.id";
    pub const RUN_TRIGGER: &str = "mcpflow.run.trigger";
    pub const RUN_STATUS: &str = "mcpflow.run.status";
    pub const RUN_TOOL_CALLS: &str = "mcpflow.run.tool_calls";
    pub const STEP_ID: &str = "mcpflow.step.id";
    pub const STEP_KIND: &str = "mcpflow.step.kind";
    pub const STEP_ATTEMPT: &str = "mcpflow.step.attempt";
    pub const STEP_PATH: &str = "mcpflow.step.path";
    pub const STEP_OUTCOME: &str = "mcpflow.step.outcome";
    pub const STEP_RECOVERED_BY: &str = "mcpflow.step.recovered_by";
    pub const LOOP_INDEX: &str = "mcpflow.loop.index";
    pub const ERROR_TYPE: &str = "error.type";
}

/// What a run's spans need to know of one step, built the first time the step starts
/// (so a step run a thousand times builds its name once).
struct StepInfo {
    id: Arc<str>,
    /// `step {id}`.
    name: Arc<str>,
    /// `iteration {id}`, for a loop.
    iteration_name: Option<Arc<str>>,
    kind: &'static str,
    /// The loop whose body holds the step (`None` at the top level).
    owner: Option<StepIdx>,
}

/// A span that is open, and when it started (for the step duration metric).
struct Open {
    span: Box<dyn OpenSpan>,
    started: Instant,
}

/// Open spans by iteration path, then by step: a lookup borrows the event's path
/// (no key is built per event), and a path holds the few steps of one list. The paths
/// are the engine's own small integers: Fx hashing, not SipHash (whose resistance to
/// chosen keys is not needed here, and which cost a traced call about 3,000
/// instructions, callgrind on `benches/engine.rs` case d).
#[derive(Default)]
struct Opened {
    by_path: FxHashMap<IterationPath, Vec<(StepIdx, Open)>>,
    /// The key and (empty) list of the path that emptied last, for the next new path: a
    /// loop opens a path per iteration and empties it again, and reusing them saves two
    /// allocations and two frees a time.
    spare: Option<(IterationPath, Vec<(StepIdx, Open)>)>,
}

impl Opened {
    fn get(&self, idx: StepIdx, path: &[u32]) -> Option<&Open> {
        self.by_path.get(path)?.iter().find(|(i, _)| *i == idx).map(|(_, o)| o)
    }

    fn take(&mut self, idx: StepIdx, path: &[u32]) -> Option<Open> {
        let at = self.by_path.get_mut(path)?;
        let found = at.iter().position(|(i, _)| *i == idx).map(|n| at.swap_remove(n).1);
        if at.is_empty() {
            self.spare = self.by_path.remove_entry(path);
        }
        found
    }

    /// Adds `open`; returns what was open under the same key (which should not happen).
    fn put(&mut self, idx: StepIdx, path: &[u32], open: Open) -> Option<Open> {
        match self.by_path.get_mut(path) {
            Some(at) => match at.iter_mut().find(|(i, _)| *i == idx) {
                Some((_, held)) => Some(std::mem::replace(held, open)),
                None => {
                    at.push((idx, open));
                    None
                }
            },
            None => {
                let (mut key, mut at) = self.spare.take().unwrap_or_default();
                key.clear();
                key.extend_from_slice(path);
                at.push((idx, open));
                self.by_path.insert(key, at);
                None
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// Removes every span of loop `idx`'s iterations below `path`.
    fn take_iterations_of(&mut self, idx: StepIdx, path: &[u32]) -> Vec<Open> {
        let mut out = Vec::new();
        self.by_path.retain(|p, at| {
            if p.len() == path.len() + 1 && p.starts_with(path) {
                while let Some(n) = at.iter().position(|(i, _)| *i == idx) {
                    out.push(at.swap_remove(n).1);
                }
            }
            !at.is_empty()
        });
        out
    }

    fn drain(&mut self) -> impl Iterator<Item = Open> + '_ {
        self.by_path.drain().flat_map(|(_, at)| at.into_iter().map(|(_, o)| o))
    }
}

/// The spans and measurements of one run (see the module documentation).
pub struct RunTrace {
    telemetry: Arc<dyn Telemetry>,
    plan: Arc<Plan>,
    blueprint: Arc<str>,
    trigger: &'static str,
    /// `None` once ended.
    root: Option<Box<dyn OpenSpan>>,
    /// The root's context (kept apart so it can be read after the root ends).
    root_context: TraceContext,
    started: Instant,
    /// Per step index, filled as steps first start.
    steps: Vec<Option<StepInfo>>,
    attempts: Opened,
    iterations: Opened,
    /// `mcpflow.step.path` of top-level steps, shared.
    top_path: Arc<[i64]>,
    /// The steps [`RunTrace::index_of`] found last, the latest at `found_next - 1`.
    found: std::cell::Cell<[Option<StepIdx>; FOUND]>,
    found_next: std::cell::Cell<usize>,
}

impl std::fmt::Debug for RunTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunTrace")
            .field("blueprint", &self.blueprint)
            .field("trace", &self.root_context)
            .finish_non_exhaustive()
    }
}

impl RunTrace {
    /// Opens the run's root span `run {blueprint}`: a child of `origin.parent` (a
    /// caller's span, or the calling step of a sub-workflow) in its trace, or the root
    /// of a new trace.
    pub fn start(
        telemetry: Arc<dyn Telemetry>,
        plan: Arc<Plan>,
        blueprint: &str,
        run_id: &str,
        origin: &RunOrigin,
    ) -> RunTrace {
        let blueprint: Arc<str> = blueprint.into();
        let root = telemetry.start(SpanStart {
            name: SpanName::Owned(format!("run {blueprint}")),
            kind: SpanKind::Internal,
            parent: origin.parent.as_ref(),
            attrs: vec![
                (key::BLUEPRINT_ID, Attr::Str(blueprint.clone())),
                (key::RUN_ID, Attr::Str(run_id.into())),
                (key::RUN_TRIGGER, Attr::Static(origin.trigger)),
            ],
        });
        let root_context = root.context().clone();
        let steps = std::iter::repeat_with(|| None).take(plan.steps.len()).collect();
        RunTrace {
            telemetry,
            plan,
            blueprint,
            trigger: origin.trigger,
            root: Some(root),
            root_context,
            started: Instant::now(),
            steps,
            attempts: Opened::default(),
            iterations: Opened::default(),
            top_path: Arc::from(Vec::new()),
            found: std::cell::Cell::new([None; FOUND]),
            found_next: std::cell::Cell::new(0),
        }
    }

    /// The run's trace id, 32 lower-case hex digits (for `RunStarted` and the envelope).
    pub fn trace_id_hex(&self) -> String {
        self.root_context.trace_id_hex()
    }

    /// The root span's context.
    pub fn root(&self) -> &TraceContext {
        &self.root_context
    }

    /// The index of the step with id `step`. A loop asks for the same few steps over and
    /// over (each body step's start, call and end, then the loop's iteration): the
    /// [`FOUND`] steps found last are compared first, which is cheaper than hashing the
    /// id for the plan's map.
    fn index_of(&self, step: &str) -> Option<StepIdx> {
        let found = self.found.get();
        if let Some(idx) = found.iter().flatten().copied().find(|&idx| self.plan.steps[idx].step.id() == step) {
            return Some(idx);
        }
        let idx = self.plan.by_id.get(step).copied()?;
        let mut found = found;
        let next = self.found_next.get();
        found[next] = Some(idx);
        self.found.set(found);
        self.found_next.set((next + 1) % FOUND);
        Some(idx)
    }

    /// The span a call of `step` at `path` belongs to: its open attempt, else the root.
    pub fn parent_for(&self, step: &str, path: &[u32]) -> TraceContext {
        self.index_of(step)
            .and_then(|idx| self.attempts.get(idx, path))
            .map_or_else(|| self.root_context.clone(), |open| open.span.context().clone())
    }

    /// What a call of `step` at `path` takes along: where to record its client span and
    /// the attempt span that is its parent.
    pub fn call_trace(&self, step: &str, path: &[u32]) -> CallTrace {
        CallTrace { telemetry: self.telemetry.clone(), parent: self.parent_for(step, path) }
    }

    /// Follows one event of the run (before the event sink sees it).
    pub fn on_event(&mut self, event: &RunEvent) {
        match &event.kind {
            EventKind::StepStarted { step, path, attempt, .. } => self.step_started(step, path, *attempt),
            EventKind::StepRetrying { step, path, error, .. } => {
                let Some(idx) = self.index_of(step) else { return };
                let Some(open) = self.attempts.take(idx, path) else { return };
                let code: Arc<str> = error.code.as_str().into();
                let kind = self.info(idx).kind;
                self.end_attempt(idx, open, "retrying", Some(code.clone()), None);
                self.telemetry.measure(Measure::Retry { blueprint: self.blueprint.clone(), kind, error: code });
            }
            EventKind::StepFinished { step, path, status, error, recovered_by, .. } => {
                let Some(idx) = self.index_of(step) else { return };
                if let Some(open) = self.attempts.take(idx, path) {
                    let code = error.as_ref().map(|e| Arc::<str>::from(e.code.as_str()));
                    let by = recovered_by.as_deref().and_then(|by| self.plan.by_id.get(by).copied());
                    let by = by.map(|by| self.info(by).id.clone());
                    self.end_attempt(idx, open, status.as_str(), code, by);
                }
                // A loop's iterations end with it at the latest (the scheduler closes
                // each before; this catches any it did not).
                if !self.iterations.is_empty() && matches!(self.plan.steps[idx].step.kind, StepKind::Loop(_)) {
                    for open in self.iterations.take_iterations_of(idx, path) {
                        open.span.end(SpanStatus::Error(Cow::Borrowed(ENDED_WITH_THE_RUN)));
                    }
                }
            }
            _ => {}
        }
    }

    /// Ends the span of iteration `path` (its index last) of loop `step`.
    pub fn iteration_closed(&mut self, step: &str, path: &[u32]) {
        let Some(idx) = self.index_of(step) else { return };
        if let Some(open) = self.iterations.take(idx, path) {
            open.span.end(SpanStatus::Unset);
        }
    }

    /// Ends the run's spans with its envelope: what is still open, then the root
    /// (`mcpflow.run.status`, `mcpflow.run.tool_calls`; status Error with the first
    /// error's code unless the run succeeded), and records the run's measurement.
    pub fn finish(mut self, envelope: &Envelope) {
        self.end_open();
        let Some(mut root) = self.root.take() else { return };
        root.set(key::RUN_STATUS, Attr::Static(envelope.status.as_str()));
        root.set(key::RUN_TOOL_CALLS, Attr::Int(i64::try_from(envelope.summary.tool_calls).unwrap_or(i64::MAX)));
        let status = match envelope.status {
            RunStatus::Succeeded | RunStatus::Partial => SpanStatus::Ok,
            RunStatus::Failed | RunStatus::Cancelled | RunStatus::Interrupted => SpanStatus::Error(
                envelope.errors.first().map_or(Cow::Borrowed(envelope.status.as_str()), |e| Cow::Owned(e.code.clone())),
            ),
        };
        tracing::info!(status = envelope.status.as_str(), tool_calls = envelope.summary.tool_calls, "run ended");
        root.end(status);
        self.measure_run(envelope.status);
    }

    fn step_started(&mut self, step: &str, path: &[u32], attempt: u32) {
        let Some(idx) = self.index_of(step) else { return };
        let parent = match self.info(idx).owner {
            Some(owner) if !path.is_empty() => self.iteration(owner, path),
            _ => self.root_context.clone(),
        };
        let info = step_info(&mut self.steps, &self.plan, idx);
        let step_path = if path.is_empty() {
            self.top_path.clone()
        } else {
            path.iter().map(|&i| i64::from(i)).collect::<Arc<[i64]>>()
        };
        // Room for what its end sets (outcome, error type, recovered by): a span that
        // records them as they come has them pushed without growing.
        let mut attrs = Vec::with_capacity(8);
        attrs.push((key::STEP_ID, Attr::Str(info.id.clone())));
        attrs.push((key::STEP_KIND, Attr::Static(info.kind)));
        attrs.push((key::STEP_ATTEMPT, Attr::from(attempt)));
        if let Some(&index) = path.last() {
            attrs.push((key::LOOP_INDEX, Attr::from(index)));
        }
        attrs.push((key::STEP_PATH, Attr::IntArray(step_path)));
        let span = self.telemetry.start(SpanStart {
            name: SpanName::Shared(info.name.clone()),
            kind: SpanKind::Internal,
            parent: Some(&parent),
            attrs,
        });
        let open = Open { span, started: Instant::now() };
        if let Some(previous) = self.attempts.put(idx, path, open) {
            previous.span.end(SpanStatus::Error(Cow::Borrowed(ENDED_WITH_THE_RUN)));
        }
    }

    /// The context of iteration `path` of loop `owner`, opened now if it is not open
    /// (as a child of the loop's current attempt).
    fn iteration(&mut self, owner: StepIdx, path: &[u32]) -> TraceContext {
        if let Some(open) = self.iterations.get(owner, path) {
            return open.span.context().clone();
        }
        let outer = path.split_last().map_or(path, |(_, outer)| outer);
        let parent = match self.attempts.get(owner, outer) {
            Some(open) => open.span.context().clone(),
            None => self.root_context.clone(),
        };
        let info = step_info(&mut self.steps, &self.plan, owner);
        let name = match &info.iteration_name {
            Some(name) => SpanName::Shared(name.clone()),
            None => SpanName::Owned(format!("iteration {}", info.id)),
        };
        let attrs = path.last().map(|&index| (key::LOOP_INDEX, Attr::from(index))).into_iter().collect();
        let span = self.telemetry.start(SpanStart { name, kind: SpanKind::Internal, parent: Some(&parent), attrs });
        let context = span.context().clone();
        self.iterations.put(owner, path, Open { span, started: Instant::now() });
        context
    }

    fn end_attempt(
        &mut self,
        idx: StepIdx,
        open: Open,
        outcome: &'static str,
        error: Option<Arc<str>>,
        recovered_by: Option<Arc<str>>,
    ) {
        let Open { mut span, started } = open;
        // A log line per attempt with the span's id (`--log-format json` joins logs and
        // traces; without a log installed the fields are not even formatted).
        tracing::info!(
            step = %step_info(&mut self.steps, &self.plan, idx).id,
            outcome,
            error = error.as_deref(),
            span_id = %span.context().span_id_hex(),
            "step ended"
        );
        span.set(key::STEP_OUTCOME, Attr::Static(outcome));
        if let Some(code) = &error {
            span.set(key::ERROR_TYPE, Attr::Str(code.clone()));
        }
        if let Some(by) = recovered_by {
            span.set(key::STEP_RECOVERED_BY, Attr::Str(by));
        }
        let status = match &error {
            _ if outcome == "succeeded" => SpanStatus::Ok,
            Some(code) => SpanStatus::Error(Cow::Owned(code.to_string())),
            None => SpanStatus::Error(Cow::Borrowed(outcome)),
        };
        span.end(status);
        let info = step_info(&mut self.steps, &self.plan, idx);
        let measure = Measure::StepEnded {
            blueprint: self.blueprint.clone(),
            step: info.id.clone(),
            kind: info.kind,
            outcome,
            error,
            duration: started.elapsed(),
        };
        self.telemetry.measure(measure);
    }

    /// Ends every step and iteration span still open, innermost kinds first.
    fn end_open(&mut self) {
        for open in self.attempts.drain() {
            open.span.end(SpanStatus::Error(Cow::Borrowed(ENDED_WITH_THE_RUN)));
        }
        for open in self.iterations.drain() {
            open.span.end(SpanStatus::Error(Cow::Borrowed(ENDED_WITH_THE_RUN)));
        }
    }

    fn measure_run(&self, status: RunStatus) {
        self.telemetry.measure(Measure::RunEnded {
            blueprint: self.blueprint.clone(),
            trigger: self.trigger,
            status,
            duration: self.started.elapsed(),
        });
    }

    /// The step's cached names and kind, built on first use.
    fn info(&mut self, idx: StepIdx) -> &StepInfo {
        step_info(&mut self.steps, &self.plan, idx)
    }
}

impl Drop for RunTrace {
    /// A run that did not reach [`RunTrace::finish`] (its future was dropped): what is
    /// open ends with status Error, the root as `interrupted`.
    fn drop(&mut self) {
        self.end_open();
        if let Some(mut root) = self.root.take() {
            root.set(key::RUN_STATUS, Attr::Static(RunStatus::Interrupted.as_str()));
            root.end(SpanStatus::Error(Cow::Borrowed(ENDED_WITH_THE_RUN)));
            self.measure_run(RunStatus::Interrupted);
        }
    }
}

/// Step `idx`'s names and kind from the cache, built on first use (a function apart from
/// [`RunTrace`] so that the other fields stay borrowable beside it).
fn step_info<'a>(steps: &'a mut [Option<StepInfo>], plan: &Plan, idx: StepIdx) -> &'a StepInfo {
    steps[idx].get_or_insert_with(|| {
        let planned = &plan.steps[idx];
        let id = planned.step.id();
        StepInfo {
            id: id.into(),
            name: format!("step {id}").into(),
            iteration_name: matches!(planned.step.kind, StepKind::Loop(_)).then(|| format!("iteration {id}").into()),
            kind: planned.step.kind.name(),
            owner: plan.lists[planned.list].owner,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{StepError, StepStatus};
    use crate::telemetry::Recorder;
    use serde_json::json;

    fn plan() -> Arc<Plan> {
        let doc = json!({ "blueprint": 1, "id": "t", "steps": [
            { "id": "l", "kind": "loop", "for_each": "{{ inputs.items }}",
              "steps": [ { "id": "w", "kind": "tool", "server": "s", "tool": "w" } ] }
        ] });
        let report = mcpflow_blueprint::check_value(doc, &mcpflow_blueprint::Options::default());
        Arc::new(report.plan.unwrap_or_else(|| panic!("{:?}", report.diagnostics)))
    }

    fn event(kind: EventKind) -> RunEvent {
        RunEvent { seq: 0, at_ms: 0, kind }
    }

    fn started(step: &str, path: Vec<u32>, attempt: u32) -> RunEvent {
        event(EventKind::StepStarted { step: step.into(), path, attempt, args: None })
    }

    fn finished(step: &str, path: Vec<u32>, error: Option<&str>) -> RunEvent {
        event(EventKind::StepFinished {
            step: step.into(),
            path,
            status: if error.is_some() { StepStatus::Failed } else { StepStatus::Succeeded },
            output: None,
            error: error.map(|code| StepError {
                code: code.into(),
                message: "m".into(),
                detail: None,
                exhausted: None,
            }),
            attempts: 1,
            duration_ms: 0,
            raw: None,
            recovered_by: None,
        })
    }

    #[test]
    fn a_loop_that_ends_with_iterations_still_open_ends_them_and_unknown_steps_are_ignored() {
        let recorder = Arc::new(Recorder::new(false));
        let mut trace = RunTrace::start(recorder.clone(), plan(), "t", "r", &RunOrigin::default());
        trace.on_event(&started("l", vec![], 1));
        trace.on_event(&started("w", vec![0], 1));
        trace.on_event(&finished("w", vec![0], None));
        // No IterationClosed arrives (as for a loop kind that had none): the loop's end
        // ends its iteration.
        trace.on_event(&finished("l", vec![], Some("LOOP_FAILED")));
        trace.on_event(&started("nosuchstep", vec![], 1));
        trace.iteration_closed("nosuchstep", &[0]);
        trace.on_event(&finished("nosuchstep", vec![], None));
        let spans = recorder.recorded().spans;
        let names: Vec<_> = spans.iter().map(|s| (s.name.as_str(), s.status.clone())).collect();
        assert_eq!(
            names,
            [
                ("run t", None),
                ("step l", Some(SpanStatus::Error("LOOP_FAILED".into()))),
                ("iteration l", Some(SpanStatus::Error(ENDED_WITH_THE_RUN.into()))),
                ("step w", Some(SpanStatus::Ok)),
            ]
        );
        drop(trace);
        assert!(recorder.recorded().spans.iter().all(|s| s.status.is_some()), "dropping ends the root");
    }

    #[test]
    fn steps_are_found_by_id_past_the_few_remembered_and_unknown_ids_are_not() {
        let ids: Vec<String> = (0..2 * FOUND + 1).map(|i| format!("s{i}")).collect();
        let steps: Vec<_> =
            ids.iter().map(|id| json!({ "id": id, "kind": "tool", "server": "s", "tool": "w" })).collect();
        let report = mcpflow_blueprint::check_value(
            json!({ "blueprint": 1, "id": "t", "steps": steps }),
            &mcpflow_blueprint::Options::default(),
        );
        let plan = Arc::new(report.plan.unwrap_or_else(|| panic!("{:?}", report.diagnostics)));
        let trace = RunTrace::start(Arc::new(Recorder::new(false)), plan.clone(), "t", "r", &RunOrigin::default());
        // Twice round, so the second round finds each one after it was forgotten, then
        // each again at once.
        for id in ids.iter().chain(&ids).chain(ids.iter().rev()) {
            let idx = trace.index_of(id);
            assert_eq!(idx, plan.by_id.get(id.as_str()).copied(), "{id}");
            assert_eq!(idx.map(|i| plan.steps[i].step.id()), Some(id.as_str()));
        }
        assert_eq!(trace.index_of("s"), None);
        assert_eq!(trace.index_of("nosuchstep"), None);
    }

    #[test]
    fn an_attempt_started_again_without_an_end_ends_the_first_rather_than_leaking_it() {
        let recorder = Arc::new(Recorder::new(false));
        let mut trace = RunTrace::start(recorder.clone(), plan(), "t", "r", &RunOrigin::default());
        trace.on_event(&started("l", vec![], 1));
        trace.on_event(&started("l", vec![], 2));
        let parent = trace.parent_for("l", &[]);
        let spans = recorder.recorded().spans;
        assert_eq!(spans[1].status, Some(SpanStatus::Error(ENDED_WITH_THE_RUN.into())));
        assert_eq!(parent.span_id, spans[2].span_id, "calls go under the attempt that is open");
        assert_eq!(trace.parent_for("w", &[7]).span_id, spans[0].span_id, "no attempt open: the root");
    }
}
