//! A server's questions to a person (MCP elicitation) routed to the call they belong to.
//!
//! A 2025-11-25 server asks with a request of its own while it handles a call; over stdio
//! nothing ties that request to the call, so it goes to the call that this session started
//! last among those in flight (exact for the sequential calls of a workflow step; with
//! several calls of one server in flight, the newest one's step is named). The question
//! is answered through that call's [`AskSink`] (the engine records it on the step and asks
//! the run's people). While a question is open, the call's timeout waits: a person's
//! thinking time is not the server's.
//!
//! Each question is recorded on the step, and a server decides how many it asks: one call
//! takes at most [`MAX_QUESTIONS`]; later ones are declined without being asked or
//! recorded, and one note when the call ends says how many ("N questions … declined").

use super::LogStream;
use super::notes::{ServerNotes, cut};
use mcpflow_engine::people::{Answer, Asking, Question};
use mcpflow_engine::{AskSink, CallError};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequiredResult, InputResponses,
};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::time::Instant;

/// Questions one call may ask a person; later ones are declined unasked.
pub(crate) const MAX_QUESTIONS: usize = 32;

/// The calls of one session that can take questions, newest last.
pub(crate) struct AskRoutes {
    calls: Mutex<Vec<(u64, Arc<Asked>)>>,
    next: AtomicU64,
    /// Where the note of declined questions goes.
    notes: Arc<ServerNotes>,
}

impl std::fmt::Debug for AskRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskRoutes").finish_non_exhaustive()
    }
}

/// One call's sink, and what its timeout needs to know: questions open, the last answer.
pub(crate) struct Asked {
    sink: AskSink,
    open: AtomicUsize,
    answered: Mutex<Option<Instant>>,
    /// Questions this call was asked, declined ones included.
    asked: AtomicUsize,
}

impl Asked {
    /// Whether the call's deadline should wait: a question is open, or one was answered
    /// less than `timeout` ago (the time left is counted from the answer).
    pub fn extends(&self, timeout: std::time::Duration) -> Option<Instant> {
        if self.open.load(Ordering::Acquire) > 0 {
            return Some(Instant::now() + timeout);
        }
        let answered = *self.answered.lock().unwrap_or_else(PoisonError::into_inner);
        answered.map(|at| at + timeout).filter(|until| *until > Instant::now())
    }
}

impl AskRoutes {
    pub fn new(notes: Arc<ServerNotes>) -> Self {
        AskRoutes { calls: Mutex::default(), next: AtomicU64::new(0), notes }
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, Vec<(u64, Arc<Asked>)>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes this session's questions to `sink` while the registration lives.
    pub fn register(self: &Arc<Self>, sink: AskSink) -> AskRegistration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let asked =
            Arc::new(Asked { sink, open: AtomicUsize::new(0), answered: Mutex::new(None), asked: AtomicUsize::new(0) });
        self.calls().push((id, asked.clone()));
        AskRegistration { routes: self.clone(), id, asked }
    }

    /// Asks the newest call's people; declines when no call can take questions.
    pub async fn elicit(&self, server: &str, params: ElicitRequestParams) -> ElicitResult {
        let Some(asked) = self.calls().last().map(|(_, a)| a.clone()) else {
            tracing::debug!(server, "an elicitation outside any workflow call is declined");
            return ElicitResult::new(ElicitationAction::Decline);
        };
        asked.answer(server, params).await
    }
}

impl Asked {
    /// Asks this call's people the server's question; the elicitation's result.
    async fn answer(&self, server: &str, params: ElicitRequestParams) -> ElicitResult {
        if self.asked.fetch_add(1, Ordering::AcqRel) >= MAX_QUESTIONS {
            tracing::debug!(server, "a question past the call's {MAX_QUESTIONS} is declined unasked");
            return ElicitResult::new(ElicitationAction::Decline);
        }
        let question = question(server, params);
        self.open.fetch_add(1, Ordering::AcqRel);
        let answer: Result<Answer, CallError> = (self.sink)(question).await;
        *self.answered.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        self.open.fetch_sub(1, Ordering::AcqRel);
        match answer {
            Ok(Answer::Accept { content }) => match content {
                serde_json::Value::Object(map) if !map.is_empty() => {
                    ElicitResult::new(ElicitationAction::Accept).with_content(serde_json::Value::Object(map))
                }
                _ => ElicitResult::new(ElicitationAction::Accept),
            },
            Ok(Answer::Decline) => ElicitResult::new(ElicitationAction::Decline),
            // Nobody could answer (the call ends with why) or it was dismissed.
            Ok(Answer::Cancel) | Err(_) => ElicitResult::new(ElicitationAction::Cancel),
        }
    }
}

/// The most requests one `input_required` result may make: each may become a question to
/// a person, and a server controls how many it sends.
const MAX_INPUT_REQUESTS: usize = 16;

