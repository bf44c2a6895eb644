//! The questions of the application's runs waiting for a person: each run that has no
//! people of its own asks here, and any front door answers by run and question id — the
//! studio's form, `serve`'s `answer_run`, `mcpflow answer`. A question is open from its
//! `StepWaiting` event until it is answered or its step ends (withdrawn).

use crate::app::App;
use crate::error::{AppError, Result};
use futures::future::BoxFuture;
use mcpflow_blueprint::ask::{self, Form};
use mcpflow_engine::CallError;
use mcpflow_engine::people::{Answer, Asking, People, Question};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Open questions, by run id and question id.
#[derive(Default)]
pub struct Questions {
    open: Mutex<BTreeMap<(String, String), Open>>,
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
        if let Answer::Accept { content } = &answer {
            let problems = match entry.question.asking {
                Asking::ElicitationUrl => Vec::new(),
                _ => {
                    let form =
                        Form { schema: entry.question.schema.clone().unwrap_or_else(ask::empty), wrapped: false };
                    ask::check_answer(&form, content)
                }
            };
            if !problems.is_empty() {
                return Err(AppError::BadRequest(format!(
                    "the answer to `{}` in step `{}` does not fit its form: {}",
                    question_id,
                    entry.question.step,
                    problems.join("; ")
                )));
            }
        }
        let Some(entry) = open.remove(&key) else { return Ok(()) };
        // The run ended meanwhile: nobody hears the answer, which is fine.
        let _ = entry.answer.send(answer);
        Ok(())
    }
}

struct RunPeople {
    questions: Arc<Questions>,
    run_id: String,
}

impl People for RunPeople {
    fn ask(
        &self,
        question: Question,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, std::result::Result<Answer, CallError>> {
        let (tx, rx) = oneshot::channel();
        let key = (self.run_id.clone(), question.id.clone());
        self.questions.open().insert(key.clone(), Open { question, answer: tx });
        let questions = self.questions.clone();
        Box::pin(async move {
            let answer = tokio::select! {
                answer = rx => answer.map_err(|_| CallError::cancelled()),
                () = cancel.cancelled() => Err(CallError::cancelled()),
            };
            // Withdrawn (the step or run ended first) or answered: no longer open.
            questions.open().remove(&key);
            answer
        })
    }
}

impl App {
    /// The questions runs of this application wait on (of one run, or all).
    pub fn questions(&self, run_id: Option<&str>) -> Vec<(String, Question)> {
        self.inner.questions.list(run_id)
    }

    /// Answers a run's open question (`Accept` with the form's content, `Decline`,
    /// `Cancel`): the run goes on.
    pub fn answer(&self, run_id: &str, question_id: &str, answer: Answer) -> Result<()> {
        self.inner.questions.answer(run_id, question_id, answer)
    }
}
