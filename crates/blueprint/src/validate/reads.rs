//! What templates may read (DESIGN §2, Templates): a step only after it has run, `prev`
//! only with exactly one dependency, loop variables only inside their loop, `error` only
//! in a fallback. Also reachability, layout keys and `workflow` recursion.

use super::Validator;
use crate::diagnostic::{Code, Diagnostic, did_you_mean, pointer_push};
use crate::model::StepKind;
use crate::plan::{StepIdx, StepTemplates};
use crate::template::{Expr, Template, truthy, value_to_var};
use std::collections::HashSet;

/// What part of a list a reader sees.
#[derive(Clone, Copy, Debug)]
enum Anchor {
    /// The ancestors of the step at this position.
    Before(usize),
    /// Every step of the list that is not a fallback (after the loop body has run).
    All,
}

/// Where a template is evaluated.
struct Reader {
    /// The step the diagnostic is about (none for the blueprint's `output`).
    step: Option<StepIdx>,
    /// Innermost first: the lists visible and how much of each.
    chain: Vec<(usize, Anchor)>,
    /// The dependency count `prev` refers to, when `prev` is allowed at all.
    prev_deps: Option<usize>,
    in_fallback: bool,
    /// Loop variable names in scope.
    loops: Vec<String>,
    /// The innermost loop around the reader: `Some(true)` for an `until` loop, `Some(false)`
    /// for a `for_each`, `None` outside any loop (`last` is defined only in the first case).
    innermost_until: Option<bool>,
}

