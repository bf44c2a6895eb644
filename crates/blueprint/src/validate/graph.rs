//! References between steps and the dependency graph: `after`, `fallback` and switch
//! targets resolve to steps of the same list; implicit order fills in the rest; cycles
//! are reported with their path; ancestors are computed per list for the read checks.

use super::{Bits, Validator};
use crate::diagnostic::{Code, did_you_mean};
use crate::model::StepKind;
use crate::plan::StepIdx;

/// How a reference resolved.
enum Resolved {
    Same(StepIdx),
    OtherList(StepIdx),
    Unknown,
}

impl Validator<'_> {
    fn resolve(&self, from: StepIdx, name: &str) -> Resolved {
        match self.plan.by_id.get(name) {
            None => Resolved::Unknown,
            Some(&t) if self.plan.steps[t].list == self.plan.steps[from].list => Resolved::Same(t),
            Some(&t) => Resolved::OtherList(t),
        }
    }

    fn unknown_step(&mut self, from: StepIdx, field: &str, name: &str, what: &str) {
        let list = self.plan.steps[from].list;
        let ids: Vec<String> =
            self.plan.lists[list].members.iter().map(|&m| self.plan.steps[m].step.id().to_owned()).collect();
        let hint = match did_you_mean(name, ids.iter().map(String::as_str)) {
            s if s.is_empty() => "name a step of the same list".to_owned(),
            s => s,
        };
        let d =
            self.step_diag(from, Code::UnknownStep, field, format!("{what} names `{name}`, but there is no such step"));
        self.push(d.with_hint(hint));
    }

    fn where_is(&self, idx: StepIdx) -> String {
        match self.plan.lists[self.plan.steps[idx].list].owner {
            Some(owner) => format!("inside loop `{}`", self.plan.steps[owner].step.id()),
            None => "at the top level".to_owned(),
        }
    }

    /// Resolves `fallback`, switch targets and `after`, then fills in `deps`.
    pub(super) fn references(&mut self) {
        let n = self.plan.steps.len();
        // Fallbacks first: switch targets and `after` are checked against them.
        for idx in 0..n {
            let Some(name) = self.plan.steps[idx].step.common.fallback.clone() else { continue };
            let id = self.plan.steps[idx].step.id().to_owned();
            match self.resolve(idx, &name) {
                Resolved::Unknown => self.unknown_step(idx, "/fallback", &name, "`fallback`"),
                Resolved::OtherList(t) => {
                    let msg = format!("fallback `{name}` is {}, not in the same list as `{id}`", self.where_is(t));
                    let d = self.step_diag(idx, Code::FallbackInvalid, "/fallback", msg);
                    self.push(d.with_hint("put the fallback step next to the step it stands in for"));
                }
                Resolved::Same(t) if t == idx => {
                    let d = self.step_diag(
                        idx,
                        Code::FallbackInvalid,
                        "/fallback",
                        format!("step `{id}` is its own fallback"),
                    );
                    self.push(d.with_hint("name another step, or use `retry` to try the same step again"));
                }
                Resolved::Same(t) => {
                    if let Some(prev) = self.plan.steps[t].fallback_of {
                        let msg = format!(
                            "`{name}` is already the fallback of `{}`; a fallback stands in for one step",
                            self.plan.steps[prev].step.id()
                        );
                        let d = self.step_diag(idx, Code::FallbackInvalid, "/fallback", msg);
                        self.push(d.with_hint("copy the fallback step under another id"));
                    } else if self.plan.steps[t].step.common.after.is_some() {
                        let msg = format!("`{name}` is the fallback of `{id}`, so it cannot have `after`");
                        let d = self.step_diag(t, Code::FallbackInvalid, "/after", msg);
                        self.push(d.with_hint("remove `after`: a fallback runs only when its step fails"));
                        self.plan.steps[t].fallback_of = Some(idx);
                        self.plan.steps[idx].fallback = Some(t);
                    } else {
                        self.plan.steps[t].fallback_of = Some(idx);
                        self.plan.steps[idx].fallback = Some(t);
                    }
                }
            }
        }
        // Switch targets.
        for idx in 0..n {
            let StepKind::Switch(sw) = &self.plan.steps[idx].step.kind else { continue };
            let sw = sw.clone();
            let id = self.plan.steps[idx].step.id().to_owned();
            let mut targets: Vec<(String, String)> = Vec::new();
            for (c, case) in sw.cases.iter().enumerate() {
                for (k, to) in case.to.iter().enumerate() {
                    targets.push((format!("/cases/{c}/to/{k}"), to.clone()));
                }
            }
            for (k, to) in sw.default.iter().flatten().enumerate() {
                targets.push((format!("/default/{k}"), to.clone()));
            }
            for (field, name) in targets {
                let bad = |v: &Self, msg: String, hint: &str| {
                    v.step_diag(idx, Code::SwitchTargetInvalid, &field, msg).with_hint(hint)
                };
                match self.resolve(idx, &name) {
                    Resolved::Unknown => self.unknown_step(idx, &field, &name, "the switch"),
                    Resolved::OtherList(t) => {
                        let msg = format!("switch `{id}` routes to `{name}`, which is {}", self.where_is(t));
                        let d = bad(self, msg, "a switch routes to steps of its own list");
                        self.push(d);
                    }
                    Resolved::Same(t) if t == idx => {
                        let d =
                            bad(self, format!("switch `{id}` routes to itself"), "name the steps to run for this case");
                        self.push(d);
                    }
                    Resolved::Same(t) if self.plan.steps[t].fallback_of.is_some() => {
                        let d = bad(
                            self,
                            format!("`{name}` is a fallback step; a switch cannot route to it"),
                            "route to another step",
                        );
                        self.push(d);
                    }
                    Resolved::Same(t) => match self.plan.steps[t].switch {
                        Some(other) => {
                            let msg = if other == idx {
                                format!("switch `{id}` names `{name}` twice")
                            } else {
                                format!("`{name}` is already a target of switch `{}`", self.plan.steps[other].step.id())
                            };
                            let d = bad(
                                self,
                                msg,
                                "a step can be the target of one case only; add a join step with `after` instead",
                            );
                            self.push(d);
                        }
                        None => self.plan.steps[t].switch = Some(idx),
                    },
                }
            }
        }
        // `after`, then the implicit order.
        for idx in 0..n {
            let mut deps = Vec::new();
            if let Some(after) = self.plan.steps[idx].step.common.after.clone() {
                for (k, name) in after.iter().enumerate() {
                    let field = format!("/after/{k}");
                    match self.resolve(idx, name) {
                        Resolved::Unknown => self.unknown_step(idx, &field, name, "`after`"),
                        Resolved::OtherList(t) => {
                            let id = self.plan.steps[idx].step.id().to_owned();
                            let msg = format!("`{id}` runs after `{name}`, which is {}", self.where_is(t));
                            let d = self.step_diag(idx, Code::StepOutOfScope, &field, msg);
                            self.push(d.with_hint(
                                "`after` names steps of the same list; steps before a loop have already run inside it",
                            ));
                        }
                        Resolved::Same(t)
                            if self.plan.steps[t].fallback_of.is_some()
                                && self.plan.steps[idx].fallback_of.is_none() =>
                        {
                            let msg = format!("`{name}` runs only as a fallback, so nothing can run after it");
                            let d = self.step_diag(idx, Code::FallbackInvalid, &field, msg);
                            let of = self.plan.steps[t].fallback_of.map(|o| self.plan.steps[o].step.id().to_owned());
                            self.push(d.with_hint(format!(
                                "depend on `{}` instead: the fallback's output stands in for it",
                                of.unwrap_or_default()
                            )));
                        }
                        Resolved::Same(t) => {
                            if !deps.contains(&t) {
                                deps.push(t);
                            }
                        }
                    }
                }
            } else if self.plan.steps[idx].switch.is_none() && self.plan.steps[idx].fallback_of.is_none() {
                let list = self.plan.steps[idx].list;
                let pos = self.plan.steps[idx].position;
                let prev = self.plan.lists[list].members[..pos]
                    .iter()
                    .rev()
                    .find(|&&m| self.plan.steps[m].fallback_of.is_none());
                deps.extend(prev.copied());
            }
            if let Some(sw) = self.plan.steps[idx].switch
                && !deps.contains(&sw)
            {
                deps.push(sw);
            }
            if self.plan.steps[idx].fallback_of.is_some() {
                deps.clear();
            }
            self.plan.steps[idx].deps = deps;
        }
    }

    /// Cycles and ancestor sets, list by list.
    pub(super) fn graph(&mut self) {
        for list in 0..self.plan.lists.len() {
            let members = self.plan.lists[list].members.clone();
            let len = members.len();
            let pos = |idx: StepIdx| self.plan.steps[idx].position;
            // Kahn's algorithm over positions.
            let mut indegree = vec![0usize; len];
            let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); len];
            for &m in &members {
                for &d in &self.plan.steps[m].deps {
                    indegree[pos(m)] += 1;
                    dependents[pos(d)].push(pos(m));
                }
            }
            let mut ready: Vec<usize> = (0..len).filter(|&p| indegree[p] == 0).collect();
            let mut order = Vec::with_capacity(len);
            while let Some(p) = ready.pop() {
                order.push(p);
                for &q in &dependents[p] {
                    indegree[q] -= 1;
                    if indegree[q] == 0 {
                        ready.push(q);
                    }
                }
            }
            if order.len() < len {
                self.report_cycles(&members, &indegree);
                self.ancestors.push(None);
                continue;
            }
            let mut anc: Vec<Bits> = vec![Bits::new(len); len];
            for &p in &order {
                let m = members[p];
                let mut bits = Bits::new(len);
                for &d in &self.plan.steps[m].deps {
                    bits.set(pos(d));
                    bits.union(&anc[pos(d)]);
                }
                anc[p] = bits;
            }
            self.ancestors.push(Some(anc));
        }
    }

    /// The `after` entry that closes `cycle` (positions in run order: each step runs
    /// after the one before it, the first after the last): the closing edge itself when
    /// the first step's `after` names the last, else the first edge of the cycle written
    /// in an `after`. `None` when every edge is implicit (list order) or a switch's.
    fn closing_edge(&self, members: &[StepIdx], cycle: &[usize]) -> Option<(StepIdx, String)> {
        let len = cycle.len();
        (0..len).find_map(|i| {
            let step = members[cycle[i]];
            let before = self.plan.steps[members[cycle[(i + len - 1) % len]]].step.id();
            let after = self.plan.steps[step].step.common.after.as_ref()?;
            let k = after.iter().position(|name| name == before)?;
            Some((step, format!("/after/{k}")))
        })
    }

    fn report_cycles(&mut self, members: &[StepIdx], indegree: &[usize]) {
        let mut reported = vec![false; members.len()];
        for start in 0..members.len() {
            if indegree[start] == 0 || reported[start] {
                continue;
            }
            // Walk backwards along dependencies that are still blocked until a repeat.
            let mut path: Vec<usize> = vec![start];
            let mut on_path = vec![usize::MAX; members.len()];
            on_path[start] = 0;
            let cycle = loop {
                let cur = members[*path.last().unwrap_or(&start)];
                let next =
                    self.plan.steps[cur].deps.iter().map(|&d| self.plan.steps[d].position).find(|&p| indegree[p] > 0);
                let Some(next) = next else { break None };
                if on_path[next] != usize::MAX {
                    break Some(path[on_path[next]..].to_vec());
                }
                on_path[next] = path.len();
                path.push(next);
            };
            let Some(mut cycle) = cycle else { continue };
            if cycle.iter().any(|&p| reported[p]) {
                continue;
            }
            for &p in &cycle {
                reported[p] = true;
            }
            // Report at the first step of the cycle in list order, in run order.
            cycle.reverse();
            let first = cycle.iter().enumerate().min_by_key(|(_, p)| **p).map_or(0, |(i, _)| i);
            cycle.rotate_left(first);
            let names: Vec<String> =
                cycle.iter().map(|&p| format!("`{}`", self.plan.steps[members[p]].step.id())).collect();
            let head = members[cycle[0]];
            let msg = if cycle.len() == 1 {
                format!("step {} depends on itself", names[0])
            } else {
                format!("dependency cycle: {} → {}", names.join(" → "), names[0])
            };
            let (at, field) = self.closing_edge(members, &cycle).unwrap_or((head, String::new()));
            let d = self.step_diag(at, Code::DependencyCycle, &field, msg);
            self.push(d.with_hint(
                "break the circle: remove one of these `after` entries (switch targets run after their switch)",
            ));
        }
    }
}
