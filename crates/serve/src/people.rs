//! The people of a run started through `mcpflow serve`: the client that made the call.
//! A run's questions — an `input` step, an approval gate, a downstream server's
//! elicitation — go to that client as its own `elicitation/create` (form mode with the
//! question's schema, URL mode with its URL) when it declared that mode and speaks the
//! 2025-11-25 protocol, and its answer (accept / decline / cancel with the content)
//! answers the run: the mediator stays transparent.
//!
//! A question the client cannot take — it declared no elicitation (or not that mode), it
//! speaks 2026-07-28 (no server-to-client requests: the call returns `input_required`
//! instead, see `tools.rs`), its call has returned, or it failed to answer — waits in the
//! application's registry of open questions ([`mcpflow_app::runs::Questions`]), where
//! `answer_run`, the studio or `mcpflow answer` can answer it. Each one parked there is
//! announced on the mediator's `parked` channel (by run id), so the call can return at
//! once with `INPUT_REQUIRED` instead of waiting.

use futures::future::BoxFuture;
use mcpflow_app::runs::Questions;
use mcpflow_blueprint::ask::{self, Form};
use mcpflow_engine::people::{Answer, Asking, People, Question};
use mcpflow_engine::{AskSink, CallError};
use rmcp::RoleServer;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, RequestId,
    ServerRequest,
};
use rmcp::service::{OriginatingRequestId, Peer, PeerRequestOptions, RequestContext};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

/// What the calling client can answer, from its capabilities (declared at `initialize`,
/// or with each request in the 2026-07-28 era).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Reach {
    /// Form-mode elicitation.
    pub form: bool,
    /// URL-mode elicitation.
    pub url: bool,
    /// The 2026-07-28 era: no server-to-client requests; questions travel in an
    /// `input_required` result.
    pub modern: bool,
}

impl Reach {
    pub fn of(context: &RequestContext<RoleServer>) -> Reach {
        let modern = context.protocol_version().is_some_and(|v| !v.has_initialize());
        let Some(e) = context.client_capabilities().and_then(|c| c.elicitation) else {
            return Reach { form: false, url: false, modern };
        };
        // An empty `elicitation: {}` means form mode (2025-06-18 clients).
        if e.form.is_none() && e.url.is_none() {
            return Reach { form: true, url: false, modern };
        }
        Reach { form: e.form.is_some(), url: e.url.is_some(), modern }
    }

    /// Whether the client can answer `question` (in some era).
    pub fn can_answer(&self, question: &Question) -> bool {
        match question.asking {
            Asking::ElicitationUrl => self.url,
            Asking::Input | Asking::Approval | Asking::Elicitation => self.form,
        }
    }
}

/// The calling client as a run's people (see the module's doc).
pub(super) struct Caller {
    pub peer: Peer<RoleServer>,
    /// The call the run belongs to: over streamable HTTP, the question rides that
    /// call's response stream.
    pub origin: RequestId,
    pub reach: Reach,
    /// The call is still waiting for the run; once it has returned, questions park.
    pub live: Arc<AtomicBool>,
    /// The run's id, known once the run has started.
    pub run: watch::Receiver<Option<String>>,
    pub questions: Arc<Questions>,
    pub parked: broadcast::Sender<String>,
}

impl People for Caller {
    fn ask(&self, question: Question, cancel: CancellationToken) -> BoxFuture<'static, Result<Answer, CallError>> {
        let forward = self.live.load(Ordering::Acquire) && !self.reach.modern && self.reach.can_answer(&question);
        let request = if forward {
            // URL mode names the elicitation (2025-11-25): unique in this server's runs.
            let run_id = self.run.borrow().clone().unwrap_or_default();
            match elicit_request(&question, &format!("{run_id}/{}", question.id)) {
                Ok(mut r) => {
                    r.extensions.insert(OriginatingRequestId(self.origin.clone()));
                    Some(r)
                }
                Err(e) => {
                    tracing::warn!(step = %question.step, error = %e, "a question could not be put to the client; it waits for answer_run");
                    None
                }
            }
        } else {
            None
        };
        let park = Park { run: self.run.clone(), questions: self.questions.clone(), parked: self.parked.clone() };
        let Some(request) = request else {
            return Box::pin(park.ask(question, cancel));
        };
        let peer = self.peer.clone();
        Box::pin(async move {
            match forward_to(&peer, request, &cancel).await {
                Ok(Some(result)) => answer_of(&question, &result),
                Ok(None) => Err(CallError::cancelled()),
                Err(e) => {
                    tracing::warn!(step = %question.step, error = %e, "the client did not answer a question; it waits for answer_run");
                    park.ask(question, cancel).await
                }
            }
        })
    }
}