/// Answers the questions of a 2026-07-28 `input_required` result on the call's step: each
/// elicitation asked of its people (declined when the call has none), roots from the
/// session. Returns the responses, keyed as the server keyed its requests, and the state to
/// echo. A model completion (sampling) is not answered here: `SAMPLING_UNAVAILABLE`.
pub(crate) async fn fulfil(
    server: &crate::pool::server::Server,
    connection: &crate::pool::connection::Connection,
    asking: Option<&AskRegistration>,
    sampling: Option<&crate::pool::sampling::SampleRegistration>,
    asked: InputRequiredResult,
) -> crate::error::Result<(InputResponses, Option<String>)> {
    let requests = asked.input_requests.unwrap_or_default();
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(crate::error::Error::ProtocolError {
            server: server.name.clone(),
            message: format!(
                "the server asked {} things at once in one `input_required` result (at most {MAX_INPUT_REQUESTS} are \
                 answered); the call was given up",
                requests.len()
            ),
        });
    }
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let response = match request {
            InputRequest::Elicitation(request) => {
                let result = match asking {
                    Some(a) => a.asked.answer(&server.name, request.params).await,
                    None => ElicitResult::new(ElicitationAction::Decline),
                };
                serde_json::to_value(result)
            }
            // Roots are deprecated upstream (SEP-2577) but servers still ask for them.
            #[expect(deprecated)]
            InputRequest::ListRoots(_) => {
                let roots = connection.roots.get();
                serde_json::to_value(rmcp::model::ListRootsResult::new(
                    roots.iter().map(|r| rmcp::model::Root::new(r.uri.clone()).with_name(r.name.clone())).collect(),
                ))
            }
            // A model completion, answered as a standalone sampling request of this call
            // would be (the server's switch, the run's sampler).
            InputRequest::CreateMessage(request) => {
                let answered = match sampling {
                    Some(s) => connection.samples.answer(&s.sampling, &server.name, request.params).await,
                    None => Err(rmcp::model::ErrorData::new(
                        rmcp::model::ErrorCode::INVALID_REQUEST,
                        "mcpflow answers sampling requests only during a workflow's call",
                        None,
                    )),
                };
                match answered {
                    Ok(result) => serde_json::to_value(result),
                    // Refused or failed: the call ends with why (the engine's sink said it).
                    Err(error) => {
                        return Err(crate::error::Error::ServerError {
                            server: server.name.clone(),
                            code: error.code.0,
                            message: error.message.to_string(),
                        });
                    }
                }
            }
            other => {
                return Err(crate::error::Error::ProtocolError {
                    server: server.name.clone(),
                    message: format!(
                        "the server asked for input of a kind this client does not know: {}",
                        serde_json::to_string(&other).unwrap_or_default().chars().take(200).collect::<String>()
                    ),
                });
            }
        };
        let response = response.map_err(|e| crate::error::Error::ProtocolError {
            server: server.name.clone(),
            message: format!("an answer could not be written: {e}"),
        })?;
        responses.insert(key, response);
    }
    Ok((responses, asked.request_state))
}

/// The question a server's elicitation asks, in the engine's words (step and path are
/// filled in by the engine).
fn question(server: &str, params: ElicitRequestParams) -> Question {
    let (asking, message, schema, url) = match params {
        ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
            (Asking::Elicitation, message, serde_json::to_value(requested_schema).ok(), None)
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            (Asking::ElicitationUrl, message, None, Some(url))
        }
        // A mode this client does not know: shown as a message with no form.
        other => {
            (Asking::Elicitation, serde_json::to_value(&other).map(|v| v.to_string()).unwrap_or_default(), None, None)
        }
    };
    Question {
        id: String::new(),
        step: String::new(),
        path: Vec::new(),
        asking,
        server: Some(server.to_owned()),
        message: clip(message),
        schema,
        default: None,
        url: url.map(clip),
        call: None,
    }
}

/// A server's text, at most 4 KiB (it is recorded and shown).
fn clip(mut text: String) -> String {
    cut(&mut text, 4096);
    text
}

/// Removes its call's sink when dropped.
pub(crate) struct AskRegistration {
    routes: Arc<AskRoutes>,
    id: u64,
    pub asked: Arc<Asked>,
}

impl Drop for AskRegistration {
    fn drop(&mut self) {
        self.routes.calls().retain(|(id, _)| *id != self.id);
        let declined = self.asked.asked.load(Ordering::Acquire).saturating_sub(MAX_QUESTIONS);
        if declined > 0 {
            let server = self.routes.notes.server().to_owned();
            self.routes.notes.log(
                LogStream::Notification,
                format!(
                    "{declined} questions from server {server} declined without asking: one call may ask at most \
                     {MAX_QUESTIONS}"
                ),
            );
        }
    }
}
