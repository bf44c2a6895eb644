//! Resuming a run the process was killed in (`interrupted`): [`App::resume_plan`] builds a
//! [`StartRun`] on the same blueprint and inputs where every top-level step that
//! succeeded keeps its output (pinned, as a re-run pins them) and every step instance that
//! had a task in flight (a `StepTaskStarted` event with no `StepFinished` after it) polls
//! that task again instead of calling its tool a second time (`RunConfig::resume_tasks`).
//! The other steps run. The new run's record names the run it resumes.
//!
//! A run left `waiting` for a person (its process stopped or died while a question was
//! open) resumes the same way once its question is answered (`runs/questions.rs`).
//!
//! Limits: a loop that had not finished runs again from its first iteration (only its
//! task in flight, at its iteration path, is polled rather than called); a run is resumed
//! once — a second resume of the same run is refused.

use super::rerun::{Past, past_steps};
use super::{StartRun, Target, Trigger};
use crate::app::App;
use crate::error::{AppError, Result};
use mcpflow_engine::event::IterationPath;
use mcpflow_engine::{EventKind, RunConfig, RunEvent, TaskHandle};
use mcpflow_store::{RecordStatus, RunRecord};
use std::collections::HashMap;

impl App {
    /// A run that resumes interrupted run `run_id`. `target`: the blueprint, when the run
    /// was of one given inline (a file), which the store keeps no copy of; by default the
    /// stored blueprint's current revision.
    pub fn resume_plan(&self, run_id: &str, target: Option<Target>) -> Result<StartRun> {
        let record =
            self.store().run(run_id)?.ok_or_else(|| AppError::NotFound { what: "run", id: run_id.to_owned() })?;
        if record.status == RecordStatus::Waiting {
            return Err(AppError::BadRequest(format!(
                "run `{run_id}` is waiting for an answer, not interrupted: answer it and it resumes (`mcpflow runs --waiting` shows its question; `mcpflow answer {run_id} STEP --answers FILE`)"
            )));
        }
        if record.status != RecordStatus::Interrupted {
            return Err(AppError::BadRequest(format!(
                "run `{run_id}` is {}, not interrupted: only a run whose process died can be resumed; re-run it instead (`mcpflow rerun`)",
                record.status.as_str()
            )));
        }
        self.plan_resume(&record, target, None)
    }

    /// The resume of `record` (interrupted, or waiting for an answer): its finished
    /// steps pinned, its tasks in flight polled again, the rest to run. `queued`: the
    /// queued run that resumes it (the reaper queued it), which this start takes over.
    pub(super) fn plan_resume(
        &self,
        record: &RunRecord,
        target: Option<Target>,
        queued: Option<&str>,
    ) -> Result<StartRun> {
        let run_id = record.id.as_str();
        if let Some(by) = self.store().resumed_by(run_id)?
            && Some(by.as_str()) != queued
        {
            return Err(AppError::BadRequest(format!(
                "run `{run_id}` was already resumed by run `{by}`; resume that one if it was interrupted too"
            )));
        }
        let target = match target {
            Some(target) => target,
            None if record.blueprint_rev.is_some() => Target::Stored(record.blueprint.clone()),
            // A document given whole ran: it is kept with the run, and the run goes on with it.
            None if record.definition.is_some() => Target::Inline(record.definition.clone().unwrap_or_default()),
            None => {
                let how = if record.status == RecordStatus::Waiting {
                    format!(
                        "answer it with the same file (`mcpflow answer {run_id} STEP --answers ANSWERS --file FILE`)"
                    )
                } else {
                    format!("resume it on the same file (`mcpflow resume {run_id} --file FILE`)")
                };
                return Err(AppError::BadRequest(format!(
                    "run `{run_id}` ran blueprint `{}` as given (not from the store), so the run keeps no copy of it; {how}",
                    record.blueprint
                )));
            }
        };
        let (bp, plan, _) = self.load(&target)?;
        if bp.id != record.blueprint {
            return Err(AppError::BadRequest(format!(
                "run `{run_id}` is a run of blueprint `{}`, not of `{}`; resume it on `{}`",
                record.blueprint, bp.id, record.blueprint
            )));
        }
        let events = self.store().events(run_id)?;
        let pinned = past_steps(&events)
            .into_iter()
            .filter_map(|(step, past)| match past {
                Past::Succeeded(output) => Some((step, output)),
                Past::Skipped | Past::Failed => None,
            })
            .collect();
        let check = RunConfig { pinned, ..RunConfig::default() };
        check.check(&plan).map_err(|e| AppError::BadRequest(e.to_string()))?;
        let mut spec = StartRun::new(target, record.inputs.clone(), Trigger::Cli);
        spec.pinned = check.pinned;
        spec.resume_tasks = tasks_in_flight(&events);
        spec.resumed_from = Some(run_id.to_owned());
        spec.queued = queued.map(str::to_owned);
        Ok(spec)
    }
}

