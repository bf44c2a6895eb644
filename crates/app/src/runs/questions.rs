//! The questions of the application's runs waiting for a person: each run that has no
//! people of its own asks here, and any front door answers by run and question id — the
//! studio's form, `serve`'s `answer_run`, `mcpflow answer`. A question is open from its
//! `StepWaiting` event until it is answered or its step ends (withdrawn).
//!
//! Runs that wait survive the process: while a question is open the run's record is
//! `waiting`; a front door that stops leaves such a run waiting ([`App::park`]), and one
//! that dies leaves it so too (the store keeps it `waiting` on the next open). Its
//! questions are then listed from its events, and answering one resumes the run
//! ([`App::answer`], [`App::answer_plan`]): the steps that finished keep their outputs,
//! the step that asked runs again and gets the answer at once — exact for an `input`
//! step; a tool whose server asked during its call is called again and its question
//! answered with the same answer — and questions the run had answered before (in loop
//! iterations that run again) get their earlier answers.
//!
//! A front door that shows runs follows the one that goes on after an answer
//! ([`App::answer_and_follow`]: the studio's canvas plays the resuming run live), and
//! lists every run waiting for a person with its record ([`App::waiting`]).

use super::asked::{Questions, complete};
use super::{StartRun, Target, Trigger};
use crate::app::App;
use crate::error::{AppError, Result};
use futures::future::BoxFuture;
use mcpflow_engine::CallError;
use mcpflow_engine::event::IterationPath;
use mcpflow_engine::people::{Answer, People, Question};
use mcpflow_engine::{Envelope, ErrorEntry, EventKind, RunEvent, RunStatus};
use mcpflow_store::{RecordStatus, RunRecord, open_questions};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

/// A run waiting for a person ([`App::waiting`]).
#[derive(Debug, Clone)]
pub struct WaitingRun {
    pub record: RunRecord,
    /// Its open questions, oldest first.
    pub questions: Vec<Question>,
    /// In flight in this process; else an earlier process left it waiting, and answering
    /// it resumes it.
    pub in_flight: bool,
}

/// The run that goes on after an answer ([`App::answer_and_follow`]).
#[derive(Debug)]
pub struct Answered {
    /// The run asked (in flight here), or the run that resumes it.
    pub run_id: String,
    pub blueprint: String,
    /// Its events: from the answer on, or (a resuming run) from its first.
    pub events: broadcast::Receiver<Arc<RunEvent>>,
    /// `run_id` is a new run, resuming one an earlier process left waiting.
    pub resumed: bool,
}

impl App {
    /// Where the questions of this application's runs in flight wait for a person (a
    /// front door that asks them itself, like `mcpflow serve`'s caller, parks them here).
    pub fn open_questions(&self) -> Arc<Questions> {
        self.inner.questions.clone()
    }

    /// The questions runs of this application wait on (of one run, or all): those of the
    /// runs in flight here, then those of the runs an earlier process left `waiting`.
    pub fn questions(&self, run_id: Option<&str>) -> Vec<(String, Question)> {
        let mut list = self.inner.questions.list(run_id);
        for (run, questions) in self.waiting_runs() {
            if run_id.is_none_or(|r| r == run) {
                list.extend(questions.into_iter().map(|q| (run.clone(), q)));
            }
        }
        list
    }

    /// Answers a run's open question (`Accept` with the form's content, `Decline`,
    /// `Cancel`): the run goes on. A run an earlier process left `waiting` is resumed
    /// with the answer (see the module's notes), its questions after that asked here.
    pub fn answer(&self, run_id: &str, question_id: &str, answer: Answer) -> Result<()> {
        if self.in_flight(run_id, question_id) {
            return self.inner.questions.answer(run_id, question_id, answer);
        }
        self.resume_answered(run_id, question_id, answer, None).map(drop)
    }

