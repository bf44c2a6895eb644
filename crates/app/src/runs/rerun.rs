//! Re-running part of a past run — the studio's "run this step" and "run from here".
//! From the run's record (its blueprint and inputs) and events (each top-level step's
//! last status and output) and the blueprint's dependency graph, [`App::rerun_plan`]
//! builds a [`StartRun`] that runs the chosen steps again and pins the others to the
//! outputs they had (`RunConfig::pinned` / `only` in the engine).
//!
//! | mode | runs | pinned |
//! |---|---|---|
//! | [`Rerun::Step`] | the step | its ancestors |
//! | [`Rerun::FromHere`] | the step and its descendants | every other step that succeeded |
//!
//! The graph is the plan's `deps` (`after`, the implicit order, switch → target); a
//! template reads only ancestors (validation guarantees it), so they hold every output
//! the steps that run may read. A step the past run skipped is not pinned: the re-run
//! skips it again, as it was (a switch's other branch). A step it failed or never ran
//! cannot stand in for itself: when a step that runs again may read it, that is an
//! error. A step the re-run would skip at once (its pinned switch routed elsewhere, or
//! none of the steps it runs after succeeded) is refused with the reason. Steps inside
//! loops are never pinned alone (their loop's output is), and a fallback step stands in
//! for its step, whose output is the one pinned.

use super::{StartRun, Target, Trigger};
use crate::app::App;
use crate::error::{AppError, Result};
use mcpflow_blueprint::diagnostic::did_you_mean;
use mcpflow_blueprint::{Plan, StepIdx, StepKind};
use mcpflow_engine::{EventKind, RunConfig, RunEvent, StepStatus};
use mcpflow_store::{RerunOf, RunRecord};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What to run again of a past run: the step alone ([`Rerun::Step`], with the outputs of
/// its upstream steps from the past run) or the step and everything downstream of it
/// ([`Rerun::FromHere`]; everything else keeps its output). The re-run's record keeps
/// it ([`RunRecord::rerun_of`]).
pub use mcpflow_store::RerunMode as Rerun;

/// How a top-level step ended in the past run (its last event).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Past {
    Succeeded(Value),
    Skipped,
    Failed,
}

impl App {
    /// A run that re-runs `step` of past run `past_run_id` (`mode` says how much of what
    /// follows it), on the blueprint that run ran, with its inputs. The blueprint must be
    /// a stored one (runs the current revision); a run of a blueprint given inline keeps
    /// no copy of it — see [`App::rerun_plan_on`].
    pub fn rerun_plan(&self, past_run_id: &str, step: &str, mode: Rerun) -> Result<StartRun> {
        let record = self.past_run(past_run_id)?;
        if record.blueprint_rev.is_none() {
            return Err(AppError::BadRequest(format!(
                "run `{past_run_id}` ran blueprint `{}` as given (not from the store), so the run keeps no copy of it; re-run it on the blueprint at hand (the document open in the studio, or `mcpflow rerun --file FILE`), or save the blueprint and run it from the store",
                record.blueprint
            )));
        }
        let target = Target::Stored(record.blueprint.clone());
        self.plan_rerun(&record, target, step, mode)
    }

    /// Like [`App::rerun_plan`], on a blueprint the caller has at hand (the studio's
    /// open document, for a run it started inline). It must have the past run's id.
    pub fn rerun_plan_on(&self, past_run_id: &str, target: Target, step: &str, mode: Rerun) -> Result<StartRun> {
        let record = self.past_run(past_run_id)?;
        self.plan_rerun(&record, target, step, mode)
    }

    fn past_run(&self, run_id: &str) -> Result<RunRecord> {
        self.store().run(run_id)?.ok_or_else(|| AppError::NotFound { what: "run", id: run_id.to_owned() })
    }