/// A trial `call_tool`'s questions (no run, nothing waits): put to the calling client
/// when it can answer them, else `INPUT_REQUIRED` at once.
pub(super) fn direct(context: &RequestContext<RoleServer>, tool: &str) -> AskSink {
    let reach = Reach::of(context);
    let (peer, origin, tool) = (context.peer.clone(), context.id.clone(), tool.to_owned());
    let cancel = context.ct.clone();
    Arc::new(move |mut question: Question| {
        question.id = "q1".into();
        question.step.clone_from(&tool);
        let request = if reach.can_answer(&question) && !reach.modern {
            elicit_request(&question, &format!("call_tool/{tool}")).ok().map(|mut r| {
                r.extensions.insert(OriginatingRequestId(origin.clone()));
                r
            })
        } else {
            None
        };
        let (peer, cancel) = (peer.clone(), cancel.clone());
        Box::pin(async move {
            let Some(request) = request else {
                return Err(question.unanswerable("the client that called call_tool cannot answer it"));
            };
            match forward_to(&peer, request, &cancel).await {
                Ok(Some(result)) => answer_of(&question, &result),
                Ok(None) => Err(CallError::cancelled()),
                Err(e) => Err(question.unanswerable(&format!("the client did not answer ({e})"))),
            }
        })
    })
}

/// Parks a question in the application's registry and announces it.
struct Park {
    run: watch::Receiver<Option<String>>,
    questions: Arc<Questions>,
    parked: broadcast::Sender<String>,
}

impl Park {
    async fn ask(mut self, question: Question, cancel: CancellationToken) -> Result<Answer, CallError> {
        let run_id = match self.run.wait_for(Option::is_some).await {
            Ok(id) => id.clone().unwrap_or_default(),
            Err(_) => return Err(question.unanswerable("the run did not start")),
        };
        // `ask` opens the question before it returns: it is listed when the news is out.
        let asked = self.questions.people(&run_id).ask(question, cancel);
        let _ = self.parked.send(run_id);
        asked.await
    }
}

/// Sends the request and waits for the answer; `None` when `cancel` fires first (the
/// client is told with `notifications/cancelled`).
async fn forward_to(
    peer: &Peer<RoleServer>,
    request: ElicitRequest,
    cancel: &CancellationToken,
) -> Result<Option<ElicitResult>, String> {
    let mut handle = peer
        .send_request_with_option(ServerRequest::ElicitRequest(request), PeerRequestOptions::no_options())
        .await
        .map_err(|e| e.to_string())?;
    let answered = tokio::select! {
        answered = &mut handle.rx => answered,
        () = cancel.cancelled() => {
            let _ = handle.cancel(Some("the step ended before the answer".into())).await;
            return Ok(None);
        }
    };
    match answered {
        Ok(Ok(ClientResult::ElicitResult(result))) => Ok(Some(result)),
        Ok(Ok(_)) => Err("the client answered elicitation/create with something else".into()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the client went away".into()),
    }
}

/// The `elicitation/create` request asking `question`: form mode with its schema (an
/// `input` step's `default` as the fields' defaults), or URL mode with its URL.
/// `elicitation_id` is for URL mode (2025-11-25; empty in 2026-07-28).
pub(super) fn elicit_request(question: &Question, elicitation_id: &str) -> Result<ElicitRequest, String> {
    let params = match question.asking {
        Asking::ElicitationUrl => ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: question.message.clone(),
            url: question.url.clone().unwrap_or_default(),
            elicitation_id: elicitation_id.to_owned(),
        },
        Asking::Input | Asking::Approval | Asking::Elicitation => {
            let mut schema = question.schema.clone().unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
            if let (Some(Value::Object(defaults)), Some(Value::Object(props))) =
                (&question.default, schema.get_mut("properties"))
            {
                for (name, value) in defaults {
                    if let Some(Value::Object(field)) = props.get_mut(name) {
                        field.entry("default").or_insert_with(|| value.clone());
                    }
                }
            }
            let requested_schema: ElicitationSchema =
                serde_json::from_value(schema).map_err(|e| format!("its form is not an elicitation schema: {e}"))?;
            // Approving a destructive call: the caller sees the arguments it approves.
            let message = match &question.call {
                Some(call) => format!("{}\n{}", question.message, call),
                None => question.message.clone(),
            };
            ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema }
        }
    };
    Ok(ElicitRequest::new(params))
}