    /// Cancels run `run_id`: one in flight here is cancelled (its end is recorded as any
    /// run's); one an earlier process left `waiting` is recorded `cancelled` now and its
    /// questions close. Returns whether it was in flight.
    pub fn cancel_run(&self, run_id: &str) -> Result<bool> {
        // In the run table (recorded or about to be): cancelled.
        if self.control(run_id, mcpflow_engine::Control::Cancel).is_ok() {
            return Ok(true);
        }
        let record =
            self.store().run(run_id)?.ok_or_else(|| AppError::NotFound { what: "run", id: run_id.to_owned() })?;
        if record.status != RecordStatus::Waiting {
            return Err(AppError::NotRunning(run_id.to_owned()));
        }
        if !self.inner.questions.claim(run_id) {
            return Err(AppError::QuestionNotOpen(format!("run `{run_id}` is being resumed with an answer already")));
        }
        let envelope = Envelope {
            run_id: run_id.to_owned(),
            blueprint: record.blueprint,
            status: RunStatus::Cancelled,
            output: serde_json::Value::Null,
            summary: Default::default(),
            errors: vec![ErrorEntry {
                step: String::new(),
                path: Vec::new(),
                code: "CANCELLED".to_owned(),
                message: "cancelled while it waited for an answer".to_owned(),
            }],
            duration_ms: 0,
            trace_id: None,
        };
        let done = self.store().finish_run(run_id, &envelope);
        self.inner.questions.resumed(run_id);
        done?;
        Ok(false)
    }

    /// Answers a run's open question as [`App::answer`] does, and returns the run that
    /// goes on with its events, for a front door that shows it: the run asked, when it is
    /// in flight here (its events from the answer on), or the run that resumes it, when
    /// an earlier process left it `waiting` (all its events). `target`: the blueprint to
    /// resume on, for a run of one given inline (the studio's canvas; see
    /// [`App::answer_plan`]).
    pub fn answer_and_follow(
        &self,
        run_id: &str,
        question_id: &str,
        answer: Answer,
        target: Option<Target>,
    ) -> Result<Answered> {
        if self.in_flight(run_id, question_id) {
            // Subscribed first: no event after the answer is missed.
            let events = self.subscribe(run_id)?;
            self.inner.questions.answer(run_id, question_id, answer)?;
            let blueprint = self.active_runs().into_iter().find(|(id, _)| id == run_id).map(|(_, bp)| bp);
            return Ok(Answered {
                run_id: run_id.to_owned(),
                blueprint: blueprint.unwrap_or_default(),
                events,
                resumed: false,
            });
        }
        let started = self.resume_answered(run_id, question_id, answer, target)?;
        Ok(Answered { run_id: started.run_id, blueprint: started.blueprint, events: started.events, resumed: true })
    }

    /// The runs waiting for a person here, oldest question first: those in flight and
    /// those an earlier process left `waiting`, each with its record and open questions
    /// (what a front door shows at start: "2 runs are waiting for you").
    pub fn waiting(&self) -> Vec<WaitingRun> {
        let active: BTreeSet<String> = self.active_runs().into_iter().map(|(id, _)| id).collect();
        let mut runs: Vec<WaitingRun> = Vec::new();
        for (run, question) in self.questions(None) {
            if let Some(w) = runs.iter_mut().find(|w| w.record.id == run) {
                w.questions.push(question);
                continue;
            }
            match self.store().run(&run) {
                Ok(Some(record)) => {
                    let in_flight = active.contains(&run);
                    runs.push(WaitingRun { record, questions: vec![question], in_flight });
                }
                Ok(None) => tracing::warn!(run = %run, "a run with an open question has no record"),
                Err(e) => tracing::warn!(run = %run, error = %e, "could not read a waiting run's record"),
            }
        }
        runs
    }

    /// Whether run `run_id` is in flight here (so its question is answered in the registry).
    fn in_flight(&self, run_id: &str, question_id: &str) -> bool {
        self.inner.questions.asks(run_id, question_id) || self.active_runs().iter().any(|(id, _)| id == run_id)
    }

    /// Resumes run `run_id`, which an earlier process left `waiting`, with `answer` to its
    /// question `question_id` (see [`App::answer_plan`]).
    fn resume_answered(
        &self,
        run_id: &str,
        question_id: &str,
        answer: Answer,
        target: Option<Target>,
    ) -> Result<super::Started> {
        let questions = self.stored_questions(run_id)?;
        let Some(question) = questions.iter().find(|q| q.id == question_id) else {
            let open: Vec<String> = questions.iter().map(|q| format!("`{}` (step `{}`)", q.id, q.step)).collect();
            return Err(AppError::QuestionNotOpen(if open.is_empty() {
                format!("run `{run_id}` waits for no answer (it may have been answered already, or ended)")
            } else {
                format!("run `{run_id}` has no open question `{question_id}`; open: {}", open.join(", "))
            }));
        };
        let spec = self.answer_plan(run_id, question, answer, target, None)?;
        match self.start_run(spec) {
            Ok(started) => {
                tracing::info!(run = %run_id, by = %started.run_id, "a waiting run was answered and resumes");
                Ok(started)
            }
            Err(e) => {
                // It did not start: the run stays waiting, and may be answered again.
                self.inner.questions.resumed(run_id);
                Err(e)
            }
        }
    }