    fn plan_rerun(&self, record: &RunRecord, target: Target, step: &str, mode: Rerun) -> Result<StartRun> {
        let (bp, plan, _) = self.load(&target)?;
        if bp.id != record.blueprint {
            return Err(AppError::BadRequest(format!(
                "run `{}` is a run of blueprint `{}`, not of `{}`; re-run it on `{}`",
                record.id, record.blueprint, bp.id, record.blueprint
            )));
        }
        let events = self.store().events(&record.id)?;
        let (pinned, only) = select(&plan, &past_steps(&events), &record.id, step, mode)?;
        let check = RunConfig { pinned, only: Some(only), ..RunConfig::default() };
        check.check(&plan).map_err(|e| AppError::BadRequest(e.to_string()))?;
        let mut spec = StartRun::new(target, record.inputs.clone(), Trigger::Studio);
        spec.pinned = check.pinned;
        spec.only = check.only;
        spec.rerun_of = Some(RerunOf { run: record.id.clone(), step: step.to_owned(), mode });
        Ok(spec)
    }
}

/// Each top-level step's last status in a run's events, with its output if it succeeded.
pub(crate) fn past_steps(events: &[RunEvent]) -> HashMap<String, Past> {
    let mut past = HashMap::new();
    for e in events {
        match &e.kind {
            EventKind::StepFinished { step, path, status, output, .. } if path.is_empty() => {
                let p = match status {
                    // A `null` output is stored as none.
                    StepStatus::Succeeded => Past::Succeeded(output.clone().unwrap_or(Value::Null)),
                    StepStatus::Skipped => Past::Skipped,
                    StepStatus::Failed => Past::Failed,
                };
                past.insert(step.clone(), p);
            }
            EventKind::StepSkipped { step, path, .. } if path.is_empty() => {
                past.insert(step.clone(), Past::Skipped);
            }
            _ => {}
        }
    }
    past
}

/// The pinned outputs and the steps to run (ids) for re-running `step` in `mode`.
pub(crate) fn select(
    plan: &Plan,
    past: &HashMap<String, Past>,
    run_id: &str,
    step: &str,
    mode: Rerun,
) -> Result<(BTreeMap<String, Value>, BTreeSet<String>)> {
    let bad = |message: String| Err(AppError::BadRequest(message));
    // The top level's steps that take part in the graph (a fallback runs only for its step).
    let top: Vec<StepIdx> =
        plan.lists[0].members.iter().copied().filter(|&m| plan.steps[m].fallback_of.is_none()).collect();
    let id = |m: StepIdx| plan.steps[m].step.id();
    let Some(&chosen) = plan.by_id.get(step) else {
        let hint = did_you_mean(step, top.iter().map(|&m| id(m)));
        return bad(format!(
            "the blueprint has no step `{step}`{}",
            if hint.is_empty() { hint } else { format!("; {hint}") }
        ));
    };
    if let Some(owner) = plan.lists[plan.steps[chosen].list].owner {
        return bad(format!(
            "step `{step}` is inside loop `{}`, and a step in a loop runs only with its loop; re-run the loop `{}` instead",
            id(owner),
            id(owner)
        ));
    }
    if let Some(of) = plan.steps[chosen].fallback_of {
        return bad(format!(
            "step `{step}` is the fallback of `{}` and runs only when it fails; re-run `{}` instead",
            id(of),
            id(of)
        ));
    }
    // Per top-level position: the steps that depend on it.
    let mut dependents: HashMap<StepIdx, Vec<StepIdx>> = HashMap::new();
    for &m in &top {
        for &d in &plan.steps[m].deps {
            dependents.entry(d).or_default().push(m);
        }
    }
    let run: BTreeSet<StepIdx> = match mode {
        Rerun::Step => BTreeSet::from([chosen]),
        Rerun::FromHere => closure([chosen], |m| dependents.get(&m).cloned().unwrap_or_default()),
    };
    // What the steps that run may read.
    let upstream =
        closure(run.iter().flat_map(|&m| plan.steps[m].deps.iter().copied()), |m| plan.steps[m].deps.clone());
    let mut pinned = BTreeMap::new();
    for &m in top.iter().filter(|m| !run.contains(m)) {
        let needed = upstream.contains(&m);
        if mode == Rerun::Step && !needed {
            continue;
        }
        match past.get(id(m)) {
            Some(Past::Succeeded(output)) => {
                pinned.insert(id(m).to_owned(), output.clone());
            }
            Some(Past::Skipped) => {}
            Some(Past::Failed) | None if needed => {
                let how = if past.contains_key(id(m)) { "failed" } else { "did not run" };
                return bad(format!(
                    "step `{}` did not succeed in run {run_id} (it {how}), and `{step}` needs its output; run from an earlier step",
                    id(m)
                ));
            }
            Some(Past::Failed) | None => {}
        }
    }
    // A step the re-run would skip at once is not worth a run: say why instead.
    let deps = &plan.steps[chosen].deps;
    if let Some(sw) = plan.steps[chosen].switch
        && let Some(output) = pinned.get(id(sw))
        && !routes_to(plan, sw, output, step)
    {
        return bad(format!(
            "switch `{}` did not route to `{step}` in run {run_id}, so `{step}` would be skipped again; run from `{}` instead",
            id(sw),
            id(sw)
        ));
    }
    if !deps.is_empty() && deps.iter().all(|&d| !pinned.contains_key(id(d))) {
        return bad(format!(
            "none of the steps `{step}` runs after succeeded in run {run_id}, so `{step}` would be skipped again; run from an earlier step"
        ));
    }
    let only = run.iter().map(|&m| id(m).to_owned()).collect();
    Ok((pinned, only))
}