impl App {
    /// The runs a previous process left `running` (now `interrupted`) that had tasks in
    /// flight, with those tasks: what a long-lived front door (the studio, the daemon)
    /// offers to resume on start. Runs whose events cannot be read are left out.
    pub fn resumable(&self) -> Vec<(String, Vec<TaskHandle>)> {
        self.interrupted()
            .iter()
            .filter_map(|run| {
                let events = self.store().events(run).ok()?;
                let tasks: Vec<TaskHandle> = tasks_in_flight(&events).into_values().collect();
                (!tasks.is_empty()).then(|| (run.clone(), tasks))
            })
            .collect()
    }
}

/// The tasks a run's step instances had in flight when it stopped: each
/// `StepTaskStarted` with no `StepFinished` of the same step instance after it.
pub fn tasks_in_flight(events: &[RunEvent]) -> HashMap<(String, IterationPath), TaskHandle> {
    let mut tasks = HashMap::new();
    for e in events {
        match &e.kind {
            EventKind::StepTaskStarted { step, path, server, task_id, started_at } => {
                let handle =
                    TaskHandle { server: server.clone(), task_id: task_id.clone(), started_at: started_at.clone() };
                tasks.insert((step.clone(), path.clone()), handle);
            }
            EventKind::StepFinished { step, path, .. } | EventKind::StepRetrying { step, path, .. } => {
                tasks.remove(&(step.clone(), path.clone()));
            }
            _ => {}
        }
    }
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcpflow_engine::{StepError, StepStatus};

    fn event(seq: u64, kind: EventKind) -> RunEvent {
        RunEvent { seq, at_ms: seq, kind }
    }

    fn started(step: &str, path: IterationPath, id: &str) -> EventKind {
        EventKind::StepTaskStarted {
            step: step.into(),
            path,
            server: "s".into(),
            task_id: id.into(),
            started_at: "t".into(),
        }
    }

    #[test]
    fn only_tasks_whose_step_instance_did_not_finish_are_in_flight() {
        let finished = EventKind::StepFinished {
            step: "a".into(),
            path: vec![],
            status: StepStatus::Succeeded,
            output: None,
            error: None,
            attempts: 1,
            duration_ms: 1,
            raw: None,
            recovered_by: None,
        };
        let retrying = EventKind::StepRetrying {
            step: "c".into(),
            path: vec![],
            attempt: 2,
            delay_ms: 0,
            error: StepError { code: "X".into(), message: "x".into(), detail: None, exhausted: None },
        };
        let events = vec![
            event(1, started("a", vec![], "ta")),
            event(2, finished),
            event(3, started("b", vec![1], "tb1")),
            event(4, started("b", vec![2], "tb2")),
            event(5, started("c", vec![], "tc")),
            event(6, retrying),
        ];
        let tasks = tasks_in_flight(&events);
        let mut ids: Vec<_> =
            tasks.iter().map(|((step, path), h)| (step.as_str(), path.clone(), h.task_id.as_str())).collect();
        ids.sort();
        assert_eq!(ids, [("b", vec![1], "tb1"), ("b", vec![2], "tb2")]);
    }
}
