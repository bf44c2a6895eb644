//! Runs and their events. A run is recorded when it begins (`running`), its events are
//! appended as they happen, and it is finished with the engine's envelope. Run ids are
//! UUID v7, so their byte order is start order.

use crate::Store;
use crate::codec::now;
use crate::error::{Error, Result};
use crate::keys;
use crate::unreadable::Unreadable;
use mcpflow_engine::event::IterationPath;
use mcpflow_engine::event::LogLevel;
use mcpflow_engine::people::Question;
use mcpflow_engine::{Envelope, EventKind, RunEvent, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// Where a recorded run stands: the engine's final statuses plus `running` and `waiting`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    /// Waiting in the queue for a worker (`mcpflow run --db URL --detach`; PostgreSQL).
    Queued,
    Running,
    /// A question to a person is open (an `input` step, a server's elicitation): in
    /// flight, or left by a process that stopped or died while it waited — then
    /// answering it resumes the run (see [`open_questions`]).
    Waiting,
    Succeeded,
    /// Finished, but steps with `on_error: continue` failed.
    Partial,
    Failed,
    Cancelled,
    /// The process died during the run (set when the store is next opened).
    Interrupted,
}

impl RecordStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordStatus::Queued => "queued",
            RecordStatus::Running => "running",
            RecordStatus::Waiting => "waiting",
            RecordStatus::Succeeded => "succeeded",
            RecordStatus::Partial => "partial",
            RecordStatus::Failed => "failed",
            RecordStatus::Cancelled => "cancelled",
            RecordStatus::Interrupted => "interrupted",
        }
    }
}

impl From<RunStatus> for RecordStatus {
    fn from(status: RunStatus) -> Self {
        match status {
            RunStatus::Succeeded => RecordStatus::Succeeded,
            RunStatus::Partial => RecordStatus::Partial,
            RunStatus::Failed => RecordStatus::Failed,
            RunStatus::Cancelled => RecordStatus::Cancelled,
            RunStatus::Interrupted => RecordStatus::Interrupted,
        }
    }
}

/// A run as the store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// UUID v7, so ids sort by start time.
    pub id: String,
    /// The blueprint id.
    pub blueprint: String,
    pub status: RecordStatus,
    /// Who started it: `cli`, `studio`, `mcp` or `schedule`.
    pub trigger: String,
    /// For an `mcp` run, the MCP client that asked for it (its `clientInfo.name`, e.g.
    /// `claude-ai`, `cursor-vscode`); written by the client, so cut to 64 characters of
    /// printable text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub inputs: Value,
    /// RFC 3339, UTC.
    pub started_at: String,
    #[serde(default)]
    pub finished_at: Option<String>,
    /// The result, once finished.
    #[serde(default)]
    pub envelope: Option<Envelope>,
    /// The stored revision that ran, when it ran from the store.
    #[serde(default)]
    pub blueprint_rev: Option<u32>,
    /// The document that ran, when it did not run from the store (the studio runs what
    /// is on its canvas, saved or not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<Value>,
    /// The past run this one re-ran part of (the studio's "run this step" / "run from
    /// here"), when it is a re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_of: Option<RerunOf>,
    /// The interrupted run this one resumes (`mcpflow resume`), when it is a resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<String>,
    /// Started with Debug (breakpoints, or paused before the first step).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub debug: bool,
    /// The time it sat paused (from its events' `at_ms`, `RunPaused` to `RunResumed` or
    /// the end), once finished; absent when it never paused. Its active time is the
    /// envelope's `duration_ms` less this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_ms: Option<u64>,
}

/// What a re-run re-ran: a step of a past run, alone (`step`) or with everything after
/// it (`from_here`); the other steps kept that run's outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RerunOf {
    /// The past run's id.
    pub run: String,
    pub step: String,
    pub mode: RerunMode,
}

/// How much of a past run a re-run ran again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RerunMode {
    /// The step alone.
    Step,
    /// The step and everything downstream of it.
    FromHere,
}