/// Whether switch `sw`'s output (`{ "case": i | "default" }`) routes to `target`.
fn routes_to(plan: &Plan, sw: StepIdx, output: &Value, target: &str) -> bool {
    let StepKind::Switch(switch) = &plan.steps[sw].step.kind else { return true };
    let chosen = match output.get("case") {
        Some(Value::String(d)) if d == "default" => switch.default.as_deref(),
        Some(Value::Number(n)) => {
            n.as_u64().and_then(|i| switch.cases.get(usize::try_from(i).ok()?)).map(|c| c.to.as_slice())
        }
        _ => return true,
    };
    chosen.unwrap_or_default().iter().any(|t| t == target)
}

/// `start` and everything reachable from it through `next`.
fn closure(start: impl IntoIterator<Item = StepIdx>, next: impl Fn(StepIdx) -> Vec<StepIdx>) -> BTreeSet<StepIdx> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<StepIdx> = start.into_iter().collect();
    while let Some(m) = todo.pop() {
        if seen.insert(m) {
            todo.extend(next(m));
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpflow_blueprint::{Options, check_value};
    use serde_json::json;

    fn plan(steps: Value) -> Plan {
        let report = check_value(json!({ "blueprint": 1, "id": "t", "steps": steps }), &Options::default());
        report.plan.unwrap_or_else(|| panic!("{:?}", report.diagnostics))
    }

    fn t(id: &str) -> Value {
        json!({ "id": id, "kind": "transform", "value": id })
    }

    fn past(steps: &[(&str, Past)]) -> HashMap<String, Past> {
        steps.iter().map(|(s, p)| ((*s).to_owned(), p.clone())).collect()
    }

    fn ok(v: i32) -> Past {
        Past::Succeeded(json!(v))
    }

    #[test]
    fn a_step_pins_its_ancestors_and_from_here_pins_every_other_step_that_succeeded() {
        // a → b → c, and side → join ← c
        let p = plan(json!([t("a"), t("b"), t("c"),
            { "id": "side", "kind": "transform", "value": 1, "after": [] },
            { "id": "join", "kind": "transform", "value": 1, "after": ["c", "side"] }]));
        let all = past(&[("a", ok(1)), ("b", ok(2)), ("c", ok(3)), ("side", ok(4)), ("join", ok(5))]);
        let (pinned, only) = select(&p, &all, "r", "b", Rerun::Step).unwrap();
        assert_eq!((pinned, only), (BTreeMap::from([("a".into(), json!(1))]), BTreeSet::from(["b".into()])));
        let (pinned, only) = select(&p, &all, "r", "b", Rerun::FromHere).unwrap();
        assert_eq!(pinned.keys().collect::<Vec<_>>(), ["a", "side"]);
        assert_eq!(only, BTreeSet::from(["b".into(), "c".into(), "join".into()]));
    }

    #[test]
    fn a_skipped_ancestor_stays_unpinned_and_a_failed_or_missing_one_is_an_error() {
        let p = plan(json!([
            { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ `true` }}", "to": ["hot"] }], "default": ["cold"] },
            t("hot"), t("cold"),
            { "id": "join", "kind": "transform", "after": ["hot", "cold"], "value": "{{ hot || cold }}" }]));
        let ran = past(&[("sw", Past::Succeeded(json!({ "case": 0 }))), ("hot", ok(1)), ("cold", Past::Skipped)]);
        let (pinned, only) = select(&p, &ran, "r", "join", Rerun::Step).unwrap();
        assert_eq!(pinned.keys().collect::<Vec<_>>(), ["hot", "sw"]);
        assert_eq!(only, BTreeSet::from(["join".into()]));
        let msg = select(&p, &ran, "r", "cold", Rerun::Step).unwrap_err().to_string();
        assert!(msg.contains("switch `sw` did not route to `cold` in run r") && msg.contains("run from `sw`"), "{msg}");
        for (hot, how) in [(Some(Past::Failed), "it failed"), (None, "it did not run")] {
            let mut ran = past(&[("sw", ok(0)), ("cold", Past::Skipped)]);
            ran.extend(hot.map(|h| ("hot".to_owned(), h)));
            let e = select(&p, &ran, "r1", "join", Rerun::Step).unwrap_err().to_string();
            assert!(e.contains("step `hot` did not succeed in run r1") && e.contains(how), "{e}");
        }
    }

    #[test]
    fn a_step_whose_upstream_was_all_skipped_is_refused_as_it_would_be_skipped_again() {
        let p = plan(json!([
            { "id": "sw", "kind": "switch", "cases": [{ "when": "{{ `false` }}", "to": ["x"] }] },
            t("x"), t("y"), t("z")]));
        let ran =
            past(&[("sw", Past::Succeeded(json!({ "case": "default" }))), ("x", Past::Skipped), ("y", Past::Skipped)]);
        let msg = select(&p, &ran, "r", "y", Rerun::Step).unwrap_err().to_string();
        assert!(msg.contains("none of the steps `y` runs after succeeded in run r"), "{msg}");
        let (pinned, only) = select(&p, &ran, "r", "sw", Rerun::FromHere).unwrap();
        assert!(pinned.is_empty());
        assert_eq!(only.len(), 4);
    }

    #[test]
    fn only_a_top_level_step_that_is_not_a_fallback_can_be_re_run() {
        let p = plan(json!([
            { "id": "l", "kind": "loop", "for_each": "{{ `[1]` }}", "steps": [t("inner")] },
            { "id": "x", "kind": "transform", "value": 1, "fallback": "fb" }, t("fb")]));
        let none = HashMap::new();
        let msg = |s: &str| select(&p, &none, "r", s, Rerun::Step).unwrap_err().to_string();
        assert!(msg("inner").contains("re-run the loop `l` instead"), "{}", msg("inner"));
        assert!(msg("fb").contains("re-run `x` instead"), "{}", msg("fb"));
        assert!(msg("xx").contains("no step `xx`; did you mean `x`?"), "{}", msg("xx"));
    }
}
