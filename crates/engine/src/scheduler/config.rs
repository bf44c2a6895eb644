//! What a run starts with ([`RunConfig`]) and the check of a re-run's selection: which
//! top-level steps are pinned to an earlier output and which alone run.

use crate::driver::StartError;
use crate::event::IterationPath;
use crate::servers::TaskHandle;
use mcpflow_blueprint::diagnostic::did_you_mean;
use mcpflow_blueprint::{Plan, StepIdx, StepKind};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What a run starts with. `Default` gives an empty config, so that a struct literal
/// can name only what it sets (`..RunConfig::default()`). Serialized as it crosses to a
/// worker process (`crates/worker`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RunConfig {
    pub run_id: String,
    /// Prepared inputs (defaults applied, validated).
    pub inputs: Value,
    /// Values saved by earlier runs (`saved`).
    pub saved: Value,
    /// RFC 3339 start time, for `run.started_at`.
    pub started_at: String,
    pub breakpoints: HashSet<String>,
    /// Start paused (Debug): nothing starts until `resume` or `step`.
    pub start_paused: bool,
    /// Overrides `limits.timeout_ms` (the CLI's `--timeout`).
    pub timeout_ms: Option<u64>,
    /// Re-running part of an earlier run: top-level step id → its output from that run.
    /// A pinned step does not run; when its dependencies are done it finishes at once as
    /// succeeded with this output (`attempts: 0`), which templates read as if it had run.
    pub pinned: BTreeMap<String, Value>,
    /// The top-level steps allowed to run (`None`: all). A top-level step that is
    /// neither here nor pinned is skipped, and the skip rule applies downstream.
    pub only: Option<BTreeSet<String>>,
    /// Resuming an interrupted run: (step id, iteration path) → the task that step
    /// instance had in flight. Its first call polls that task instead of calling again.
    #[serde(with = "task_entries")]
    pub resume_tasks: HashMap<(String, IterationPath), TaskHandle>,
    /// The run's trace id (32 lower-case hex digits) when telemetry is on: it goes into
    /// `RunStarted` and the envelope. Chosen by the driver, so the scheduler stays
    /// deterministic.
    pub trace_id: Option<String>,
}

impl RunConfig {
    /// Checks `pinned` and `only` against the plan that will run: each names a top-level
    /// step that is not a fallback, no step is both pinned and in `only`, and a pinned
    /// switch's output names one of its cases. The scheduler refuses to start otherwise.
    pub fn check(&self, plan: &Plan) -> Result<(), StartError> {
        let only = self.only.iter().flatten().map(|id| ("only", id));
        for (field, id) in self.pinned.keys().map(|id| ("pinned", id)).chain(only) {
            top_level_step(plan, field, id)?;
        }
        if let Some(only) = &self.only
            && let Some(id) = self.pinned.keys().find(|id| only.contains(*id))
        {
            return Err(StartError::Selection {
                step: id.clone(),
                message: format!(
                    "step `{id}` is both pinned and in `only`; a step either runs again or keeps its earlier output, so name it in one of them"
                ),
            });
        }
        for (id, output) in &self.pinned {
            let Some(&idx) = plan.by_id.get(id) else { continue };
            if let StepKind::Switch(sw) = &plan.steps[idx].step.kind
                && pinned_case(output, sw.cases.len()).is_none()
            {
                return Err(StartError::Selection {
                    step: id.clone(),
                    message: format!(
                        "the pinned output of switch `{id}` is {output}, but a switch's output is {{\"case\": <index of one of its {} case(s)> | \"default\"}}; pin the output the switch gave in an earlier run of this blueprint, or let it run again",
                        sw.cases.len()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// A re-run's selection as the scheduler keeps it: `pinned` and `only` by step index.
#[derive(Debug, Default)]
pub(super) struct Selection {
    /// Pinned top-level steps: the output each finishes with, taken when it does (so
    /// the run holds it once, as it holds a real output).
    pub(super) pinned: HashMap<StepIdx, Value>,
    /// The top-level steps allowed to run (`None`: all).
    pub(super) only: Option<HashSet<StepIdx>>,
    /// Why `pinned` / `only` cannot be used: the run fails as it starts.
    pub(super) refused: Option<StartError>,
}

impl Selection {
    /// Moves `pinned` and `only` out of `config`, as step indexes of `plan`, checked.
    pub(super) fn new(plan: &Plan, config: &mut RunConfig) -> Self {
        let refused = config.check(plan).err();
        let index = |id: &String| plan.by_id.get(id).copied();
        let pinned =
            std::mem::take(&mut config.pinned).into_iter().filter_map(|(id, v)| Some((index(&id)?, v))).collect();
        let only = config.only.take().map(|only| only.iter().filter_map(index).collect());
        Selection { pinned, only, refused }
    }
}

/// `id` names a top-level step that can be pinned or run by itself.
fn top_level_step(plan: &Plan, field: &str, id: &str) -> Result<(), StartError> {
    let selection = |message: String| Err(StartError::Selection { step: id.to_owned(), message });
    let Some(&idx) = plan.by_id.get(id) else {
        let top = plan.lists[0].members.iter().filter(|&&m| plan.steps[m].fallback_of.is_none());
        let hint = did_you_mean(id, top.map(|&m| plan.steps[m].step.id()));
        let hint = if hint.is_empty() { "name a top-level step".to_owned() } else { hint };
        return selection(format!("`{field}` names `{id}`, but the blueprint has no such step; {hint}"));
    };
    let planned = &plan.steps[idx];
    if let Some(owner) = plan.lists[planned.list].owner {
        let owner = plan.steps[owner].step.id();
        return selection(format!(
            "`{field}` names `{id}`, a step inside loop `{owner}`; steps in a loop run with it, so name `{owner}` instead"
        ));
    }
    if let Some(of) = planned.fallback_of {
        let of = plan.steps[of].step.id();
        return selection(format!(
            "`{field}` names `{id}`, the fallback of `{of}`; a fallback runs only for its step, so name `{of}` instead"
        ));
    }
    Ok(())
}

/// The case a switch output (`{ "case": i | "default" }`) names: `Some(Some(i))`, or
/// `Some(None)` for the default; `None` when it names none of `cases` cases.
fn pinned_case(output: &Value, cases: usize) -> Option<Option<usize>> {
    match output.get("case")? {
        Value::String(s) if s == "default" => Some(None),
        Value::Number(n) => n.as_u64().and_then(|i| usize::try_from(i).ok()).filter(|&i| i < cases).map(Some),
        _ => None,
    }
}

/// `resume_tasks` as a list of `[step, path, handle]`: JSON keys are strings only.
mod task_entries {
    use super::{HashMap, IterationPath, TaskHandle};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Tasks = HashMap<(String, IterationPath), TaskHandle>;

    pub fn serialize<S: Serializer>(tasks: &Tasks, serializer: S) -> Result<S::Ok, S::Error> {
        let entries: Vec<(&String, &IterationPath, &TaskHandle)> =
            tasks.iter().map(|((step, path), handle)| (step, path, handle)).collect();
        entries.serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Tasks, D::Error> {
        let entries = Vec::<(String, IterationPath, TaskHandle)>::deserialize(deserializer)?;
        Ok(entries.into_iter().map(|(step, path, handle)| ((step, path), handle)).collect())
    }
}