impl Store {
    /// Records a run that is starting and flushes. The id must be new.
    #[tracing::instrument(skip_all, fields(run_id = %record.id, blueprint = %record.blueprint), err)]
    pub fn begin_run(&self, record: &RunRecord) -> Result<()> {
        keys::check("run id", &record.id)?;
        keys::check("blueprint id", &record.blueprint)?;
        self.backend.begin_run(record)?;
        self.sync()
    }

    /// Appends one event of a run, under its `seq`. Not flushed: call [`Store::sync`] (or
    /// let the engine's journal do it) where durability matters.
    ///
    /// An event nested deeper than the store reads back is refused ([`Error::TooDeep`],
    /// `STORE_VALUE_TOO_DEEP`) and nothing is written; [`Store::note_unrecorded`] then
    /// records why in its place.
    pub fn append_event(&self, run_id: &str, event: &RunEvent) -> Result<()> {
        keys::check("run id", run_id)?;
        self.backend.append_event(run_id, event)
    }

    /// Records, under the `seq` of an event [`Store::append_event`] refused, an error
    /// `Log` event saying why (the refusal's text, with its code).
    ///
    /// A replacement rather than a failed run: the value was fine for the run (the engine
    /// bounds depth with `limits.max_value_depth`), only its record is not, and the run's
    /// history keeps every `seq` and says at that place what is missing, where a gap
    /// would say nothing. The run's end is recorded the same way ([`Store::finish_run`]).
    pub fn note_unrecorded(&self, run_id: &str, event: &RunEvent, refused: &Error) -> Result<()> {
        let note = RunEvent {
            seq: event.seq,
            at_ms: event.at_ms,
            kind: EventKind::Log {
                level: LogLevel::Error,
                message: format!("[{}] {refused}", refused.code()),
                step: None,
            },
        };
        self.append_event(run_id, &note)
    }

    /// Finishes a run with its envelope: status, `finished_at`, and a flush.
    #[tracing::instrument(skip(self, envelope), fields(status = envelope.status.as_str()), err)]
    ///
    /// An output nested deeper than the store reads back is recorded as the refusal's text
    /// instead (see [`Store::note_unrecorded`] for why), so the run still ends with its
    /// status.
    pub fn finish_run(&self, run_id: &str, envelope: &Envelope) -> Result<()> {
        let finished_at = now();
        let finish = |envelope: &Envelope| {
            let (envelope, finished_at) = (envelope.clone(), finished_at.clone());
            self.update_run(run_id, move |record| {
                record.status = envelope.status.into();
                record.finished_at = Some(finished_at.clone());
                record.envelope = Some(envelope.clone());
            })
        };
        match finish(envelope) {
            Err(refused @ Error::TooDeep { .. }) => {
                tracing::warn!(run_id, error = %refused, "the run's output is recorded as why it was not");
                let mut cut = envelope.clone();
                cut.output = Value::String(format!("[{}] the output {refused}", refused.code()));
                finish(&cut)?;
            }
            other => {
                other?;
            }
        }
        self.sync()
    }

    /// Records the time a finished run sat paused (see [`RunRecord::paused_ms`]).
    pub fn record_paused(&self, run_id: &str, paused_ms: u64) -> Result<()> {
        self.update_run(run_id, move |record| record.paused_ms = Some(paused_ms))?;
        self.sync()
    }

    /// Marks a run in flight `waiting` (a question to a person is open) or `running`
    /// again (answered), and flushes, so a run that waits is on disk as waiting with its
    /// question. A run that has finished keeps its status.
    pub fn set_waiting(&self, run_id: &str, waiting: bool) -> Result<()> {
        self.update_run(run_id, move |record| {
            if matches!(record.status, RecordStatus::Running | RecordStatus::Waiting) {
                record.status = if waiting { RecordStatus::Waiting } else { RecordStatus::Running };
            }
        })?;
        self.sync()
    }

    /// Settles a run left `waiting` by a process that stopped, once its question was
    /// answered and a run resuming it started: it becomes `interrupted`, finished now
    /// (the resuming run names it in `resumed_from`). Returns whether it was `waiting`.
    pub fn settle_waiting(&self, run_id: &str) -> Result<bool> {
        let finished_at = now();
        let before = self.update_run(run_id, move |record| {
            if record.status == RecordStatus::Waiting {
                record.status = RecordStatus::Interrupted;
                record.finished_at = Some(finished_at.clone());
            }
        })?;
        self.sync()?;
        Ok(before.status == RecordStatus::Waiting)
    }