    /// The open question of step `step` in run `run_id`, which an earlier process left
    /// `waiting` (what `mcpflow answer RUN STEP` answers); the oldest when it asks more
    /// than one (loop iterations).
    pub fn waiting_question(&self, run_id: &str, step: &str) -> Result<Question> {
        let questions = self.stored_questions(run_id)?;
        if let Some(q) = questions.iter().find(|q| q.step == step) {
            return Ok(q.clone());
        }
        let steps: Vec<String> = questions.iter().map(|q| format!("`{}`", q.step)).collect();
        Err(AppError::QuestionNotOpen(format!(
            "run `{run_id}` has no open question at step `{step}`; it waits at {}",
            steps.join(", ")
        )))
    }

    /// The run that resumes waiting run `run_id` with `answer` to its open `question`
    /// (checked against the question's form): its finished steps pinned, the step that
    /// asked run again and answered at once, the questions it had answered in steps that
    /// run again answered as then; any other question goes to `people`, else waits here.
    /// `target`: the blueprint, for a run of one given inline (see
    /// [`App::resume_plan`]). Start it with [`App::start_run`]; the waiting run is then
    /// settled (`interrupted`, resumed by the new run).
    pub fn answer_plan(
        &self,
        run_id: &str,
        question: &Question,
        answer: Answer,
        target: Option<Target>,
        people: Option<Arc<dyn People>>,
    ) -> Result<StartRun> {
        let answer = complete(question, answer)?;
        let record =
            self.store().run(run_id)?.ok_or_else(|| AppError::NotFound { what: "run", id: run_id.to_owned() })?;
        if record.status != RecordStatus::Waiting || self.active_runs().iter().any(|(id, _)| id == run_id) {
            return Err(AppError::QuestionNotOpen(format!(
                "run `{run_id}` is {} here, not left waiting by an earlier process",
                if record.status == RecordStatus::Waiting { "in flight" } else { record.status.as_str() }
            )));
        }
        if !self.inner.questions.claim(run_id) {
            return Err(AppError::QuestionNotOpen(format!("run `{run_id}` is being resumed with an answer already")));
        }
        let planned = self.plan_resume(&record, target, None);
        let mut spec = match planned {
            Ok(spec) => spec,
            Err(e) => {
                self.inner.questions.resumed(run_id);
                return Err(e);
            }
        };
        let mut given = earlier_answers(&self.store().events(run_id)?);
        given.entry((question.step.clone(), question.path.clone())).or_default().push_back(answer);
        spec.people = Some(Arc::new(Replay { given: Mutex::new(given), then: people }));
        // Started as the waiting run was (the studio, the scheduler…).
        spec.trigger = match record.trigger.as_str() {
            "studio" => Trigger::Studio,
            "mcp" => Trigger::Mcp,
            "schedule" => Trigger::Schedule,
            _ => Trigger::Cli,
        };
        spec.wait = true;
        Ok(spec)
    }

    /// The runs an earlier process left `waiting`, with their open questions (runs in
    /// flight here, or being resumed, left out).
    fn waiting_runs(&self) -> Vec<(String, Vec<Question>)> {
        let records = match self.store().waiting_runs() {
            Ok(records) => records,
            Err(e) => {
                tracing::warn!(error = %e, "could not list the waiting runs");
                return Vec::new();
            }
        };
        let active: BTreeSet<String> = self.active_runs().into_iter().map(|(id, _)| id).collect();
        let resuming = self.inner.questions.resuming().clone();
        records
            .into_iter()
            .filter(|r| !active.contains(&r.id) && !resuming.contains(&r.id))
            .filter_map(|r| {
                let events = self.store().events(&r.id).ok()?;
                Some((r.id, open_questions(&events)))
            })
            .collect()
    }

    /// The open questions of run `run_id`, left `waiting` by an earlier process.
    fn stored_questions(&self, run_id: &str) -> Result<Vec<Question>> {
        let record =
            self.store().run(run_id)?.ok_or_else(|| AppError::NotFound { what: "run", id: run_id.to_owned() })?;
        if record.status != RecordStatus::Waiting {
            let by = self.store().resumed_by(run_id)?.map(|by| format!(" (answered: run `{by}` resumed it)"));
            return Err(AppError::QuestionNotOpen(format!(
                "run `{run_id}` is {}, not waiting for an answer{}",
                record.status.as_str(),
                by.unwrap_or_default()
            )));
        }
        Ok(open_questions(&self.store().events(run_id)?))
    }

