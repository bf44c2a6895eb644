//! The template scope of a step instance: its frame's outputs, the loop variables and
//! outer frames up to the run's `inputs`, `saved` and `run`, plus per-step extras
//! (`prev`, `error`). Nothing is copied: values are shared `Rcvar`s. The run-wide values
//! (`inputs`, `saved`, `run`) are kept here as [`Globals`].

use super::config::RunConfig;
use super::{FrameId, Scheduler};
use mcpflow_blueprint::Blueprint;
use mcpflow_blueprint::template::{Rcvar, Scope, Variable, value_ref_to_var, value_to_var};
use serde_json::json;
use std::collections::BTreeMap;

/// The run-wide template values: `inputs`, `saved` and `run`.
#[derive(Debug)]
pub(super) struct Globals {
    pub(super) inputs: Rcvar,
    pub(super) saved: Rcvar,
    pub(super) run_var: Rcvar,
}

impl Globals {
    pub(super) fn new(blueprint: &Blueprint, config: &RunConfig) -> Self {
        let run_var = value_to_var(json!({
            "id": config.run_id, "blueprint": blueprint.id, "started_at": config.started_at,
        }));
        Globals {
            inputs: value_ref_to_var(&config.inputs),
            saved: if config.saved.is_object() { value_ref_to_var(&config.saved) } else { value_to_var(json!({})) },
            run_var,
        }
    }
}

pub(crate) struct View<'a> {
    pub(crate) s: &'a Scheduler,
    pub(crate) frame: FrameId,
    pub(crate) extra: Vec<(&'static str, Rcvar)>,
}

impl View<'_> {
    fn chain(&self) -> impl Iterator<Item = &super::frames::Frame> {
        let mut next = Some(self.frame);
        std::iter::from_fn(move || {
            let f = &self.s.frames[next?];
            next = f.parent;
            Some(f)
        })
    }
}

impl Scope for View<'_> {
    fn get(&self, name: &str) -> Option<Rcvar> {
        if let Some((_, v)) = self.extra.iter().find(|(n, _)| *n == name) {
            return Some(v.clone());
        }
        match name {
            "inputs" => return Some(self.s.globals.inputs.clone()),
            "saved" => return Some(self.s.globals.saved.clone()),
            "run" => return Some(self.s.globals.run_var.clone()),
            "steps" => {
                let mut map = BTreeMap::new();
                for f in self.chain() {
                    for (k, v) in &f.records {
                        map.entry(k.clone()).or_insert_with(|| v.to_var());
                    }
                }
                return Some(Rcvar::new(Variable::Object(map)));
            }
            _ => {}
        }
        for f in self.chain() {
            if let Some((_, v)) = f.vars.iter().find(|(n, _)| n == name) {
                return Some(v.clone());
            }
            if let Some(v) = f.outputs.get(name) {
                return Some(v.clone());
            }
        }
        None
    }

    fn step_record(&self, id: &str) -> Option<Rcvar> {
        self.chain().find_map(|f| f.records.get(id).map(super::frames::StepRecord::to_var))
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = vec!["inputs".into(), "saved".into(), "run".into(), "steps".into()];
        names.extend(self.extra.iter().map(|(n, _)| (*n).to_owned()));
        for f in self.chain() {
            names.extend(f.vars.iter().map(|(n, _)| n.clone()));
            names.extend(f.outputs.keys().cloned());
        }
        names.sort();
        names.dedup();
        names
    }

    fn max_value_bytes(&self) -> u64 {
        self.s.limits.max_value_bytes
    }

    fn max_value_depth(&self) -> u32 {
        self.s.limits.max_value_depth
    }
}

impl Scheduler {
    #[inline]
    pub(super) fn view(&self, frame: FrameId, pos: usize) -> View<'_> {
        let idx = self.id_of(frame, pos);
        let mut extra = Vec::new();
        let step = &self.plan.steps[idx];
        if step.deps.len() == 1 {
            let dep = step.deps[0];
            let name = self.plan.steps[dep].step.id();
            if let Some(v) = self.frames[frame].outputs.get(name) {
                extra.push(("prev", v.clone()));
            }
        }
        if let Some(e) = &self.frames[frame].slots[pos].handling {
            extra.push(("error", e.clone()));
        } else if let Some(e) = self.inherited_error(frame) {
            extra.push(("error", e));
        }
        View { s: self, frame, extra }
    }

    /// Inside a loop that runs as a fallback, `error` is the loop's.
    pub(super) fn inherited_error(&self, frame: FrameId) -> Option<Rcvar> {
        let mut f = frame;
        while let Some((of, opos)) = self.frames[f].owner {
            if let Some(e) = &self.frames[of].slots[opos].handling {
                return Some(e.clone());
            }
            f = of;
        }
        None
    }
}
