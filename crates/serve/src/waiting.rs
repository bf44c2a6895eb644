//! Runs that wait for a person, as the mediator's tools see them: following a run until
//! it finishes or waits on an open question ([`Call::settle`]), the `INPUT_REQUIRED`
//! answer naming the run, step, question and fields, `answer_run`, and the 2026-07-28
//! multi round-trip: a client of that era that declared elicitation gets an
//! `input_required` result holding the questions as `elicitation/create` requests, and
//! its retry (with `inputResponses` and our `requestState`) answers them and goes on
//! following the same run.

use super::call::{Call, Retry, Settled, app_failure, failure, string_arg};
use super::people::{Reach, describe, elicit_request, wanted};
use mcpflow_engine::people::{Answer, Question};
use mcpflow_engine::{Envelope, EventKind, RunEvent, RunStatus};
use rmcp::model::{CallToolRequestParams, InputRequest, InputRequests, InputRequiredResult};
use serde_json::{Value, json};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio::time::Instant;

/// How long `answer_run` follows the run before it says `running` or `waiting`.
pub(super) const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// After a `StepWaiting` event, how long the question may take to be opened in the
/// registry (the driver records it and asks in parallel), and how often to look.
const LOOK_FOR: Duration = Duration::from_millis(500);
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// What our `requestState` starts with; the rest is the run id. The state is only a
/// handle: the run waits here, and an answer is checked against the open question.
const STATE_PREFIX: &str = "mcpflow-run:";

/// The retry a call is, when it carries `requestState`.
pub(super) fn retry_of(request: &CallToolRequestParams) -> Result<Option<Retry>, Value> {
    let Some(state) = &request.request_state else { return Ok(None) };
    let Some(run_id) = state.strip_prefix(STATE_PREFIX).filter(|id| !id.is_empty()) else {
        return Err(failure(
            "BAD_REQUEST",
            "`requestState` is not one mcpflow gave: send back the one of the input_required result as it was",
        ));
    };
    Ok(Some(Retry { run_id: run_id.to_owned(), responses: request.input_responses.clone().unwrap_or_default() }))
}

/// An answer as a tool's argument gives it: `{action: accept|decline|cancel, content?}`
/// (also the shape of an `ElicitResult`).
pub(super) fn answer_arg(v: Option<&Value>) -> Result<Answer, Value> {
    let bad = |why: &str| {
        failure(
            "BAD_REQUEST",
            format!(
                "`answer` {why}: give {{\"action\": \"accept\", \"content\": {{…the form's fields…}}}}, {{\"action\": \"decline\"}} or {{\"action\": \"cancel\"}}"
            ),
        )
    };
    let Some(v) = v else { return Err(bad("is required")) };
    match v.get("action").and_then(Value::as_str) {
        Some("accept") => match v.get("content") {
            None | Some(Value::Null) => Ok(Answer::Accept { content: mcpflow_blueprint::ask::empty() }),
            Some(c @ Value::Object(_)) => Ok(Answer::Accept { content: c.clone() }),
            Some(_) => Err(bad("has a `content` that is not an object")),
        },
        Some("decline") => Ok(Answer::Decline),
        Some("cancel") => Ok(Answer::Cancel),
        Some(other) => Err(bad(&format!("has the action {other:?}"))),
        None => Err(bad("has no `action`")),
    }
}