    /// One line per question of the runs an earlier process left waiting, saying how to
    /// answer it: what a long-lived front door logs when it starts.
    pub fn waiting_notes(&self) -> Vec<String> {
        self.waiting_runs()
            .into_iter()
            .flat_map(|(run, questions)| questions.into_iter().map(move |q| waiting_note(&run, &q)))
            .collect()
    }
}

/// "Run `run` waits for an answer at step …", with the command that answers it: what a
/// long-lived front door logs, where nobody else sees a run wait.
pub fn waiting_note(run: &str, q: &Question) -> String {
    format!(
        "run {run} waits for an answer at step `{}`: {}; answer it with `mcpflow answer {run} {} --answers FILE` (or in the studio)",
        q.step, q.message, q.step
    )
}

/// The answers a run's events record, by step instance, in order.
fn earlier_answers(events: &[RunEvent]) -> HashMap<(String, IterationPath), VecDeque<Answer>> {
    let mut given: HashMap<(String, IterationPath), VecDeque<Answer>> = HashMap::new();
    for e in events {
        if let EventKind::StepAnswered { step, path, answer } = &e.kind {
            given.entry((step.clone(), path.clone())).or_default().push_back(answer.clone());
        }
    }
    given
}

/// The people of a run resuming a waiting one: the answers given already, by step
/// instance, in order (one that does not fit the question asked now is not used); then
/// `then`; then (the run's `wait`) the application's registry.
struct Replay {
    given: Mutex<HashMap<(String, IterationPath), VecDeque<Answer>>>,
    then: Option<Arc<dyn People>>,
}

impl People for Replay {
    fn ask(
        &self,
        question: Question,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, std::result::Result<Answer, CallError>> {
        let key = (question.step.clone(), question.path.clone());
        let found =
            self.given.lock().unwrap_or_else(PoisonError::into_inner).get_mut(&key).and_then(VecDeque::pop_front);
        // A server that asks something else this time is asked anew.
        let found = found.and_then(|answer| complete(&question, answer).ok());
        match (found, &self.then) {
            (Some(answer), _) => Box::pin(async move { Ok(answer) }),
            (None, Some(then)) => then.ask(question, cancel),
            (None, None) => Box::pin(async move { Err(question.unanswerable("nobody is there to answer")) }),
        }
    }
}

/// `first`, and when it cannot answer (`INPUT_REQUIRED`) the question waits in `then`.
pub(crate) fn then_wait(first: Arc<dyn People>, then: Arc<dyn People>) -> Arc<dyn People> {
    Arc::new(ThenWait { first, then })
}

struct ThenWait {
    first: Arc<dyn People>,
    then: Arc<dyn People>,
}

impl People for ThenWait {
    fn ask(
        &self,
        question: Question,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, std::result::Result<Answer, CallError>> {
        use futures::FutureExt as _;
        let mut first = self.first.ask(question.clone(), cancel.clone());
        // A first who cannot answer at once (no terminal, no answer in the file): the
        // question goes to `then` now, so it is open there as soon as the run says it waits.
        match (&mut first).now_or_never() {
            Some(Err(e)) if e.code == "INPUT_REQUIRED" => self.then.ask(question, cancel),
            Some(other) => Box::pin(async move { other }),
            None => {
                let then = self.then.clone();
                Box::pin(async move {
                    match first.await {
                        Err(e) if e.code == "INPUT_REQUIRED" => then.ask(question, cancel).await,
                        other => other,
                    }
                })
            }
        }
    }
}

/// The envelope of a run left waiting ([`App::park`]): not finished — its record stays
/// `waiting` — and saying how to answer.
pub(crate) fn left_waiting(envelope: &mut Envelope, open: &[Question]) {
    envelope.status = RunStatus::Interrupted;
    envelope.errors = open
        .iter()
        .map(|q| ErrorEntry {
            step: q.step.clone(),
            path: q.path.clone(),
            code: "RUN_WAITING".to_owned(),
            message: format!(
                "the run is left waiting for an answer: {}; answer it with `mcpflow answer {} {} --answers FILE` (or in the studio), and it resumes",
                q.message, envelope.run_id, q.step
            ),
        })
        .collect();
}