/// The run's answer from the client's: accept with the content, the fields it left out
/// taking their schema's `default` (checked against the form for an `input` step or a
/// gate; a server checks its own), decline, cancel.
pub(super) fn answer_of(question: &Question, result: &ElicitResult) -> Result<Answer, CallError> {
    match result.action {
        ElicitationAction::Decline => Ok(Answer::Decline),
        ElicitationAction::Accept => {
            let content = match &result.content {
                Some(v @ Value::Object(_)) => v.clone(),
                None | Some(Value::Null) => ask::empty(),
                Some(other) => other.clone(),
            };
            let form = Form { schema: question.schema.clone().unwrap_or_else(ask::empty), wrapped: false };
            if !matches!(question.asking, Asking::Input | Asking::Approval) {
                return Ok(Answer::Accept { content: ask::with_defaults(&form, content) });
            }
            match ask::complete(&form, content) {
                Ok(content) => Ok(Answer::Accept { content }),
                Err(problems) => Err(CallError::new(
                    "INPUT_INVALID",
                    format!(
                        "the client's answer to step `{}` does not fit its form: {}",
                        question.step,
                        problems.join("; ")
                    ),
                    false,
                )),
            }
        }
        // Cancel, or an action of a later revision: dismissed.
        _ => Ok(Answer::Cancel),
    }
}

/// A question as a tool's answer shows it: what it asks, its form's fields (`(required)`
/// marked) or URL, and how to answer it.
pub(super) fn describe(run_id: &str, question: &Question) -> Value {
    let required: Vec<&str> = question
        .schema
        .as_ref()
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let fields: Vec<Value> = question
        .schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(name, schema)| json!({ "name": name, "required": required.contains(&name.as_str()), "schema": schema }))
                .collect()
        })
        .unwrap_or_default();
    let mut v = json!({
        "run_id": run_id,
        "question_id": question.id,
        "step": question.step,
        "asking": question.asking,
        "message": question.message,
    });
    if !question.path.is_empty() {
        v["path"] = json!(question.path);
    }
    if let Some(server) = &question.server {
        v["server"] = json!(server);
    }
    match &question.url {
        Some(url) => v["url"] = json!(url),
        None => {
            v["fields"] = json!(fields);
            v["schema"] = question.schema.clone().unwrap_or_else(ask::empty);
        }
    }
    if let Some(default) = &question.default {
        v["default"] = default.clone();
    }
    v
}

/// One line naming the question's fields, `(required)` marked, or its URL.
pub(super) fn wanted(question: &Question) -> String {
    match question.asking {
        // Said as a noun here: "waits for a visit to URL".
        Asking::ElicitationUrl => format!("a visit to {}", question.url.as_deref().unwrap_or("a URL")),
        _ => question.wanted(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(asking: Asking, schema: Option<Value>) -> Question {
        Question {
            id: "q1".into(),
            step: "ask".into(),
            path: Vec::new(),
            asking,
            server: None,
            message: "Who?".into(),
            schema,
            default: None,
            url: None,
            call: None,
        }
    }

    #[test]
    fn an_input_form_travels_as_a_form_elicitation_with_its_default() {
        let mut q = question(
            Asking::Input,
            Some(json!({ "type": "object", "properties": { "value": { "type": "string" } }, "required": ["value"] })),
        );
        q.default = Some(json!({ "value": "Ada" }));
        let request = elicit_request(&q, "").unwrap();
        let wire = serde_json::to_value(&request.params).unwrap();
        assert_eq!(wire["mode"], "form");
        assert_eq!(wire["message"], "Who?");
        assert_eq!(wire["requestedSchema"]["properties"]["value"]["default"], "Ada");
        assert_eq!(wire["requestedSchema"]["required"], json!(["value"]));
    }

    #[test]
    fn a_url_question_travels_in_url_mode() {
        let mut q = question(Asking::ElicitationUrl, None);
        q.url = Some("https://example.com/x".into());
        let wire = serde_json::to_value(&elicit_request(&q, "e1").unwrap().params).unwrap();
        assert_eq!(wire["mode"], "url");
        assert_eq!(wire["url"], "https://example.com/x");
        assert_eq!(wire["elicitationId"], "e1");
    }

    #[test]
    fn a_clients_answer_to_an_input_step_is_checked_against_the_form() {
        let q = question(
            Asking::Input,
            Some(json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] })),
        );
        let bad = ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "n": "three" }));
        let e = answer_of(&q, &bad).unwrap_err();
        assert_eq!(e.code, "INPUT_INVALID");
        assert!(e.message.contains("n: expected integer"), "{}", e.message);
        let good = ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "n": 3 }));
        assert_eq!(answer_of(&q, &good).unwrap(), Answer::Accept { content: json!({ "n": 3 }) });
        assert_eq!(answer_of(&q, &ElicitResult::new(ElicitationAction::Decline)).unwrap(), Answer::Decline);
    }

    #[test]
    fn wanted_names_the_fields_and_marks_the_required_ones() {
        let q = question(
            Asking::Elicitation,
            Some(json!({ "type": "object", "properties": { "name": {}, "check": {} }, "required": ["name"] })),
        );
        assert_eq!(wanted(&q), "the field(s) name (required), check");
        let mut url = question(Asking::ElicitationUrl, None);
        url.url = Some("https://example.com/login".into());
        assert_eq!(wanted(&url), "a visit to https://example.com/login");
    }
}