impl Call<'_> {
    /// Follows run `run_id` until it finishes (`finished`, or its events end) or waits on
    /// an open question, or `wait` runs out.
    pub(super) async fn settle(
        &self,
        run_id: &str,
        events: Option<broadcast::Receiver<Arc<RunEvent>>>,
        finished: impl Future<Output = Envelope>,
        wait: Option<Duration>,
    ) -> Settled {
        let Some(mut events) = events else {
            // Not in flight any more: it has been recorded.
            return Settled::Finished(Box::new(self.recorded(run_id)));
        };
        let mut parked = self.parked.subscribe();
        tokio::pin!(finished);
        let deadline = async {
            match wait {
                Some(w) => tokio::time::sleep(w).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(deadline);
        let mut look_until: Option<Instant> = None;
        loop {
            let open: Vec<Question> = self.app.questions(Some(run_id)).into_iter().map(|(_, q)| q).collect();
            if !open.is_empty() {
                return Settled::Waiting(open);
            }
            let look = async {
                match look_until {
                    Some(until) if Instant::now() < until => tokio::time::sleep(LOOK_EVERY).await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                envelope = &mut finished => return Settled::Finished(Box::new(envelope)),
                event = events.recv() => match event {
                    Ok(e) => {
                        if matches!(e.kind, EventKind::StepWaiting { .. }) {
                            look_until = Some(Instant::now() + LOOK_FOR);
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    // The run ended and has been recorded (its table entry goes after).
                    Err(broadcast::error::RecvError::Closed) => {
                        return Settled::Finished(Box::new(self.recorded(run_id)));
                    }
                },
                _ = parked.recv() => {}
                () = look => {}
                () = &mut deadline => return Settled::Running,
            }
        }
    }

    /// A run's recorded envelope (`interrupted` when it has none).
    fn recorded(&self, run_id: &str) -> Envelope {
        match self.app.run_detail(run_id) {
            Ok(d) => d.record.envelope.unwrap_or_else(|| Envelope::lost(run_id.to_owned(), d.record.blueprint)),
            Err(_) => Envelope::lost(run_id.to_owned(), String::new()),
        }
    }

    /// The answer of a call whose run waits on `questions`: `INPUT_REQUIRED` naming the
    /// run, step, question and fields and saying how to answer — or, to a 2026-07-28
    /// client that can answer them all, an `input_required` result (set aside for the
    /// reply) asking them.
    pub(super) fn input_required(&self, run_id: &str, questions: &[Question], reach: Reach) -> Value {
        if reach.modern && questions.iter().all(|q| reach.can_answer(q)) {
            let requests: Result<InputRequests, String> = questions
                .iter()
                .map(|q| Ok((q.id.clone(), InputRequest::Elicitation(elicit_request(q, "")?))))
                .collect();
            match requests {
                Ok(requests) => {
                    let result = InputRequiredResult::new(Some(requests), Some(format!("{STATE_PREFIX}{run_id}")));
                    let _ = self.input_required.set(result);
                }
                Err(e) => tracing::warn!(run = run_id, error = %e, "a question cannot travel as an input request"),
            }
        }
        let why = match questions.iter().find(|q| !reach.can_answer(q)) {
            Some(q) if q.url.is_some() && reach.form => "This client declared no URL-mode elicitation",
            Some(_) => "This client declared no elicitation",
            None => "The question could not be put to this client",
        };
        let lines: Vec<String> = questions
            .iter()
            .map(|q| {
                let from = q.server.as_deref().map(|s| format!(" (server `{s}`)")).unwrap_or_default();
                format!("step `{}`{from} asks for {} — {} (question `{}`)", q.step, wanted(q), q.message, q.id)
            })
            .collect();
        let first = questions.first().map(|q| q.id.as_str()).unwrap_or("q1");
        let message = format!(
            "run `{run_id}` waits for a person: {}. {why}, so the run keeps waiting: answer with the answer_run tool \
             ({{\"run_id\": \"{run_id}\", \"question_id\": \"{first}\", \"answer\": {{\"action\": \"accept\", \
             \"content\": {{…the fields…}}}}}}, or action decline / cancel); get_run shows what it waits for",
            lines.join("; ")
        );
        let mut v = failure("INPUT_REQUIRED", message);
        v["error"]["run_id"] = json!(run_id);
        v["error"]["questions"] = json!(questions.iter().map(|q| describe(run_id, q)).collect::<Vec<_>>());
        v
    }

    /// A 2026-07-28 client's retry: its answers to the questions it was asked, then the
    /// same run followed again.
    pub(super) async fn resume(&self, retry: &Retry) -> Result<(Envelope, Vec<RunEvent>), Value> {
        let run_id = retry.run_id.as_str();
        let events = self.app.subscribe(run_id).ok();
        for (question_id, response) in &retry.responses {
            let answer = answer_arg(Some(response))?;
            self.app.answer(run_id, question_id, answer).map_err(|e| app_failure(&e))?;
        }
        match self.settle(run_id, events, std::future::pending(), None).await {
            Settled::Finished(envelope) => {
                let events = self.app.run_detail(run_id).map(|d| d.events).unwrap_or_default();
                Ok((*envelope, events))
            }
            Settled::Waiting(questions) => Err(self.input_required(run_id, &questions, Reach::of(self.context))),
            Settled::Running => Err(failure("INTERNAL", "the run was left unfollowed")),
        }
    }

    /// `answer_run`: answers an open question of a run, then follows the run a little.
    /// A run an earlier process (or service) left waiting is resumed by a new run with the
    /// answer: that is the run followed, and the answer names both.
    pub(super) async fn answer_run(&self, args: &Value) -> Result<Value, Value> {
        let run_id = string_arg(args, "run_id")?;
        let answer = answer_arg(args.get("answer"))?;
        let question_id = match args.get("question_id").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => self.pick(&run_id, args.get("step").and_then(Value::as_str))?,
        };
        let answered = self.app.answer_and_follow(&run_id, &question_id, answer, None).map_err(|e| app_failure(&e))?;
        let followed = answered.run_id.clone();
        let resumed_from = answered.resumed.then(|| run_id.clone());
        let settled = self.settle(&followed, Some(answered.events), std::future::pending(), Some(ANSWER_WAIT)).await;
        let mut reply = match settled {
            Settled::Finished(envelope) => finished(*envelope),
            Settled::Waiting(questions) => Ok(json!({
                "run_id": followed,
                "status": "waiting",
                "questions": questions.iter().map(|q| describe(&followed, q)).collect::<Vec<_>>(),
            })),
            Settled::Running => Ok(json!({ "run_id": followed, "status": "running", "questions": [] })),
        };
        if let Some(from) = resumed_from {
            let v = match &mut reply {
                Ok(v) | Err(v) => v,
            };
            v["resumed_from"] = json!(from);
        }
        reply
    }

    /// The open question `answer_run` means when it names none: the only one (of `step`).
    fn pick(&self, run_id: &str, step: Option<&str>) -> Result<String, Value> {
        let open: Vec<Question> = self.app.questions(Some(run_id)).into_iter().map(|(_, q)| q).collect();
        let list = |qs: &[&Question]| {
            qs.iter().map(|q| format!("`{}` (step `{}`)", q.id, q.step)).collect::<Vec<_>>().join(", ")
        };
        let all: Vec<&Question> = open.iter().collect();
        let matching: Vec<&Question> = open.iter().filter(|q| step.is_none_or(|s| q.step == s)).collect();
        match (matching.as_slice(), step) {
            ([one], _) => Ok(one.id.clone()),
            ([], _) if all.is_empty() => Err(failure(
                "QUESTION_NOT_OPEN",
                format!(
                    "run `{run_id}` waits for no answer (it may have been answered already, or ended); get_run shows it"
                ),
            )),
            ([], Some(s)) => Err(failure(
                "QUESTION_NOT_OPEN",
                format!("run `{run_id}` has no open question at step `{s}`; open: {}", list(&all)),
            )),
            (_, _) => Err(failure(
                "BAD_REQUEST",
                format!(
                    "run `{run_id}` has {} open questions: {}; name one with `question_id`",
                    matching.len(),
                    list(&matching)
                ),
            )),
        }
    }

    /// A run's open questions, as `get_run` shows them.
    pub(super) fn open_questions(&self, run_id: &str) -> Value {
        json!(self.app.questions(Some(run_id)).iter().map(|(run, q)| describe(run, q)).collect::<Vec<_>>())
    }
}

/// A finished run's envelope as the tools answer it: a failure is `isError`.
pub(super) fn finished(envelope: Envelope) -> Result<Value, Value> {
    let answer = json!(envelope);
    match envelope.status {
        RunStatus::Succeeded | RunStatus::Partial => Ok(answer),
        _ => Err(answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_argument_is_read_with_its_action() {
        assert_eq!(
            answer_arg(Some(&json!({ "action": "accept", "content": { "name": "Ada" } }))).unwrap(),
            Answer::Accept { content: json!({ "name": "Ada" }) }
        );
        assert_eq!(answer_arg(Some(&json!({ "action": "accept" }))).unwrap(), Answer::Accept { content: json!({}) });
        assert_eq!(answer_arg(Some(&json!({ "action": "decline" }))).unwrap(), Answer::Decline);
        let bad = answer_arg(Some(&json!({ "action": "maybe" }))).unwrap_err();
        assert_eq!(bad["error"]["code"], "BAD_REQUEST");
        assert!(bad["error"]["message"].as_str().unwrap().contains("\"maybe\""));
        assert!(answer_arg(None).is_err());
    }

    #[test]
    fn only_our_request_state_is_taken_back() {
        let mut request = CallToolRequestParams::new("run_workflow");
        assert!(retry_of(&request).unwrap().is_none());
        request.request_state = Some("mcpflow-run:r42".into());
        assert_eq!(retry_of(&request).unwrap().unwrap().run_id, "r42");
        request.request_state = Some("something else".into());
        assert_eq!(retry_of(&request).unwrap_err()["error"]["code"], "BAD_REQUEST");
    }
}
