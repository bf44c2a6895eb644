//! The questions runs in flight here wait on, by run and question id: each run that has
//! no people of its own asks through [`Questions::people`], and an answer checked against
//! its form goes to the run that waits. The [`crate::App`] holds one; answering and
//! resuming, the use cases, are in [`super::questions`].

use crate::error::{AppError, Result};
use futures::future::BoxFuture;
use mcpflow_blueprint::ask::{self, Form};
use mcpflow_engine::CallError;
use mcpflow_engine::people::{Answer, Asking, People, Question};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Open questions, by run id and question id.
#[derive(Default)]
pub struct Questions {
    open: Mutex<BTreeMap<(String, String), Open>>,
    /// Waiting runs of an earlier process being resumed now (answered once only).
    resuming: Mutex<BTreeSet<String>>,
}

struct Open {
    question: Question,
    answer: oneshot::Sender<Answer>,
}

impl std::fmt::Debug for Questions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Questions").finish_non_exhaustive()
    }
}

impl Questions {
    fn open(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Open>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The people of run `run_id`: its questions wait here for an answer.
    pub fn people(self: &Arc<Self>, run_id: &str) -> Arc<dyn People> {
        Arc::new(RunPeople { questions: self.clone(), run_id: run_id.to_owned() })
    }

    /// The open questions, of one run or of all, oldest first per run.
    pub fn list(&self, run_id: Option<&str>) -> Vec<(String, Question)> {
        self.open()
            .iter()
            .filter(|((run, _), _)| run_id.is_none_or(|r| r == run))
            .map(|((run, _), open)| (run.clone(), open.question.clone()))
            .collect()
    }

    /// Answers an open question; the answer is checked against its form first (a wrong
    /// answer leaves the question open and says what is wrong, field by field).
    pub fn answer(&self, run_id: &str, question_id: &str, answer: Answer) -> Result<()> {
        let mut open = self.open();
        let key = (run_id.to_owned(), question_id.to_owned());
        let Some(entry) = open.get(&key) else {
            let ids: Vec<String> = open.keys().filter(|(r, _)| r == run_id).map(|(_, q)| q.clone()).collect::<Vec<_>>();
            return Err(AppError::QuestionNotOpen(if ids.is_empty() {
                format!("run `{run_id}` waits for no answer (it may have been answered already, or ended)")
            } else {
                format!("run `{run_id}` has no open question `{question_id}`; open: {}", ids.join(", "))
            }));
        };
        let answer = complete(&entry.question, answer)?;
        let Some(entry) = open.remove(&key) else { return Ok(()) };
        // The run ended meanwhile: nobody hears the answer, which is fine.
        let _ = entry.answer.send(answer);
        Ok(())
    }

    /// Whether run `run_id` has a question open here (its run is in flight in this process).
    pub(crate) fn asks(&self, run_id: &str, question_id: &str) -> bool {
        self.open().contains_key(&(run_id.to_owned(), question_id.to_owned()))
    }

    pub(crate) fn resuming(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.resuming.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims waiting run `run_id` for resuming; false when it is being resumed already.
    pub(crate) fn claim(&self, run_id: &str) -> bool {
        self.resuming().insert(run_id.to_owned())
    }

    /// The run resuming waiting run `run_id` started (or could not): the claim ends.
    pub(crate) fn resumed(&self, run_id: &str) {
        self.resuming().remove(run_id);
    }
}

/// An answer as the run gets it: the fields left out take their schema's `default`
/// (SEP-1034), then it is checked against its question's form; a wrong answer says what
/// is wrong, field by field.
pub(crate) fn complete(question: &Question, answer: Answer) -> Result<Answer> {
    let Answer::Accept { content } = answer else { return Ok(answer) };
    if question.asking == Asking::ElicitationUrl {
        return Ok(Answer::Accept { content });
    }
    let form = Form { schema: question.schema.clone().unwrap_or_else(ask::empty), wrapped: false };
    ask::complete(&form, content).map(|content| Answer::Accept { content }).map_err(|problems| {
        AppError::BadRequest(format!(
            "the answer to `{}` in step `{}` does not fit its form: {}",
            question.id,
            question.step,
            problems.join("; ")
        ))
    })
}

struct RunPeople {
    questions: Arc<Questions>,
    run_id: String,
}

/// Closes an open question when its asking ends (answered, withdrawn, or dropped).
struct Withdraw {
    questions: Arc<Questions>,
    key: (String, String),
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.questions.open().remove(&self.key);
    }
}

impl People for RunPeople {
    fn ask(
        &self,
        question: Question,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, std::result::Result<Answer, CallError>> {
        let (tx, rx) = oneshot::channel();
        let key = (self.run_id.clone(), question.id.clone());
        // Open from now (the registry answers it) until answered, withdrawn, or dropped.
        self.questions.open().insert(key.clone(), Open { question, answer: tx });
        let open = Withdraw { questions: self.questions.clone(), key };
        Box::pin(async move {
            let _open = open;
            tokio::select! {
                answer = rx => answer.map_err(|_| CallError::cancelled()),
                () = cancel.cancelled() => Err(CallError::cancelled()),
            }
        })
    }
}