    /// The runs recorded as `waiting`, oldest first (in flight in this process, or left
    /// by one that stopped). Damaged records are skipped.
    pub fn waiting_runs(&self) -> Result<Vec<RunRecord>> {
        self.backend.waiting_runs()
    }

    /// Changes the record atomically; returns it as it was before.
    pub(crate) fn update_run(
        &self,
        run_id: &str,
        change: impl Fn(&mut RunRecord) + Send + Sync + 'static,
    ) -> Result<RunRecord> {
        keys::check("run id", run_id)?;
        self.backend.update_run(run_id, Arc::new(change))
    }

    /// Run `id`. A record that cannot be read is [`Error::Unreadable`], with the command
    /// that removes it.
    pub fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        keys::check("run id", id)?;
        self.backend.run(id)
    }

    /// The newest `limit` readable runs, of one blueprint or of all, newest first; the
    /// ones met on the way that cannot be read are skipped (see [`Store::run_list`]).
    pub fn runs(&self, blueprint: Option<&str>, limit: usize) -> Result<Vec<RunRecord>> {
        Ok(self.run_list(blueprint, limit)?.runs)
    }

    /// The newest `limit` readable runs, of one blueprint or of all, newest first, and
    /// the runs met on the way whose record cannot be read (damaged, or nested too deep):
    /// skipped, never a failure of the whole list.
    pub fn run_list(&self, blueprint: Option<&str>, limit: usize) -> Result<RunList> {
        if let Some(blueprint) = blueprint {
            keys::check("blueprint id", blueprint)?;
        }
        let list = self.backend.run_list(blueprint, limit)?;
        for unreadable in &list.skipped {
            tracing::warn!(%unreadable, "skipping a run that cannot be read");
        }
        Ok(list)
    }

    /// A run's events in `seq` order. An event that cannot be read is
    /// [`Error::Unreadable`], with the command that removes the run.
    pub fn events(&self, run_id: &str) -> Result<Vec<RunEvent>> {
        self.events_after(run_id, 0)
    }

    /// A run's events after `seq` `after`, in `seq` order: what was recorded since a reader
    /// last looked (a run another process runs, followed from its journal).
    pub fn events_after(&self, run_id: &str, after: u64) -> Result<Vec<RunEvent>> {
        keys::check("run id", run_id)?;
        let (events, unreadable) = self.backend.readable_events(run_id, after)?;
        match unreadable.into_iter().next() {
            Some(first) => Err(Error::Unreadable(Box::new(first))),
            None => Ok(events),
        }
    }

    /// A run's readable events in `seq` order, and the ones that cannot be read.
    pub(crate) fn readable_events(&self, run_id: &str) -> Result<(Vec<RunEvent>, Vec<Unreadable>)> {
        keys::check("run id", run_id)?;
        self.backend.readable_events(run_id, 0)
    }

    /// Removes run `id` with its events. Returns whether it was recorded.
    #[tracing::instrument(skip(self), err)]
    pub fn delete_run(&self, id: &str) -> Result<bool> {
        keys::check("run id", id)?;
        self.backend.delete_run(id)
    }

    /// Files the runs recorded under blueprint `from` under `to` instead (a document's
    /// runs made before it was first saved under another id), except the runs named in
    /// `keep` (those in flight). Each run moves at once, record and index together; runs
    /// whose record cannot be read stay. Returns how many moved.
    #[tracing::instrument(skip(self, keep), err)]
    pub fn move_runs(&self, from: &str, to: &str, keep: &[String]) -> Result<u32> {
        keys::check("blueprint id", from)?;
        keys::check("blueprint id", to)?;
        let moved = self.backend.move_runs(from, to, keep)?;
        self.sync()?;
        Ok(moved)
    }

    /// The run that resumed run `run_id`, if one did (runs of the same blueprint only).
    pub fn resumed_by(&self, run_id: &str) -> Result<Option<String>> {
        let Some(record) = self.run(run_id)? else { return Ok(None) };
        self.backend.resumed_by(&record)
    }

    /// Marks every `running` run as `interrupted` (the process that ran it is gone) —
    /// or `waiting`, when its events end with a question still open (see
    /// [`open_questions`]): answering it resumes the run. Returns the ids of both, in that
    /// order, and the records that cannot be read: left alone, so the store still opens
    /// (reading that run reports it too).
    pub(crate) fn interrupt_running(&self) -> Result<Swept> {
        let finished_at = now();
        let (unfinished, unreadable) = self.backend.unfinished_runs()?;
        let mut swept = Swept { unreadable, ..Swept::default() };
        for record in unfinished {
            // The readable events decide; the others are reported with the run.
            let (events, unreadable) = self.readable_events(&record.id)?;
            swept.unreadable.extend(unreadable);
            let asks = !open_questions(&events).is_empty();
            // A run resumed already (answered, then the process died before it was
            // settled) waits no more.
            let asks = asks && self.backend.resumed_by(&record)?.is_none();
            let status = if asks { RecordStatus::Waiting } else { RecordStatus::Interrupted };
            if record.status != status {
                let finished_at = finished_at.clone();
                self.update_run(&record.id, move |record| {
                    record.status = status;
                    if !asks {
                        record.finished_at = Some(finished_at.clone());
                    }
                })?;
            }
            if asks { swept.waiting.push(record.id) } else { swept.interrupted.push(record.id) }
        }
        Ok(swept)
    }
}