impl Validator<'_> {
    /// The visibility chain of a step in its list and the lists around it.
    fn chain_of(&self, idx: StepIdx) -> Vec<(usize, Anchor)> {
        let mut chain = Vec::new();
        let mut cur = idx;
        loop {
            // A fallback sees what the step it stands in for sees.
            while let Some(of) = self.plan.steps[cur].fallback_of {
                if of == cur {
                    break;
                }
                cur = of;
            }
            let s = &self.plan.steps[cur];
            chain.push((s.list, Anchor::Before(s.position)));
            match self.plan.lists[s.list].owner {
                Some(owner) => cur = owner,
                None => return chain,
            }
        }
    }

    fn in_fallback(&self, idx: StepIdx) -> bool {
        let mut cur = Some(idx);
        while let Some(c) = cur {
            if self.plan.steps[c].fallback_of.is_some() {
                return true;
            }
            cur = self.plan.lists[self.plan.steps[c].list].owner;
        }
        false
    }

    pub(super) fn reads(&mut self) {
        for idx in 0..self.plan.steps.len() {
            let templates = std::mem::replace(&mut self.plan.steps[idx].templates, StepTemplates::Wait);
            let base_chain = self.chain_of(idx);
            let deps = if self.plan.steps[idx].fallback_of.is_some() { 0 } else { self.plan.steps[idx].deps.len() };
            let in_fallback = self.in_fallback(idx);
            for (field, template) in templates.fields() {
                let inner = matches!(field.as_str(), "/until" | "/collect");
                let reader = match (inner, self.plan.steps[idx].body) {
                    (true, Some(body)) => {
                        let mut chain = vec![(body, Anchor::All)];
                        chain.extend(base_chain.iter().copied());
                        self.reader(Some(idx), chain, None, in_fallback)
                    }
                    _ => self.reader(Some(idx), base_chain.clone(), Some(deps), in_fallback),
                };
                let base = format!("{}{field}", self.plan.steps[idx].pointer);
                self.check_template(template, &base, &reader);
            }
            self.plan.steps[idx].templates = templates;
        }
        if let Some(out) = self.plan.output.clone() {
            let reader = self.reader(None, vec![(0, Anchor::All)], None, false);
            self.check_template(&out, "/output", &reader);
        }
    }

    fn check_template(&mut self, template: &Template, base: &str, reader: &Reader) {
        for (at, expr) in template.expressions() {
            let pointer = format!("{base}{at}");
            self.check_expr(expr, &pointer, reader);
        }
    }

    fn check_expr(&mut self, expr: &Expr, pointer: &str, reader: &Reader) {
        let step_id = reader.step.map(|s| self.plan.steps[s].step.id());
        let who = || step_id.map_or_else(|| "the blueprint's `output`".to_owned(), |s| format!("step `{s}`"));
        let loops = &reader.loops;
        let mut found: Vec<Diagnostic> = Vec::new();
        for r in expr.refs() {
            let name = r.name.as_str();
            let diag = |code: Code, msg: String, hint: String| Diagnostic::new(code, pointer, msg).with_hint(hint);
            match name {
                "inputs" | "saved" | "run" => {}
                "steps" => {
                    if let Some(member) = &r.member {
                        match self.plan.by_id.get(member) {
                            Some(&target) => found.extend(self.visible(target, reader, expr, pointer, &who)),
                            None => {
                                let ids: Vec<&str> = self.plan.by_id.keys().map(String::as_str).collect();
                                found.push(diag(
                                    Code::TemplateUnknownName,
                                    format!("{} reads `steps.{member}`, but there is no step `{member}`", shown(expr)),
                                    nonempty(did_you_mean(member, ids), "check the step id"),
                                ));
                            }
                        }
                    }
                }
                "prev" => match reader.prev_deps {
                    Some(1) => {}
                    Some(n) => found.push(diag(
                        Code::TemplatePrev,
                        format!(
                            "{} reads `prev`, but {} has {n} dependencies; `prev` needs exactly one",
                            shown(expr),
                            who()
                        ),
                        "name the step you mean by its id".into(),
                    )),
                    None => found.push(diag(
                        Code::TemplatePrev,
                        format!("{} reads `prev`, which is not defined here", shown(expr)),
                        "name the step you mean by its id".into(),
                    )),
                },
                "error" => {
                    if !reader.in_fallback {
                        found.push(diag(
                            Code::TemplateErrorOutsideFallback,
                            format!("{} reads `error`, which exists only in a fallback step", shown(expr)),
                            "read `steps.<id>.error` to see another step's error".into(),
                        ));
                    }
                }
                "last" if reader.innermost_until == Some(true) => {}
                "last" if !self.plan.by_id.contains_key("last") => found.push(diag(
                    Code::TemplateLoopVariable,
                    match reader.innermost_until {
                        Some(_) => format!("{} reads `last` in a `for_each` loop", shown(expr)),
                        None => format!("{} reads `last` outside any loop", shown(expr)),
                    },
                    "`last` (the previous iteration's collected value) exists only in an `until` loop's body, `until` and `collect`".into(),
                )),
                "index" => {
                    if loops.is_empty() {
                        found.push(diag(
                            Code::TemplateLoopVariable,
                            format!("{} reads `index` outside any loop", shown(expr)),
                            "`index` exists inside a loop body and in its `until` / `collect`".into(),
                        ));
                    }
                }
                _ if loops.iter().any(|l| l == name) => {}
                _ if self.is_loop_variable(name) => found.push(diag(
                    Code::TemplateLoopVariable,
                    format!("{} reads the loop variable `{name}` outside its loop", shown(expr)),
                    "outside the loop only its collected output (the loop step's id) is visible".into(),
                )),
                // Said below, with the literal to write.
                "null" | "true" | "false" if expr.bare_literals().contains(&name) => {}
                _ => match self.plan.by_id.get(name) {
                    Some(&target) => found.extend(self.visible(target, reader, expr, pointer, &who)),
                    None => {
                        let mut names: Vec<&str> = self.plan.by_id.keys().map(String::as_str).collect();
                        names.extend(["inputs", "steps", "saved", "run"]);
                        names.extend(loops.iter().map(String::as_str));
                        found.push(diag(
                            Code::TemplateUnknownName,
                            format!("{} reads `{name}`, which is not a step, an input or a scope name", shown(expr)),
                            nonempty(
                                did_you_mean(name, names),
                                "scope names: inputs, <step id>, steps, prev, item, index, last, error, saved, run; inputs are read as `inputs.<name>`",
                            ),
                        ));
                    }
                },
            }
        }
        // JMESPath's literals are in backticks: a bare `null` is a field of that name,
        // always missing (unless a step or loop variable has that name): say which
        // literal to write.
        for &word in expr.bare_literals() {
            if self.plan.by_id.contains_key(word) || loops.iter().any(|l| l == word) {
                continue;
            }
            let message = format!(
                "{} reads `{word}` as a field name, not the JSON value {word}: JMESPath writes literals in \
                 backticks",
                shown(expr)
            );
            let hint = format!("write the literal `` `{word}` ``");
            found.push(Diagnostic::new(Code::TemplateUnknownName, pointer, message).with_hint(hint));
        }
        for d in found {
            self.diags.push(match step_id {
                Some(s) => d.with_step(s),
                None => d,
            });
        }
    }

    fn reader(
        &self,
        step: Option<StepIdx>,
        chain: Vec<(usize, Anchor)>,
        prev_deps: Option<usize>,
        in_fallback: bool,
    ) -> Reader {
        let loops = self.loops_in(&chain);
        let innermost_until = chain.iter().filter_map(|(list, _)| self.plan.lists[*list].owner).find_map(|owner| {
            match &self.plan.steps[owner].step.kind {
                StepKind::Loop(l) => Some(l.until.is_some()),
                _ => None,
            }
        });
        Reader { step, chain, prev_deps, in_fallback, loops, innermost_until }
    }

    /// The loop variable names visible along a chain.
    fn loops_in(&self, chain: &[(usize, Anchor)]) -> Vec<String> {
        chain
            .iter()
            .filter_map(|(list, _)| self.plan.lists[*list].owner)
            .filter_map(|owner| match &self.plan.steps[owner].step.kind {
                StepKind::Loop(l) => Some(l.as_name.clone().unwrap_or_else(|| "item".into())),
                _ => None,
            })
            .collect()
    }

    fn is_loop_variable(&self, name: &str) -> bool {
        name == "item" || self.loop_variables.contains(name)
    }

    /// `None` when `target` runs before the reader; otherwise the diagnostic.
    fn visible(
        &self,
        target: StepIdx,
        reader: &Reader,
        expr: &Expr,
        pointer: &str,
        who: &dyn Fn() -> String,
    ) -> Option<Diagnostic> {
        let t = &self.plan.steps[target];
        let name = t.step.id();
        let entry = reader.chain.iter().find(|(list, _)| *list == t.list);
        let fails = |hint: String| {
            Some(
                Diagnostic::new(
                    Code::TemplateNotUpstream,
                    pointer,
                    format!("{} reads step `{name}`, which does not run before {}", shown(expr), who()),
                )
                .with_hint(hint),
            )
        };
        let Some((_, anchor)) = entry else {
            let owner = self.plan.lists[t.list].owner.map(|o| self.plan.steps[o].step.id().to_owned());
            return fails(format!(
                "`{name}` is inside loop `{}`; outside the loop only the loop's collected output is visible",
                owner.unwrap_or_default()
            ));
        };
        if let Some(of) = t.fallback_of {
            let of = self.plan.steps[of].step.id();
            return fails(format!(
                "`{name}` runs only as the fallback of `{of}`; read `{of}`, whose output it stands in for"
            ));
        }
        match anchor {
            Anchor::All => None,
            Anchor::Before(pos) => match &self.ancestors[t.list] {
                None => None, // the list has a cycle, reported already
                Some(anc) if anc[*pos].get(t.position) => None,
                Some(_) => {
                    let reader_id = self.plan.lists[t.list].members[*pos];
                    let reader_id = self.plan.steps[reader_id].step.id();
                    fails(format!("add `{name}` to the `after` of `{reader_id}` (or of a step it runs after)"))
                }
            },
        }
    }

    /// Steps that can never run: targets of switch cases that can never match (the
    /// `when` is a constant), and steps whose every dependency can never run.
    pub(super) fn reachability(&mut self) {
        if self.diags.iter().any(Diagnostic::is_error) {
            return;
        }
        let n = self.plan.steps.len();
        let mut dead = vec![false; n];
        let mut why: Vec<Option<String>> = vec![None; n];
        for idx in 0..n {
            let (StepKind::Switch(sw), StepTemplates::Switch { when }) =
                (&self.plan.steps[idx].step.kind, &self.plan.steps[idx].templates)
            else {
                continue;
            };
            let mut matched_always = false;
            let mut dead_targets: Vec<(&String, String)> = Vec::new();
            for (c, case) in sw.cases.iter().enumerate() {
                let constant = match &when[c] {
                    Template::Literal(v) => Some(truthy(&value_to_var(v.clone()))),
                    _ => None,
                };
                if matched_always {
                    dead_targets.extend(case.to.iter().map(|t| {
                        (t, format!("an earlier case of `{}` always matches", self.plan.steps[idx].step.id()))
                    }));
                } else if constant == Some(false) {
                    dead_targets.extend(
                        case.to
                            .iter()
                            .map(|t| (t, format!("case {c} of `{}` never matches", self.plan.steps[idx].step.id()))),
                    );
                } else if constant == Some(true) {
                    matched_always = true;
                }
            }
            if matched_always {
                dead_targets.extend(
                    sw.default
                        .iter()
                        .flatten()
                        .map(|t| (t, format!("a case of `{}` always matches", self.plan.steps[idx].step.id()))),
                );
            }
            for (t, reason) in dead_targets {
                if let Some(&ti) = self.plan.by_id.get(t.as_str()) {
                    dead[ti] = true;
                    why[ti] = Some(reason);
                }
            }
        }
        // Propagate in document order within each list (deps precede in a topological
        // sense; iterate to a fixed point to be order-independent).
        let mut changed = true;
        while changed {
            changed = false;
            for idx in 0..n {
                let deps = &self.plan.steps[idx].deps;
                if !dead[idx] && !deps.is_empty() && deps.iter().all(|&d| dead[d]) {
                    dead[idx] = true;
                    why[idx] = Some("every step it runs after can never run".into());
                    changed = true;
                }
            }
        }
        for idx in 0..n {
            if let (true, Some(reason)) = (dead[idx], &why[idx]) {
                let id = self.plan.steps[idx].step.id().to_owned();
                let when_hint = if reason.contains("case") {
                    "a `when` without `{{ }}` is constant text (always true); write \"{{ expression }}\""
                } else {
                    "remove the step or change what it runs after"
                };
                let d = self.step_diag(idx, Code::StepUnreachable, "", format!("step `{id}` can never run: {reason}"));
                self.push(d.with_hint(when_hint));
            }
        }
    }

    pub(super) fn layout(&mut self) {
        let Some(layout) = &self.bp.layout else { return };
        let ids: HashSet<&str> = self.plan.by_id.keys().map(String::as_str).collect();
        let mut found = Vec::new();
        for key in layout.keys() {
            if !ids.contains(key.as_str()) {
                found.push(
                    Diagnostic::new(
                        Code::LayoutUnknownStep,
                        pointer_push("/layout", key),
                        format!("`layout` places `{key}`, which is not a step"),
                    )
                    .with_hint("remove the entry; the studio rewrites `layout` when you save"),
                );
            }
        }
        self.diags.extend(found);
    }

    /// `workflow` steps reaching this blueprint again through other blueprints.
    pub(super) fn workflows(&mut self) {
        let Some(catalog) = self.options.workflows else { return };
        let me = self.bp.id.clone();
        for idx in 0..self.plan.steps.len() {
            let StepKind::Workflow(w) = &self.plan.steps[idx].step.kind else { continue };
            let target = w.workflow.clone();
            if target == me || !super::is_blueprint_id(&target) {
                continue; // reported by the field check
            }
            if catalog.calls(&target).is_none() {
                let d = self.step_diag(
                    idx,
                    Code::WorkflowUnknown,
                    "/workflow",
                    format!("no blueprint `{target}` is known"),
                );
                self.push(d.with_hint("save that blueprint first, or check the id"));
                continue;
            }
            // Depth-first search for a path back to `me`.
            let mut stack = vec![vec![target.clone()]];
            let mut seen = HashSet::new();
            while let Some(path) = stack.pop() {
                let Some(last) = path.last().cloned() else { continue };
                if !seen.insert(last.clone()) {
                    continue;
                }
                for next in catalog.calls(&last).unwrap_or_default() {
                    let mut p = path.clone();
                    p.push(next.clone());
                    if next == me {
                        let chain = std::iter::once(me.as_str())
                            .chain(p.iter().map(String::as_str))
                            .collect::<Vec<_>>()
                            .join("` → `");
                        let d = self.step_diag(
                            idx,
                            Code::WorkflowRecursion,
                            "/workflow",
                            format!("sub-workflows call each other in a circle: `{chain}`"),
                        );
                        self.push(d.with_hint("a blueprint cannot reach itself through `workflow` steps"));
                        stack.clear();
                        break;
                    }
                    stack.push(p);
                }
            }
        }
    }
}

fn nonempty(s: String, fallback: &str) -> String {
    if s.is_empty() { fallback.to_owned() } else { s }
}

/// An expression as the user wrote it: `{{ a.b }}`.
fn shown(expr: &Expr) -> String {
    format!("`{{{{ {} }}}}`", expr.source())
}
