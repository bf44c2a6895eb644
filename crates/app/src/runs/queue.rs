//! Runs through the queue of a store in PostgreSQL (`mcpflow_store`'s `queue.rs`):
//! [`App::enqueue`] queues a run of a document for a worker, [`App::enqueue_fire`] the run
//! of a schedule's slot, [`App::start_claimed`] starts
//! a run a worker claimed — a fresh run, or the resume of a run whose worker died (the
//! reaper queued it with `resumed_from`): its finished steps keep their outputs and do not
//! run again, as `mcpflow resume` does it — and [`App::fail_claimed`] records a claimed
//! run that could not start.

use super::{StartRun, Started, Target, Trigger};
use crate::app::App;
use crate::error::{AppError, Result};
use mcpflow_engine::{Envelope, ErrorEntry, RunStatus, Summary};
use mcpflow_store::{RecordStatus, RunRecord};
use serde_json::Value;

impl App {
    /// Checks `doc` and queues a run of it with `inputs`; returns the run's id. A worker
    /// (`mcpflow worker`) runs it.
    pub fn enqueue(&self, doc: Value, inputs: Value, trigger: Trigger) -> Result<String> {
        let record = self.queued_record(doc, inputs, trigger)?;
        self.store().enqueue(&record)?;
        Ok(record.id)
    }

    /// Queues a run of stored blueprint `blueprint` for the schedule's `slot` (RFC 3339)
    /// unless that slot was fired already; returns the run's id, `None` when it was.
    pub fn enqueue_fire(&self, blueprint: &str, inputs: Value, slot: &str) -> Result<Option<String>> {
        let stored = self
            .store()
            .blueprint(blueprint)?
            .ok_or_else(|| AppError::NotFound { what: "blueprint", id: blueprint.to_owned() })?;
        let record = self.queued_record(stored.json, inputs, Trigger::Schedule)?;
        Ok(self.store().enqueue_fire(&record, slot)?.then_some(record.id))
    }

    /// The record of a queued run of `doc` (checked first).
    fn queued_record(&self, doc: Value, inputs: Value, trigger: Trigger) -> Result<RunRecord> {
        let (bp, _, _) = self.load(&Target::Inline(doc.clone()))?;
        Ok(RunRecord {
            id: crate::headless::new_run_id(),
            blueprint: bp.id,
            status: RecordStatus::Queued,
            trigger: trigger.as_str().to_owned(),
            client: None,
            inputs,
            started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            finished_at: None,
            envelope: None,
            blueprint_rev: None,
            definition: Some(doc),
            rerun_of: None,
            resumed_from: None,
            debug: false,
            paused_ms: None,
        })
    }

    /// Starts the run of `claimed`, the record of a queued run this worker claimed; the
    /// run keeps its id. A question it asks waits in this application's registry: the
    /// worker then parks the run ([`App::park`]), which stays `waiting` in the store until
    /// `mcpflow answer` resumes it.
    pub fn start_claimed(&self, claimed: &RunRecord) -> Result<Started> {
        let doc = claimed.definition.clone().ok_or_else(|| {
            AppError::BadRequest(format!("queued run `{}` carries no blueprint to run; queue it again", claimed.id))
        })?;
        let mut start = match &claimed.resumed_from {
            Some(interrupted) => {
                let record = self
                    .store()
                    .run(interrupted)?
                    .ok_or_else(|| AppError::NotFound { what: "run", id: interrupted.clone() })?;
                self.plan_resume(&record, Some(Target::Inline(doc)), Some(&claimed.id))?
            }
            None => {
                let mut start = StartRun::new(Target::Inline(doc), claimed.inputs.clone(), Trigger::Cli);
                start.queued = Some(claimed.id.clone());
                start
            }
        };
        start.trigger = trigger_of(&claimed.trigger);
        start.people = None;
        self.start_run(start)
    }

    /// Records that the claimed run `claimed` could not start (`error`): it fails.
    pub fn fail_claimed(&self, claimed: &RunRecord, error: &AppError) -> Result<()> {
        let envelope = Envelope {
            run_id: claimed.id.clone(),
            blueprint: claimed.blueprint.clone(),
            status: RunStatus::Failed,
            output: Value::Null,
            summary: Summary::default(),
            errors: vec![ErrorEntry {
                step: String::new(),
                path: Vec::new(),
                code: error.code().to_owned(),
                message: format!("the worker could not start the queued run: {error}"),
            }],
            duration_ms: 0,
            trace_id: None,
        };
        Ok(self.store().finish_run(&claimed.id, &envelope)?)
    }
}

/// The trigger recorded by name.
fn trigger_of(name: &str) -> Trigger {
    match name {
        "studio" => Trigger::Studio,
        "mcp" => Trigger::Mcp,
        "schedule" => Trigger::Schedule,
        _ => Trigger::Cli,
    }
}