/// What [`Store::interrupt_running`] did and met.
#[derive(Debug, Default)]
pub(crate) struct Swept {
    pub(crate) interrupted: Vec<String>,
    pub(crate) waiting: Vec<String>,
    pub(crate) unreadable: Vec<Unreadable>,
}

/// Runs as [`Store::run_list`] lists them: the readable ones and the ones skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunList {
    /// The readable runs, newest first.
    pub runs: Vec<RunRecord>,
    /// The runs met on the way whose record cannot be read, newest first.
    #[serde(default)]
    pub skipped: Vec<Unreadable>,
}

/// The questions a run's events leave open, in the order they were asked: each
/// `StepWaiting` with no later `StepAnswered`, `StepFinished` or `StepRetrying` of the
/// same step instance (a question withdrawn ends with its step or its attempt).
pub fn open_questions(events: &[RunEvent]) -> Vec<Question> {
    let mut open = OpenQuestions::default();
    for e in events {
        open.apply(&e.kind);
    }
    open.into_questions()
}

/// The open questions of a run as its events go by (what [`open_questions`] computes
/// at once): the run waits while any is open.
#[derive(Debug, Clone, Default)]
pub struct OpenQuestions {
    open: Vec<Question>,
}

impl OpenQuestions {
    /// Takes one event; returns whether the run went from asking nothing to waiting
    /// (`Some(true)`), or from waiting to asking nothing (`Some(false)`).
    pub fn apply(&mut self, event: &EventKind) -> Option<bool> {
        let before = self.open.is_empty();
        match event {
            EventKind::StepWaiting { question, .. } => self.open.push(question.clone()),
            // The oldest question of that step instance: a call's questions come one at a time.
            EventKind::StepAnswered { step, path, .. } => {
                if let Some(at) = self.open.iter().position(|q| asks(q, step, path)) {
                    self.open.remove(at);
                }
            }
            // A step instance that ended (or starts another attempt) withdrew what it asked.
            EventKind::StepFinished { step, path, .. }
            | EventKind::StepRetrying { step, path, .. }
            | EventKind::StepSkipped { step, path, .. } => {
                self.open.retain(|q| !asks(q, step, path));
            }
            EventKind::RunFinished { .. } => self.open.clear(),
            _ => {}
        }
        (before != self.open.is_empty()).then_some(before)
    }

    /// Whether any question is open.
    pub fn is_waiting(&self) -> bool {
        !self.open.is_empty()
    }

    /// The open questions, oldest first.
    pub fn into_questions(self) -> Vec<Question> {
        self.open
    }
}

/// Whether `question` is asked by step instance `step` at `path`.
fn asks(question: &Question, step: &str, path: &IterationPath) -> bool {
    question.step == step && &question.path == path
}
